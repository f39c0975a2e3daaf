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
//!
//! A job is one append or several (to different tasks, see
//! [`TaskLog::append_all`](crate::log::TaskLog::append_all)) committed as
//! one: its appends are all checked before any is written, so that one
//! refused writes nothing and the batch commits the other jobs; a job that
//! creates a task after its first append runs inside a SAVEPOINT (a
//! creation is refused by its INSERT), rolled back alone, the heads it put
//! in the batch's `pending` put back as they were.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::counters::Counters;
use super::heads::{Head, Heads, Retired};
use super::plan::{Prepared, plan, prepare};
use crate::log::hub::Hub;
use crate::log::stored::Plan;
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind};

/// One append of a job.
pub(crate) struct Append {
    pub(crate) request: AppendRequest,
    /// `request.records` as a JSON array.
    pub(super) records: String,
    /// The append planned by its caller, if it could.
    prepared: Option<Prepared>,
}

impl Append {
    /// Encodes and plans `request` on the caller's thread, off the writer's,
    /// which then has only the SQLite work to do.
    pub(crate) fn new(heads: &Heads, request: AppendRequest) -> Result<Self, LogError> {
        let records =
            a2a_tower_core::json::to_string(&request.records).map_err(LogError::backend)?;
        let prepared = prepare(heads, &request);
        Ok(Self {
            request,
            records,
            prepared,
        })
    }
}

/// One queued job: one append or several committed as one, and where to
/// send its outcome.
#[allow(
    clippy::large_enum_variant,
    reason = "a job is moved once, into the queue; boxing the common single append would cost it an allocation"
)]
pub(crate) enum Job {
    /// One append.
    One(Append, Answer<Appended>),
    /// Several appends, to different tasks, all or nothing.
    All(Vec<Append>, Answer<Vec<Appended>>),
    /// A write of push delivery progress.
    Delivery(super::deliveries::Op, Answer<bool>),
    /// A deletion of expired tasks, or a reclaim of their space.
    Retention(super::retention::Op, Answer<usize>),
}

/// Where a job's outcome goes, and the outcome once known.
pub(crate) struct Answer<T> {
    reply: oneshot::Sender<Reply<T>>,
    outcome: Option<Result<T, LogError>>,
}

impl<T> Answer<T> {
    /// An answer to send to `reply`.
    pub(crate) fn new(reply: oneshot::Sender<Reply<T>>) -> Self {
        Self {
            reply,
            outcome: None,
        }
    }

    fn fail(mut self, e: &rusqlite::Error) {
        self.outcome = Some(Err(LogError::backend(e.to_string())));
        self.send(Leftovers::default());
    }

    fn send(self, leftovers: Leftovers) {
        let outcome = self
            .outcome
            .unwrap_or_else(|| Err(LogError::backend("sqlite job left unanswered")));
        let _ = self.reply.send(Reply { outcome, leftovers });
    }
}

/// A job's outcome, and what the writer is done with.
pub(crate) struct Reply<T> {
    pub(crate) outcome: Result<T, LogError>,
    /// Freed by the caller that receives the reply, not by the writer
    /// thread: under load the writer is the bottleneck, and freeing a batch
    /// of tasks is a good part of its CPU time.
    pub(crate) leftovers: Leftovers,
}

/// What the writer is done with (see [`Reply::leftovers`]).
#[derive(Default)]
pub(crate) struct Leftovers {
    _one: Option<Append>,
    _all: Vec<Append>,
    _retired: Vec<Retired>,
}

impl Job {
    /// The number of appends.
    fn len(&self) -> usize {
        match self {
            Self::One(..) => 1,
            Self::All(appends, _) => appends.len(),
            Self::Delivery(..) | Self::Retention(..) => 0,
        }
    }

    fn fail(self, e: &rusqlite::Error) {
        match self {
            Self::One(_, answer) => answer.fail(e),
            Self::All(_, answer) => answer.fail(e),
            Self::Delivery(_, answer) => answer.fail(e),
            Self::Retention(_, answer) => answer.fail(e),
        }
    }

    /// Writes the job (within the batch's transaction), keeping its outcome;
    /// `Err(_)` when a write failed outside a SAVEPOINT (the batch is rolled
    /// back).
    fn write(
        &mut self,
        conn: &Connection,
        heads: &Heads,
        pending: &mut HashMap<String, Head>,
    ) -> rusqlite::Result<()> {
        match self {
            Self::One(append, answer) => {
                let out = one(conn, heads, pending, append)?;
                answer.outcome = Some(out.map(|(appended, _)| appended));
            }
            Self::All(appends, answer) => {
                answer.outcome = Some(all(conn, heads, pending, appends)?);
            }
            Self::Delivery(op, answer) => {
                answer.outcome = Some(super::deliveries::write(conn, op)?);
            }
            Self::Retention(op, answer) => {
                answer.outcome = Some(super::retention::write(conn, op)?);
            }
        }
        Ok(())
    }

    /// Wakes the watchers of what the job committed and answers it (after
    /// COMMIT).
    fn finish(self, hub: &Hub, retired: Vec<Retired>) {
        match self {
            Self::One(mut append, answer) => {
                if let Some(Ok(appended)) = &answer.outcome {
                    publish(hub, &mut append, appended);
                }
                answer.send(Leftovers {
                    _one: Some(append),
                    _all: Vec::new(),
                    _retired: retired,
                });
            }
            Self::All(mut appends, answer) => {
                if let Some(Ok(out)) = &answer.outcome {
                    for (append, appended) in appends.iter_mut().zip(out) {
                        publish(hub, append, appended);
                    }
                }
                answer.send(Leftovers {
                    _one: None,
                    _all: appends,
                    _retired: retired,
                });
            }
            Self::Delivery(_, answer) => {
                answer.send(Leftovers {
                    _retired: retired,
                    ..Leftovers::default()
                });
            }
            Self::Retention(_, answer) => {
                answer.send(Leftovers {
                    _retired: retired,
                    ..Leftovers::default()
                });
            }
        }
    }
}

/// Hands the committed records of `append` to the hub, which wakes the
/// task's watchers; keeps those nobody watches, to be freed by the caller.
fn publish(hub: &Hub, append: &mut Append, appended: &Appended) {
    let request = &mut append.request;
    let first = appended.seq + 1 - request.records.len() as u64;
    let published = std::mem::take(&mut request.records);
    if let Some(unwatched) = hub.publish(&request.task_id, first, published) {
        request.records = unwatched;
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
        let appends: usize = batch.iter().map(Job::len).sum();
        counters
            .appends
            .fetch_add(appends as u64, Ordering::Relaxed);
        counters.transactions.fetch_add(1, Ordering::Relaxed);
        let reclaim = batch
            .iter()
            .any(|j| matches!(j, Job::Retention(super::retention::Op::Reclaim, _)));
        let began = std::time::Instant::now();
        commit_batch(&mut conn, &heads, &mut pending, &hub, &mut batch);
        a2a_tower_core::telemetry::record_commit("sqlite", appends, began.elapsed());
        pending.clear();
        if reclaim {
            // Outside the batch's transaction, as SQLite requires; the
            // reclaim's caller was answered with the batch (best effort).
            let _ = super::retention::reclaim(&conn);
        }
    }
}

/// Runs one cached statement without parameters (transaction control).
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

fn fail_all(batch: &mut Vec<Job>, e: &rusqlite::Error) {
    for job in batch.drain(..) {
        job.fail(e);
    }
}

/// Commits the batch in one transaction. A job refused by its checks
/// writes nothing and fails alone, as does a job of several appends whose
/// write failed inside its SAVEPOINT; any other failed write rolls the
/// whole batch back (none of it was acknowledged). `pending` holds the heads written by
/// the batch so far (a task may be appended to twice in one batch); they
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
    for job in batch.iter_mut() {
        if let Err(e) = job.write(conn, heads, pending) {
            let _ = exec(conn, "ROLLBACK");
            return fail_all(batch, &e);
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
    for job in batch.drain(..) {
        job.finish(hub, std::mem::take(&mut retired));
    }
}

/// One append: `Ok(Err(_))` when its checks refuse it (nothing written),
/// `Err(_)` when a write failed. Committed, with the head it replaced in
/// `pending`, if any.
fn one(
    conn: &Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    append: &mut Append,
) -> rusqlite::Result<Result<(Appended, Option<Head>), LogError>> {
    let prepared = append.prepared.take();
    match plan(conn, heads, pending, &append.request, prepared) {
        Ok(planned) => written(conn, pending, append, planned),
        Err(e) => Ok(Err(e)),
    }
}

/// Writes `append` as `planned`: `Ok(Err(_))` when it creates a task that
/// exists (nothing written), `Err(_)` when a write failed. Committed, with
/// the head it replaced in `pending`, if any.
fn written(
    conn: &Connection,
    pending: &mut HashMap<String, Head>,
    append: &Append,
    (plan, snapshot): (Plan, Option<String>),
) -> rusqlite::Result<Result<(Appended, Option<Head>), LogError>> {
    if !super::rows::write(conn, append, &plan, snapshot.as_deref())? {
        // A creation of a task that exists: nothing was written.
        return Ok(Err(LogError::new(LogErrorKind::Conflict)));
    }
    let req = &append.request;
    let out = plan.appended();
    let replaced = pending.insert(
        req.task_id.clone(),
        Head {
            authority: req.authority.clone(),
            snapshot: out.snapshot.clone(),
        },
    );
    Ok(Ok((out, replaced)))
}

/// Several appends as one. Each is checked first (their tasks differ, so
/// none's check depends on another's write); one refused, nothing is
/// written. Then they are written in order, each as [`one`] would. Only a
/// creation can still be refused once written to (by its INSERT, when the
/// task exists in the database though not in memory): when the first
/// append is the only creation, that refusal comes before anything is
/// written, and the job needs no SAVEPOINT (whose sub-journal copies every
/// page the job touches: a fifth of a queued message's instructions). Else
/// the writes run inside one, rolled back at a refusal, every head the job
/// put in `pending` put back as it was. `Err(_)` when a write failed
/// outside a SAVEPOINT (the batch is rolled back, as for a single append),
/// or a rollback failed.
fn all(
    conn: &Connection,
    heads: &Heads,
    pending: &mut HashMap<String, Head>,
    appends: &mut [Append],
) -> rusqlite::Result<Result<Vec<Appended>, LogError>> {
    let distinct = appends.iter().enumerate().all(|(i, a)| {
        appends[..i]
            .iter()
            .all(|b| b.request.task_id != a.request.task_id)
    });
    let mut plans = Vec::with_capacity(appends.len());
    if distinct {
        for append in appends.iter_mut() {
            let prepared = append.prepared.take();
            match plan(conn, heads, pending, &append.request, prepared) {
                Ok(planned) => plans.push(planned),
                Err(e) => return Ok(Err(e)),
            }
        }
    }
    let guarded = !distinct || plans.iter().skip(1).any(|(plan, _)| plan.create);
    if !guarded {
        let mut out = Vec::with_capacity(appends.len());
        for (append, planned) in appends.iter().zip(plans) {
            match written(conn, pending, append, planned)? {
                Ok((appended, _)) => out.push(appended),
                // Only the first can be refused here: nothing was written.
                Err(e) => return Ok(Err(e)),
            }
        }
        return Ok(Ok(out));
    }
    exec(conn, "SAVEPOINT job")?;
    let mut plans = plans.into_iter();
    let mut out = Vec::with_capacity(appends.len());
    let mut replaced = Vec::with_capacity(appends.len());
    let mut refused = None;
    for append in appends.iter_mut() {
        let outcome = match plans.next() {
            Some(planned) => written(conn, pending, append, planned),
            None => one(conn, heads, pending, append),
        };
        match outcome {
            Ok(Ok((appended, before))) => {
                out.push(appended);
                replaced.push((append.request.task_id.as_str(), before));
            }
            Ok(Err(e)) => refused = Some(e),
            Err(e) => refused = Some(LogError::backend(e.to_string())),
        }
        if refused.is_some() {
            break;
        }
    }
    let Some(refused) = refused else {
        exec(conn, "RELEASE job")?;
        return Ok(Ok(out));
    };
    exec(conn, "ROLLBACK TO job")?;
    exec(conn, "RELEASE job")?;
    for (task_id, before) in replaced {
        match before {
            Some(head) => pending.insert(task_id.to_owned(), head),
            None => pending.remove(task_id),
        };
    }
    Ok(Err(refused))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Record;
    use crate::types::Message;

    fn msg(i: u64) -> Record {
        Record::MessageAdmitted {
            message: Message::user(format!("m{i}"), "x"),
        }
    }

    fn create(id: &str) -> AppendRequest {
        AppendRequest::create("a", id, vec![Record::created(id, "c")])
    }

    fn next(id: &str, expected: u64) -> AppendRequest {
        AppendRequest::new("a", id, expected, 1, vec![msg(expected)])
    }

    struct Writer {
        conn: Connection,
        heads: Heads,
        hub: Hub,
        pending: HashMap<String, Head>,
    }

    impl Writer {
        fn new() -> Self {
            let mut conn = Connection::open_in_memory().unwrap();
            super::super::schema::migrate(&mut conn).unwrap();
            Self {
                conn,
                heads: Heads::new(64),
                hub: Hub::default(),
                pending: HashMap::new(),
            }
        }

        fn append(&self, req: AppendRequest) -> Append {
            Append::new(&self.heads, req).unwrap()
        }

        fn one(&self, req: AppendRequest) -> (Job, oneshot::Receiver<Reply<Appended>>) {
            let (tx, rx) = oneshot::channel();
            (Job::One(self.append(req), Answer::new(tx)), rx)
        }

        fn all(&self, reqs: Vec<AppendRequest>) -> (Job, oneshot::Receiver<Reply<Vec<Appended>>>) {
            let (tx, rx) = oneshot::channel();
            let appends = reqs.into_iter().map(|r| self.append(r)).collect();
            (Job::All(appends, Answer::new(tx)), rx)
        }

        fn commit(&mut self, batch: Vec<Job>) {
            let mut batch = batch;
            commit_batch(
                &mut self.conn,
                &self.heads,
                &mut self.pending,
                &self.hub,
                &mut batch,
            );
            assert!(batch.is_empty());
        }

        /// A writer whose log holds the task `old` at sequence number 1.
        fn with_old() -> Self {
            let mut w = Self::new();
            let (job, rx) = w.one(create("old"));
            w.commit(vec![job]);
            assert!(outcome(rx).is_ok());
            w
        }

        /// Plants the entry at sequence number 1 of `id`, which has no
        /// row: creating `id` then fails midway, after its row is inserted.
        fn plant_entry(&self, id: &str) {
            self.conn
                .execute(
                    "INSERT INTO entries (task_id, seq, first, epoch, records, created_at) \
                     VALUES (?1, 1, 1, 1, '[]', 0)",
                    [id],
                )
                .unwrap();
        }

        /// The committed sequence number of a task's row.
        fn seq(&self, id: &str) -> Option<u64> {
            super::super::read::row(&self.conn, id)
                .unwrap()
                .map(|r| r.seq)
        }
    }

    fn outcome<T>(mut rx: oneshot::Receiver<Reply<T>>) -> Result<T, LogErrorKind> {
        rx.try_recv().unwrap().outcome.map_err(|e| e.kind())
    }

    #[test]
    fn a_check_writes_no_row_and_an_epoch_raise_does() {
        let mut w = Writer::with_old();
        let changes = w.conn.total_changes();
        let (a, ra) = w.one(AppendRequest::new("a", "old", 1, 1, vec![]));
        w.commit(vec![a]);
        assert_eq!(outcome(ra).unwrap().seq, 1);
        assert_eq!(w.conn.total_changes(), changes, "a check writes nothing");
        let (b, rb) = w.one(AppendRequest::new("a", "old", 1, 2, vec![]));
        w.commit(vec![b]);
        assert_eq!(outcome(rb).unwrap().snapshot.epoch, 2);
        assert_eq!(w.conn.total_changes(), changes + 1, "the epoch is raised");
        let epoch = super::super::read::row(&w.conn, "old")
            .unwrap()
            .unwrap()
            .epoch;
        assert_eq!(epoch, 2);
    }

    #[test]
    fn a_refused_group_leaves_the_rest_of_the_batch_committed() {
        let mut w = Writer::with_old();
        w.plant_entry("y");
        let (a, ra) = w.one(next("old", 1));
        let (b, rb) = w.all(vec![next("old", 2), create("new"), next("missing", 1)]);
        let (c, rc) = w.one(next("old", 2));
        let (d, rd) = w.all(vec![create("x"), create("y")]);
        let (e, re) = w.one(create("z"));
        w.commit(vec![a, b, c, d, e]);
        assert_eq!(outcome(ra).unwrap().seq, 2);
        assert_eq!(outcome(rb).unwrap_err(), LogErrorKind::NotFound);
        // Planned on the head `a` left, not on the one `b` put in pending.
        assert_eq!(outcome(rc).unwrap().seq, 3);
        assert_eq!(outcome(rd).unwrap_err(), LogErrorKind::Backend);
        assert_eq!(outcome(re).unwrap().seq, 1);
        assert_eq!(w.seq("old"), Some(3));
        assert_eq!(w.heads.position("old"), Some((3, 1)));
        for gone in ["new", "x", "y"] {
            assert_eq!(w.seq(gone), None, "{gone}");
            assert_eq!(w.heads.position(gone), None, "{gone}");
        }
        assert_eq!(w.seq("z"), Some(1));
        let entries: i64 = w
            .conn
            .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
            .unwrap();
        // old: 3, z: 1, and the one planted for y.
        assert_eq!(entries, 5);
    }

    #[test]
    fn a_refused_group_puts_pending_back() {
        let mut w = Writer::with_old();
        exec(&w.conn, "BEGIN IMMEDIATE").unwrap();
        let mut first = w.append(next("old", 1));
        let out = one(&w.conn, &w.heads, &mut w.pending, &mut first).unwrap();
        assert!(matches!(out, Ok((_, None))));
        let mut group = vec![
            w.append(next("old", 2)),
            w.append(create("new")),
            w.append(create("old")),
        ];
        let refused = all(&w.conn, &w.heads, &mut w.pending, &mut group).unwrap();
        assert_eq!(refused.unwrap_err().kind(), LogErrorKind::Conflict);
        assert_eq!(w.pending.len(), 1);
        assert_eq!(w.pending["old"].snapshot.seq, 2);
        assert_eq!(w.seq("old"), Some(2), "the earlier write stays");
        assert_eq!(w.seq("new"), None);
        // A group that passes leaves its heads pending.
        let mut group = vec![w.append(next("old", 2)), w.append(create("new"))];
        let out = all(&w.conn, &w.heads, &mut w.pending, &mut group).unwrap();
        assert_eq!(
            out.unwrap().iter().map(|a| a.seq).collect::<Vec<_>>(),
            [3, 1]
        );
        assert_eq!(w.pending["old"].snapshot.seq, 3);
        assert_eq!(w.pending["new"].snapshot.seq, 1);
        exec(&w.conn, "ROLLBACK").unwrap();
    }

    #[test]
    fn a_group_creating_a_task_that_exists_first_writes_nothing() {
        let mut w = Writer::with_old();
        // A task in the database that the writer has not seen: only its
        // INSERT can refuse its creation.
        w.conn
            .execute(
                "INSERT INTO tasks (task_id, authority, context_id, state, status_ts, live, seq, epoch, snapshot_seq, created_at, updated_at, host) \
                 SELECT 'dup', authority, context_id, state, status_ts, live, seq, epoch, snapshot_seq, created_at, updated_at, host FROM tasks WHERE task_id = 'old'",
                [],
            )
            .unwrap();
        let (a, ra) = w.all(vec![create("dup"), next("old", 1)]);
        let (b, rb) = w.all(vec![create("new"), next("old", 1)]);
        w.commit(vec![a, b]);
        assert_eq!(outcome(ra).unwrap_err(), LogErrorKind::Conflict);
        assert_eq!(
            outcome(rb)
                .unwrap()
                .iter()
                .map(|a| a.seq)
                .collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(w.seq("old"), Some(2));
        assert_eq!(w.seq("new"), Some(1));
        assert_eq!(w.heads.position("dup"), None);
    }

    #[test]
    fn a_group_checked_first_refuses_before_writing() {
        let mut w = Writer::with_old();
        exec(&w.conn, "BEGIN IMMEDIATE").unwrap();
        // The second append's check fails: the first is not written.
        let mut group = vec![w.append(next("old", 1)), w.append(next("old2", 1))];
        let refused = all(&w.conn, &w.heads, &mut w.pending, &mut group).unwrap();
        assert_eq!(refused.unwrap_err().kind(), LogErrorKind::NotFound);
        assert!(w.pending.is_empty());
        assert_eq!(w.seq("old"), Some(1));
        exec(&w.conn, "ROLLBACK").unwrap();
    }

    #[test]
    fn a_failed_write_outside_a_savepoint_rolls_the_batch_back() {
        let mut w = Writer::with_old();
        // Creating `y` fails midway (its entry exists), and it is the
        // group's only creation, first: no SAVEPOINT holds the group, so
        // the batch goes back whole and nobody is acknowledged.
        w.plant_entry("y");
        let (a, ra) = w.one(next("old", 1));
        let (b, rb) = w.all(vec![create("y"), next("old", 2)]);
        w.commit(vec![a, b]);
        assert_eq!(outcome(ra).unwrap_err(), LogErrorKind::Backend);
        assert_eq!(outcome(rb).unwrap_err(), LogErrorKind::Backend);
        assert_eq!(w.seq("old"), Some(1));
        assert_eq!(w.seq("y"), None);
        assert_eq!(w.heads.position("old"), Some((1, 1)));
    }
}
