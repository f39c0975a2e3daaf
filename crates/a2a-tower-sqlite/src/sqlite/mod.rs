//! [`SqliteTaskLog`]: a durable [`TaskLog`] in one SQLite file.

mod builder;
mod counters;
mod deliveries;
mod heads;
mod lock;
mod plan;
mod read;
mod retention;
mod rows;
mod schema;
mod writer;

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::hub::{self, Fetch, Hub};
use super::{
    Advance, AppendRequest, Appended, DeliveryCursor, DeliveryLog, ListPage, ListQuery, LiveTask,
    LiveTaskScan, LogError, LogErrorKind, LogFuture, PendingDelivery, Sequenced, Snapshot, TaskLog,
    Watch,
};
use heads::Heads;

pub use builder::{SqliteTaskLogBuilder, Synchronous};

/// A durable [`TaskLog`] in one SQLite file.
///
/// - **WAL mode**: readers never block the writer nor each other.
/// - **One writer thread** owns the only writing connection and drains a
///   queue of appends into one transaction per batch (group commit): under
///   load many appends share one COMMIT, and so one fsync. Each caller is
///   answered only after its batch committed.
/// - **Readers** use a small pool of read-only connections on
///   `tokio::task::spawn_blocking` (so a tokio runtime is required).
/// - **Durability**: [`Synchronous::Full`] by default: a COMMIT returns after
///   the WAL is fsynced, so an acknowledged append survives a power loss, and
///   group commit amortizes the fsync over the batch.
///   [`Synchronous::Normal`] skips that fsync: still safe against a crash of
///   the process (the WAL is in the OS page cache), not against the machine
///   going down.
/// - **Schema**: created and migrated by the crate (`schema_version` table):
///   one `entries` row per append (its records as a JSON array) and one small
///   `tasks` row per task (indexed for ListTasks and recovery); the task's
///   snapshot is stored with the entry where it comes to rest (or every 64
///   records), and reads replay the entries after it. A task's first entry
///   stores none: it is the whole log, as cheap to replay as a snapshot is
///   to decode.
/// - **One owner**: the log holds an exclusive lock on the file (a
///   `<database>-lock` sidecar) for as long as it is open, so a second log
///   on the same file, in this process or another, waits up to the
///   [busy timeout](SqliteTaskLogBuilder::busy_timeout) and then fails to
///   open. The operating system releases the lock when the process dies.
///   Several hosts share tasks through [`PostgresTaskLog`](https://docs.rs/a2a-tower/latest/a2a_tower/log/struct.PostgresTaskLog.html) instead.
/// - **Heads in memory**: the writer keeps the snapshot it committed last
///   for each recently written task ([`cached_tasks`](SqliteTaskLogBuilder::cached_tasks)),
///   published after COMMIT and before any caller is answered; snapshots
///   and watches of those tasks read no row and decode no JSON.
/// - **Watch**: the writer wakes in-process watchers after each commit and
///   hands them the committed records, so none is missed; only records from
///   before the watch started (a watch after an older sequence number) are
///   read from the database.
///
/// ```
/// use std::sync::Arc;
/// use a2a_tower::log::{AppendRequest, Record, SqliteTaskLog, TaskLog};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("a2a-doc-{}", uuid::Uuid::new_v4()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let log: Arc<dyn TaskLog> = Arc::new(SqliteTaskLog::open(dir.join("tasks.db")).unwrap());
/// let req = AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]);
/// assert_eq!(log.append(req).await.unwrap().seq, 1);
/// drop(log);
///
/// // Reopened: the task is still there.
/// let log = SqliteTaskLog::open(dir.join("tasks.db")).unwrap();
/// assert_eq!(log.snapshot("public", "t-1").await.unwrap().seq, 1);
/// # drop(log);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
///
/// Cloning shares the log. Dropping the last clone waits for the writer
/// thread to commit what it holds, then releases the file.
#[derive(Debug, Clone)]
pub struct SqliteTaskLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// `None` only while dropping.
    jobs: Option<mpsc::Sender<writer::Job>>,
    writer: Option<std::thread::JoinHandle<()>>,
    hub: Arc<Hub>,
    heads: Arc<Heads>,
    counters: Arc<counters::Counters>,
    readers: read::Readers,
}

impl Drop for Inner {
    /// Closes the queue and waits for the writer to commit what it holds and
    /// release the file, so that the file can be opened again at once.
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// What a [`SqliteTaskLog`]'s writer did so far (see [`SqliteTaskLog::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SqliteStats {
    /// Appends attempted (committed or rejected).
    pub appends: u64,
    /// Transactions (batches): `appends / transactions` is the mean batch.
    pub transactions: u64,
    /// How long the writer waited for work: over a period of load, the
    /// idle share of the writer thread (near zero: the writer is the
    /// bottleneck).
    pub writer_idle: Duration,
}

impl SqliteTaskLog {
    /// Opens the log at `path` with the default settings.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LogError> {
        Self::builder(path).open()
    }

    /// A builder for the log at `path`.
    pub fn builder(path: impl AsRef<Path>) -> SqliteTaskLogBuilder {
        SqliteTaskLogBuilder::new(path.as_ref().to_owned())
    }

    /// The writer's counters, to see group commit at work.
    pub fn stats(&self) -> SqliteStats {
        use std::sync::atomic::Ordering::Relaxed;
        SqliteStats {
            appends: self.inner.counters.appends.load(Relaxed),
            transactions: self.inner.counters.transactions.load(Relaxed),
            writer_idle: self.inner.counters.idle(),
        }
    }

    /// The schema version this crate writes.
    pub const SCHEMA_VERSION: i64 = schema::VERSION;
}

impl TaskLog for SqliteTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let append = match writer::Append::new(&self.inner.heads, request) {
            Ok(append) => append,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.inner
            .submit(writer::Job::One(append, writer::Answer::new(reply)), rx)
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        if requests.is_empty() {
            return Box::pin(std::future::ready(Ok(Vec::new())));
        }
        if !super::distinct_tasks(&requests) {
            return Box::pin(std::future::ready(Err(LogError::new(
                LogErrorKind::Invalid,
            ))));
        }
        let appends: Result<Vec<_>, _> = requests
            .into_iter()
            .map(|r| writer::Append::new(&self.inner.heads, r))
            .collect();
        let appends = match appends {
            Ok(appends) => appends,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.inner
            .submit(writer::Job::All(appends, writer::Answer::new(reply)), rx)
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
        let (a, t) = (authority.to_owned(), task_id.to_owned());
        Box::pin(
            self.inner
                .readers
                .run(move |c| read::records(c, &a, &t, after)),
        )
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        Box::pin(async move {
            let sub = self.inner.hub.subscribe(task_id);
            let snapshot = self.inner.snapshot(authority, task_id).await?;
            let inner = self.inner.clone();
            let (a, t) = (authority.to_owned(), task_id.to_owned());
            let fetch: Fetch = Arc::new(move |after| {
                // Records this process committed are delivered from memory.
                if let Some(recent) = inner.hub.recent(&t, after) {
                    return Box::pin(std::future::ready(Ok(recent)));
                }
                let (a, t) = (a.clone(), t.clone());
                Box::pin(
                    inner
                        .readers
                        .run(move |c| read::records_page(c, &a, &t, after, hub::PAGE)),
                )
            });
            hub::watch(sub, snapshot, after, fetch).await
        })
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        let (a, q) = (authority.to_owned(), query.clone());
        Box::pin(self.inner.readers.run(move |c| read::list(c, &a, &q)))
    }

    /// The head the writer committed last, if it is kept in memory (see
    /// `heads`: the log owns its file, so a kept head is never behind it).
    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        self.inner.heads.seq_of(task_id, authority)
    }
}

impl LiveTaskScan for SqliteTaskLog {
    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        let after = after.map(|(a, t)| (a.to_owned(), t.to_owned()));
        Box::pin(self.inner.readers.run(move |c| read::live(c, after, limit)))
    }
}

impl DeliveryLog for SqliteTaskLog {
    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>> {
        let (a, t) = (authority.to_owned(), task_id.to_owned());
        Box::pin(
            self.inner
                .readers
                .run(move |c| deliveries::cursors(c, &a, &t)),
        )
    }

    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>> {
        let after = after.map(|(a, t)| (a.to_owned(), t.to_owned()));
        Box::pin(
            self.inner
                .readers
                .run(move |c| deliveries::pending(c, after, limit)),
        )
    }

    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: Duration,
    ) -> LogFuture<'a, bool> {
        self.delivery_op(Self::claim_op(authority, task_id, holder, ttl))
    }

    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()> {
        let released = self.delivery_op(deliveries::Op::Release {
            authority: authority.to_owned(),
            task_id: task_id.to_owned(),
            holder: holder.to_owned(),
        });
        Box::pin(async move { released.await.map(drop) })
    }

    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool> {
        self.delivery_op(deliveries::Op::Advance(advance.clone()))
    }
}

impl Inner {
    /// Queues `job` for the writer; the future answers once its batch
    /// committed (or failed).
    fn submit<T: Send + 'static>(
        &self,
        job: writer::Job,
        rx: tokio::sync::oneshot::Receiver<writer::Reply<T>>,
    ) -> LogFuture<'static, T> {
        let sent = match &self.jobs {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        Box::pin(async move {
            if !sent {
                return Err(LogError::backend("sqlite writer stopped"));
            }
            let writer::Reply { outcome, leftovers } = rx
                .await
                .map_err(|_| LogError::backend("sqlite writer stopped"))?;
            // Freed here, on the caller's thread.
            drop(leftovers);
            outcome
        })
    }

    /// The task's head from memory when this process wrote it recently
    /// (the authority is checked there too), else from the database.
    async fn snapshot(&self, authority: &str, task_id: &str) -> Result<Snapshot, LogError> {
        crate::log::task_view(task_id)?;
        if let Some(head) = self.heads.get(task_id) {
            if head.authority != authority {
                return Err(LogError::new(LogErrorKind::NotFound));
            }
            return Ok(head.snapshot);
        }
        let (a, t) = (authority.to_owned(), task_id.to_owned());
        self.readers.run(move |c| read::snapshot(c, &a, &t)).await
    }
}

fn read_only(path: &Path, busy: Duration) -> Result<Connection, LogError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(LogError::backend)?;
    conn.busy_timeout(busy).map_err(LogError::backend)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConfigError;
    use std::path::PathBuf;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("a2a-sqlite-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn bad_settings_are_config_errors_and_open_nothing() {
        let dir = temp_dir();
        let db = dir.join("tasks.db");
        let err = SqliteTaskLog::builder(&db).max_batch(0).open().unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Config);
        assert_eq!(
            err.config_error().map(ConfigError::message),
            Some("sqlite task log max_batch must be positive")
        );
        // Not even the lock file was created.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();

        let err = SqliteTaskLog::open("").unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Config);
        assert_eq!(
            err.config_error().map(ConfigError::message),
            Some("sqlite task log path must not be empty")
        );
        // The lock file of "" would be `-lock` in the working directory.
        assert!(!Path::new("-lock").exists());
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_a_backend_error() {
        let dir = temp_dir();
        let err = SqliteTaskLog::open(dir.join("missing").join("tasks.db")).unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Backend);
        assert!(err.config_error().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
