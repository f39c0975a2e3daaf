//! Push delivery progress in PostgreSQL (see the
//! [log's rules](crate::log#push-delivery)): the `push_cursors` and
//! `push_leases` tables, shared by every host. Cursor changes are written in
//! the transaction of the append that carries them. Leases are timed by the
//! database's clock (`now()`), so hosts' clocks need not agree; an advance
//! locks its task's lease row, so a takeover waits for it (and it fails
//! after a takeover), and one task's advances are serialized.

use std::time::Duration;

use deadpool_postgres::Transaction;

use super::{Inner, db};
use crate::log::delivery::{CursorChange, TERMINAL_STATES_SQL, cursor_changes};
use crate::log::stored::{from_i64, to_i64};
use crate::log::{Advance, AppendRequest, DeliveryCursor, LogError, PendingDelivery};

/// The statements, qualified with the schema.
#[derive(Debug)]
pub(super) struct Statements {
    set: String,
    delete: String,
    claim: String,
    release: String,
    held: String,
    advance: String,
    clean: String,
    unlease: String,
    cursors: String,
    pending: String,
}

impl Statements {
    pub(super) fn new(s: &str) -> Self {
        Self {
            set: format!(
                "INSERT INTO {s}.push_cursors (task_id, config_id, authority, seq) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (task_id, config_id) DO NOTHING"
            ),
            delete: format!("DELETE FROM {s}.push_cursors WHERE task_id = $1 AND config_id = $2"),
            claim: format!(
                "INSERT INTO {s}.push_leases AS l (task_id, holder, until) \
                 SELECT $1, $3, now() + $4::bigint * interval '1 millisecond' WHERE EXISTS \
                   (SELECT 1 FROM {s}.push_cursors WHERE task_id = $1 AND authority = $2) \
                 ON CONFLICT (task_id) DO UPDATE SET holder = excluded.holder, until = excluded.until \
                 WHERE l.holder = excluded.holder OR l.until <= now()"
            ),
            release: format!(
                "DELETE FROM {s}.push_leases WHERE task_id = $1 AND holder = $2 AND EXISTS \
                   (SELECT 1 FROM {s}.push_cursors WHERE task_id = $1 AND authority = $3)"
            ),
            held: format!(
                "SELECT 1 FROM {s}.push_leases WHERE task_id = $1 AND holder = $2 AND until > now() FOR UPDATE"
            ),
            advance: format!(
                "UPDATE {s}.push_cursors SET seq = $5 \
                 WHERE task_id = $1 AND config_id = $2 AND authority = $3 AND seq = $4 \
                 AND $5 >= $4 AND $5 <= (SELECT seq FROM {s}.tasks WHERE task_id = $1)"
            ),
            clean: format!(
                "DELETE FROM {s}.push_cursors WHERE task_id = $1 AND EXISTS \
                   (SELECT 1 FROM {s}.tasks t WHERE t.task_id = $1 AND t.state IN {TERMINAL_STATES_SQL} \
                    AND NOT EXISTS (SELECT 1 FROM {s}.push_cursors c WHERE c.task_id = $1 AND c.seq < t.seq))"
            ),
            unlease: format!("DELETE FROM {s}.push_leases WHERE task_id = $1"),
            cursors: format!(
                "SELECT config_id, seq FROM {s}.push_cursors WHERE task_id = $1 AND authority = $2 ORDER BY config_id"
            ),
            pending: format!(
                "SELECT DISTINCT c.authority, c.task_id FROM {s}.push_cursors c \
                 JOIN {s}.tasks t ON t.task_id = c.task_id WHERE c.seq < t.seq \
                 AND ($1::text IS NULL OR (c.authority, c.task_id) > ($1::text, $2::text)) \
                 ORDER BY c.authority, c.task_id LIMIT $3"
            ),
        }
    }
}

impl Inner {
    fn st(&self) -> &Statements {
        &self.sql.deliveries
    }

    /// Writes the cursor changes of `req` in its append's transaction;
    /// `ended`: the task was terminal before it.
    pub(super) async fn track(
        &self,
        tx: &Transaction<'_>,
        req: &AppendRequest,
        ended: bool,
    ) -> Result<(), LogError> {
        for change in cursor_changes(req, ended) {
            match change {
                CursorChange::Set(id) => {
                    let st = tx.prepare_cached(&self.st().set).await.map_err(db)?;
                    let at = to_i64(req.expected)?;
                    tx.execute(&st, &[&req.task_id, &id, &req.authority, &at])
                        .await
                        .map_err(db)?;
                }
                CursorChange::Delete(id) => {
                    let st = tx.prepare_cached(&self.st().delete).await.map_err(db)?;
                    tx.execute(&st, &[&req.task_id, &id]).await.map_err(db)?;
                }
            }
        }
        Ok(())
    }

    pub(super) async fn claim(
        &self,
        authority: &str,
        task_id: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, LogError> {
        let ms =
            i64::try_from(ttl.as_millis()).map_or(i64::MAX / 4, |ms| ms.clamp(1, i64::MAX / 4));
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client.prepare_cached(&self.st().claim).await.map_err(db)?;
        let n = client
            .execute(&st, &[&task_id, &authority, &holder, &ms])
            .await
            .map_err(db)?;
        Ok(n == 1)
    }

    pub(super) async fn release(
        &self,
        authority: &str,
        task_id: &str,
        holder: &str,
    ) -> Result<(), LogError> {
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.st().release)
            .await
            .map_err(db)?;
        client
            .execute(&st, &[&task_id, &holder, &authority])
            .await
            .map_err(db)?;
        Ok(())
    }

    pub(super) async fn advance(&self, a: &Advance) -> Result<bool, LogError> {
        let (from, to) = (to_i64(a.from)?, to_i64(a.to)?);
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        let tx = client.transaction().await.map_err(db)?;
        let held = tx.prepare_cached(&self.st().held).await.map_err(db)?;
        if tx
            .query_opt(&held, &[&a.task_id, &a.holder])
            .await
            .map_err(db)?
            .is_none()
        {
            return Ok(false);
        }
        let st = tx.prepare_cached(&self.st().advance).await.map_err(db)?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&a.task_id, &a.config_id, &a.authority, &from, &to];
        if tx.execute(&st, &params).await.map_err(db)? == 0 {
            return Ok(false);
        }
        let clean = tx.prepare_cached(&self.st().clean).await.map_err(db)?;
        if tx.execute(&clean, &[&a.task_id]).await.map_err(db)? > 0 {
            let unlease = tx.prepare_cached(&self.st().unlease).await.map_err(db)?;
            tx.execute(&unlease, &[&a.task_id]).await.map_err(db)?;
        }
        tx.commit().await.map_err(db)?;
        Ok(true)
    }

    pub(super) async fn delivery_cursors(
        &self,
        authority: &str,
        task_id: &str,
    ) -> Result<Vec<DeliveryCursor>, LogError> {
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.st().cursors)
            .await
            .map_err(db)?;
        let rows = client
            .query(&st, &[&task_id, &authority])
            .await
            .map_err(db)?;
        rows.iter()
            .map(|r| {
                Ok(DeliveryCursor {
                    config_id: r.get(0),
                    seq: from_i64(r.get(1))?,
                })
            })
            .collect()
    }

    pub(super) async fn pending_deliveries(
        &self,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<PendingDelivery>, LogError> {
        let (a, t) = after.unzip();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(LogError::backend)?;
        let st = client
            .prepare_cached(&self.st().pending)
            .await
            .map_err(db)?;
        let rows = client.query(&st, &[&a, &t, &limit]).await.map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| PendingDelivery {
                authority: r.get(0),
                task_id: r.get(1),
            })
            .collect())
    }
}
