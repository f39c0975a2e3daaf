//! The writer thread: owns the only writing connection and commits queued
//! appends in groups, one transaction per batch, answering each caller only
//! after the batch's COMMIT returned.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use super::heads::{Head, Heads};
use crate::log::hub::Hub;
use crate::log::stored::{Current, Plan, decode_projection, from_i64};
use crate::log::{AppendRequest, Appended, LogError};

/// What the writer did so far.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) appends: AtomicU64,
    pub(crate) transactions: AtomicU64,
}

/// One queued append and where to send its outcome.
pub(crate) struct Job {
    pub(crate) request: AppendRequest,
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
    while let Ok(first) = jobs.recv() {
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

/// Commits the batch in one transaction. `pending` holds the heads written
/// by the batch so far (a task may be appended to twice in one batch); they
/// become visible in `heads` only once COMMIT returned, before any caller is
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
    for job in batch.iter() {
        outcomes.push(one(conn, heads, pending, &job.request));
    }
    if let Err(e) = exec(conn, "COMMIT") {
        let _ = exec(conn, "ROLLBACK");
        return fail_all(batch, &e);
    }
    for (task_id, head) in pending.drain() {
        heads.put(task_id, head);
    }
    for (job, outcome) in batch.drain(..).zip(outcomes) {
        let Job { request, reply } = job;
        if let Ok(appended) = &outcome {
            let first = appended.seq + 1 - request.records.len() as u64;
            hub.publish(&request.task_id, first, request.records);
        }
        let _ = reply.send(outcome);
    }
}

/// One append inside the batch's transaction, under a savepoint so that a
/// failure midway leaves the batch's other appends intact.
fn one(
    conn: &Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    req: &AppendRequest,
) -> Result<Appended, LogError> {
    exec(conn, "SAVEPOINT a").map_err(LogError::backend)?;
    match write(conn, heads, pending, req) {
        Ok(out) => {
            exec(conn, "RELEASE a").map_err(LogError::backend)?;
            Ok(out)
        }
        Err(e) => {
            let _ = exec(conn, "ROLLBACK TO a").and_then(|()| exec(conn, "RELEASE a"));
            Err(e)
        }
    }
}

/// The committed (or earlier in this batch) head of a task, from memory.
fn known(heads: &Heads, pending: &HashMap<String, Head>, task_id: &str) -> Option<Head> {
    pending.get(task_id).cloned().or_else(|| heads.get(task_id))
}

/// The stored head of a task, read from its row.
fn stored(conn: &Connection, task_id: &str) -> Result<Option<Current>, LogError> {
    let row = conn
        .prepare_cached("SELECT authority, seq, epoch FROM tasks WHERE task_id = ?1")
        .and_then(|mut st| {
            st.query_row([task_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .optional()
        })
        .map_err(LogError::backend)?;
    match row {
        Some((authority, seq, epoch)) => Ok(Some(Current {
            authority,
            seq: from_i64(seq)?,
            epoch: from_i64(epoch)?,
        })),
        None => Ok(None),
    }
}

fn write(
    conn: &Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    req: &AppendRequest,
) -> Result<Appended, LogError> {
    let plan = match known(heads, pending, &req.task_id) {
        Some(head) => {
            let current = Current {
                authority: head.authority,
                seq: head.snapshot.seq,
                epoch: head.snapshot.epoch,
            };
            Plan::new(req, Some(current), |_| Ok(head.snapshot.projection))?
        }
        None => Plan::new(req, stored(conn, &req.task_id)?, |_| {
            let json: String = conn
                .prepare_cached("SELECT snapshot FROM tasks WHERE task_id = ?1")
                .and_then(|mut st| st.query_row([&req.task_id], |r| r.get(0)))
                .map_err(LogError::backend)?;
            decode_projection(&json)
        })?,
    };
    let now = crate::types::Timestamp::now().unix_millis();
    let epoch = plan.epoch as i64;
    let seq = plan.seq as i64;
    let row = &plan.row;
    if plan.create {
        conn.prepare_cached(
            "INSERT INTO tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot, created_at, updated_at, host) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)",
        )
        .and_then(|mut st| {
            st.execute(params![
                req.task_id,
                req.authority,
                row.context_id,
                row.state,
                row.status_ts,
                row.live,
                seq,
                epoch,
                row.snapshot,
                now,
                row.host
            ])
        })
        .map_err(LogError::backend)?;
    } else {
        conn.prepare_cached(
            "UPDATE tasks SET context_id = ?2, state = ?3, status_ts = ?4, live = ?5, seq = ?6, epoch = ?7, snapshot = ?8, updated_at = ?9, host = ?10 \
             WHERE task_id = ?1",
        )
        .and_then(|mut st| {
            st.execute(params![
                req.task_id,
                row.context_id,
                row.state,
                row.status_ts,
                row.live,
                seq,
                epoch,
                row.snapshot,
                now,
                row.host
            ])
        })
        .map_err(LogError::backend)?;
    }
    if !plan.records.is_empty() {
        let mut st = conn
            .prepare_cached(
                "INSERT INTO records (task_id, seq, authority, epoch, record, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(LogError::backend)?;
        for (s, json) in &plan.records {
            st.execute(params![req.task_id, s, req.authority, epoch, json, now])
                .map_err(LogError::backend)?;
        }
    }
    let out = plan.appended();
    pending.insert(
        req.task_id.clone(),
        Head {
            authority: req.authority.clone(),
            snapshot: out.snapshot.clone(),
        },
    );
    Ok(out)
}
