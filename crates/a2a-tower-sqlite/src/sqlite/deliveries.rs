//! Push delivery progress in SQLite (see the
//! [log's rules](crate::log#push-delivery)): the `push_cursors` and
//! `push_leases` tables. Cursor changes are written with the append that
//! carries them; claims, releases and advances are jobs of the writer
//! thread (each in a savepoint of its batch); listings use the readers.

use rusqlite::{Connection, params};

use super::SqliteTaskLog;
use super::writer::{Answer, Job, Reply};
use crate::log::delivery::{CursorChange, TERMINAL_STATES_SQL, cursor_changes};
use crate::log::stored::from_i64;
use crate::log::{Advance, AppendRequest, DeliveryCursor, LogError, LogFuture, PendingDelivery};
use crate::types::Timestamp;

/// A write of delivery progress, run by the writer thread.
#[derive(Debug)]
pub(crate) enum Op {
    /// Claim or renew a task's lease for `ttl_ms`.
    Claim {
        authority: String,
        task_id: String,
        holder: String,
        ttl_ms: i64,
    },
    /// Give a task's lease up.
    Release {
        authority: String,
        task_id: String,
        holder: String,
    },
    /// Move a cursor.
    Advance(Advance),
}

/// Writes the cursor changes of `req` (inside its append's transaction);
/// `ended`: the task was terminal before it.
pub(crate) fn track(conn: &Connection, req: &AppendRequest, ended: bool) -> rusqlite::Result<()> {
    for change in cursor_changes(req, ended) {
        match change {
            CursorChange::Set(id) => conn
                .prepare_cached(
                    "INSERT INTO push_cursors (task_id, config_id, authority, seq) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (task_id, config_id) DO NOTHING",
                )?
                .execute(params![req.task_id, id, req.authority, req.expected as i64])?,
            CursorChange::Delete(id) => conn
                .prepare_cached("DELETE FROM push_cursors WHERE task_id = ?1 AND config_id = ?2")?
                .execute(params![req.task_id, id])?,
        };
    }
    Ok(())
}

/// Runs `op` in a savepoint of the writer's transaction: `Ok(Err(_))` when
/// it failed (rolled back alone), `Err(_)` when the rollback failed.
pub(crate) fn write(conn: &Connection, op: &Op) -> rusqlite::Result<Result<bool, LogError>> {
    conn.execute_batch("SAVEPOINT delivery")?;
    match run(conn, op) {
        Ok(done) => {
            conn.execute_batch("RELEASE delivery")?;
            Ok(Ok(done))
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO delivery; RELEASE delivery")?;
            Ok(Err(LogError::backend(e.to_string())))
        }
    }
}

fn run(conn: &Connection, op: &Op) -> rusqlite::Result<bool> {
    let now = Timestamp::now().unix_millis();
    match op {
        Op::Claim {
            authority,
            task_id,
            holder,
            ttl_ms,
        } => {
            let claimed = conn
                .prepare_cached(
                    "INSERT INTO push_leases (task_id, holder, until) \
                     SELECT ?1, ?3, ?4 + ?5 WHERE EXISTS \
                       (SELECT 1 FROM push_cursors WHERE task_id = ?1 AND authority = ?2) \
                     ON CONFLICT (task_id) DO UPDATE SET holder = excluded.holder, until = excluded.until \
                     WHERE push_leases.holder = excluded.holder OR push_leases.until <= ?4",
                )?
                .execute(params![task_id, authority, holder, now, ttl_ms])?;
            Ok(claimed == 1)
        }
        Op::Release {
            authority,
            task_id,
            holder,
        } => {
            conn.prepare_cached(
                "DELETE FROM push_leases WHERE task_id = ?1 AND holder = ?2 AND EXISTS \
                   (SELECT 1 FROM push_cursors WHERE task_id = ?1 AND authority = ?3)",
            )?
            .execute(params![task_id, holder, authority])?;
            Ok(true)
        }
        Op::Advance(a) => advance(conn, a, now),
    }
}

fn advance(conn: &Connection, a: &Advance, now: i64) -> rusqlite::Result<bool> {
    let (from, to) = (a.from as i64, a.to as i64);
    let moved = conn
        .prepare_cached(
            "UPDATE push_cursors SET seq = ?5 WHERE task_id = ?1 AND config_id = ?2 AND authority = ?3 AND seq = ?4 \
             AND ?5 >= ?4 AND ?5 <= (SELECT seq FROM tasks WHERE task_id = ?1) \
             AND EXISTS (SELECT 1 FROM push_leases WHERE task_id = ?1 AND holder = ?6 AND until > ?7)",
        )?
        .execute(params![a.task_id, a.config_id, a.authority, from, to, a.holder, now])?;
    if moved == 0 {
        return Ok(false);
    }
    let done = format!(
        "DELETE FROM push_cursors WHERE task_id = ?1 AND EXISTS \
           (SELECT 1 FROM tasks t WHERE t.task_id = ?1 AND t.state IN {TERMINAL_STATES_SQL} \
            AND NOT EXISTS (SELECT 1 FROM push_cursors c WHERE c.task_id = ?1 AND c.seq < t.seq))"
    );
    if conn.prepare_cached(&done)?.execute([&a.task_id])? > 0 {
        conn.prepare_cached("DELETE FROM push_leases WHERE task_id = ?1")?
            .execute([&a.task_id])?;
    }
    Ok(true)
}

/// The task's cursors, in config id order.
pub(crate) fn cursors(
    c: &Connection,
    authority: &str,
    task_id: &str,
) -> Result<Vec<DeliveryCursor>, LogError> {
    let mut st = c
        .prepare_cached(
            "SELECT config_id, seq FROM push_cursors WHERE task_id = ?1 AND authority = ?2 ORDER BY config_id",
        )
        .map_err(LogError::backend)?;
    let rows = st
        .query_map(params![task_id, authority], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })
        .map_err(LogError::backend)?;
    rows.map(|r| {
        let (config_id, seq) = r.map_err(LogError::backend)?;
        Ok(DeliveryCursor {
            config_id,
            seq: from_i64(seq)?,
        })
    })
    .collect()
}

/// A page of the tasks with a cursor below their head.
pub(crate) fn pending(
    c: &Connection,
    after: Option<(String, String)>,
    limit: usize,
) -> Result<Vec<PendingDelivery>, LogError> {
    let (a, t) = after.unzip();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut st = c
        .prepare_cached(
            "SELECT DISTINCT c.authority, c.task_id FROM push_cursors c JOIN tasks t ON t.task_id = c.task_id \
             WHERE c.seq < t.seq AND (?1 IS NULL OR c.authority > ?1 OR (c.authority = ?1 AND c.task_id > ?2)) \
             ORDER BY c.authority, c.task_id LIMIT ?3",
        )
        .map_err(LogError::backend)?;
    let rows = st
        .query_map(params![a, t, limit], |r| {
            Ok(PendingDelivery {
                authority: r.get(0)?,
                task_id: r.get(1)?,
            })
        })
        .map_err(LogError::backend)?;
    rows.map(|r| r.map_err(LogError::backend)).collect()
}

impl SqliteTaskLog {
    /// Queues a delivery write for the writer thread.
    pub(super) fn delivery_op(&self, op: Op) -> LogFuture<'static, bool> {
        let (reply, rx) = tokio::sync::oneshot::channel::<Reply<bool>>();
        self.inner.submit(Job::Delivery(op, Answer::new(reply)), rx)
    }

    /// A claim of `ttl`, in whole milliseconds (at least one).
    pub(super) fn claim_op(
        authority: &str,
        task_id: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Op {
        let ttl_ms =
            i64::try_from(ttl.as_millis()).map_or(i64::MAX / 4, |ms| ms.clamp(1, i64::MAX / 4));
        Op::Claim {
            authority: authority.to_owned(),
            task_id: task_id.to_owned(),
            holder: holder.to_owned(),
            ttl_ms,
        }
    }
}
