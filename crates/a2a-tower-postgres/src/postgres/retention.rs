//! Retention in PostgreSQL ([`Retention`](crate::log::Retention)): one
//! statement deletes a batch of expired terminal tasks with their entries,
//! push cursors and leases, so each task is whole or gone for every reader;
//! rows another host is writing are skipped (`SKIP LOCKED`), not waited
//! for. PostgreSQL's autovacuum reclaims the space.

use super::{PostgresTaskLog, db};
use crate::log::delivery::TERMINAL_STATES_SQL;
use crate::log::stored::clamp_nanos;
use crate::log::{LiveTask, LogError, LogFuture, Retention};
use crate::types::Timestamp;

/// The deletion of at most `$2` terminal tasks whose status is before `$1`
/// (nanoseconds), in schema `s`; answers how many.
pub(super) fn purge_sql(s: &str) -> String {
    format!(
        "WITH d AS (DELETE FROM {s}.tasks WHERE task_id IN (\
            SELECT task_id FROM {s}.tasks WHERE NOT live AND state IN {TERMINAL_STATES_SQL} \
            AND status_ts < $1 AND left(task_id, 1) <> chr(1) LIMIT $2 FOR UPDATE SKIP LOCKED) \
            AND NOT live AND state IN {TERMINAL_STATES_SQL} RETURNING task_id), \
         r AS (DELETE FROM {s}.entries WHERE task_id IN (SELECT task_id FROM d)), \
         c AS (DELETE FROM {s}.push_cursors WHERE task_id IN (SELECT task_id FROM d)), \
         l AS (DELETE FROM {s}.push_leases WHERE task_id IN (SELECT task_id FROM d)) \
         SELECT count(*) FROM d"
    )
}

/// At most `$2` tasks waiting for their client (INPUT_REQUIRED 6,
/// AUTH_REQUIRED 8) whose status is before `$1`, in schema `s`.
pub(super) fn waiting_sql(s: &str) -> String {
    format!(
        "SELECT authority, task_id, context_id, state, seq, epoch, host FROM {s}.tasks \
         WHERE state IN (6, 8) AND status_ts < $1 AND left(task_id, 1) <> chr(1) LIMIT $2"
    )
}

impl Retention for PostgresTaskLog {
    fn waiting_tasks(&self, before: Timestamp, limit: usize) -> LogFuture<'_, Vec<LiveTask>> {
        let before = clamp_nanos(before.unix_nanos());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(async move {
            let client = self.inner.pool.get().await.map_err(LogError::backend)?;
            let st = client
                .prepare_cached(&self.inner.sql.waiting)
                .await
                .map_err(db)?;
            let rows = client.query(&st, &[&before, &limit]).await.map_err(db)?;
            rows.iter().map(super::read::live_task).collect()
        })
    }

    fn purge_terminal(&self, before: Timestamp, limit: usize) -> LogFuture<'_, usize> {
        let before = clamp_nanos(before.unix_nanos());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(async move {
            let client = self.inner.pool.get().await.map_err(LogError::backend)?;
            let st = client
                .prepare_cached(&self.inner.sql.purge)
                .await
                .map_err(db)?;
            let row = client
                .query_one(&st, &[&before, &limit])
                .await
                .map_err(db)?;
            let n: i64 = row.get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }
}
