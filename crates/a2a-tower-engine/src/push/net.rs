//! [`IpNet`]: an IP network in CIDR notation (`10.0.0.0/8`, `fd00::/8`), the
//! unit of the [`WebhookGuard`](super::WebhookGuard)'s allow-list.
//!
//! ```
//! use a2a_tower::push::IpNet;
//! let net: IpNet = "10.1.0.0/16".parse().unwrap();
//! assert!(net.contains("10.1.2.3".parse().unwrap()));
//! assert!(!net.contains("10.2.0.1".parse().unwrap()));
//! let one: IpNet = "::1".parse().unwrap(); // a bare address is a /32 or /128
//! assert_eq!(one.to_string(), "::1/128");
//! assert!("10.0.0.0/33".parse::<IpNet>().is_err());
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::ConfigError;

/// An IP network: an address and a prefix length (bits), host bits cleared.
///
/// An IPv4 network also contains the IPv4-mapped IPv6 forms
/// (`::ffff:a.b.c.d`) of its addresses, since a connection to one reaches the
/// IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    /// The network of `addr` with a `prefix`-bit mask; host bits are cleared.
    /// `None` when the prefix is longer than the address (32 or 128 bits).
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        let addr = match addr {
            IpAddr::V4(a) if prefix <= 32 => {
                IpAddr::V4(Ipv4Addr::from_bits(a.to_bits() & mask32(prefix)))
            }
            IpAddr::V6(a) if prefix <= 128 => {
                IpAddr::V6(Ipv6Addr::from_bits(a.to_bits() & mask128(prefix)))
            }
            _ => return None,
        };
        Some(Self { addr, prefix })
    }

    /// The network address (host bits zero).
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The prefix length in bits.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Whether `ip` is in this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => a.to_bits() & mask32(self.prefix) == n.to_bits(),
            (IpAddr::V6(n), IpAddr::V6(a)) => a.to_bits() & mask128(self.prefix) == n.to_bits(),
            _ => false,
        }
    }
}

fn mask32(prefix: u8) -> u32 {
    u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0)
}

fn mask128(prefix: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0)
}

impl From<IpAddr> for IpNet {
    /// The single-address network (`/32` or `/128`).
    fn from(addr: IpAddr) -> Self {
        let prefix = if addr.is_ipv4() { 32 } else { 128 };
        Self { addr, prefix }
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for IpNet {
    type Err = ConfigError;

    /// Parses `address/prefix`, or a bare address as a single-address network.
    /// Host bits set in the address are an error (`10.0.0.1/8` is a typo for
    /// either `10.0.0.1/32` or `10.0.0.0/8`; the guard does not guess).
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError::new(format!("{s:?} is not an IP network (address/prefix)"));
        let Some((addr, prefix)) = s.split_once('/') else {
            return s.parse::<IpAddr>().map(Self::from).map_err(|_| bad());
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let net = Self::new(addr, prefix.parse().map_err(|_| bad())?).ok_or_else(bad)?;
        if net.addr != addr {
            return Err(ConfigError::new(format!(
                "{s:?} has host bits set (the network is {net})"
            )));
        }
        Ok(net)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_contains() {
        let n: IpNet = "192.168.0.0/16".parse().unwrap();
        assert!(n.contains(ip("192.168.255.1")));
        assert!(!n.contains(ip("192.169.0.1")));
        assert!(n.contains(ip("::ffff:192.168.1.1")), "the mapped form");
        assert!(!n.contains(ip("::1")));
        let all: IpNet = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")) && !all.contains(ip("2001:db8::1")));
        let v6: IpNet = "fd00::/8".parse().unwrap();
        assert!(v6.contains(ip("fdab::1")) && !v6.contains(ip("fe80::1")));
        let all6: IpNet = "::/0".parse().unwrap();
        assert!(all6.contains(ip("2001:db8::1")) && all6.contains(ip("::1")));
        let host: IpNet = "127.0.0.1".parse().unwrap();
        assert_eq!((host.prefix(), host.addr()), (32, ip("127.0.0.1")));
        assert!(host.contains(ip("127.0.0.1")) && !host.contains(ip("127.0.0.2")));
        assert_eq!(
            "10.0.0.0/8".parse::<IpNet>().unwrap().to_string(),
            "10.0.0.0/8"
        );
    }

    #[test]
    fn refuses_malformed() {
        for bad in [
            "",
            "/8",
            "10.0.0.0/",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/+8",
            "10.0.0.0/8/8",
            "10.0.0.1/8",
            "fe80::1/10",
            "localhost",
            "10.0.0/8",
        ] {
            assert!(bad.parse::<IpNet>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn new_clears_host_bits() {
        let n = IpNet::new(ip("10.1.2.3"), 8).unwrap();
        assert_eq!(n.to_string(), "10.0.0.0/8");
        assert!(IpNet::new(ip("10.1.2.3"), 33).is_none());
        assert!(IpNet::new(ip("::1"), 129).is_none());
        assert_eq!(IpNet::new(ip("::1"), 0).unwrap().to_string(), "::/0");
    }
}
