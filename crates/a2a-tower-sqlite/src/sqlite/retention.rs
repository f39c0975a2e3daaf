//! Retention in SQLite ([`Retention`](crate::log::Retention)): the expired
//! terminal tasks are found by a reader (a scan that never holds the
//! writer), then deleted by the writer thread as one job of its batch,
//! rechecked there (still terminal, still expired), in a savepoint of the
//! batch's transaction: each task whole or gone. A new database is created
//! with `auto_vacuum = INCREMENTAL`, so [`reclaim`](crate::log::Retention::reclaim)
//! gives the freed pages back to the file system; an older file reuses them.

use rusqlite::{Connection, params};

use super::SqliteTaskLog;
use super::writer::{Answer, Job, Reply};
use crate::log::delivery::TERMINAL_STATES_SQL;
use crate::log::stored::clamp_nanos;
use crate::log::{LiveTask, LogError, LogFuture, Retention};
use crate::types::Timestamp;

/// Pages given back per reclaim (4 KiB each: 4 MiB).
const RECLAIM_PAGES: u32 = 1024;

/// A deletion the writer runs.
#[derive(Debug)]
pub(crate) enum Op {
    /// Delete these tasks if they are still terminal with a status before
    /// `before` (nanoseconds).
    Purge { ids: Vec<String>, before: i64 },
    /// Give freed pages back.
    Reclaim,
}

/// At most `limit` expired terminal tasks (a reader's query).
fn expired(c: &Connection, before: i64, limit: usize) -> Result<Vec<String>, LogError> {
    let sql = format!(
        "SELECT task_id FROM tasks WHERE live = 0 AND state IN {TERMINAL_STATES_SQL} AND status_ts < ?1 AND substr(task_id, 1, 1) <> char(1) LIMIT ?2"
    );
    c.prepare_cached(&sql)
        .and_then(|mut st| {
            st.query_map(params![before, limit as i64], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(LogError::backend)
}

/// At most `limit` tasks waiting for their client (INPUT_REQUIRED 6,
/// AUTH_REQUIRED 8) with a status before `before` (a reader's query).
fn waiting(c: &Connection, before: i64, limit: usize) -> Result<Vec<LiveTask>, LogError> {
    let mut st = c
        .prepare_cached(
            "SELECT authority, task_id, context_id, state, seq, epoch, host FROM tasks \
             WHERE state IN (6, 8) AND status_ts < ?1 AND substr(task_id, 1, 1) <> char(1) LIMIT ?2",
        )
        .map_err(LogError::backend)?;
    let mut rows = st
        .query(params![before, limit as i64])
        .map_err(LogError::backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(LogError::backend)? {
        out.push(super::read::live_task(row)?);
    }
    Ok(out)
}

/// Runs `op` in a savepoint of the writer's transaction: `Ok(Err(_))` when
/// it failed (rolled back alone), `Err(_)` when the rollback failed.
pub(crate) fn write(conn: &Connection, op: &Op) -> rusqlite::Result<Result<usize, LogError>> {
    if let Op::Reclaim = op {
        // Outside a transaction only; run by the writer between batches.
        return Ok(Ok(0));
    }
    conn.execute_batch("SAVEPOINT retention")?;
    match run(conn, op) {
        Ok(n) => {
            conn.execute_batch("RELEASE retention")?;
            Ok(Ok(n))
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO retention; RELEASE retention")?;
            Ok(Err(LogError::backend(e.to_string())))
        }
    }
}

fn run(conn: &Connection, op: &Op) -> rusqlite::Result<usize> {
    let Op::Purge { ids, before } = op else {
        return Ok(0);
    };
    let sql = format!(
        "DELETE FROM tasks WHERE task_id = ?1 AND live = 0 AND state IN {TERMINAL_STATES_SQL} AND status_ts < ?2"
    );
    let mut deleted = 0;
    for id in ids {
        if conn.prepare_cached(&sql)?.execute(params![id, before])? == 0 {
            continue;
        }
        for table in ["entries", "push_cursors", "push_leases"] {
            conn.prepare_cached(&format!("DELETE FROM {table} WHERE task_id = ?1"))?
                .execute([id])?;
        }
        deleted += 1;
    }
    Ok(deleted)
}

/// Gives up to [`RECLAIM_PAGES`] free pages back (writer thread, outside a
/// transaction); nothing unless the file is in incremental auto-vacuum.
pub(crate) fn reclaim(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("PRAGMA incremental_vacuum({RECLAIM_PAGES})"))
}

impl SqliteTaskLog {
    fn retention_op(&self, op: Op) -> LogFuture<'static, usize> {
        let (reply, rx) = tokio::sync::oneshot::channel::<Reply<usize>>();
        self.inner
            .submit(Job::Retention(op, Answer::new(reply)), rx)
    }
}

impl Retention for SqliteTaskLog {
    fn purge_terminal(&self, before: Timestamp, limit: usize) -> LogFuture<'_, usize> {
        let before = clamp_nanos(before.unix_nanos());
        Box::pin(async move {
            let ids = self
                .inner
                .readers
                .run(move |c| expired(c, before, limit))
                .await?;
            if ids.is_empty() {
                return Ok(0);
            }
            self.retention_op(Op::Purge { ids, before }).await
        })
    }

    fn waiting_tasks(&self, before: Timestamp, limit: usize) -> LogFuture<'_, Vec<LiveTask>> {
        let before = clamp_nanos(before.unix_nanos());
        Box::pin(self.inner.readers.run(move |c| waiting(c, before, limit)))
    }

    fn reclaim(&self) -> LogFuture<'_, ()> {
        let done = self.retention_op(Op::Reclaim);
        Box::pin(async move { done.await.map(drop) })
    }
}
