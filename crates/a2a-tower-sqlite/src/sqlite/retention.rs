//! Retention in SQLite ([`Retention`](crate::log::Retention)): the expired
//! terminal tasks are found by a reader (a scan that never holds the
//! writer), then deleted by the writer thread as one job of its batch,
//! rechecked there (still terminal, still expired), in a savepoint of the
//! batch's transaction: each task whole or gone. A new database is created
//! with `auto_vacuum = INCREMENTAL`, so [`reclaim`](crate::log::Retention::reclaim)
//! gives the freed pages back to the file system; an older file reuses them.
//!
//! A stream's compaction ([`compact_stream`](crate::log::Retention::compact_stream))
//! is a writer job too: it stores the stream's snapshot at its head when
//! the one it had lies in what is dropped, then deletes the entries that end
//! before the kept position (the task row keeps the head).

use rusqlite::{Connection, params};

use super::SqliteTaskLog;
use super::writer::{Answer, Job, Reply};
use crate::log::delivery::TERMINAL_STATES_SQL;
use crate::log::stored::{clamp_nanos, encode_projection, to_i64};
use crate::log::{LiveTask, LogError, LogErrorKind, LogFuture, Retention};
use crate::types::Timestamp;

/// Pages given back per reclaim (4 KiB each: 4 MiB).
const RECLAIM_PAGES: u32 = 1024;

/// A deletion the writer runs.
#[derive(Debug)]
pub(crate) enum Op {
    /// Delete these tasks if they are still terminal with a status before
    /// `before` (nanoseconds).
    Purge { ids: Vec<String>, before: i64 },
    /// Drop the records of a stream before `keep_from`.
    Compact {
        authority: String,
        stream_id: String,
        keep_from: u64,
    },
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
    let out = match op {
        Op::Purge { ids, before } => {
            purge(conn, ids, *before).map_err(|e| LogError::backend(e.to_string()))
        }
        Op::Compact {
            authority,
            stream_id,
            keep_from,
        } => compact(conn, authority, stream_id, *keep_from),
        Op::Reclaim => Ok(0),
    };
    match out {
        Ok(n) => {
            conn.execute_batch("RELEASE retention")?;
            Ok(Ok(n))
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO retention; RELEASE retention")?;
            Ok(Err(e))
        }
    }
}

fn purge(conn: &Connection, ids: &[String], before: i64) -> rusqlite::Result<usize> {
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

/// Drops the entries of stream `id` that end before `keep_from`; first, if
/// the stored snapshot is among them (or there is none yet: a replay from
/// the first record), stores the stream's snapshot with its head's entry.
/// Returns the records dropped.
fn compact(
    conn: &Connection,
    authority: &str,
    id: &str,
    keep_from: u64,
) -> Result<usize, LogError> {
    let Some(row) = super::read::row(conn, id)?.filter(|r| r.authority == authority) else {
        return Ok(0);
    };
    if keep_from > row.seq {
        return Ok(0);
    }
    let keep = to_i64(keep_from)?;
    let db = |e: rusqlite::Error| LogError::backend(e.to_string());
    let dropped: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(seq - first + 1), 0) FROM entries WHERE task_id = ?1 AND seq < ?2",
        )
        .and_then(|mut st| st.query_row(params![id, keep], |r| r.get(0)))
        .map_err(db)?;
    if dropped == 0 {
        return Ok(0);
    }
    if row.snapshot_seq < keep_from {
        let json = encode_projection(&row.projection(conn, id)?, None)?;
        let head = to_i64(row.seq)?;
        let stored = conn
            .prepare_cached("UPDATE entries SET snapshot = ?3 WHERE task_id = ?1 AND seq = ?2")
            .and_then(|mut st| st.execute(params![id, head, json]))
            .map_err(db)?;
        if stored != 1 {
            return Err(LogError::backend("the head's entry is missing"));
        }
        conn.prepare_cached("UPDATE tasks SET snapshot_seq = ?2 WHERE task_id = ?1")
            .and_then(|mut st| st.execute(params![id, head]))
            .map_err(db)?;
    }
    conn.prepare_cached("DELETE FROM entries WHERE task_id = ?1 AND seq < ?2")
        .and_then(|mut st| st.execute(params![id, keep]))
        .map_err(db)?;
    Ok(usize::try_from(dropped).unwrap_or(0))
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

    fn compact_stream<'a>(
        &'a self,
        authority: &'a str,
        stream_id: &'a str,
        keep_from: u64,
    ) -> LogFuture<'a, usize> {
        if !crate::log::is_stream(stream_id) {
            return Box::pin(std::future::ready(Err(LogError::new(
                LogErrorKind::Invalid,
            ))));
        }
        self.retention_op(Op::Compact {
            authority: authority.to_owned(),
            stream_id: stream_id.to_owned(),
            keep_from,
        })
    }

    fn reclaim(&self) -> LogFuture<'_, ()> {
        let done = self.retention_op(Op::Reclaim);
        Box::pin(async move { done.await.map(drop) })
    }
}
