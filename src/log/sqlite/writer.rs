//! The writer thread: owns the only writing connection and commits queued
//! appends in groups, one transaction per batch, answering each caller only
//! after the batch's COMMIT returned.
//!
//! Per append it writes one `entries` row (the records as one JSON array,
//! encoded by the caller before queueing, plus the task's snapshot when the
//! task comes to rest or every [`SNAPSHOT_EVERY`] records) and updates the
//! task row. Its checks run against the task's head in memory (the batch's
//! own earlier appends, then the committed [`Heads`]), reading the row only
//! for a task it has not written recently.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use rusqlite::{Connection, params};
use tokio::sync::oneshot;

use super::heads::{Head, Heads};
use super::read;
use crate::log::hub::Hub;
use crate::log::stored::{Current, Plan};
use crate::log::{AppendRequest, Appended, LogError};

/// A live task's snapshot is stored at least every this many records, which
/// bounds the replay of a read that finds no head in memory.
pub(crate) const SNAPSHOT_EVERY: u64 = 64;

/// What the writer did so far.
#[derive(Debug)]
pub(crate) struct Counters {
    pub(crate) appends: AtomicU64,
    pub(crate) transactions: AtomicU64,
    born: Instant,
    /// Nanoseconds spent in finished waits for the first job of a batch.
    idle_nanos: AtomicU64,
    /// When the current wait began (nanoseconds since `born`, plus one);
    /// 0 while the writer works.
    waiting_since: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            appends: AtomicU64::new(0),
            transactions: AtomicU64::new(0),
            born: Instant::now(),
            idle_nanos: AtomicU64::new(0),
            waiting_since: AtomicU64::new(0),
        }
    }
}

impl Counters {
    fn now(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn wait_begins(&self) {
        self.waiting_since.store(self.now() + 1, Ordering::Relaxed);
    }

    fn wait_ends(&self) {
        let since = self.waiting_since.swap(0, Ordering::Relaxed);
        if since != 0 {
            let waited = self.now().saturating_sub(since - 1);
            self.idle_nanos.fetch_add(waited, Ordering::Relaxed);
        }
    }

    /// The writer's idle time so far, the wait in progress included.
    pub(crate) fn idle(&self) -> std::time::Duration {
        let since = self.waiting_since.load(Ordering::Relaxed);
        let current = if since == 0 {
            0
        } else {
            self.now().saturating_sub(since - 1)
        };
        std::time::Duration::from_nanos(self.idle_nanos.load(Ordering::Relaxed) + current)
    }
}

/// One queued append and where to send its outcome.
pub(crate) struct Job {
    pub(crate) request: AppendRequest,
    /// `request.records` as a JSON array.
    pub(crate) records: String,
    /// The append planned by its caller, if it could.
    pub(crate) prepared: Option<Prepared>,
    pub(crate) reply: oneshot::Sender<Result<Appended, LogError>>,
}

/// Runs until every sender is gone: takes one job, drains up to `max_batch`
/// queued jobs behind it, commits them in one transaction.
pub(crate) fn run(
    mut conn: Connection,
    jobs: Receiver<Job>,
    hub: Arc<Hub>,
    heads: Arc<Heads>,
    max_batch: usize,
    counters: Arc<Counters>,
) {
    let mut batch = Vec::with_capacity(max_batch);
    let mut pending = HashMap::new();
    loop {
        counters.wait_begins();
        let received = jobs.recv();
        counters.wait_ends();
        let Ok(first) = received else { break };
        batch.push(first);
        while batch.len() < max_batch {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        counters
            .appends
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        counters.transactions.fetch_add(1, Ordering::Relaxed);
        commit_batch(&mut conn, &heads, &mut pending, &hub, &mut batch);
        pending.clear();
    }
}

/// Runs one cached statement without parameters (transaction control).
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

fn fail_all(batch: &mut Vec<Job>, e: &rusqlite::Error) {
    for job in batch.drain(..) {
        let _ = job.reply.send(Err(LogError::backend(e.to_string())));
    }
}

/// Commits the batch in one transaction. An append refused by its checks
/// writes nothing and fails alone; a failed write rolls the whole batch back
/// (none of it was acknowledged). `pending` holds the heads written by the
/// batch so far (a task may be appended to twice in one batch); they become
/// visible in `heads` only once COMMIT returned, before any caller is
/// answered or any watcher woken.
fn commit_batch(
    conn: &mut Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    hub: &Hub,
    batch: &mut Vec<Job>,
) {
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        return fail_all(batch, &e);
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch.iter_mut() {
        match one(conn, heads, pending, job) {
            Ok(outcome) => outcomes.push(outcome),
            Err(e) => {
                let _ = exec(conn, "ROLLBACK");
                return fail_all(batch, &e);
            }
        }
    }
    if let Err(e) = exec(conn, "COMMIT") {
        let _ = exec(conn, "ROLLBACK");
        return fail_all(batch, &e);
    }
    for (task_id, head) in pending.drain() {
        heads.put(task_id, head);
    }
    for (job, outcome) in batch.drain(..).zip(outcomes) {
        let Job { request, reply, .. } = job;
        if let Ok(appended) = &outcome {
            let first = appended.seq + 1 - request.records.len() as u64;
            hub.publish(&request.task_id, first, request.records);
        }
        let _ = reply.send(outcome);
    }
}

/// One append: `Ok(Err(_))` when its checks refuse it (nothing written),
/// `Err(_)` when a write failed.
fn one(
    conn: &Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    job: &mut Job,
) -> rusqlite::Result<Result<Appended, LogError>> {
    let (plan, snapshot) = match plan(conn, heads, pending, job) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    write(conn, job, &plan, snapshot.as_deref())?;
    let req = &job.request;
    let out = plan.appended();
    pending.insert(
        req.task_id.clone(),
        Head {
            authority: req.authority.clone(),
            snapshot: out.snapshot.clone(),
        },
    );
    Ok(Ok(out))
}

/// An append checked and applied by its caller against the committed head
/// (see [`prepare`]): the writer only confirms that head is still the latest
/// before writing it, and plans the append itself otherwise.
pub(crate) struct Prepared {
    /// The head's sequence number the plan was made on (0: a new task).
    base: u64,
    plan: Plan,
    snapshot: Option<String>,
}

/// Plans `req` on the caller's thread, off the writer's, when the committed
/// head in `heads` is the one it expects (always so for an execution's own
/// appends, which wait for each other's commit); `None` leaves the planning,
/// and any error, to the writer.
pub(crate) fn prepare(heads: &Heads, req: &AppendRequest) -> Option<Prepared> {
    if req.expected == 0 {
        let plan = Plan::new(req, None, |_| Err(LogError::backend("no head"))).ok()?;
        let snapshot = snapshot_of(&plan, req).ok()?;
        return Some(Prepared {
            base: 0,
            plan,
            snapshot,
        });
    }
    let head = heads.get(&req.task_id)?;
    if head.snapshot.seq != req.expected {
        return None;
    }
    let current = Current {
        authority: head.authority,
        seq: head.snapshot.seq,
        epoch: head.snapshot.epoch,
    };
    let plan = Plan::new(req, Some(current), |_| Ok(head.snapshot.projection)).ok()?;
    let snapshot = snapshot_of(&plan, req).ok()?;
    Some(Prepared {
        base: req.expected,
        plan,
        snapshot,
    })
}

/// The snapshot JSON an append stores with its entry: when the task comes
/// to rest, or crosses a multiple of [`SNAPSHOT_EVERY`] records; never for
/// an append without records (it has no entry).
fn snapshot_of(plan: &Plan, req: &AppendRequest) -> Result<Option<String>, LogError> {
    let at_rest = !plan.row.live;
    let every = plan.seq / SNAPSHOT_EVERY > (plan.first - 1) / SNAPSHOT_EVERY;
    if !req.records.is_empty() && (at_rest || every) {
        plan.snapshot_json().map(Some)
    } else {
        Ok(None)
    }
}

/// The sequence number of the task's latest head (this batch's, else the
/// committed one), `None` when the task does not exist.
fn head_seq(
    conn: &Connection,
    heads: &Heads,
    pending: &HashMap<String, Head>,
    task_id: &str,
) -> Result<Option<u64>, LogError> {
    if let Some(h) = pending.get(task_id) {
        return Ok(Some(h.snapshot.seq));
    }
    if let Some(seq) = heads.seq(task_id) {
        return Ok(Some(seq));
    }
    Ok(read::row(conn, task_id)?.map(|r| r.seq))
}

/// Checks the job's append against the task's head and applies it; with the
/// snapshot JSON to store, when this append stores one. A prepared plan is
/// taken as is when its head is still the latest.
fn plan(
    conn: &Connection,
    heads: &Heads,
    pending: &HashMap<String, Head>,
    job: &mut Job,
) -> Result<(Plan, Option<String>), LogError> {
    let req = &job.request;
    if let Some(prepared) = job.prepared.take() {
        let latest = head_seq(conn, heads, pending, &req.task_id)?;
        let fresh = match latest {
            None => prepared.base == 0,
            Some(seq) => prepared.base != 0 && seq == prepared.base,
        };
        if fresh {
            return Ok((prepared.plan, prepared.snapshot));
        }
    }
    let known = pending
        .get(&req.task_id)
        .cloned()
        .or_else(|| heads.get(&req.task_id));
    let plan = match known {
        Some(head) => {
            let current = Current {
                authority: head.authority,
                seq: head.snapshot.seq,
                epoch: head.snapshot.epoch,
            };
            Plan::new(req, Some(current), |_| Ok(head.snapshot.projection))?
        }
        None => {
            let row = read::row(conn, &req.task_id)?;
            let current = row.as_ref().map(|r| Current {
                authority: r.authority.clone(),
                seq: r.seq,
                epoch: r.epoch,
            });
            Plan::new(req, current, |_| match &row {
                Some(r) => r.projection(conn, &req.task_id),
                None => Err(LogError::backend("task row vanished")),
            })?
        }
    };
    let snapshot = snapshot_of(&plan, req)?;
    Ok((plan, snapshot))
}

/// Writes the planned append: the task row and one entry holding the job's
/// records, and `snapshot` when given (the row then points at the entry).
fn write(
    conn: &Connection,
    job: &Job,
    plan: &Plan,
    snapshot: Option<&str>,
) -> rusqlite::Result<()> {
    let req = &job.request;
    let now = crate::types::Timestamp::now().unix_millis();
    let (seq, epoch) = (plan.seq as i64, plan.epoch as i64);
    let row = &plan.row;
    if plan.create {
        conn.prepare_cached(
            "INSERT INTO tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot_seq, created_at, updated_at, host) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)",
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
            job.records,
            snapshot,
            now
        ])?;
    }
    Ok(())
}
