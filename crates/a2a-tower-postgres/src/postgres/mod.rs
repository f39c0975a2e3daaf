//! [`PostgresTaskLog`]: a [`TaskLog`] in PostgreSQL, shared by several hosts.

mod builder;
mod commit;
mod deliveries;
mod listen;
mod notice;
mod read;
mod retention;
mod schema;
mod sql;
mod write;

use std::sync::{Arc, Mutex};

use deadpool_postgres::Pool;
use tokio_postgres::error::SqlState;

pub use self::builder::PostgresTaskLogBuilder;

use self::sql::Sql;
use super::hub::{self, Fetch, Hub};
use super::stored::ProjectionCache;
use super::{
    Advance, AppendRequest, Appended, DeliveryCursor, DeliveryLog, ListPage, ListQuery, LiveTask,
    LiveTaskScan, LogError, LogErrorKind, LogFuture, PendingDelivery, Sequenced, Snapshot, TaskLog,
    Watch,
};

/// A [`TaskLog`] in PostgreSQL, shared by several hosts.
///
/// - **Conditional appends in the database**: an append after the sequence
///   number this log last committed for the task (or a creation) is one
///   statement that updates the row and inserts the append's entry only if
///   the row is still at that sequence number, of the same authority, with
///   no newer epoch (creation: `INSERT … ON CONFLICT DO NOTHING`); any other
///   append, or one whose condition failed, is a transaction that locks the
///   row (`SELECT … FOR UPDATE`), checks the epoch and sequence number
///   against it and writes. Each append's records are one `entries` row (a
///   JSON array) keyed `(task_id, seq)` by its last sequence number, with its
///   first; a read after a cursor inside an entry filters its records. Two
///   hosts can never both commit the same sequence number, and a host with
///   an older epoch is fenced.
/// - **Group commit**: the one-statement appends go to one committer per
///   log, a task owning a dedicated connection, which commits every append
///   queued meanwhile in one transaction, pipelined (`BEGIN`, the
///   creations as one statement over arrays, the other appends one
///   statement each, `COMMIT`: one round trip); a refusal is a row count and
///   does not abort the batch; nobody is answered before the `COMMIT`
///   returned, and an error answers every append of the batch.
/// - **Watches across hosts**: after its commit, each batch hands its
///   records to this log's own watchers (served from memory) and sends a
///   `NOTIFY` naming each task with the sequence number it reached (one
///   notification for the batches of each
///   [`notify_interval`](PostgresTaskLogBuilder::notify_interval), 2 ms by
///   default; the first after a quiet interval at once), in a transaction
///   of its own without a WAL
///   flush (inside the append, PostgreSQL would serialize every notifying
///   commit behind the previous one's fsync); the committer's connection
///   LISTENs too (PostgreSQL hands a busy connection its notifications
///   between its transactions, without waking a process per batch of
///   another host) and wakes the watchers of other hosts' appends, which
///   read the new records back by
///   sequence number (never from memory while another host's commit is
///   newer), so a record is never missed between two notifications.
/// - **Readers** use pooled connections (`deadpool-postgres`) and never take
///   an epoch.
/// - **Schema**: created and migrated by the crate in its own schema
///   (default `a2a`), with a `schema_version` table.
///
/// ```no_run
/// use a2a_tower::log::{LiveTaskScan, PostgresTaskLog, TaskLog};
/// # async fn f() -> Result<(), a2a_tower::log::LogError> {
/// let log = PostgresTaskLog::builder("postgres://postgres@127.0.0.1:5432/test")
///    .schema("a2a")
///    .pool_size(16)
///    .connect()
///    .await?;
/// assert!(log.live_tasks(None, 100).await?.is_empty());
/// # Ok(()) }
/// ```
///
/// Cloning shares the pool and the committer; they stop with the last
/// clone.
#[derive(Debug, Clone)]
pub struct PostgresTaskLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sql: Arc<Sql>,
    /// Commits the one-statement appends, in batches.
    committer: self::commit::Committer,
    pool: Pool,
    channel: String,
    /// This log's mark on its notifications (`<instance>:<task id>`).
    instance: String,
    hub: Arc<Hub>,
    cache: Mutex<ProjectionCache>,
}

fn db(e: tokio_postgres::Error) -> LogError {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        return LogError::new(LogErrorKind::Conflict);
    }
    LogError::backend(e)
}

/// Runs one transaction of `appends` appends on a pooled connection (the
/// locked path, `append_all`), recording its time to commit; the committer
/// records each of its batches itself (`commit::Run::commit`).
pub(super) async fn timed<T>(
    appends: usize,
    commit: impl Future<Output = Result<T, LogError>>,
) -> Result<T, LogError> {
    let began = std::time::Instant::now();
    let out = commit.await;
    a2a_tower_core::telemetry::record_commit("postgres", appends, began.elapsed());
    out
}

fn not_found() -> LogError {
    LogError::new(LogErrorKind::NotFound)
}

impl PostgresTaskLog {
    /// A builder for the log at `url` (`postgres://user@host:port/db`).
    pub fn builder(url: impl Into<String>) -> PostgresTaskLogBuilder {
        PostgresTaskLogBuilder::new(url.into())
    }

    /// The schema version this crate writes.
    pub const SCHEMA_VERSION: i64 = schema::VERSION;
}

impl Inner {
    fn cache(&self) -> std::sync::MutexGuard<'_, ProjectionCache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TaskLog for PostgresTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        Box::pin(self.inner.append(request))
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        Box::pin(timed(requests.len(), self.inner.append_all(requests)))
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        Box::pin(self.inner.snapshot(authority, task_id))
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        Box::pin(self.inner.read(authority, task_id, after))
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        Box::pin(async move {
            // Subscribe first: a commit after this point wakes the stream.
            let sub = self.inner.hub.subscribe(task_id);
            let snapshot = self.inner.snapshot(authority, task_id).await?;
            let inner = self.inner.clone();
            let (a, t): (Arc<str>, Arc<str>) = (authority.into(), task_id.into());
            let fetch: Fetch = Arc::new(move |after| {
                // This log's own commits from memory; anything else (another
                // host's commit wiped the task's kept records) from the
                // database.
                if let Some(recent) = inner.hub.recent(&t, after) {
                    return Box::pin(std::future::ready(Ok(recent)));
                }
                let (inner, a, t) = (inner.clone(), a.clone(), t.clone());
                Box::pin(async move { inner.read_page(&a, &t, after, hub::PAGE).await })
            });
            hub::watch(sub, snapshot, after, fetch).await
        })
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        Box::pin(self.inner.list(authority, query))
    }
}

impl LiveTaskScan for PostgresTaskLog {
    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        Box::pin(self.inner.live(after, limit))
    }
}

impl DeliveryLog for PostgresTaskLog {
    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>> {
        Box::pin(self.inner.delivery_cursors(authority, task_id))
    }

    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>> {
        Box::pin(self.inner.pending_deliveries(after, limit))
    }

    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> LogFuture<'a, bool> {
        Box::pin(self.inner.claim(authority, task_id, holder, ttl))
    }

    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()> {
        Box::pin(self.inner.release(authority, task_id, holder))
    }

    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool> {
        Box::pin(self.inner.advance(advance))
    }
}
