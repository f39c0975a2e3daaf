//! The read side of [`PostgresTaskLog`](super::PostgresTaskLog): snapshots,
//! records after a sequence number, ListTasks pages and live tasks, on
//! pooled connections, never taking an epoch.

use deadpool_postgres::GenericClient;

use super::{Inner, db, not_found};
use crate::log::stored::{
    clamp_nanos, decode_entry, decode_projection_at, decode_task_at, from_i64, to_i64, with_heads,
};
use crate::log::{
    ListPage, ListQuery, LiveTask, LogError, PageCursor, Projection, Sequenced, Snapshot,
};
use crate::types::TaskState;

/// The records after `after` of the entries in `rows`, whose columns `col`
/// and `col + 1` are an entry's first sequence number and its records (the
/// first entry may hold records up to `after`: they are left out; a row
/// without an entry, NULL, from the task row's outer join, gives none).
fn entries(
    rows: &[tokio_postgres::Row],
    col: usize,
    after: u64,
) -> Result<Vec<Sequenced>, LogError> {
    let mut out = Vec::new();
    for r in rows {
        if let Some(first) = r.get::<_, Option<i64>>(col) {
            decode_entry(first, r.get(col + 1), after, &mut out)?;
        }
    }
    Ok(out)
}

impl Inner {
    /// The projection at `seq` from the task row's stored snapshot `json`:
    /// a live task's row may hold an older snapshot (see
    /// `Plan::crosses_snapshot_point`), completed with the records of the
    /// entries after it (a snapshot is taken at the end of an entry, as is
    /// `seq`).
    pub(super) async fn projection_at(
        &self,
        client: &impl GenericClient,
        task_id: &str,
        json: &str,
        seq: u64,
    ) -> Result<Projection, LogError> {
        let (mut p, at) = decode_projection_at(json)?;
        let at = at.unwrap_or(seq);
        if at < seq {
            let st = client.prepare_cached(&self.sql.replay).await.map_err(db)?;
            let rows = client
                .query(&st, &[&task_id, &to_i64(at)?, &to_i64(seq)?])
                .await
                .map_err(db)?;
            let records = entries(&rows, 0, at)?;
            if records.len() as u64 != seq - at || records.last().map(|r| r.seq) != Some(seq) {
                return Err(LogError::backend("task records missing"));
            }
            for r in &records {
                p.apply(&r.record);
            }
        }
        Ok(p)
    }

    pub(super) async fn snapshot(
        &self,
        authority: &str,
        task_id: &str,
    ) -> Result<Snapshot, LogError> {
        crate::log::task_view(task_id)?;
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.sql.snapshot)
            .await
            .map_err(db)?;
        let row = client
            .query_opt(&st, &[&task_id])
            .await
            .map_err(db)?
            .filter(|r| r.get::<_, &str>(0) == authority)
            .ok_or_else(not_found)?;
        let seq = from_i64(row.get(1))?;
        let projection = self
            .projection_at(&client, task_id, row.get(3), seq)
            .await?;
        Ok(Snapshot::new(seq, from_i64(row.get(2))?, projection))
    }

    pub(super) async fn read(
        &self,
        authority: &str,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<Sequenced>, LogError> {
        let cursor = i64::try_from(after).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client.prepare_cached(&self.sql.records).await.map_err(db)?;
        let rows = client.query(&st, &[&task_id, &cursor]).await.map_err(db)?;
        if rows.is_empty() || rows.iter().any(|r| r.get::<_, &str>(0) != authority) {
            return Err(not_found());
        }
        Ok(with_heads(entries(&rows, 1, after)?))
    }

    /// About `page` records after `after`, each with the task's head (a
    /// watch reading page by page): the entries up to the first that
    /// reaches `after + page` (whole entries: the last may pass it), so
    /// fewer than `page` records means the read reached the head.
    pub(super) async fn read_page(
        &self,
        authority: &str,
        task_id: &str,
        after: u64,
        page: usize,
    ) -> Result<Vec<Sequenced>, LogError> {
        let cursor = i64::try_from(after).unwrap_or(i64::MAX);
        let upto = cursor.saturating_add(i64::try_from(page.max(1)).unwrap_or(i64::MAX));
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.sql.records_page)
            .await
            .map_err(db)?;
        let rows = client
            .query(&st, &[&task_id, &cursor, &upto])
            .await
            .map_err(db)?;
        if rows.is_empty() || rows.iter().any(|r| r.get::<_, &str>(0) != authority) {
            return Err(not_found());
        }
        let head = from_i64(rows[0].get(1))?;
        let mut out = entries(&rows, 2, after)?;
        for r in &mut out {
            r.head = head;
        }
        Ok(out)
    }

    pub(super) async fn list(&self, authority: &str, q: &ListQuery) -> Result<ListPage, LogError> {
        let size = q.page_size.max(1);
        let state = q.state.map(TaskState::number);
        let after_ts = q.status_after.map(|t| clamp_nanos(t.unix_nanos()));
        let cur_ts = q.after.as_ref().map(|c| clamp_nanos(c.timestamp_nanos));
        let cur_id = q.after.as_ref().map(|c| c.task_id.as_str());
        let limit = i64::try_from(size + 1).unwrap_or(i64::MAX);
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        // One snapshot for the count and the page.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(db)?;
        let count = tx.prepare_cached(&self.sql.count).await.map_err(db)?;
        let total: i64 = tx
            .query_one(&count, &[&authority, &q.context_id, &state, &after_ts])
            .await
            .map_err(db)?
            .get(0);
        let page = tx.prepare_cached(&self.sql.page).await.map_err(db)?;
        let rows = tx
            .query(
                &page,
                &[
                    &authority,
                    &q.context_id,
                    &state,
                    &after_ts,
                    &cur_ts,
                    &cur_id,
                    &limit,
                ],
            )
            .await
            .map_err(db)?;
        let more = rows.len() > size;
        let rows = &rows[..rows.len().min(size)];
        // A live task's snapshot may be older than its row: completed with
        // the records after it, in the same transaction.
        let mut tasks = Vec::with_capacity(rows.len());
        for r in rows {
            let seq = from_i64(r.get(3))?;
            let (task, at) = decode_task_at(r.get(0))?;
            if at.is_some_and(|at| at < seq) {
                let p = self.projection_at(&tx, r.get(2), r.get(0), seq).await?;
                tasks.push(p.task().clone());
            } else {
                tasks.push(task);
            }
        }
        tx.commit().await.map_err(db)?;
        let next = if more {
            rows.last().map(|r| PageCursor {
                timestamp_nanos: i128::from(r.get::<_, i64>(1)),
                task_id: r.get(2),
            })
        } else {
            None
        };
        Ok(ListPage {
            tasks,
            next,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    pub(super) async fn live(
        &self,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<LiveTask>, LogError> {
        let (a, t) = after.unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client.prepare_cached(&self.sql.live).await.map_err(db)?;
        let rows = client.query(&st, &[&a, &t, &limit]).await.map_err(db)?;
        rows.iter().map(live_task).collect()
    }
}

/// A `live` or `waiting` row (authority, task, context, state, seq, epoch,
/// host) as a [`LiveTask`].
pub(super) fn live_task(r: &tokio_postgres::Row) -> Result<LiveTask, LogError> {
    Ok(LiveTask {
        authority: r.get(0),
        task_id: r.get(1),
        context_id: r.get(2),
        state: TaskState::from_number(i64::from(r.get::<_, i32>(3))).unwrap_or_default(),
        seq: from_i64(r.get(4))?,
        epoch: from_i64(r.get(5))?,
        host: r.get(6),
    })
}
