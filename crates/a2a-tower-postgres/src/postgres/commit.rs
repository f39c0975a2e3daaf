//! The committer: one task per log that owns a dedicated connection and
//! commits the conditional one-statement appends of every caller queued
//! meanwhile (up to [`MAX_BATCH`]) in ONE transaction, pipelined: `BEGIN`,
//! the batch's creations as one statement over arrays (one element per
//! task, in task id order), the other appends one statement each (in task
//! id order) and `COMMIT` are sent back to back and their answers read in
//! order: one round trip per batch (a batch of one statement, such as
//! creations only, is sent without `BEGIN` and `COMMIT`: its own implicit
//! transaction). Creations first, then updates, each in
//! task id order, so two hosts' batches cannot wait for each other in a
//! cycle: a creation locks only a row that did not exist (another host's
//! batch cannot be updating it), and the updates of both lock existing rows
//! in one order.
//!
//! Each statement refuses by row count (0: the row was not at the expected
//! sequence number, of the authority, without a newer epoch, or the task
//! exists already), never by an error, so a refusal does not abort the
//! batch; the caller then reads the row for the exact answer. A second
//! creation of one task id in a batch is refused without a statement (the
//! first either creates the task or finds it). A real error
//! (I/O, a lost connection, an unexpected constraint) fails every statement
//! after it and turns the `COMMIT` into a rollback: every job of the batch
//! is answered that error, none is acknowledged, and the next batch opens a
//! new connection if this one is lost. Nobody is answered before the
//! batch's `COMMIT` returned. After it, the records are published to the
//! log's own watchers (the hub keeps the last ones, so they are served
//! from memory, see [`Hub::recent`]) and the `NOTIFY` tells the other
//! hosts (one notification naming every task the batch wrote, see
//! [`Batch`]; in a transaction without a WAL flush, see
//! [`notify_sql`](super::sql::notify_sql)): sent
//! first in the next batch's pipeline, or alone when no append is waiting.
//! Under load the NOTIFYs are spaced: one is sent at most every
//! [`notify_interval`](super::PostgresTaskLogBuilder::notify_interval)
//! (2 ms by default) and names every task the batches since the last one
//! wrote; the first after a quiet interval goes at once. Each NOTIFY is a
//! transaction of its own, run by the committer's connection before its
//! next batch, and PostgreSQL (before version 19) wakes every listening
//! connection of the database for it (every host's committer, this one's
//! included, whatever channel each listens on), each reading the queue in a
//! transaction: one per batch cost a host beside other listeners up to a
//! sixth of its throughput.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::future::{Either, MaybeDone, maybe_done};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, Statement};

use super::notice::Batch;
use super::sql::Sql;
use crate::log::hub::Hub;
use crate::log::{LogError, LogErrorKind, Record};

/// At most this many appends ride one transaction.
pub(super) const MAX_BATCH: usize = 256;

/// The least time between two NOTIFYs of one log, by default.
pub(super) const NOTIFY_INTERVAL: Duration = Duration::from_millis(2);

/// The columns of one conditional append statement (`create_once` or
/// `update_once`, or an element of `create_many`'s arrays), owned so that
/// it can be queued.
#[derive(Debug)]
pub(super) struct WriteRow {
    pub(super) create: bool,
    pub(super) task_id: String,
    pub(super) authority: String,
    pub(super) context_id: String,
    pub(super) state: i32,
    pub(super) status_ts: i64,
    pub(super) live: bool,
    pub(super) seq: i64,
    pub(super) epoch: i64,
    pub(super) snapshot: Option<String>,
    pub(super) host: Option<String>,
    pub(super) expected: i64,
    /// The sequence number of the entry's first record.
    pub(super) first: i64,
    /// The entry: the records as one JSON array (`None`: no records, no
    /// entry).
    pub(super) entry: Option<String>,
}

impl WriteRow {
    /// The statement's parameters, in the order of its placeholders.
    pub(super) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        if self.create {
            vec![
                &self.task_id,
                &self.authority,
                &self.context_id,
                &self.state,
                &self.status_ts,
                &self.live,
                &self.seq,
                &self.epoch,
                &self.snapshot,
                &self.host,
                &self.first,
                &self.entry,
            ]
        } else {
            vec![
                &self.task_id,
                &self.context_id,
                &self.state,
                &self.status_ts,
                &self.live,
                &self.seq,
                &self.epoch,
                &self.snapshot,
                &self.expected,
                &self.host,
                &self.authority,
                &self.first,
                &self.entry,
            ]
        }
    }
}

/// A batch's creations as the columns of `create_many`: one array per
/// column, one element per creation (distinct task ids).
#[derive(Default)]
struct Creates<'a> {
    task_id: Vec<&'a str>,
    authority: Vec<&'a str>,
    context_id: Vec<&'a str>,
    state: Vec<i32>,
    status_ts: Vec<i64>,
    live: Vec<bool>,
    seq: Vec<i64>,
    epoch: Vec<i64>,
    snapshot: Vec<Option<&'a str>>,
    host: Vec<Option<&'a str>>,
    first: Vec<i64>,
    entry: Vec<Option<&'a str>>,
}

impl<'a> Creates<'a> {
    fn push(&mut self, row: &'a WriteRow) {
        self.task_id.push(&row.task_id);
        self.authority.push(&row.authority);
        self.context_id.push(&row.context_id);
        self.state.push(row.state);
        self.status_ts.push(row.status_ts);
        self.live.push(row.live);
        self.seq.push(row.seq);
        self.epoch.push(row.epoch);
        self.snapshot.push(row.snapshot.as_deref());
        self.host.push(row.host.as_deref());
        self.first.push(row.first);
        self.entry.push(row.entry.as_deref());
    }

    /// The statement's parameters, in the order of its placeholders.
    fn params(&self) -> [&(dyn ToSql + Sync); 12] {
        [
            &self.task_id,
            &self.authority,
            &self.context_id,
            &self.state,
            &self.status_ts,
            &self.live,
            &self.seq,
            &self.epoch,
            &self.snapshot,
            &self.host,
            &self.first,
            &self.entry,
        ]
    }
}

/// Where each row of a batch goes: the creations (first of their task id)
/// as one statement, the updates one statement each, in the batch's order
/// (task id order); a second creation of a task id is refused as is.
fn split<'a>(rows: &[&'a WriteRow]) -> (Vec<usize>, Creates<'a>, Vec<usize>) {
    let mut created = Vec::new();
    let mut creates = Creates::default();
    let mut updates = Vec::new();
    for (i, &row) in rows.iter().enumerate() {
        if !row.create {
            updates.push(i);
        } else if creates.task_id.last() != Some(&row.task_id.as_str()) {
            // (Rows of one task id are adjacent: the batch is in task id
            // order.)
            created.push(i);
            creates.push(row);
        }
    }
    (created, creates, updates)
}

/// One queued append and where its outcome goes.
struct Job {
    row: WriteRow,
    /// The append's records, from sequence number `first`: published to
    /// this log's watchers once committed.
    records: Vec<Record>,
    first: u64,
    reply: oneshot::Sender<Result<Written, LogError>>,
}

/// The outcome of a queued append that met no error.
#[derive(Debug)]
pub(super) struct Written {
    /// Task rows written: 1, or 0 when the statement's condition did not
    /// hold.
    pub(super) rows: i64,
    /// The records back, when refused (the caller goes on with them).
    pub(super) records: Vec<Record>,
}

/// The handle callers queue appends on.
#[derive(Debug)]
pub(super) struct Committer {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Committer {
    /// Starts the committer of the log whose statements are `sql`, once its
    /// connection is open and listening on `channel` (the log is not usable
    /// for watches before); it stops when the handle is dropped (after the
    /// batch in hand).
    pub(super) async fn start(
        mut config: Config,
        schema: &str,
        sql: Arc<Sql>,
        channel: String,
        instance: String,
        hub: Arc<Hub>,
        notify_interval: Duration,
    ) -> Result<Self, LogError> {
        // Names the connection in `pg_stat_activity` (the schema tells the
        // logs of one database apart).
        let name: String = format!("a2a_commit {schema}").chars().take(63).collect();
        config.application_name(&name);
        let (jobs, rx) = mpsc::unbounded_channel();
        let mut run = Run {
            config,
            sql,
            notify: (channel, instance.into()),
            hub,
            conn: None,
            lost: None,
            opened: false,
            pending: None,
            notified: None,
            notify_interval,
        };
        run.connect().await.map_err(|e| e.answer(false))?;
        tokio::spawn(run.serve(rx));
        Ok(Self { jobs })
    }

    /// Queues `row` (writing `records` from sequence number `first`) and
    /// waits for its batch's outcome, once committed.
    pub(super) async fn write(
        &self,
        row: WriteRow,
        records: Vec<Record>,
        first: u64,
    ) -> Result<Written, LogError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                row,
                records,
                first,
                reply,
            })
            .map_err(|_| LogError::backend("postgres committer stopped"))?;
        answer
            .await
            .map_err(|_| LogError::backend("postgres committer stopped"))?
    }
}

/// A connection with the statements a batch sends, prepared once.
struct Conn {
    client: Client,
    begin: Statement,
    create: Statement,
    update: Statement,
    commit: Statement,
    /// The NOTIFY of a batch's payloads (see `Sql::notify`).
    notify: Statement,
}

impl Conn {
    /// Sends the NOTIFY of `payloads` on `channel`: one statement, its own
    /// transaction (implicit, without a WAL flush). A failure is logged,
    /// not returned: the appends are committed, and remote watchers catch
    /// up at the task's next notification (or their listener's reconnect).
    async fn notify(&self, channel: &str, payloads: &[String]) {
        let params: [&(dyn ToSql + Sync); 2] = [&channel, &payloads];
        if let Err(e) = self.client.execute(&self.notify, &params).await {
            tracing::warn!(target: "a2a_tower::log", kind = %e.code().map_or("io", |c| c.code()), "postgres notify failed");
        }
    }
}

struct Run {
    config: Config,
    sql: Arc<Sql>,
    /// The channel and this log's mark on its notifications.
    notify: (String, Arc<str>),
    hub: Arc<Hub>,
    conn: Option<Conn>,
    /// Resolves when the connection is lost (`None`: none is open).
    lost: Option<oneshot::Receiver<()>>,
    /// A connection was opened before: the next one wakes every watcher.
    opened: bool,
    /// What the batches committed since the last NOTIFY wrote, not
    /// announced yet: sent first in the next batch's pipeline, or alone when
    /// no job is waiting, once `notify_interval` has passed since the last
    /// NOTIFY (`notified`).
    pending: Option<Batch>,
    /// When the last NOTIFY was sent (`None`: never).
    notified: Option<Instant>,
    notify_interval: Duration,
}

/// Resolves when the connection `lost` watches is lost (then take it), or
/// after a back-off when none is open (time to try again).
async fn lost(lost: &mut Option<oneshot::Receiver<()>>) {
    match lost {
        Some(rx) => {
            let _ = rx.await;
        }
        None => tokio::time::sleep(std::time::Duration::from_millis(500)).await,
    }
}

/// A statement of the pipeline: its answer is the row counts of the
/// appends it wrote, in its order (none for `BEGIN`, `COMMIT` and the
/// NOTIFY).
type Pending<'a> =
    Pin<Box<MaybeDone<Pin<Box<dyn Future<Output = Result<Vec<i64>, Failure>> + Send + 'a>>>>>;

/// A statement of a pipeline that takes no parameters and counts no rows
/// (`BEGIN`, `COMMIT`).
fn control<'a>(c: &'a Client, statement: &'a Statement) -> Pending<'a> {
    Box::pin(maybe_done(Box::pin(async move {
        c.execute(statement, &[])
            .await
            .map(|_| Vec::new())
            .map_err(Failure::from)
    })))
}

/// Why a batch failed, shared by every job of it.
#[derive(Debug, Clone)]
enum Failure {
    Db(Arc<tokio_postgres::Error>),
    /// An answer went missing (not expected to happen).
    Lost,
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Db(Arc::new(e))
    }
}

impl Failure {
    /// The error kind, for the log line.
    fn code(&self) -> &str {
        match self {
            Self::Db(e) => e.code().map_or("io", |c| c.code()),
            Self::Lost => "lost",
        }
    }

    /// The answer of each job of the failed batch: a unique violation is a
    /// conflict of the job that met it, so only a batch of one says so.
    fn answer(&self, alone: bool) -> LogError {
        match self {
            Self::Db(e)
                if alone
                    && e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) =>
            {
                LogError::new(LogErrorKind::Conflict)
            }
            Self::Db(e) => LogError::backend(e.clone()),
            Self::Lost => LogError::backend("postgres batch answer lost"),
        }
    }
}

impl Run {
    async fn serve(mut self, mut rx: mpsc::UnboundedReceiver<Job>) {
        let mut batch = Vec::new();
        loop {
            if self.pending.is_some() && rx.is_empty() && self.may_notify() {
                self.flush().await;
            }
            // The next jobs, the connection lost, or the time to send the
            // pending NOTIFY (`recv_many` is cancel safe: nothing is taken
            // from the queue unless it returns).
            let jobs = {
                let recv = std::pin::pin!(rx.recv_many(&mut batch, MAX_BATCH));
                let gone = std::pin::pin!(lost(&mut self.lost));
                let due = self.pending.as_ref().and(self.notified);
                let interval = self.notify_interval;
                let due = std::pin::pin!(async move {
                    match due {
                        Some(at) => tokio::time::sleep_until((at + interval).into()).await,
                        None => std::future::pending().await,
                    }
                });
                match futures_util::future::select(recv, futures_util::future::select(gone, due))
                    .await
                {
                    Either::Left((n, _)) => Some(n),
                    Either::Right((Either::Left(_), _)) => None,
                    // Announced at the top of the loop if still idle, else
                    // in the next batch's pipeline.
                    Either::Right((Either::Right(_), _)) => continue,
                }
            };
            let Some(n) = jobs else {
                // Listen again at once, even with no append waiting.
                if self.lost.take().is_some() {
                    tracing::warn!(target: "a2a_tower::log", "postgres committer connection lost");
                    self.conn = None;
                }
                if self.connect().await.is_err() {
                    tracing::warn!(target: "a2a_tower::log", "postgres committer reconnect failed");
                }
                continue;
            };
            if n == 0 {
                self.flush().await;
                return;
            }
            // Task id order (stable: one task's appends keep theirs).
            batch.sort_by(|a: &Job, b: &Job| a.row.task_id.cmp(&b.row.task_id));
            let rows: Vec<&WriteRow> = batch.iter().map(|j| &j.row).collect();
            let began = std::time::Instant::now();
            let outcome = self.commit(&rows).await;
            // One transaction: its time and how many appends rode it.
            a2a_tower_core::telemetry::record_commit("postgres", rows.len(), began.elapsed());
            drop(rows);
            // The NOTIFY's payload: each task written, with the sequence
            // number it reached, in one notification (this log's watchers
            // are woken by the publish; the NOTIFY wakes the other hosts',
            // each of which receives and reads one message per NOTIFY),
            // added to what earlier batches left to announce.
            let instance = &self.notify.1;
            let announced = self
                .pending
                .get_or_insert_with(|| Batch::new(instance.clone()));
            match outcome {
                Ok(counts) => {
                    for (job, rows) in batch.drain(..).zip(counts) {
                        let records = if rows == 1 {
                            // Kept for this log's watchers (in commit
                            // order: one task's appends keep theirs).
                            self.hub.publish(&job.row.task_id, job.first, job.records);
                            let seq = u64::try_from(job.row.seq).unwrap_or(0);
                            announced.push(&job.row.task_id, seq);
                            Vec::new()
                        } else {
                            job.records
                        };
                        let _ = job.reply.send(Ok(Written { rows, records }));
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "a2a_tower::log", kind = %e.code(), "postgres batch failed");
                    let alone = batch.len() == 1;
                    for job in batch.drain(..) {
                        let _ = job.reply.send(Err(e.answer(alone)));
                    }
                    if self.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
                        self.conn = None;
                    }
                }
            }
            if announced.is_empty() {
                self.pending = None;
            }
        }
    }

    /// A NOTIFY may be sent now: `notify_interval` has passed since the
    /// last.
    fn may_notify(&self) -> bool {
        self.notified
            .is_none_or(|at| at.elapsed() >= self.notify_interval)
    }

    /// The pending announcements' payloads, taken to be sent now.
    fn take_pending(&mut self) -> Option<Vec<String>> {
        let payloads = self.pending.take()?.finish();
        if payloads.is_empty() {
            return None;
        }
        self.notified = Some(Instant::now());
        Some(payloads)
    }

    /// Sends the pending NOTIFY alone.
    async fn flush(&mut self) {
        if self.conn.is_none() {
            return;
        }
        let Some(payloads) = self.take_pending() else {
            return;
        };
        let Some(conn) = &self.conn else { return };
        conn.notify(&self.notify.0, &payloads).await;
    }

    /// Opens the connection (listening on the channel, its statements
    /// prepared) if there is none or it was lost; after a lost one, wakes
    /// every watcher (commits of other hosts may have gone unheard).
    async fn connect(&mut self) -> Result<(), Failure> {
        if self.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            self.conn = None;
        }
        if self.conn.is_none() {
            self.lost = None;
            let (client, lost) =
                super::listen::connect(&self.config, &self.notify.0, &self.notify.1, &self.hub)
                    .await?;
            if std::mem::replace(&mut self.opened, true) {
                self.hub.notify_all();
            }
            let (begin, create, update, commit, notify) = futures_util::future::try_join5(
                client.prepare("BEGIN"),
                client.prepare(&self.sql.create_many),
                client.prepare(&self.sql.update_once),
                client.prepare("COMMIT"),
                client.prepare(&self.sql.notify),
            )
            .await?;
            self.conn = Some(Conn {
                begin,
                create,
                update,
                commit,
                notify,
                client,
            });
            self.lost = Some(lost);
        }
        Ok(())
    }

    /// Commits `rows` (in task id order) in one transaction, pipelined; the
    /// number of task rows each wrote. The one place a batch commits.
    async fn commit(&mut self, rows: &[&WriteRow]) -> Result<Vec<i64>, Failure> {
        self.connect().await?;
        let notify = if self.may_notify() {
            self.take_pending()
        } else {
            None
        };
        let conn = self.conn.as_ref().ok_or(Failure::Lost)?;
        let c = &conn.client;
        let channel = self.notify.0.as_str();
        let (created, creates, updates) = split(rows);
        let mut sent: Vec<Pending<'_>> = Vec::with_capacity(updates.len() + 4);
        if let Some(payloads) = &notify {
            // The last batch's NOTIFY, in its own implicit transaction
            // before this one's BEGIN (a failure there is rolled back at
            // its end: this batch starts on an idle connection).
            sent.push(Box::pin(maybe_done(Box::pin(async move {
                conn.notify(channel, payloads).await;
                Ok(Vec::new())
            }))));
        }
        // One statement is its own transaction (implicit, committed at its
        // end, all or nothing): BEGIN and COMMIT only around several.
        let block = usize::from(!created.is_empty()) + updates.len() > 1;
        if block {
            sent.push(control(c, &conn.begin));
        }
        if !created.is_empty() {
            let creates = &creates;
            sent.push(Box::pin(maybe_done(Box::pin(async move {
                let params = creates.params();
                let rows = c.query(&conn.create, &params).await?;
                let ids: std::collections::HashSet<&str> =
                    rows.iter().map(|r| r.get::<_, &str>(0)).collect();
                Ok::<_, Failure>(
                    creates
                        .task_id
                        .iter()
                        .map(|t| i64::from(ids.contains(t)))
                        .collect::<Vec<i64>>(),
                )
            }))));
        }
        for &i in &updates {
            let row = rows[i];
            sent.push(Box::pin(maybe_done(Box::pin(async move {
                let params = row.params();
                c.query_one(&conn.update, &params)
                    .await
                    .map(|r| vec![r.get::<_, i64>(0)])
                    .map_err(Failure::from)
            }))));
        }
        if block {
            sent.push(control(c, &conn.commit));
        }
        // Polled in order, so sent in order: each request goes out at its
        // future's first poll, before any answer is awaited.
        poll_fn(|cx| {
            let mut done = true;
            for f in &mut sent {
                done &= f.as_mut().poll(cx).is_ready();
            }
            if done { Poll::Ready(()) } else { Poll::Pending }
        })
        .await;
        let mut counts = Vec::with_capacity(rows.len());
        let mut failed = None;
        for f in &mut sent {
            match f.as_mut().take_output() {
                Some(Ok(n)) => counts.extend(n),
                // The first error is the cause; the others follow from it
                // (an aborted transaction).
                Some(Err(e)) => {
                    failed.get_or_insert(e);
                }
                None => {
                    failed.get_or_insert(Failure::Lost);
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        // In the order sent: the creations', then the updates'; a second
        // creation of a task id wrote nothing.
        let mut out = vec![0; rows.len()];
        for (i, n) in created.into_iter().chain(updates).zip(counts) {
            out[i] = n;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(create: bool, task_id: &str) -> WriteRow {
        WriteRow {
            create,
            task_id: task_id.to_owned(),
            authority: "x".to_owned(),
            context_id: "c".to_owned(),
            state: 1,
            status_ts: 0,
            live: true,
            seq: 1,
            epoch: 1,
            snapshot: Some("{}".to_owned()),
            host: None,
            expected: 0,
            first: 1,
            entry: Some("[]".to_owned()),
        }
    }

    #[test]
    fn creations_ride_one_statement_second_ones_refused_as_is() {
        let rows = [
            row(true, "a"),
            row(true, "a"),
            row(false, "b"),
            row(true, "c"),
            row(false, "d"),
        ];
        let rows: Vec<&WriteRow> = rows.iter().collect();
        let (created, creates, updates) = split(&rows);
        assert_eq!(created, [0, 3]);
        assert_eq!(creates.task_id, ["a", "c"]);
        assert_eq!(creates.params().len(), 12);
        assert_eq!(updates, [2, 4]);
    }
}
