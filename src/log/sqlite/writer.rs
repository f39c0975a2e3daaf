//! The writer thread: owns the only writing connection and commits queued
//! appends in groups, one transaction per batch, answering each caller only
//! after the batch's COMMIT returned.
//!
//! Per append it writes one `entries` row (the records as one JSON array,
//! encoded by the caller before queueing, plus the task's snapshot when the
//! task comes to rest or at a snapshot point, ever more rarely as the task
//! grows: see [`snapshot_step`](crate::log::stored::snapshot_step); never
//! in the task's first entry) and inserts or updates the task row. Its checks
//! ([`plan`]) run against the task's head in memory (the batch's own earlier
//! appends, then the committed [`Heads`]), reading the row only for a task it
//! has not written recently; a creation is checked by its INSERT. What it is
//! done with (jobs, unwatched records, retired heads) goes back with the
//! replies, to be freed by the callers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};

use rusqlite::{Connection, params};
use tokio::sync::oneshot;

use super::counters::Counters;
use super::heads::{Head, Heads, Retired};
use super::plan::{Prepared, plan};
use crate::log::hub::Hub;
use crate::log::stored::Plan;
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind};

/// One queued append and where to send its outcome.
pub(crate) struct Job {
    pub(crate) request: AppendRequest,
    /// `request.records` as a JSON array.
    pub(crate) records: String,
    /// The append planned by its caller, if it could.
    pub(crate) prepared: Option<Prepared>,
    pub(crate) reply: oneshot::Sender<Reply>,
}

/// An append's outcome, and what the writer is done with.
pub(crate) struct Reply {
    pub(crate) outcome: Result<Appended, LogError>,
    /// Freed by the caller that receives the reply, not by the writer
    /// thread: under load the writer is the bottleneck, and freeing a batch
    /// of tasks is a good part of its CPU time.
    pub(crate) leftovers: Leftovers,
}

/// What the writer is done with (see [`Reply::leftovers`]).
#[derive(Default)]
pub(crate) struct Leftovers {
    _job: Option<(AppendRequest, String)>,
    _retired: Vec<Retired>,
}

impl Reply {
    fn new(outcome: Result<Appended, LogError>) -> Self {
        Self {
            outcome,
            leftovers: Leftovers::default(),
        }
    }
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
        let _ = job
            .reply
            .send(Reply::new(Err(LogError::backend(e.to_string()))));
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
    let mut retired: Vec<Retired> = pending
        .drain()
        .filter_map(|(task_id, head)| heads.put(task_id, head))
        .collect();
    for (job, outcome) in batch.drain(..).zip(outcomes) {
        let Job {
            mut request,
            reply,
            records,
            ..
        } = job;
        if let Ok(appended) = &outcome {
            let first = appended.seq + 1 - request.records.len() as u64;
            let published = std::mem::take(&mut request.records);
            if let Some(unwatched) = hub.publish(&request.task_id, first, published) {
                request.records = unwatched;
            }
        }
        let _ = reply.send(Reply {
            outcome,
            leftovers: Leftovers {
                _job: Some((request, records)),
                _retired: std::mem::take(&mut retired),
            },
        });
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
    let prepared = job.prepared.take();
    let (plan, snapshot) = match plan(conn, heads, pending, &job.request, prepared) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    if !write(conn, job, &plan, snapshot.as_deref())? {
        // A creation of a task that exists: nothing was written.
        return Ok(Err(LogError::new(LogErrorKind::Conflict)));
    }
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

/// Writes the planned append: the task row and one entry holding the job's
/// records, and `snapshot` when given (the row then points at the entry).
/// `false` (nothing written) when the append creates a task that exists.
fn write(
    conn: &Connection,
    job: &Job,
    plan: &Plan,
    snapshot: Option<&str>,
) -> rusqlite::Result<bool> {
    let req = &job.request;
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
    Ok(true)
}
