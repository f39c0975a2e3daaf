//! The rows of one planned append: the task row (inserted or updated) and
//! one `entries` row holding its records, with the snapshot when the plan
//! says so, then the push delivery cursors it starts or ends. Called by the
//! writer thread inside its batch's transaction.

use rusqlite::{Connection, params};

use super::writer::Append;
use crate::log::stored::Plan;

/// Writes the planned append: the task row and one entry holding its
/// records, and `snapshot` when given (the row then points at the entry).
/// `false` (nothing written) when the append creates a task that exists.
pub(super) fn write(
    conn: &Connection,
    append: &Append,
    plan: &Plan,
    snapshot: Option<&str>,
) -> rusqlite::Result<bool> {
    let req = &append.request;
    let now = crate::types::Timestamp::now().unix_millis();
    let (seq, epoch) = (plan.seq as i64, plan.epoch as i64);
    let row = &plan.row;
    if plan.create {
        let inserted = conn
            .prepare_cached(
                "INSERT INTO tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot_seq, created_at, updated_at, host) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11) ON CONFLICT (task_id) DO NOTHING",
            )?
            .execute(params![
            req.task_id,
            req.authority,
            row.context_id,
            row.state,
            row.status_ts,
            row.live,
            seq,
            epoch,
            if snapshot.is_some() { seq } else { 0 },
            now,
            row.host
        ])?;
        if inserted == 0 {
            return Ok(false);
        }
    } else if plan.unchanged {
        // A check of the task's position (checked by the plan, under the
        // batch's write lock): nothing to write.
        return Ok(true);
    } else {
        let sql = if snapshot.is_some() {
            "UPDATE tasks SET state = ?2, status_ts = ?3, live = ?4, seq = ?5, epoch = ?6, snapshot_seq = ?5, updated_at = ?7, host = ?8 \
             WHERE task_id = ?1"
        } else {
            "UPDATE tasks SET state = ?2, status_ts = ?3, live = ?4, seq = ?5, epoch = ?6, updated_at = ?7, host = ?8 \
             WHERE task_id = ?1"
        };
        // The context never changes: not set, so its index is left alone.
        conn.prepare_cached(sql)?.execute(params![
            req.task_id,
            row.state,
            row.status_ts,
            row.live,
            seq,
            epoch,
            now,
            row.host
        ])?;
    }
    if !req.records.is_empty() {
        conn.prepare_cached(
            "INSERT INTO entries (task_id, seq, first, epoch, records, snapshot, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            req.task_id,
            seq,
            plan.first as i64,
            epoch,
            append.records,
            snapshot,
            now
        ])?;
    }
    super::deliveries::track(conn, req, plan.ended)?;
    Ok(true)
}
