//! The append-only task log of [`a2a-tower`](https://docs.rs/a2a-tower): the
//! committed source of truth of every task.
//!
//! This crate holds the records, the three traits of a backend ([`TaskLog`],
//! [`LiveTaskScan`], [`DeliveryLog`]), [`TaskStore`] and the bounded
//! in-memory backend ([`MemoryTaskLog`]). The durable backends are crates of
//! their own, `a2a-tower-sqlite` (`SqliteTaskLog`) and `a2a-tower-postgres`
//! (`PostgresTaskLog`). Applications use all of them through the `a2a-tower`
//! facade, which re-exports them as `a2a_tower::log` under its features
//! `engine`, `sqlite` and `postgres`; depend on this crate directly to write
//! a backend or a wrapper of the log.
//!
//! The feature `suite` adds [`suite`] and [`log_suite!`]: the conformance
//! cases every backend runs, for a backend of your own.
//!
//! Each task is an append-only sequence of [`Record`]s numbered from 1. A
//! [`Task`] is never updated in place: it is the [projection](Projection) of
//! its records, cached by the backend and shared as an `Arc` snapshot.
//!
//! Writes are conditional. An [`AppendRequest`] names the sequence number the
//! writer last saw (`expected`, 0 to create the task) and the writer's
//! `epoch`. The backend commits the whole batch or nothing:
//! - `expected` differs from the task's sequence: [`LogErrorKind::Conflict`]
//!   (another writer advanced the task; re-read and decide again);
//! - `epoch` is lower than the highest epoch committed for the task:
//!   [`LogErrorKind::Fenced`] (a newer writer took over; stop writing);
//! - a record that cannot follow the task's records (anything after a
//!   terminal status, a second `Created`): [`LogErrorKind::Invalid`].
//!
//! [`TaskLog::append_all`] commits appends to several tasks as one (a
//! per-context queue and the task it admits, say): each request is checked
//! by the rules above against its own task, and either every request
//! commits or none does, with the error of the first one refused. Each
//! request names a different task (the same task twice is
//! [`LogErrorKind::Invalid`]); creations and continuations, and requests of
//! different authorities, mix freely. A request of no record at the task's
//! epoch changes nothing: it is a check that the task is still at
//! `expected`, the condition of a commit that reads it (a queue left as it
//! was found).
//!
//! A writer that takes over a task (a continuation, recovery after a restart)
//! appends with a higher epoch, which fences every older writer. Readers
//! ([`TaskLog::snapshot`], [`TaskLog::read`], [`TaskLog::watch`],
//! [`TaskLog::list`]) never take an epoch.
//!
//! # The parts of a backend
//!
//! A backend is three traits, so that each user of the log depends on the
//! part it uses and a wrapper implements only the part it changes:
//! - [`TaskLog`]: the task records (append, conditional append across
//!   tasks, read, watch, snapshot, list); what the engine and every core
//!   write and read through;
//! - [`LiveTaskScan`]: the tasks some host was running, paged across all
//!   authorities, for start-up recovery (which closes them through the
//!   [`TaskLog`] with [`fail_live`]);
//! - [`DeliveryLog`]: the push outbox's cursors and leases (below).
//!
//! [`TaskStore`] holds one of each, usually the same backend three times
//! (`TaskStore::from(log)`; a whole backend chosen at run time is an
//! `Arc<dyn` [`TaskBackend`]`>`); a wrapper over the records alone (a test's
//! fault injection, a cache) goes in with [`TaskStore::map_records`], and one
//! that only observes commits is an [`Observed`] closure, with nothing to
//! forward.
//!
//! # Streams
//!
//! Beside tasks the log keeps *streams*: a feature's own sequences of
//! records (the delivery queue's per-context queues), appended like a
//! task's and in the same commits, read with [`TaskLog::read`], and never
//! seen through the task views ([`TaskLog::snapshot`], [`TaskLog::watch`],
//! [`TaskLog::list`]). A stream's id is [`stream_id`]`(feature, name)`, which
//! starts with [`STREAM_MARK`]: no id of a task the engine makes does, so a
//! caller who sends a stream's id as a task id finds no task, and start-up
//! recovery tells streams apart without reading them
//! ([`LiveTask::stream`]).
//!
//! Every call is scoped by an authority string (see
//! [`engine::Authority`](https://docs.rs/a2a-tower/latest/a2a_tower/engine/struct.Authority.html)): a task of another authority is
//! indistinguishable from a missing one ([`LogErrorKind::NotFound`]).
//!
//! # Push delivery
//!
//! The log is the outbox of push notifications: every event to deliver is
//! a committed record. Beside the records, the backend keeps per push
//! config how far it was delivered, and per task a delivery lease, so that
//! one host at a time delivers a task's events (the driver is the `push` feature's `push::outbox`). Rules:
//! - **A cursor per config**: [`Record::PushConfigSet`] creates the
//!   config's cursor, in the same commit, at the sequence number *before*
//!   that commit: the records committed with the config are delivered too
//!   (a config given with the message that creates the task gets the
//!   task's creation). Replacing a config keeps its cursor;
//!   [`Record::PushConfigDeleted`] removes it.
//! - **Pending** while a cursor is below the task's head
//!   ([`DeliveryLog::pending_deliveries`]).
//! - **A lease per task** ([`DeliveryLog::claim_deliveries`]): granted when free,
//!   expired, or held by the same holder (which renews it); only a task with
//!   cursors can be claimed. PostgreSQL times leases by the database's
//!   clock, so hosts' clocks need not agree.
//! - **Conditional advance** ([`DeliveryLog::advance_delivery`]): a cursor moves
//!   only from the position the caller read, never beyond the head, and only
//!   by the holder of the task's unexpired lease. When a terminal task's
//!   cursors all reach its head, its cursors and lease are removed.
//!
//! Methods return boxed `Send` futures so that `Arc<dyn TaskLog>` works, and
//! records are serde-serializable so durable backends can store them as JSON.
//!
//! ```
//! use std::sync::Arc;
//! use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
//! use a2a_tower::types::{Message, TaskState, TaskStatus};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log: Arc<dyn TaskLog> = Arc::new(MemoryTaskLog::new());
//! let created = log
//!     .append(AppendRequest::create(
//!         "public",
//!         "t-1",
//!         vec![
//!             Record::created("t-1", "c-1"),
//!             Record::MessageAdmitted { message: Message::user("m-1", "hi") },
//!         ],
//!     ))
//!     .await
//!     .unwrap();
//! assert_eq!(created.seq, 2);
//!
//! // A stale expectation is a typed conflict, never a silent overwrite.
//! let stale = AppendRequest::new("public", "t-1", 1, 1, vec![Record::status(TaskStatus::new(TaskState::Working))]);
//! assert_eq!(log.append(stale).await.unwrap_err().kind(), a2a_tower::log::LogErrorKind::Conflict);
//!
//! // Another authority sees nothing.
//! assert!(log.snapshot("other", "t-1").await.is_err());
//! let snap = log.snapshot("public", "t-1").await.unwrap();
//! assert_eq!(snap.task.history.len(), 1);
//!
//! // Two tasks at once: one request is stale, so the other commits nothing.
//! let working = Record::status(TaskStatus::new(TaskState::Working));
//! let both = vec![
//!     AppendRequest::create("public", "t-2", vec![Record::created("t-2", "c-1")]),
//!     AppendRequest::new("public", "t-1", 1, 1, vec![working.clone()]),
//! ];
//! let err = log.append_all(both).await.unwrap_err();
//! assert_eq!(err.kind(), a2a_tower::log::LogErrorKind::Conflict);
//! assert!(log.snapshot("public", "t-2").await.is_err());
//! // Both current: both commit, answered in request order.
//! let both = vec![
//!     AppendRequest::create("public", "t-2", vec![Record::created("t-2", "c-1")]),
//!     AppendRequest::new("public", "t-1", 2, 1, vec![working]),
//! ];
//! let seqs: Vec<u64> = log.append_all(both).await.unwrap().iter().map(|a| a.seq).collect();
//! assert_eq!(seqs, [1, 3]);
//! # });
//! ```

mod arc;
mod compaction;
#[doc(hidden)]
pub mod delivery;
mod error;
mod feature;
// The code the durable backends (a2a-tower-sqlite, a2a-tower-postgres)
// share: API for those crates, not for users.
#[cfg(feature = "durable")]
#[doc(hidden)]
pub mod hub;
mod memory;
mod observed;
mod page;
mod projection;
mod record;
mod record_serde;
mod recovery;
mod retention;
#[cfg(feature = "seal")]
#[cfg_attr(docsrs, doc(cfg(feature = "seal")))]
pub mod seal;
mod store;
#[cfg(feature = "durable")]
#[doc(hidden)]
pub mod stored;
mod stream_id;
#[cfg(feature = "suite")]
#[cfg_attr(docsrs, doc(cfg(feature = "suite")))]
pub mod suite;
#[cfg(feature = "durable")]
#[doc(hidden)]
pub mod upgrade;

// The core's items under the paths the log's code names.
use a2a_tower_core::types;
use a2a_tower_core::{A2aError, BoxError, ConfigError, ErrorKind};

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;

use crate::types::{Task, TaskState, Timestamp};

pub use compaction::{Restate, StreamCompaction, restate_stream};
pub use delivery::{Advance, DeliveryCursor, DeliveryLog, PendingDelivery};
pub use error::{LogError, LogErrorKind};
pub use feature::{FeatureRecord, Hold};
pub use memory::{Eviction, MemoryTaskLog, MemoryTaskLogBuilder};
pub use observed::Observed;
pub use page::PageCursor;
pub use projection::{Projection, ProjectionError};
pub use record::{Record, Sequenced};
pub use recovery::{LiveTask, LiveTaskScan, fail_live};
pub use retention::{Retention, RetentionHandle, RetentionPolicy, STALE_MESSAGE, Stale, Swept};
#[cfg(feature = "seal")]
pub use seal::{InvalidPushSecretKey, PushSecretKey, SealedPushSecrets};
pub use store::{TaskBackend, TaskStore};
#[doc(hidden)]
pub use stream_id::task_view;
pub use stream_id::{STREAM_MARK, is_stream, stream_id, stream_of};

/// The future of a [`TaskLog`] call.
pub type LogFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LogError>> + Send + 'a>>;

/// The records of a task after some sequence number, then live as they are
/// committed, without gaps. The stream ends after a terminal record; an `Err`
/// item ends it too.
pub type RecordStream = Pin<Box<dyn Stream<Item = Result<Sequenced, LogError>> + Send>>;

/// A projected task at a sequence number.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The sequence number of the last record projected (≥ 1).
    pub seq: u64,
    /// The highest writer epoch committed for the task.
    pub epoch: u64,
    /// The projection (task, push configs, cancel flag).
    pub projection: Projection,
    /// The task, shared (the same `Arc` as `projection.task()`).
    pub task: Arc<Task>,
}

impl Snapshot {
    /// A snapshot of a projection at `seq` / `epoch`.
    pub fn new(seq: u64, epoch: u64, projection: Projection) -> Self {
        let task = projection.task().clone();
        Self {
            seq,
            epoch,
            projection,
            task,
        }
    }

    /// The task's current state.
    pub fn state(&self) -> TaskState {
        self.task.status.state
    }
}

/// A conditional append of one or more records to one task.
#[derive(Debug, Clone)]
pub struct AppendRequest {
    /// The caller's authority.
    pub authority: String,
    /// The task.
    pub task_id: String,
    /// The sequence number the writer last saw; 0 creates the task.
    pub expected: u64,
    /// The writer's epoch; at least the highest epoch committed for the task.
    pub epoch: u64,
    /// The records, committed together or not at all.
    pub records: Vec<Record>,
}

impl AppendRequest {
    /// An append after `expected` by a writer of `epoch`.
    pub fn new(
        authority: impl Into<String>,
        task_id: impl Into<String>,
        expected: u64,
        epoch: u64,
        records: Vec<Record>,
    ) -> Self {
        Self {
            authority: authority.into(),
            task_id: task_id.into(),
            expected,
            epoch,
            records,
        }
    }

    /// Creates the task (expected 0, epoch 1); the first record must be
    /// [`Record::Created`].
    pub fn create(
        authority: impl Into<String>,
        task_id: impl Into<String>,
        records: Vec<Record>,
    ) -> Self {
        Self::new(authority, task_id, 0, 1, records)
    }
}

/// No two requests name the same task (see [`TaskLog::append_all`]).
#[doc(hidden)]
pub fn distinct_tasks(requests: &[AppendRequest]) -> bool {
    let mut ids: Vec<&str> = requests.iter().map(|r| r.task_id.as_str()).collect();
    ids.sort_unstable();
    ids.windows(2).all(|w| w[0] != w[1])
}

/// The result of a committed append.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The sequence number of the last record appended.
    pub seq: u64,
    /// The task after the append.
    pub snapshot: Snapshot,
    /// `snapshot.task`'s ProtoJSON, if the log wrote it in this append (the
    /// memory log packs a terminal task to its JSON): exactly what
    /// `a2a_tower_core::json::to_vec` writes for it, so that the answer can
    /// carry it as an [`Encoded`](crate::types::Encoded) task.
    pub task_json: Option<bytes::Bytes>,
}

/// A live view of one task: its snapshot, then every record after it.
pub struct Watch {
    /// The task when the watch started (`records` continue after `snapshot.seq`
    /// unless the watch was opened after an explicit sequence number).
    pub snapshot: Snapshot,
    /// The records, then live records.
    pub records: RecordStream,
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

/// The filters of ListTasks (a2a-spec.md §3.7), plus a page size and a cursor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this.
    pub status_after: Option<Timestamp>,
    /// At most this many tasks (the backend treats 0 as 1).
    pub page_size: usize,
    /// Continue after this position (from a previous page).
    pub after: Option<PageCursor>,
}

/// One page of [`TaskLog::list`], sorted by status timestamp, newest first,
/// then by task id.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    /// The tasks of the page.
    pub tasks: Vec<Arc<Task>>,
    /// The position after the last task, when more tasks follow.
    pub next: Option<PageCursor>,
    /// The number of matching tasks before pagination.
    pub total: usize,
}

/// An append-only, authority-scoped log of task records.
///
/// See the [module docs](self) for the append rules. Implementations must be
/// cheap to share (`Arc<dyn TaskLog>`); every method is safe to call
/// concurrently.
pub trait TaskLog: Send + Sync + 'static {
    /// Commits `request.records` if `request.expected` is the task's sequence
    /// number and `request.epoch` is not stale.
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended>;

    /// Commits several appends, each to a different task, as one: every
    /// request's conditions (authority, expected sequence number, epoch,
    /// records that may follow) hold and all records are committed, or nothing
    /// is. Watchers of each task see its records only after the whole commit.
    /// The error is the one of the first request (in order) that is refused;
    /// the same task twice is `Invalid`; no request is `Ok(vec![])`.
    ///
    /// Returns one [`Appended`] per request, in request order.
    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>>;

    /// The current snapshot of a task.
    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot>;

    /// The records with a sequence number greater than `after`.
    ///
    /// A backend may keep fewer records than the task has: the memory log
    /// keeps a window of the latest records of a live task
    /// ([`MemoryTaskLogBuilder::window`]) and none of a compacted terminal
    /// one. A cursor older than what it keeps gets
    /// [`LogErrorKind::Compacted`]; the reader continues from a
    /// [`snapshot`](Self::snapshot) (the engine's streams send the task's
    /// snapshot, then the records after it). A [`watch`](Self::watch) whose
    /// reader falls behind the window ends with the same error. The durable
    /// logs keep every record of a task.
    ///
    /// A stream compacted before a restating record
    /// ([`Retention::compact_stream`]) answers a cursor before that record
    /// with the records from it on, on every log (the memory log keeps
    /// every record of a stream: none is trimmed to its window).
    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>>;

    /// The current snapshot and every record after `after` (or after the
    /// snapshot when `None`), then live records as they are committed.
    ///
    /// The watch is registered when the returned future completes: a record
    /// committed afterwards is always delivered.
    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch>;

    /// One page of the authority's tasks matching `query`.
    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage>;

    /// The sequence number of the task's (or stream's) last commit, when this
    /// log knows it without a query and nothing outside this process can
    /// have moved it (the memory log; the SQLite log, for a task it wrote
    /// recently); `None` when only a read can tell (PostgreSQL, which other
    /// hosts write; a task the log does not keep in memory; a wrapper that
    /// does not pass the question on). Never ahead of the log, and behind it
    /// only while an append to the task is in flight in this process: a
    /// caller that holds every writer of this process off the task, and has
    /// applied its records up to this number, has nothing left to read.
    ///
    /// ```
    /// use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let log = MemoryTaskLog::new();
    /// assert_eq!(log.cached_head("alice", "t-1"), None);
    /// let created = Record::created("t-1", "c-1");
    /// log.append(AppendRequest::create("alice", "t-1", vec![created])).await.unwrap();
    /// assert_eq!(log.cached_head("alice", "t-1"), Some(1));
    /// assert_eq!(log.cached_head("bob", "t-1"), None, "another authority's task");
    /// # });
    /// ```
    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        let _ = (authority, task_id);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn dyn_log_is_shareable() {
        assert_send_sync::<Arc<dyn TaskLog>>();
        assert_send_sync::<MemoryTaskLog>();
        assert_send_sync::<Snapshot>();
    }
}
