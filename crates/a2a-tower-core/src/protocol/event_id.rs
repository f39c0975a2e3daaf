//! [`LastEventId`]: the resume cursor of a stream event.

use std::fmt;

/// The resume cursor of one stream event: the SSE `id:` field of the event
/// on both JSON bindings, and what a client sends back in the
/// `Last-Event-ID` header ([`HEADER`](Self::HEADER)) of a SubscribeToTask to
/// get exactly the events after it. Opaque to clients: the engine's ids are
/// the sequence numbers of the task's log records, but a client only stores
/// and returns them.
///
/// An id never holds NUL, CR or LF (the SSE specification's rule for `id:`).
///
/// ```
/// use a2a_tower::LastEventId;
/// let id = LastEventId::from_seq(42);
/// assert_eq!(id.as_str(), "42");
/// assert_eq!(LastEventId::new("42").unwrap().seq(), Some(42));
/// assert!(LastEventId::new("a\nb").is_none());
/// let mut headers = http::HeaderMap::new();
/// headers.insert(LastEventId::HEADER, "7".parse().unwrap());
/// assert_eq!(LastEventId::from_headers(&headers), Some(LastEventId::from_seq(7)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LastEventId(String);

impl LastEventId {
    /// The request header that carries the last id a client received
    /// (`Last-Event-ID`, as the SSE specification names it).
    pub const HEADER: &'static str = "last-event-id";

    /// An id, unless it holds NUL, CR or LF.
    pub fn new(id: impl Into<String>) -> Option<Self> {
        let id = id.into();
        (!id.contains(['\0', '\r', '\n'])).then_some(Self(id))
    }

    /// The id of a log record's sequence number (what the engine sends).
    pub fn from_seq(seq: u64) -> Self {
        Self(seq.to_string())
    }

    /// The sequence number this id names, if it is one.
    pub fn seq(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The id as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The `Last-Event-ID` of request headers: `None` when it is absent,
    /// empty (the SSE specification's "no id") or not a valid id.
    pub fn from_headers(headers: &http::HeaderMap) -> Option<Self> {
        let value = headers.get(Self::HEADER)?.to_str().ok()?;
        if value.is_empty() {
            return None;
        }
        Self::new(value)
    }
}

impl fmt::Display for LastEventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
