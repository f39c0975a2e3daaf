//! [`PushError`]: why a push delivery did not succeed. It carries only
//! what the sender decided (a kind, the attempts made, the last HTTP status,
//! the class of a refused address, a fixed description): never the URL, a
//! token, credentials, or any text of the receiver's.
//!
//! ```
//! use a2a_tower::push::{PushError, PushErrorKind};
//! fn retry_later(e: &PushError) -> bool {
//!     e.kind() == PushErrorKind::GaveUp && e.status().is_none_or(|s| s.is_server_error())
//! }
//! # let _ = retry_later;
//! ```

use std::fmt;

use http::StatusCode;

use super::classify::AddressClass;

/// What kind of failure a [`PushError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PushErrorKind {
    /// The SSRF guard refused the webhook's addresses, or the webhook
    /// redirected to another origin. Nothing was sent to the refused target;
    /// not retried.
    Refused,
    /// Delivery failed and the sender stopped: retries exhausted (timeouts,
    /// connection failures, 5xx, 429), or an answer not worth retrying
    /// (another 4xx, too many redirects).
    GaveUp,
    /// The config cannot be delivered to: the URL is not an absolute
    /// `http`/`https` URL without user info, or the token or the
    /// authentication is not a valid header value.
    Invalid,
}

/// Why a push delivery failed (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushError {
    kind: PushErrorKind,
    attempts: u32,
    status: Option<StatusCode>,
    class: Option<AddressClass>,
    detail: &'static str,
}

impl PushError {
    pub(crate) fn new(kind: PushErrorKind, detail: &'static str) -> Self {
        Self {
            kind,
            attempts: 0,
            status: None,
            class: None,
            detail,
        }
    }

    pub(crate) fn invalid(detail: &'static str) -> Self {
        Self::new(PushErrorKind::Invalid, detail)
    }

    pub(crate) fn with_status(mut self, status: Option<StatusCode>) -> Self {
        self.status = status;
        self
    }

    pub(crate) fn with_class(mut self, class: Option<AddressClass>) -> Self {
        self.class = class;
        self
    }

    pub(crate) fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> PushErrorKind {
        self.kind
    }

    /// How many HTTP attempts were started (0 when the config was invalid).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The webhook's last HTTP status, when it answered.
    pub fn status(&self) -> Option<StatusCode> {
        self.status
    }

    /// For a guard refusal, the class of the (first) refused address.
    pub fn address_class(&self) -> Option<AddressClass> {
        self.class
    }

    /// A short fixed description of the cause.
    pub fn detail(&self) -> &'static str {
        self.detail
    }
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PushErrorKind::Refused => write!(f, "push delivery refused: {}", self.detail)?,
            PushErrorKind::Invalid => write!(f, "push config not deliverable: {}", self.detail)?,
            PushErrorKind::GaveUp => write!(
                f,
                "push delivery failed after {} attempt{}: {}",
                self.attempts,
                if self.attempts == 1 { "" } else { "s" },
                self.detail
            )?,
        }
        if let Some(class) = self.class {
            write!(f, " ({class} address)")?;
        }
        if let Some(status) = self.status {
            write!(f, " (last status {})", status.as_u16())?;
        }
        Ok(())
    }
}

impl std::error::Error for PushError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let e = PushError::new(PushErrorKind::GaveUp, "the webhook answered with an error")
            .with_attempts(4)
            .with_status(Some(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(
            e.to_string(),
            "push delivery failed after 4 attempts: the webhook answered with an error (last status 503)"
        );
        let e = PushError::new(PushErrorKind::Refused, "no public address")
            .with_attempts(1)
            .with_class(Some(AddressClass::Loopback));
        assert_eq!(
            e.to_string(),
            "push delivery refused: no public address (loopback address)"
        );
        assert_eq!(e.address_class(), Some(AddressClass::Loopback));
        assert_eq!((e.attempts(), e.status()), (1, None));
        let e = PushError::invalid("bad url");
        assert_eq!(e.to_string(), "push config not deliverable: bad url");
        assert_eq!((e.kind(), e.detail()), (PushErrorKind::Invalid, "bad url"));
    }
}
