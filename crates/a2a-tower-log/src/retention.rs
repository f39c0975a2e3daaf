//! Retention: terminal tasks older than a host-set age are deleted in
//! bounded batches, each batch one transaction (a task is whole or gone:
//! ListTasks, reads and recovery never see half of one), with everything
//! kept for it (records, push configs and delivery progress, a managed
//! run's journal, which is records of its task). Tasks that are still
//! running (SUBMITTED, WORKING) but untouched for a host-set age are kept
//! or failed as interrupted, as the [`Stale`] policy says. A feature's
//! streams with nothing pending are compacted once idle for the same age,
//! when the policy is told how ([`RetentionPolicy::compact_streams`], with
//! the delivery queue's `QueueStreams`): restated as one record, the records
//! before it dropped (see [`StreamCompaction`](crate::StreamCompaction)).
//!
//! A backend offers it by implementing [`Retention`]; [`RetentionPolicy`]
//! sweeps one, once ([`RetentionPolicy::sweep`]) or in the background
//! ([`RetentionPolicy::spawn`]).
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, RetentionPolicy, TaskLog};
//! use a2a_tower::types::{TaskState, TaskStatus, Timestamp};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! let done = TaskStatus {
//!     state: TaskState::Completed,
//!     timestamp: Some(Timestamp::from_unix_millis(0)),
//!     ..Default::default()
//! };
//! let records = vec![Record::created("t-1", "c-1"), Record::status(done)];
//! log.append(AppendRequest::create("public", "t-1", records)).await.unwrap();
//! // Completed in 1970: older than a day.
//! let policy = RetentionPolicy::new(Duration::from_secs(86_400));
//! assert_eq!(policy.sweep(&log).await.unwrap().deleted, 1);
//! assert!(log.snapshot("public", "t-1").await.is_err());
//! # });
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::types::{Message, TaskState, Timestamp};
use crate::{LiveTask, LiveTaskScan, LogError, LogFuture, TaskLog, fail_live};

/// A backend whose expired tasks can be deleted.
pub trait Retention: TaskLog + LiveTaskScan {
    /// Deletes at most `limit` tasks in a terminal state (COMPLETED, FAILED,
    /// CANCELED, REJECTED) whose status timestamp is before `before`, each
    /// with its records, push configs and delivery progress, in one
    /// transaction; returns how many it deleted (fewer than `limit`: no
    /// more are expired).
    fn purge_terminal(&self, before: Timestamp, limit: usize) -> LogFuture<'_, usize>;

    /// At most `limit` tasks waiting for their client (INPUT_REQUIRED,
    /// AUTH_REQUIRED) whose status timestamp is before `before`, for
    /// [`Stale::FailAfter`] (streams never).
    fn waiting_tasks(&self, before: Timestamp, limit: usize) -> LogFuture<'_, Vec<LiveTask>>;

    /// Drops the records of the stream `stream_id` of `authority` numbered
    /// before `keep_from`, in one transaction, keeping its sequence numbers,
    /// its head and its snapshot: a read from a position before `keep_from`
    /// then answers the records from `keep_from` on, and an append is
    /// checked against the head as before. `keep_from` must be the position
    /// of a record that restates every record before it (see
    /// [`Restate`](crate::Restate)). Nothing is dropped for an unknown
    /// stream, one of another authority, or a `keep_from` past the head;
    /// an id that is not a stream's ([`stream_id`](crate::stream_id)) is
    /// refused (`Invalid`). Returns how many records it dropped.
    fn compact_stream<'a>(
        &'a self,
        authority: &'a str,
        stream_id: &'a str,
        keep_from: u64,
    ) -> LogFuture<'a, usize>;

    /// Gives the space of deleted tasks back (SQLite's incremental vacuum);
    /// nothing where the backend reuses it by itself.
    fn reclaim(&self) -> LogFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// What to do with a task that is not terminal (SUBMITTED, WORKING, or
/// waiting for its client: INPUT_REQUIRED, AUTH_REQUIRED) and untouched for
/// a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stale {
    /// Keep it (the default): a host may still be running it.
    #[default]
    Keep,
    /// Fail it as interrupted (as recovery does) once its status is older
    /// than this; it then expires like any terminal task.
    FailAfter(Duration),
}

/// The fixed status message of a task failed as stale.
pub const STALE_MESSAGE: &str = "The task was interrupted: it made no progress for too long.";

/// How old terminal tasks get before they are deleted, and how to sweep.
#[derive(Debug, Clone)]
pub struct RetentionPolicy {
    max_age: Duration,
    batch: usize,
    every: Duration,
    stale: Stale,
    streams: Vec<crate::StreamCompaction>,
}

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Swept {
    /// Terminal tasks deleted.
    pub deleted: usize,
    /// Running tasks failed as stale.
    pub failed: usize,
    /// Streams restated and compacted.
    pub compacted: usize,
}

impl RetentionPolicy {
    /// Deletes terminal tasks older than `max_age`, 256 per transaction,
    /// every minute (or `max_age`, if shorter), keeping stale running tasks.
    pub fn new(max_age: Duration) -> Self {
        Self {
            max_age,
            batch: 256,
            every: max_age.min(Duration::from_secs(60)),
            stale: Stale::Keep,
            streams: Vec::new(),
        }
    }

    /// Tasks deleted per transaction (at least 1): the bound on how long
    /// one deletion holds the writer.
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = n.max(1);
        self
    }

    /// The time between background sweeps (at least 1 ms).
    pub fn every(mut self, every: Duration) -> Self {
        self.every = every.max(Duration::from_millis(1));
        self
    }

    /// The policy for stale running tasks.
    pub fn stale(mut self, stale: Stale) -> Self {
        self.stale = stale;
        self
    }

    /// Also compacts the streams of `restate`'s feature whose head has not
    /// moved for the policy's age (see [`StreamCompaction`](crate::StreamCompaction)).
    pub fn compact_streams(mut self, restate: impl crate::Restate) -> Self {
        let compaction = crate::StreamCompaction::new(restate, self.max_age);
        self.streams.push(compaction);
        self
    }

    /// One sweep: fails stale running tasks (per the policy), then deletes
    /// expired terminal tasks batch by batch until none is left, then
    /// compacts idle streams (per [`compact_streams`](Self::compact_streams)),
    /// then reclaims the space.
    pub async fn sweep<L: Retention + ?Sized>(&self, log: &L) -> Result<Swept, LogError> {
        let mut swept = Swept::default();
        if let Stale::FailAfter(age) = self.stale {
            swept.failed = fail_stale(log, before(age), self.batch).await?;
        }
        let cutoff = before(self.max_age);
        loop {
            let n = log.purge_terminal(cutoff, self.batch).await?;
            swept.deleted += n;
            if n < self.batch {
                break;
            }
            // Let the appends queued behind the batch go first.
            tokio::task::yield_now().await;
        }
        for streams in &self.streams {
            swept.compacted += streams.sweep(log, self.batch).await?;
        }
        if swept.deleted > 0 || swept.compacted > 0 {
            log.reclaim().await?;
        }
        if swept.deleted > 0 {
            a2a_tower_core::telemetry::count(
                a2a_tower_core::telemetry::names::RETENTION_DELETED,
                "log",
                "any",
                swept.deleted as u64,
            );
        }
        Ok(swept)
    }

    /// Sweeps `log` every [`every`](Self::every) on the current Tokio
    /// runtime until the handle is dropped; a failed sweep is logged and
    /// retried at the next tick.
    pub fn spawn<L: Retention + ?Sized>(self, log: Arc<L>) -> RetentionHandle {
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(self.every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(e) = self.sweep(&*log).await {
                    tracing::warn!(target: "a2a_tower::log", error = %e.kind(), "retention sweep failed");
                }
            }
        });
        RetentionHandle(task)
    }
}

/// The background sweep of [`RetentionPolicy::spawn`]; dropping it stops
/// the sweep.
#[derive(Debug)]
pub struct RetentionHandle(tokio::task::JoinHandle<()>);

impl Drop for RetentionHandle {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The instant `age` ago.
fn before(age: Duration) -> Timestamp {
    let age = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
    Timestamp::from_unix_millis(Timestamp::now().unix_millis().saturating_sub(age))
}

/// Fails the running tasks whose status is older than `cutoff`.
async fn fail_stale<L: Retention + ?Sized>(
    log: &L,
    cutoff: Timestamp,
    page: usize,
) -> Result<usize, LogError> {
    let mut failed = 0;
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let live = log.live_tasks(key, page).await?;
        for task in &live {
            if task.stream().is_some() {
                continue;
            }
            let Ok(snapshot) = log.snapshot(&task.authority, &task.task_id).await else {
                continue;
            };
            let status = &snapshot.projection.task().status;
            let old = status.timestamp.is_some_and(|t| t < cutoff);
            if old && matches!(status.state, TaskState::Submitted | TaskState::Working) {
                let id = format!("stale-{}", task.task_id);
                let message = Message::agent(id, STALE_MESSAGE);
                if fail_live(log, task, message).await?.is_some() {
                    failed += 1;
                }
            }
        }
        match live.last() {
            Some(last) if live.len() == page => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => break,
        }
    }
    // The tasks waiting for their client: failing one takes it out of the
    // scan, so each page is a fresh one; a page that failed none (each
    // moved on meanwhile) ends the sweep.
    loop {
        let waiting = log.waiting_tasks(cutoff, page).await?;
        let mut closed = 0;
        for task in &waiting {
            let id = format!("stale-{}", task.task_id);
            if fail_live(log, task, Message::agent(id, STALE_MESSAGE))
                .await?
                .is_some()
            {
                closed += 1;
            }
        }
        failed += closed;
        if waiting.len() < page || closed == 0 {
            return Ok(failed);
        }
    }
}
