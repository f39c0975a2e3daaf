//! The task log: the committed source of truth of every task.
//!
//! Each task is an append-only sequence of [`Record`]s numbered from 1,
//! committed by conditional appends ([`AppendRequest`]: the sequence number
//! the writer last saw and its epoch); a [`Task`](crate::types::Task) is the
//! [projection](Projection) of its records. A backend is three traits:
//! [`TaskLog`] (the records), [`LiveTaskScan`] (start-up recovery) and
//! [`DeliveryLog`] (the push outbox); [`TaskStore`] holds one of each.
//!
//! The backends: [`MemoryTaskLog`] (bounded, in memory), `SqliteTaskLog`
//! (feature `sqlite`, durable in one file) and `PostgresTaskLog` (feature
//! `postgres`, several hosts sharing tasks).
//!
//! This module re-exports the crates [`a2a_tower_log`] (the records, the
//! traits, the memory log), `a2a_tower_sqlite` and `a2a_tower_postgres`; the
//! rules of appends, epochs, authorities and push delivery are in the
//! [`a2a_tower_log`] crate docs.
//!
//! ```
//! use a2a_tower::log::{AppendRequest, LogErrorKind, MemoryTaskLog, Record, TaskLog};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! let req = AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]);
//! assert_eq!(log.append(req).await.unwrap().seq, 1);
//! // Creating it again is a conflict, never an overwrite.
//! let again = AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]);
//! assert_eq!(log.append(again).await.unwrap_err().kind(), LogErrorKind::Conflict);
//! # });
//! ```

pub use a2a_tower_log::{
    Advance, AppendRequest, Appended, DeliveryCursor, DeliveryLog, Eviction, FeatureRecord, Hold,
    ListPage, ListQuery, LiveTask, LiveTaskScan, LogError, LogErrorKind, LogFuture, MemoryTaskLog,
    MemoryTaskLogBuilder, Observed, PageCursor, PendingDelivery, Projection, ProjectionError,
    Record, RecordStream, Restate, Retention, RetentionHandle, RetentionPolicy, STALE_MESSAGE,
    STREAM_MARK, Sequenced, Snapshot, Stale, StreamCompaction, Swept, TaskBackend, TaskLog,
    TaskStore, Watch, fail_live, is_stream, restate_stream, stream_id, stream_of,
};
#[cfg(feature = "push")]
#[cfg_attr(docsrs, doc(cfg(feature = "push")))]
pub use a2a_tower_log::{
    InvalidPushSecretKey, PushSecretKey, SealedPushSecrets,
    seal::{self, is_sealed},
};
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use a2a_tower_postgres::{PostgresTaskLog, PostgresTaskLogBuilder};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use a2a_tower_sqlite::{SqliteStats, SqliteTaskLog, SqliteTaskLogBuilder, Synchronous};
