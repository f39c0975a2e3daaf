//! The sender's TCP connector: a `Service<Uri>` for hyper-util's client
//! that resolves the host (or takes its IP literal), keeps the addresses the
//! [`WebhookGuard`] allows, and connects only to one of those. TLS is layered
//! over it by hyper-rustls, so HTTPS webhooks are guarded the same way.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;

use super::classify::AddressClass;
use super::guard::WebhookGuard;

/// A `Service<Uri>` connecting over TCP to guarded addresses only.
#[derive(Debug, Clone)]
pub(crate) struct GuardedConnector {
    guard: WebhookGuard,
    budget: Duration,
}

impl GuardedConnector {
    /// `budget` bounds the connection as a whole: with several allowed
    /// addresses each gets an equal share (at least 1 s), so one address
    /// that never answers does not keep the next from being tried.
    pub(crate) fn new(guard: WebhookGuard, budget: Duration) -> Self {
        Self { guard, budget }
    }
}

/// Why the connector did not connect. It names no host, address or URL.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// The guard allowed none of the host's addresses; the class of the
    /// first one refused (`None`: the host resolved to no address at all).
    Refused(Option<AddressClass>),
    /// The URI has no host.
    NoHost,
    /// The name did not resolve.
    Resolve(io::Error),
    /// No allowed address accepted the connection.
    Connect(io::Error),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(Some(c)) => write!(f, "the webhook address is not public ({c})"),
            Self::Refused(None) => f.write_str("the webhook host has no address"),
            Self::NoHost => f.write_str("the webhook URL has no host"),
            Self::Resolve(_) => f.write_str("the webhook host did not resolve"),
            Self::Connect(_) => f.write_str("the webhook refused the connection"),
        }
    }
}

impl Error for ConnectError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Resolve(e) | Self::Connect(e) => Some(e),
            _ => None,
        }
    }
}

impl ConnectError {
    /// The guard refusal somewhere in `err`'s chain of sources, if any.
    pub(crate) fn refusal_in(err: &(dyn Error + 'static)) -> Option<Option<AddressClass>> {
        let mut cur = Some(err);
        while let Some(e) = cur {
            if let Some(Self::Refused(class)) = e.downcast_ref::<Self>() {
                return Some(*class);
            }
            cur = e.source();
        }
        None
    }
}

impl Service<Uri> for GuardedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (guard, budget) = (self.guard.clone(), self.budget);
        Box::pin(async move { connect(&guard, &uri, budget).await.map(TokioIo::new) })
    }
}

/// Resolves `uri`'s host, keeps the addresses `guard` allows and connects to
/// the first that answers.
async fn connect(
    guard: &WebhookGuard,
    uri: &Uri,
    budget: Duration,
) -> Result<TcpStream, ConnectError> {
    let host = uri.host().ok_or(ConnectError::NoHost)?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let candidates: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(ConnectError::Resolve)?
            .collect(),
    };
    let allowed = guard.filter(candidates).map_err(ConnectError::Refused)?;
    let share = (budget / u32::try_from(allowed.len()).unwrap_or(u32::MAX))
        .max(Duration::from_secs(1))
        .min(budget);
    let mut last = None;
    for addr in allowed {
        let attempt = tokio::time::timeout(share, TcpStream::connect(addr)).await;
        match attempt.unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into())) {
            Ok(stream) => {
                // Small requests answered at once: no Nagle delay.
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(ConnectError::Connect(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "no address")
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn dial(guard: &WebhookGuard, uri: &str) -> Result<TcpStream, ConnectError> {
        connect(guard, &uri.parse().unwrap(), Duration::from_secs(5)).await
    }

    #[tokio::test]
    async fn refuses_literals_and_names_before_connecting() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let guard = WebhookGuard::new();
        for uri in [
            format!("http://127.0.0.1:{port}/"),
            format!("http://localhost:{port}/"),
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            format!("https://127.0.0.1:{port}/"),
            // Other spellings of loopback that resolvers accept.
            format!("http://127.1:{port}/"),
            format!("http://2130706433:{port}/"),
            format!("http://0x7f000001:{port}/"),
        ] {
            match dial(&guard, &uri).await {
                Err(ConnectError::Refused(Some(AddressClass::Loopback))) => {}
                other => panic!("{uri}: {other:?}"),
            }
        }
        // Nothing reached the listener.
        let accepted =
            tokio::time::timeout(std::time::Duration::from_millis(50), listener.accept()).await;
        assert!(accepted.is_err(), "a refused webhook was connected to");
    }

    #[tokio::test]
    async fn connects_where_allowed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let guard = WebhookGuard::new().allow("127.0.0.1".parse().unwrap());
        let stream = dial(&guard, &format!("http://localhost:{port}/")).await;
        assert_eq!(stream.unwrap().peer_addr().unwrap().port(), port);
        // Both loopbacks allowed: an address that refuses (`::1`, nothing
        // listens there) is passed over for the next one.
        let both = guard.clone().allow("::1".parse().unwrap());
        let stream = dial(&both, &format!("http://localhost:{port}/")).await;
        assert_eq!(stream.unwrap().peer_addr().unwrap().port(), port);
        drop(listener);
        let closed = dial(&guard, &format!("http://127.0.0.1:{port}/")).await;
        assert!(
            matches!(closed, Err(ConnectError::Connect(_))),
            "{closed:?}"
        );
    }

    #[test]
    fn refusal_is_found_through_wrappers() {
        #[derive(Debug)]
        struct Wrap(crate::BoxError);
        impl fmt::Display for Wrap {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl Error for Wrap {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&*self.0)
            }
        }
        let refused = Wrap(Box::new(ConnectError::Refused(Some(AddressClass::Private))));
        let outer = Wrap(Box::new(refused));
        assert_eq!(
            ConnectError::refusal_in(&outer),
            Some(Some(AddressClass::Private))
        );
        let other = Wrap(Box::new(ConnectError::NoHost));
        assert_eq!(ConnectError::refusal_in(&other), None);
    }
}
