//! The write side of [`PostgresTaskLog`](super::PostgresTaskLog): appends,
//! as one conditional statement batched by the committer when the task's
//! head is known (a creation, or this log's last commit), else in a
//! transaction that locks the row;
//! appends to several tasks in one transaction that locks their rows in
//! task id order; then the NOTIFY that wakes other hosts' watchers.

use deadpool_postgres::{GenericClient, Transaction};

use super::commit::WriteRow;
use super::sql::notify_sql;
use super::{Inner, db};
use crate::log::delivery::changes_cursors;
use crate::log::stored::{Current, Plan, from_i64, to_i64};
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind, distinct_tasks};

impl Inner {
    pub(super) async fn append(&self, mut req: AppendRequest) -> Result<Appended, LogError> {
        if let Some(out) = self.append_once(&mut req).await? {
            // The committer woke the watchers.
            return Ok(out);
        }
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        let out = super::timed(1, self.append_locked(&mut client, &req)).await?;
        self.notify(&client, &[(&req.task_id, out.seq)]).await;
        Ok(out)
    }

    /// Several appends in one transaction: every task row is locked (and
    /// read) in task id order, so two calls over the same tasks wait for
    /// each other instead of deadlocking; the requests are checked and
    /// planned in their order (the first refusal is the answer, nothing is
    /// written), then written in task id order and committed together.
    pub(super) async fn append_all(
        &self,
        reqs: Vec<AppendRequest>,
    ) -> Result<Vec<Appended>, LogError> {
        if reqs.is_empty() {
            return Ok(Vec::new());
        }
        if !distinct_tasks(&reqs) {
            return Err(LogError::new(LogErrorKind::Invalid));
        }
        let mut order: Vec<usize> = (0..reqs.len()).collect();
        order.sort_unstable_by(|&a, &b| reqs[a].task_id.cmp(&reqs[b].task_id));
        let mut client = self.pool.get().await.map_err(LogError::backend)?;
        let tx = client.transaction().await.map_err(db)?;
        let mut heads = Vec::with_capacity(reqs.len());
        heads.resize_with(reqs.len(), || None);
        for &i in &order {
            heads[i] = self.lock_head(&tx, &reqs[i].task_id).await?;
        }
        let mut plans = Vec::with_capacity(reqs.len());
        for (req, current) in reqs.iter().zip(heads) {
            plans.push(self.plan_locked(&tx, req, current).await?);
        }
        for &i in &order {
            if self.write_planned(&tx, &reqs[i], &plans[i]).await? != 1 {
                // Another host created the task since it was read.
                return Err(LogError::new(LogErrorKind::Conflict));
            }
            self.track(&tx, &reqs[i], plans[i].ended).await?;
        }
        tx.commit().await.map_err(db)?;
        let out = plans.iter().map(Plan::appended).collect();
        {
            let mut cache = self.cache();
            for (req, plan) in reqs.iter().zip(plans) {
                cache.put(&req.task_id, plan.seq, plan.projection);
            }
        }
        let tasks: Vec<(&str, u64)> = reqs
            .iter()
            .zip(&out)
            .map(|(r, a): (_, &Appended)| (r.task_id.as_str(), a.seq))
            .collect();
        self.notify(&client, &tasks).await;
        Ok(out)
    }

    /// Wakes the watchers of `task_ids` after a commit that was not
    /// published: this process's at once (they read the database), other
    /// hosts' by a NOTIFY (see [`notify_sql`]).
    async fn notify(&self, client: &deadpool_postgres::Client, tasks: &[(&str, u64)]) {
        for (task_id, _) in tasks {
            self.hub.notify(task_id);
        }
        let notify = notify_sql(&self.channel, &self.instance, tasks);
        if let Err(e) = client.batch_execute(&notify).await {
            // The append is committed: say so. Remote watchers catch up at
            // the task's next notification (or their listener's reconnect).
            // A batch that failed after its BEGIN leaves the pooled session
            // in an aborted transaction: end it.
            let _ = client.batch_execute("ROLLBACK").await;
            tracing::warn!(target: "a2a_tower::log", kind = %e.code().map_or("io", |c| c.code()), "postgres notify failed");
        }
    }

    /// The append as one statement through the committer (one transaction
    /// shared with the other appends queued meanwhile, one round trip), when
    /// it can be planned without reading the row: a creation, or an append
    /// after the sequence number this log last committed for the task (its
    /// projection is in the cache). The statement writes only if the row is
    /// still at that sequence number, of the same authority, with no newer
    /// epoch; `Ok(None)` when it was not (or could not be planned so):
    /// [`append_locked`](Self::append_locked) then reads the row and gives
    /// the exact answer.
    async fn append_once(&self, req: &mut AppendRequest) -> Result<Option<Appended>, LogError> {
        if changes_cursors(req) {
            // Cursors are written in the append's transaction.
            return Ok(None);
        }
        let (current, base) = if req.expected == 0 {
            (None, crate::log::Projection::default())
        } else {
            let Some(base) = self.cache().take(&req.task_id, req.expected) else {
                return Ok(None);
            };
            // Stands for the row the statement checks.
            let row = Current {
                authority: req.authority.clone(),
                seq: req.expected,
                epoch: req.epoch,
            };
            (Some(row), base)
        };
        let plan = Plan::new(req, current, |_| Ok(base))?;
        let row = write_row(req, &plan)?;
        let records = std::mem::take(&mut req.records);
        let written = self.committer.write(row, records, plan.first).await?;
        // Back for the locked path when refused.
        req.records = written.records;
        match (written.rows, plan.create) {
            (1, _) => {
                let out = plan.appended();
                self.cache().put(&req.task_id, plan.seq, plan.projection);
                Ok(Some(out))
            }
            // The task exists already (any authority): as the locked path.
            (_, true) => Err(LogError::new(LogErrorKind::Conflict)),
            _ => Ok(None),
        }
    }

    /// Writes a planned append in one statement (see [`write_row`]).
    /// Returns the number of task rows written: 0 when the condition did not
    /// hold.
    async fn write_planned(
        &self,
        client: &impl GenericClient,
        req: &AppendRequest,
        plan: &Plan,
    ) -> Result<i64, LogError> {
        let row = write_row(req, plan)?;
        let sql = if row.create {
            &self.sql.create_once
        } else {
            &self.sql.update_once
        };
        let st = client.prepare_cached(sql).await.map_err(db)?;
        let out = client.query_one(&st, &row.params()).await.map_err(db)?;
        Ok(out.get(0))
    }

    /// The append in a transaction that locks the row first: reads it,
    /// checks and plans against it, writes.
    async fn append_locked(
        &self,
        client: &mut deadpool_postgres::Client,
        req: &AppendRequest,
    ) -> Result<Appended, LogError> {
        let tx = client.transaction().await.map_err(db)?;
        let current = self.lock_head(&tx, &req.task_id).await?;
        let plan = self.plan_locked(&tx, req, current).await?;
        if self.write_planned(&tx, req, &plan).await? != 1 {
            // Another host created the task first (or the row moved on).
            return Err(LogError::new(LogErrorKind::Conflict));
        }
        self.track(&tx, req, plan.ended).await?;
        tx.commit().await.map_err(db)?;
        let out = plan.appended();
        self.cache().put(&req.task_id, plan.seq, plan.projection);
        Ok(out)
    }

    /// Locks the task's row for the transaction and reads its head; `None`
    /// when the task does not exist.
    async fn lock_head(
        &self,
        tx: &Transaction<'_>,
        task_id: &str,
    ) -> Result<Option<Current>, LogError> {
        let head = tx.prepare_cached(&self.sql.head).await.map_err(db)?;
        match tx.query_opt(&head, &[&task_id]).await.map_err(db)? {
            Some(r) => Ok(Some(Current {
                authority: r.get(0),
                seq: from_i64(r.get(1))?,
                epoch: from_i64(r.get(2))?,
            })),
            None => Ok(None),
        }
    }

    /// Checks and plans `req` against its locked row's head `current`, on
    /// the cached projection or the stored one (read only when the append
    /// can pass).
    async fn plan_locked(
        &self,
        tx: &Transaction<'_>,
        req: &AppendRequest,
        current: Option<Current>,
    ) -> Result<Plan, LogError> {
        let cached = current
            .as_ref()
            .and_then(|c| self.cache().take(&req.task_id, c.seq));
        let stored = match (&current, cached) {
            (_, Some(p)) => Some(Ok(p)),
            (Some(c), None) if c.authority == req.authority && req.expected == c.seq => {
                let st = tx
                    .prepare_cached(&self.sql.snapshot_only)
                    .await
                    .map_err(db)?;
                let row = tx.query_one(&st, &[&req.task_id]).await.map_err(db)?;
                Some(
                    self.projection_at(tx, &req.task_id, row.get(0), c.seq)
                        .await,
                )
            }
            _ => None,
        };
        Plan::new(req, current, |_| {
            stored.unwrap_or_else(|| Err(LogError::backend("task row vanished")))
        })
    }
}

/// The columns of a planned append's statement: the task row (created, or
/// updated only if still at `req.expected`, of `req.authority`, with no
/// newer epoch) and the entry holding the records (one row per append),
/// written all or nothing.
fn write_row(req: &AppendRequest, plan: &Plan) -> Result<WriteRow, LogError> {
    let row = &plan.row;
    // The whole task only at creation, at rest, or at a snapshot point (see
    // `snapshot_step`): otherwise the row keeps its older snapshot, which
    // reads complete with the records after it, so an append to a long task
    // does not cost the whole task.
    let snapshot = if plan.create || !row.live || plan.crosses_snapshot_point() {
        Some(plan.snapshot_json_at()?)
    } else {
        None
    };
    let entry = plan.entry_json(req)?;
    Ok(WriteRow {
        create: plan.create,
        task_id: req.task_id.clone(),
        authority: req.authority.clone(),
        context_id: row.context_id.clone(),
        state: row.state,
        status_ts: row.status_ts,
        live: row.live,
        seq: to_i64(plan.seq)?,
        epoch: to_i64(plan.epoch)?,
        snapshot,
        host: row.host.clone(),
        expected: to_i64(req.expected)?,
        first: to_i64(plan.first)?,
        entry,
    })
}
