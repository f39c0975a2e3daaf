//! Driving one task: claim its lease, run one worker per config below the
//! task's head (each delivers its config's events in order and advances
//! its cursor after each outcome), renew the lease meanwhile, and hand
//! the task back when every config has caught up.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::task::JoinSet;

use super::{Active, Inner, lock};
use crate::engine::subscribe::record_event;
use crate::log::{Advance, Projection, Record, Sequenced};
use crate::types::StreamResponse;

/// The task as its creation left it: the `Created` record at the head of
/// `records` and the records without an event of their own that follow it
/// in the same commit (the first message, push configs), so a receiver gets
/// the SUBMITTED task with the message that created it, as the SDKs send it.
fn created(records: &[Sequenced]) -> Option<StreamResponse> {
    let first = records.first()?;
    let creation = records
        .iter()
        .take_while(|r| {
            r.seq == first.seq
                || !matches!(
                    *r.record,
                    Record::StatusChanged { .. }
                        | Record::Replied { .. }
                        | Record::ArtifactChunk { .. }
                )
        })
        .map(|r| &*r.record);
    let projection = Projection::replay(creation).ok()?;
    Some(StreamResponse::Task((**projection.task()).clone()))
}

/// How a worker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Its config is delivered up to the head it last read.
    CaughtUp,
    /// It stopped early: the config is gone, its cursor moved under it, the
    /// lease was lost, or the log failed.
    Stopped,
}

/// Drives the task until nothing is pending or the lease is lost, while it
/// is [`Active`] on this host; a notification meanwhile drives it again.
pub(super) async fn drive(inner: Arc<Inner>, key: (String, String), active: Arc<Active>) {
    let (authority, task_id) = (&key.0, &key.1);
    // Waits its turn; never closed, so the permit always comes.
    let permit = inner.drives.clone().acquire_owned().await;
    loop {
        active.dirty.store(false, Ordering::SeqCst);
        let claimed = inner
            .deliveries
            .claim_deliveries(authority, task_id, &inner.holder, inner.lease)
            .await
            .unwrap_or(false);
        if claimed {
            run(&inner, authority, task_id, &active).await;
            // Another host may take the task over at once.
            let _ = inner
                .deliveries
                .release_deliveries(authority, task_id, &inner.holder)
                .await;
        }
        let mut map = lock(&inner.active);
        if claimed && active.dirty.load(Ordering::SeqCst) {
            continue;
        }
        map.remove(&key);
        drop(permit);
        return;
    }
}

/// Delivers while the lease holds: spawns a worker per config below the
/// head (none twice), looks again whenever one ends or the task is
/// notified, and renews the lease every third of it.
async fn run(inner: &Arc<Inner>, authority: &str, task_id: &str, active: &Active) {
    let lost = Arc::new(AtomicBool::new(false));
    let mut workers = JoinSet::new();
    let mut running: HashMap<tokio::task::Id, String> = HashMap::new();
    // Configs that stopped early once: a second time they wait for the sweep.
    let mut stopped: HashSet<String> = HashSet::new();
    let mut failed: HashSet<String> = HashSet::new();
    let mut renew = tokio::time::interval(inner.lease / 3);
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    renew.tick().await;
    loop {
        active.dirty.store(false, Ordering::SeqCst);
        let Ok(cursors) = inner.deliveries.delivery_cursors(authority, task_id).await else {
            break;
        };
        let Ok(snapshot) = inner.log.snapshot(authority, task_id).await else {
            break;
        };
        for c in cursors {
            let busy = running.values().any(|id| *id == c.config_id);
            if c.seq >= snapshot.seq || busy || failed.contains(&c.config_id) {
                continue;
            }
            let worker = Worker {
                inner: inner.clone(),
                authority: authority.to_owned(),
                task_id: task_id.to_owned(),
                config_id: c.config_id.clone(),
                cursor: c.seq,
                lost: lost.clone(),
            };
            let handle = workers.spawn(tracing::Instrument::in_current_span(worker.run()));
            running.insert(handle.id(), c.config_id);
        }
        if workers.is_empty() && !active.dirty.load(Ordering::SeqCst) {
            break;
        }
        tokio::select! {
            Some(done) = workers.join_next_with_id() => {
                let (id, ended) = match done {
                    Ok((id, ended)) => (id, ended),
                    // A panicking sender: leave the config to the sweep.
                    Err(e) => (e.id(), Ended::Stopped),
                };
                let config = running.remove(&id).unwrap_or_default();
                if ended == Ended::Stopped {
                    // Still ours? Then its cursor moved or its config went:
                    // look again, once.
                    if !renew_lease(inner, authority, task_id).await {
                        lost.store(true, Ordering::SeqCst);
                        break;
                    }
                    if !stopped.insert(config.clone()) {
                        failed.insert(config);
                    }
                }
            }
            () = active.wake.notified() => {}
            _ = renew.tick() => {
                if !renew_lease(inner, authority, task_id).await {
                    lost.store(true, Ordering::SeqCst);
                    break;
                }
            }
        }
    }
    // Lost the lease or the log: the workers cannot advance anyway.
    workers.abort_all();
    while workers.join_next().await.is_some() {}
}

async fn renew_lease(inner: &Inner, authority: &str, task_id: &str) -> bool {
    inner
        .deliveries
        .claim_deliveries(authority, task_id, &inner.holder, inner.lease)
        .await
        .unwrap_or(false)
}

/// Delivers one config's events in order from its cursor.
struct Worker {
    inner: Arc<Inner>,
    authority: String,
    task_id: String,
    config_id: String,
    cursor: u64,
    lost: Arc<AtomicBool>,
}

impl Worker {
    async fn run(mut self) -> Ended {
        loop {
            let log = &self.inner.log;
            let Ok(snapshot) = log.snapshot(&self.authority, &self.task_id).await else {
                return Ended::Stopped;
            };
            let configs = snapshot.projection.push_configs();
            let Some(config) = configs.iter().find(|c| c.id == self.config_id) else {
                return Ended::Stopped;
            };
            let Ok(records) = log.read(&self.authority, &self.task_id, self.cursor).await else {
                return Ended::Stopped;
            };
            let Some(last) = records.last().map(|r| r.seq) else {
                return Ended::CaughtUp;
            };
            let task = &snapshot.task;
            for (i, r) in records.iter().enumerate() {
                let event = match &*r.record {
                    Record::Created { .. } => created(&records[i..]),
                    record => record_event(&task.id, &task.context_id, record),
                };
                let Some(event) = event else {
                    continue;
                };
                if self.lost.load(Ordering::SeqCst) {
                    return Ended::Stopped;
                }
                let _outcome = self.inner.deliver.deliver_boxed(config, &event).await;
                if !self.advance(r.seq).await {
                    return Ended::Stopped;
                }
            }
            // Records without an event after the last one delivered.
            if last > self.cursor && !self.advance(last).await {
                return Ended::Stopped;
            }
        }
    }

    /// Moves the cursor to `to`; `false` when the log refused.
    async fn advance(&mut self, to: u64) -> bool {
        let advance = Advance {
            authority: self.authority.clone(),
            task_id: self.task_id.clone(),
            config_id: self.config_id.clone(),
            holder: self.inner.holder.clone(),
            from: self.cursor,
            to,
        };
        let moved = self
            .inner
            .deliveries
            .advance_delivery(&advance)
            .await
            .unwrap_or(false);
        if moved {
            self.cursor = to;
        }
        moved
    }
}
