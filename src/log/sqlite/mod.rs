//! [`SqliteTaskLog`]: a durable [`TaskLog`] in one SQLite file.

mod read;
mod schema;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::hub::{self, Fetch, Hub};
use super::{
    AppendRequest, Appended, ListPage, ListQuery, LiveTask, LogError, LogFuture, Sequenced,
    Snapshot, TaskLog, Watch,
};
use crate::ConfigError;

/// When SQLite makes a COMMIT durable (`PRAGMA synchronous` in WAL mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// fsync the WAL at every COMMIT: an acknowledged append survives a
    /// power loss (default).
    #[default]
    Full,
    /// No fsync at COMMIT: an acknowledged append survives a crash of the
    /// process, but the last commits may be lost if the machine goes down.
    Normal,
}

/// Builder of [`SqliteTaskLog`].
#[derive(Debug, Clone)]
#[must_use]
pub struct SqliteTaskLogBuilder {
    path: PathBuf,
    max_batch: usize,
    readers: usize,
    synchronous: Synchronous,
    busy_timeout: Duration,
}

impl SqliteTaskLogBuilder {
    /// At most this many appends per transaction (default 256); 1 turns
    /// group commit off.
    pub fn max_batch(mut self, n: usize) -> Self {
        self.max_batch = n;
        self
    }

    /// At most this many read-only connections (default 4, at least 1):
    /// reads beyond that wait for a free one, so connections are opened once
    /// and kept instead of being opened per read under load.
    pub fn readers(mut self, n: usize) -> Self {
        self.readers = n;
        self
    }

    /// The durability of a COMMIT (default [`Synchronous::Full`]).
    pub fn synchronous(mut self, s: Synchronous) -> Self {
        self.synchronous = s;
        self
    }

    /// How long a connection waits for a lock held by another process
    /// (default 5 s).
    pub fn busy_timeout(mut self, d: Duration) -> Self {
        self.busy_timeout = d;
        self
    }

    /// Opens (creating if needed) and migrates the database, and starts the
    /// writer thread. Blocking: call it before serving, or from
    /// `spawn_blocking`.
    pub fn open(self) -> Result<SqliteTaskLog, LogError> {
        if self.max_batch == 0 {
            return Err(LogError::backend(ConfigError::new(
                "sqlite task log max_batch must be positive",
            )));
        }
        let mut conn = Connection::open(&self.path).map_err(LogError::backend)?;
        conn.busy_timeout(self.busy_timeout)
            .map_err(LogError::backend)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(LogError::backend)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(LogError::backend(format!(
                "journal_mode is {mode}, not wal"
            )));
        }
        let sync = match self.synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        };
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {sync}; PRAGMA foreign_keys = OFF;"
        ))
        .map_err(LogError::backend)?;
        conn.set_prepared_statement_cache_capacity(32);
        schema::migrate(&mut conn)?;
        let hub = Arc::new(Hub::default());
        let (tx, rx) = mpsc::channel();
        let writer_hub = hub.clone();
        let max_batch = self.max_batch;
        let counters = Arc::new(writer::Counters::default());
        let writer_counters = counters.clone();
        std::thread::Builder::new()
            .name("a2a-sqlite-writer".into())
            .spawn(move || writer::run(conn, rx, writer_hub, max_batch, writer_counters))
            .map_err(LogError::backend)?;
        Ok(SqliteTaskLog {
            inner: Arc::new(Inner {
                jobs: Mutex::new(tx),
                hub,
                counters,
                readers: read::Readers::new(self.path, self.readers, self.busy_timeout),
            }),
        })
    }
}

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
/// - **Schema**: created and migrated by the crate (`schema_version` table).
/// - **Watch**: the writer wakes in-process watchers after each commit; they
///   read the new records back by sequence number, so none is missed. A
///   single process owns the file: appends by another process are seen by
///   reads but do not wake watchers.
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
/// Cloning shares the log; the writer thread stops when the last clone is
/// dropped.
#[derive(Debug, Clone)]
pub struct SqliteTaskLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    jobs: Mutex<mpsc::Sender<writer::Job>>,
    hub: Arc<Hub>,
    counters: Arc<writer::Counters>,
    readers: read::Readers,
}

/// What a [`SqliteTaskLog`]'s writer did so far (see [`SqliteTaskLog::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SqliteStats {
    /// Appends attempted (committed or rejected).
    pub appends: u64,
    /// Transactions (batches): `appends / transactions` is the mean batch.
    pub transactions: u64,
}

impl SqliteTaskLog {
    /// Opens the log at `path` with the default settings.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LogError> {
        Self::builder(path).open()
    }

    /// A builder for the log at `path`.
    pub fn builder(path: impl AsRef<Path>) -> SqliteTaskLogBuilder {
        SqliteTaskLogBuilder {
            path: path.as_ref().to_owned(),
            max_batch: 256,
            readers: 4,
            synchronous: Synchronous::Full,
            busy_timeout: Duration::from_secs(5),
        }
    }

    /// The writer's counters, to see group commit at work.
    pub fn stats(&self) -> SqliteStats {
        use std::sync::atomic::Ordering::Relaxed;
        SqliteStats {
            appends: self.inner.counters.appends.load(Relaxed),
            transactions: self.inner.counters.transactions.load(Relaxed),
        }
    }

    /// The schema version this crate writes.
    pub const SCHEMA_VERSION: i64 = schema::VERSION;
}

impl TaskLog for SqliteTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        let sent = self
            .inner
            .jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(writer::Job { request, reply });
        Box::pin(async move {
            sent.map_err(|_| LogError::backend("sqlite writer stopped"))?;
            rx.await
                .map_err(|_| LogError::backend("sqlite writer stopped"))?
        })
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        let (a, t) = (authority.to_owned(), task_id.to_owned());
        Box::pin(self.inner.readers.run(move |c| read::snapshot(c, &a, &t)))
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
            let snapshot = self.snapshot(authority, task_id).await?;
            let cursor = after.unwrap_or(snapshot.seq);
            let buf = self.read(authority, task_id, cursor).await?;
            let inner = self.inner.clone();
            let (a, t) = (authority.to_owned(), task_id.to_owned());
            let fetch: Fetch = Arc::new(move |after| {
                // Records this process committed are delivered from memory.
                if let Some(recent) = inner.hub.recent(&t, after) {
                    return Box::pin(std::future::ready(Ok(recent)));
                }
                let (a, t) = (a.clone(), t.clone());
                Box::pin(inner.readers.run(move |c| read::records(c, &a, &t, after)))
            });
            let done = snapshot.projection.is_terminal();
            let records = hub::stream(sub, fetch, cursor, buf, done);
            Ok(Watch { snapshot, records })
        })
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        let (a, q) = (authority.to_owned(), query.clone());
        Box::pin(self.inner.readers.run(move |c| read::list(c, &a, &q)))
    }

    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        let after = after.map(|(a, t)| (a.to_owned(), t.to_owned()));
        Box::pin(self.inner.readers.run(move |c| read::live(c, after, limit)))
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
