//! [`LogError`]: why a task-log call failed, as a kind plus an internal cause.

use std::fmt;

use crate::{A2aError, BoxError, ConfigError, ErrorKind};

/// What went wrong in a task-log call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogErrorKind {
    /// The expected sequence number is not the task's (another writer
    /// advanced it, or the task already exists on create).
    Conflict,
    /// The writer's epoch is older than the task's: a newer writer took over.
    Fenced,
    /// No such task for this authority.
    NotFound,
    /// The log is at its bound and cannot evict anything.
    Full,
    /// The records cannot follow the task's records (after a terminal status,
    /// a second `Created`, an empty artifact, …).
    Invalid,
    /// The requested records were compacted into the snapshot.
    Compacted,
    /// The backend failed (I/O, database, serialization).
    Backend,
    /// A log builder was given a bad configuration (a zero bound, an empty
    /// path, a malformed URL, …), found before anything was opened. The
    /// [source](std::error::Error::source) is the [`ConfigError`].
    Config,
}

impl LogErrorKind {
    /// A short, stable name for traces.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Conflict => "conflict",
            Self::Fenced => "fenced",
            Self::NotFound => "not_found",
            Self::Full => "full",
            Self::Invalid => "invalid",
            Self::Compacted => "compacted",
            Self::Backend => "backend",
            Self::Config => "config",
        }
    }
}

impl fmt::Display for LogErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task-log error: a [`LogErrorKind`] and, for backends and bad
/// configurations, an internal cause that never reaches the wire.
///
/// ```
/// use a2a_tower::{A2aError, ErrorKind};
/// use a2a_tower::log::{LogError, LogErrorKind};
/// let err: A2aError = LogError::new(LogErrorKind::Full).into();
/// assert_eq!(err.kind(), ErrorKind::Unavailable);
/// let err: A2aError = LogError::backend("disk on fire").into();
/// assert_eq!(err.kind(), ErrorKind::Internal);
/// assert_eq!(err.message(), "Internal error");
/// ```
pub struct LogError {
    kind: LogErrorKind,
    source: Option<BoxError>,
}

impl LogError {
    /// An error of the given kind.
    pub fn new(kind: LogErrorKind) -> Self {
        Self { kind, source: None }
    }

    /// A backend failure with its cause (kept for logs only).
    pub fn backend(source: impl Into<BoxError>) -> Self {
        Self {
            kind: LogErrorKind::Backend,
            source: Some(source.into()),
        }
    }

    /// A bad configuration of a log builder ([`LogErrorKind::Config`]),
    /// with the [`ConfigError`] as its source.
    pub fn config(err: ConfigError) -> Self {
        Self {
            kind: LogErrorKind::Config,
            source: Some(Box::new(err)),
        }
    }

    /// The configuration error, if this is [`LogErrorKind::Config`].
    pub fn config_error(&self) -> Option<&ConfigError> {
        match self.kind {
            LogErrorKind::Config => self.source.as_deref()?.downcast_ref(),
            _ => None,
        }
    }

    /// The kind.
    pub fn kind(&self) -> LogErrorKind {
        self.kind
    }
}

impl fmt::Debug for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogError")
            .field("kind", &self.kind)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task log: {}", self.kind)
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<LogError> for A2aError {
    /// Maps to a safe kind: NotFound → TaskNotFound, Full → Unavailable,
    /// everything else → Internal (the cause stays attached for logs).
    fn from(err: LogError) -> Self {
        let kind = match err.kind {
            LogErrorKind::NotFound => ErrorKind::TaskNotFound,
            LogErrorKind::Full => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        };
        A2aError::new(kind).with_source(err)
    }
}
