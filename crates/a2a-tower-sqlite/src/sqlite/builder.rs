//! [`SqliteTaskLogBuilder`]: the settings of a [`SqliteTaskLog`], and opening it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

use super::heads::Heads;
use super::{Inner, SqliteTaskLog, counters, lock, read, schema, writer};
use crate::ConfigError;
use crate::log::LogError;
use crate::log::hub::Hub;

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
    cached_tasks: usize,
    vacuum_on_open: bool,
}

impl SqliteTaskLogBuilder {
    /// The default settings for the log at `path`.
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            max_batch: 256,
            readers: 4,
            synchronous: Synchronous::Full,
            busy_timeout: Duration::from_secs(5),
            cached_tasks: 4096,
            vacuum_on_open: false,
        }
    }

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

    /// How long a connection waits for a lock held by another process, and
    /// [`open`](Self::open) for the log's ownership of the file to be
    /// released (default 5 s).
    pub fn busy_timeout(mut self, d: Duration) -> Self {
        self.busy_timeout = d;
        self
    }

    /// About how many recently written tasks are kept in memory, so that
    /// reads of them need no query (default 4096; between half and all of
    /// them are kept).
    pub fn cached_tasks(mut self, n: usize) -> Self {
        self.cached_tasks = n;
        self
    }

    /// Converts a file created before incremental auto-vacuum (by an
    /// earlier version) at [`open`](Self::open), so that retention gives the
    /// space of deleted tasks back to the file system (default off: such a
    /// file reuses the freed pages but never shrinks). A one-time
    /// `PRAGMA auto_vacuum = INCREMENTAL; VACUUM`: it rewrites the whole
    /// file, holding it for as long, and needs as much free disk again; a
    /// new or already converted file is left as is.
    pub fn vacuum_on_open(mut self, on: bool) -> Self {
        self.vacuum_on_open = on;
        self
    }

    /// Checks the settings, before anything is opened.
    fn check(&self) -> Result<(), ConfigError> {
        if self.path.as_os_str().is_empty() {
            return Err(ConfigError::new("sqlite task log path must not be empty"));
        }
        if self.max_batch == 0 {
            return Err(ConfigError::new(
                "sqlite task log max_batch must be positive",
            ));
        }
        Ok(())
    }

    /// Opens (creating if needed) and migrates the database, and starts the
    /// writer thread. Blocking: call it before serving, or from
    /// `spawn_blocking`.
    ///
    /// A bad setting (an empty path, a zero `max_batch`) fails with
    /// [`LogErrorKind::Config`](crate::log::LogErrorKind::Config) before any file is opened; a failure to open,
    /// lock or migrate the file with [`LogErrorKind::Backend`](crate::log::LogErrorKind::Backend).
    pub fn open(self) -> Result<SqliteTaskLog, LogError> {
        self.check().map_err(LogError::config)?;
        let owner = lock::Owner::acquire(&self.path, self.busy_timeout)?;
        let mut conn = Connection::open(&self.path).map_err(LogError::backend)?;
        conn.busy_timeout(self.busy_timeout)
            .map_err(LogError::backend)?;
        // Effective on a new file only (before its first table): deleted
        // tasks' pages can then be given back (`Retention::reclaim`).
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL")
            .map_err(LogError::backend)?;
        if self.vacuum_on_open {
            convert(&conn).map_err(LogError::backend)?;
        }
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
        // `temp_store = MEMORY`: the statement journal of a job's SAVEPOINT
        // (see `writer`) stays in memory; on a file it is written page by
        // page once it passes 64 KiB, a third of the writer's time in a
        // batch of multi-append jobs. It is never needed after a crash:
        // durability is the WAL's.
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {sync}; PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY;"
        ))
        .map_err(LogError::backend)?;
        conn.set_prepared_statement_cache_capacity(32);
        schema::migrate(&mut conn)?;
        let hub = Arc::new(Hub::default());
        let heads = Arc::new(Heads::new(self.cached_tasks));
        let counters = Arc::new(counters::Counters::default());
        let (tx, rx) = mpsc::channel();
        let max_batch = self.max_batch;
        let thread = {
            let (hub, heads, counters) = (hub.clone(), heads.clone(), counters.clone());
            std::thread::Builder::new()
                .name("a2a-sqlite-writer".into())
                .spawn(move || {
                    writer::run(conn, rx, hub, heads, max_batch, counters);
                    // The file is released only once its writer is done.
                    drop(owner);
                })
                .map_err(LogError::backend)?
        };
        Ok(SqliteTaskLog {
            inner: Arc::new(Inner {
                jobs: Some(tx),
                writer: Some(thread),
                hub,
                heads,
                counters,
                readers: read::Readers::new(self.path, self.readers, self.busy_timeout),
            }),
        })
    }
}

/// `auto_vacuum = INCREMENTAL` (2) on a file that has tables but another
/// mode: VACUUM, out of WAL (which would keep the old mode), then back.
fn convert(conn: &Connection) -> rusqlite::Result<()> {
    let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    if mode == 2 || tables == 0 {
        return Ok(());
    }
    conn.query_row("PRAGMA journal_mode = DELETE", [], |r| {
        r.get::<_, String>(0)
    })?;
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &std::path::Path) -> i64 {
        let c = Connection::open(path).unwrap();
        c.query_row("PRAGMA auto_vacuum", [], |r| r.get(0)).unwrap()
    }

    /// A file of an earlier version: tables, no auto-vacuum, in WAL.
    fn old_file(path: &std::path::Path) {
        let c = Connection::open(path).unwrap();
        c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        c.execute_batch(
            "PRAGMA auto_vacuum = NONE; CREATE TABLE old (x); INSERT INTO old VALUES (1)",
        )
        .unwrap();
    }

    #[test]
    fn an_old_file_is_converted_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("a2a-vacuum-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (kept, converted) = (dir.join("kept.db"), dir.join("converted.db"));
        old_file(&kept);
        old_file(&converted);

        drop(SqliteTaskLog::builder(&kept).open().unwrap());
        assert_eq!(mode(&kept), 0, "left as is by default");
        drop(
            SqliteTaskLog::builder(&converted)
                .vacuum_on_open(true)
                .open()
                .unwrap(),
        );
        assert_eq!(mode(&converted), 2, "incremental after the one-time VACUUM");
        // The rows survive, and the log is back in WAL.
        let c = Connection::open(&converted).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM old", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        let journal: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(journal, "wal");
        // A new file is incremental either way.
        let new = dir.join("new.db");
        drop(
            SqliteTaskLog::builder(&new)
                .vacuum_on_open(true)
                .open()
                .unwrap(),
        );
        assert_eq!(mode(&new), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
