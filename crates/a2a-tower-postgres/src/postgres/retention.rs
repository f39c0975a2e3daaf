//! Retention in PostgreSQL ([`Retention`](crate::log::Retention)): one
//! statement deletes a batch of expired terminal tasks with their entries,
//! push cursors and leases, so each task is whole or gone for every reader;
//! rows another host is writing are skipped (`SKIP LOCKED`), not waited
//! for. PostgreSQL's autovacuum reclaims the space.
//!
//! A stream's compaction ([`compact_stream`](crate::log::Retention::compact_stream))
//! is one transaction: it locks the stream's row (as an append does), stores
//! the snapshot at the head when the row's is older than the kept position,
//! and deletes the entries that end before it. No NOTIFY: nothing new to read.

use super::{PostgresTaskLog, db};
use crate::log::delivery::TERMINAL_STATES_SQL;
use crate::log::stored::{clamp_nanos, decode_projection_at, encode_projection, from_i64, to_i64};
use crate::log::{LiveTask, LogError, LogErrorKind, LogFuture, Retention};
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

/// A stream's compaction in schema `s`: its row locked, its snapshot
/// replaced, its entries that end before `$2` deleted (answering how
/// many records they held).
pub(super) fn compact_sql(s: &str) -> [String; 3] {
    [
        format!("SELECT authority, seq, snapshot FROM {s}.tasks WHERE task_id = $1 FOR UPDATE"),
        format!("UPDATE {s}.tasks SET snapshot = $2 WHERE task_id = $1"),
        format!(
            "WITH d AS (DELETE FROM {s}.entries WHERE task_id = $1 AND seq < $2 \
             RETURNING seq - first + 1 AS n) SELECT coalesce(sum(n), 0)::bigint FROM d"
        ),
    ]
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

    fn compact_stream<'a>(
        &'a self,
        authority: &'a str,
        stream_id: &'a str,
        keep_from: u64,
    ) -> LogFuture<'a, usize> {
        Box::pin(async move {
            if !crate::log::is_stream(stream_id) {
                return Err(LogError::new(LogErrorKind::Invalid));
            }
            let [lock, snapshot, delete] = &self.inner.sql.compact;
            let mut client = self.inner.pool.get().await.map_err(LogError::backend)?;
            let tx = client.transaction().await.map_err(db)?;
            let row = tx
                .query_opt(lock.as_str(), &[&stream_id])
                .await
                .map_err(db)?;
            let Some(row) = row.filter(|r| r.get::<_, &str>(0) == authority) else {
                return Ok(0);
            };
            let head = from_i64(row.get(1))?;
            if keep_from > head {
                return Ok(0);
            }
            let json: &str = row.get(2);
            let (_, at) = decode_projection_at(json)?;
            if at.unwrap_or(head) < keep_from {
                // The snapshot would need records that go: store the head's.
                let p = self.inner.projection_at(&tx, stream_id, json, head).await?;
                tx.execute(
                    snapshot.as_str(),
                    &[&stream_id, &encode_projection(&p, Some(head))?],
                )
                .await
                .map_err(db)?;
            }
            // The records dropped (each entry holds `seq - first + 1`).
            let dropped: i64 = tx
                .query_one(delete.as_str(), &[&stream_id, &to_i64(keep_from)?])
                .await
                .map_err(db)?
                .get(0);
            tx.commit().await.map_err(db)?;
            Ok(usize::try_from(dropped).unwrap_or(0))
        })
    }
}
