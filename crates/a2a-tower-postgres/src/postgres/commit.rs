//! The committer: one task per log that owns a dedicated connection and
//! commits the conditional one-statement appends of every caller queued
//! meanwhile (up to [`MAX_BATCH`]) in ONE transaction, pipelined: `BEGIN`,
//! the statements (in task id order, so two hosts' batches lock rows in
//! the same order) and `COMMIT` are sent back to back and their answers
//! read in order: one round trip per batch.
//!
//! Each statement refuses by row count (0: the row was not at the expected
//! sequence number, of the authority, without a newer epoch, or the task
//! exists already), never by an error, so a refusal does not abort the
//! batch; the caller then reads the row for the exact answer. A real error
//! (I/O, a lost connection, an unexpected constraint) fails every statement
//! after it and turns the `COMMIT` into a rollback: every job of the batch
//! is answered that error, none is acknowledged, and the next batch opens a
//! new connection if this one is lost. Nobody is answered before the
//! batch's `COMMIT` returned. After it, the records are published to the
//! log's own watchers (the hub keeps the last ones, so they are served
//! from memory, see [`Hub::recent`]) and one `NOTIFY` tells the other
//! hosts (see [`notify_sql`](super::sql::notify_sql)): sent first in the
//! next batch's pipeline, or alone when no append is waiting.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures_util::future::{MaybeDone, maybe_done};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::sql::{Sql, notify_sql};
use crate::log::hub::Hub;
use crate::log::{LogError, LogErrorKind, Record};

/// At most this many appends ride one transaction.
pub(super) const MAX_BATCH: usize = 256;

/// The columns of one conditional append statement (`create_once` or
/// `update_once`), owned so that it can be queued.
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
    /// Starts the committer of the log whose statements are `sql`; it stops
    /// when the handle is dropped (after the batch in hand).
    pub(super) fn start(
        mut config: Config,
        schema: &str,
        sql: Arc<Sql>,
        channel: String,
        instance: String,
        hub: Arc<Hub>,
    ) -> Self {
        // Names the connection in `pg_stat_activity` (the schema tells the
        // logs of one database apart).
        let name: String = format!("a2a_commit {schema}").chars().take(63).collect();
        config.application_name(&name);
        let (jobs, rx) = mpsc::unbounded_channel();
        let run = Run {
            config,
            sql,
            notify: (channel, instance),
            hub,
            conn: None,
            pending: None,
        };
        tokio::spawn(run.serve(rx));
        Self { jobs }
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
}

struct Run {
    config: Config,
    sql: Arc<Sql>,
    /// The channel and this log's mark on its notifications.
    notify: (String, String),
    hub: Arc<Hub>,
    conn: Option<Conn>,
    /// The NOTIFY of the last batch, not sent yet: it goes first in the
    /// next batch's pipeline, or alone when no job is waiting.
    pending: Option<String>,
}

type Pending<'a> =
    Pin<Box<MaybeDone<Pin<Box<dyn Future<Output = Result<i64, Failure>> + Send + 'a>>>>>;

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
            if self.pending.is_some() && rx.is_empty() {
                self.flush().await;
            }
            if rx.recv_many(&mut batch, MAX_BATCH).await == 0 {
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
            let mut written = Vec::new();
            match outcome {
                Ok(counts) => {
                    for (job, rows) in batch.drain(..).zip(counts) {
                        let records = if rows == 1 {
                            // Kept for this log's watchers (in commit
                            // order: one task's appends keep theirs).
                            self.hub.publish(&job.row.task_id, job.first, job.records);
                            written.push((job.row.task_id, job.row.seq));
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
            if !written.is_empty() {
                // Wakes the other hosts' watchers (this log's were woken by
                // the publish), naming each task with the sequence number
                // it reached.
                let tasks: Vec<(&str, u64)> = written
                    .iter()
                    .map(|(t, seq)| (t.as_str(), u64::try_from(*seq).unwrap_or(0)))
                    .collect();
                self.pending = Some(notify_sql(&self.notify.0, &self.notify.1, &tasks));
            }
        }
    }

    /// Sends the pending NOTIFY alone.
    async fn flush(&mut self) {
        let Some(sql) = self.pending.take() else {
            return;
        };
        let Some(conn) = &self.conn else { return };
        if let Err(e) = conn.client.batch_execute(&sql).await {
            // The appends are committed. Remote watchers catch up at the
            // task's next notification (or their listener's reconnect). A
            // batch that failed after its BEGIN leaves an aborted
            // transaction: end it.
            let _ = conn.client.batch_execute("ROLLBACK").await;
            tracing::warn!(target: "a2a_tower::log", kind = %e.code().map_or("io", |c| c.code()), "postgres notify failed");
        }
    }

    /// Opens the connection (and prepares its statements) if there is none
    /// or it was lost.
    async fn connect(&mut self) -> Result<(), Failure> {
        if self.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            self.conn = None;
        }
        if self.conn.is_none() {
            let (client, connection) = self.config.connect(NoTls).await?;
            tokio::spawn(connection);
            let (begin, create, update, commit) = futures_util::future::try_join4(
                client.prepare("BEGIN"),
                client.prepare(&self.sql.create_once),
                client.prepare(&self.sql.update_once),
                client.prepare("COMMIT"),
            )
            .await?;
            self.conn = Some(Conn {
                begin,
                create,
                update,
                commit,
                client,
            });
        }
        Ok(())
    }

    /// Commits `rows` in one transaction, pipelined; the number of task rows
    /// each wrote. The one place a batch commits.
    async fn commit(&mut self, rows: &[&WriteRow]) -> Result<Vec<i64>, Failure> {
        let notify = self.pending.take();
        if let Err(e) = self.connect().await {
            self.pending = notify;
            return Err(e);
        }
        let conn = self.conn.as_ref().ok_or(Failure::Lost)?;
        let c = &conn.client;
        let mut sent: Vec<Pending<'_>> = Vec::with_capacity(rows.len() + 3);
        let skip = usize::from(notify.is_some());
        if let Some(sql) = notify {
            // The last batch's NOTIFY, in its own transaction before this
            // one's BEGIN (if it failed midway, its aborted transaction
            // fails this batch, which then answers the error: nothing is
            // acknowledged wrongly).
            sent.push(Box::pin(maybe_done(Box::pin(async move {
                if let Err(e) = c.batch_execute(&sql).await {
                    tracing::warn!(target: "a2a_tower::log", kind = %e.code().map_or("io", |c| c.code()), "postgres notify failed");
                }
                Ok(0)
            }))));
        }
        sent.push(Box::pin(maybe_done(Box::pin(async move {
            c.execute(&conn.begin, &[])
                .await
                .map(|_| 0)
                .map_err(Failure::from)
        }))));
        for row in rows {
            let st = if row.create {
                &conn.create
            } else {
                &conn.update
            };
            sent.push(Box::pin(maybe_done(Box::pin(async move {
                let params = row.params();
                c.query_one(st, &params)
                    .await
                    .map(|r| r.get::<_, i64>(0))
                    .map_err(Failure::from)
            }))));
        }
        sent.push(Box::pin(maybe_done(Box::pin(async move {
            c.execute(&conn.commit, &[])
                .await
                .map(|_| 0)
                .map_err(Failure::from)
        }))));
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
        let mut out = Vec::with_capacity(rows.len());
        let mut failed = None;
        for f in &mut sent {
            match f.as_mut().take_output() {
                Some(Ok(n)) => out.push(n),
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
        // The NOTIFY's, BEGIN's and COMMIT's.
        out.pop();
        out.drain(..=skip);
        Ok(out)
    }
}
