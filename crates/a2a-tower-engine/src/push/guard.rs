//! [`WebhookGuard`]: the SSRF guard, which decides whether a webhook may be
//! reached at an IP address. Every address that is not public
//! ([`classify`](super::classify)) is refused unless a network on the
//! allow-list contains it.
//!
//! The guard is applied by the sender's connector to every address a
//! webhook host resolves to, on every new connection (redirect hops
//! included), and the connection is then made to an address it has just
//! allowed: a DNS answer that changes between the check and the connection
//! (rebinding) is never used unchecked.
//!
//! ```
//! use a2a_tower::push::{AddressClass, WebhookGuard};
//! let guard = WebhookGuard::new();
//! assert_eq!(guard.check("10.0.0.7".parse().unwrap()), Err(AddressClass::Private));
//! assert_eq!(guard.check("8.8.8.8".parse().unwrap()), Ok(()));
//! // A test or a conformance suite whose webhook listens on loopback:
//! let guard = WebhookGuard::new().allow_networks(["127.0.0.0/8", "::1"])?;
//! assert_eq!(guard.check("127.0.0.1".parse().unwrap()), Ok(()));
//! assert_eq!(guard.check("::ffff:127.0.0.1".parse().unwrap()), Ok(()));
//! assert_eq!(guard.check("10.0.0.7".parse().unwrap()), Err(AddressClass::Private));
//! # Ok::<(), a2a_tower::ConfigError>(())
//! ```

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use super::classify::{AddressClass, classify};
use super::net::IpNet;
use crate::ConfigError;

/// The SSRF guard (see the module docs). [`Default`] is [`new`](Self::new):
/// on, with an empty allow-list. Cloning is cheap.
#[derive(Debug, Clone, Default)]
pub struct WebhookGuard {
    allowed: Arc<[IpNet]>,
}

impl WebhookGuard {
    /// The guard with an empty allow-list: only public addresses pass.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also allows every address in `net`, whatever its class.
    pub fn allow(self, net: IpNet) -> Self {
        let mut allowed = self.allowed.to_vec();
        allowed.push(net);
        Self {
            allowed: allowed.into(),
        }
    }

    /// Also allows the networks written in CIDR notation (`"127.0.0.0/8"`,
    /// `"fd00::/8"`, a bare address for itself). A malformed entry is a
    /// [`ConfigError`].
    pub fn allow_networks<I, T>(self, nets: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        nets.into_iter()
            .try_fold(self, |g, n| Ok(g.allow(n.as_ref().parse()?)))
    }

    /// The allowed networks, in the order they were added.
    pub fn allowed(&self) -> &[IpNet] {
        &self.allowed
    }

    /// `Ok` when a webhook may be reached at `ip`: it is public, or an
    /// allowed network contains it; otherwise the class that refuses it.
    pub fn check(&self, ip: IpAddr) -> Result<(), AddressClass> {
        match classify(ip) {
            None => Ok(()),
            Some(_) if self.allowed.iter().any(|n| n.contains(ip)) => Ok(()),
            Some(class) => Err(class),
        }
    }

    /// The addresses of `candidates` the guard allows, in order; when it
    /// allows none, the class of the first one refused (`None` for no
    /// candidates at all).
    pub(crate) fn filter(
        &self,
        candidates: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Vec<SocketAddr>, Option<AddressClass>> {
        let mut refused = None;
        let mut allowed = Vec::new();
        for addr in candidates {
            match self.check(addr.ip()) {
                Ok(()) => allowed.push(addr),
                Err(class) => {
                    refused.get_or_insert(class);
                }
            }
        }
        if allowed.is_empty() {
            Err(refused)
        } else {
            Ok(allowed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn on_by_default() {
        let g = WebhookGuard::default();
        assert!(g.allowed().is_empty());
        for (ip, class) in [
            ("127.0.0.1", AddressClass::Loopback),
            ("::1", AddressClass::Loopback),
            ("169.254.169.254", AddressClass::LinkLocal),
            ("fd12::1", AddressClass::UniqueLocal),
            ("::ffff:192.168.0.1", AddressClass::Private),
        ] {
            assert_eq!(g.check(ip.parse().unwrap()), Err(class), "{ip}");
        }
        assert_eq!(g.check("2606:4700::1".parse().unwrap()), Ok(()));
    }

    #[test]
    fn allow_list_opens_only_its_networks() {
        let g = WebhookGuard::new()
            .allow_networks(["10.1.0.0/16", "fd00::/8"])
            .unwrap();
        assert_eq!(g.allowed().len(), 2);
        assert_eq!(g.check("10.1.9.9".parse().unwrap()), Ok(()));
        assert_eq!(g.check("::ffff:10.1.9.9".parse().unwrap()), Ok(()));
        assert_eq!(g.check("fd00::5".parse().unwrap()), Ok(()));
        assert_eq!(
            g.check("10.2.0.1".parse().unwrap()),
            Err(AddressClass::Private)
        );
        assert_eq!(
            g.check("127.0.0.1".parse().unwrap()),
            Err(AddressClass::Loopback)
        );
        assert!(WebhookGuard::new().allow_networks(["10.0.0.0/40"]).is_err());
        assert!(WebhookGuard::new().allow_networks(["nope"]).is_err());
    }

    #[test]
    fn filter_keeps_only_allowed_addresses() {
        let g = WebhookGuard::new();
        let mixed = [sa("127.0.0.1:80"), sa("8.8.8.8:80"), sa("[::1]:80")];
        assert_eq!(g.filter(mixed), Ok(vec![sa("8.8.8.8:80")]));
        let bad = [sa("10.0.0.1:80"), sa("127.0.0.1:80")];
        assert_eq!(g.filter(bad), Err(Some(AddressClass::Private)));
        assert_eq!(g.filter([]), Err(None));
        let open = g.allow("127.0.0.0/8".parse().unwrap());
        assert_eq!(open.filter(bad), Ok(vec![sa("127.0.0.1:80")]));
    }
}
