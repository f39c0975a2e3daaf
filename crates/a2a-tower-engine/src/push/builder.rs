//! [`PushSenderBuilder`]: the settings of a [`PushSender`], checked by
//! [`build`](PushSenderBuilder::build).
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::push::PushSender;
//! assert!(PushSender::builder().timeout(Duration::ZERO).build().is_err());
//! assert!(PushSender::builder().user_agent("bad\nagent").build().is_err());
//! let s = PushSender::builder().retries(0).user_agent("my-agent/2").build().unwrap();
//! assert_eq!(s.retries(), 0);
//! ```

use std::time::Duration;

use http::HeaderValue;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::backoff::Backoff;
use super::connect::GuardedConnector;
use super::guard::WebhookGuard;
use super::sender::{Inner, PushSender};
use crate::ConfigError;

/// The default timeout of one attempt (10 s; the spec asks for 10–30 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default number of retries after a failed attempt (3).
pub const DEFAULT_RETRIES: u32 = 3;
/// The default number of same-origin redirects followed in one attempt (3).
pub const DEFAULT_MAX_REDIRECTS: u32 = 3;

/// The settings of a [`PushSender`] (see the module docs).
#[derive(Debug, Clone)]
pub struct PushSenderBuilder {
    guard: WebhookGuard,
    timeout: Duration,
    retries: u32,
    backoff: Backoff,
    max_redirects: u32,
    user_agent: String,
}

impl Default for PushSenderBuilder {
    fn default() -> Self {
        Self {
            guard: WebhookGuard::new(),
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            backoff: Backoff::default(),
            max_redirects: DEFAULT_MAX_REDIRECTS,
            user_agent: concat!("a2a-tower/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

impl PushSenderBuilder {
    /// The SSRF guard (default: [`WebhookGuard::new`], only public addresses).
    pub fn guard(mut self, guard: WebhookGuard) -> Self {
        self.guard = guard;
        self
    }

    /// The timeout of one attempt: connecting, redirects, and the answer's
    /// headers and body (default [`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times a failed attempt is retried (default
    /// [`DEFAULT_RETRIES`]; 0: one attempt only).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The waits between attempts (default [`Backoff::default`]).
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// How many same-origin redirects one attempt follows (default
    /// [`DEFAULT_MAX_REDIRECTS`]; 0: none).
    pub fn max_redirects(mut self, max_redirects: u32) -> Self {
        self.max_redirects = max_redirects;
        self
    }

    /// The `User-Agent` header (default `a2a-tower/<version>`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// The sender. A zero timeout or a user agent that is not a valid header
    /// value is a [`ConfigError`].
    pub fn build(self) -> Result<PushSender, ConfigError> {
        if self.timeout.is_zero() {
            return Err(ConfigError::new(
                "the push attempt timeout must not be zero",
            ));
        }
        let user_agent = HeaderValue::from_str(&self.user_agent)
            .map_err(|_| ConfigError::new("the push user agent is not a valid header value"))?;
        let tls = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|_| ConfigError::new("the TLS provider has no safe protocol version"))?
            .https_or_http()
            .enable_http1()
            .wrap_connector(GuardedConnector::new(self.guard.clone(), self.timeout));
        let client = Client::builder(TokioExecutor::new()).build(tls);
        Ok(PushSender::from_inner(Inner {
            client,
            guard: self.guard,
            timeout: self.timeout,
            retries: self.retries,
            backoff: self.backoff,
            max_redirects: self.max_redirects,
            user_agent,
        }))
    }
}
