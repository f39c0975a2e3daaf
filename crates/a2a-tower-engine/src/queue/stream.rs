//! A context's queue stream in the task log, and this host's view of it.
//!
//! The queue of `(authority, context)` is a [stream](crate::log::stream_id)
//! of [`QueueRecord`]s in the task log, under the caller's authority, with
//! an id derived from both: appended like a task (in the same commits as
//! the tasks it admits) but never read, listed or recovered as one. Its
//! sequence number is the queue's revision: every change is a conditional
//! append on it, so two writers (two hosts, or an enqueue racing a drain)
//! never both change the same revision.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::gate::DrainGate;
use super::group::Pending;
use super::record::{QUEUE_FEATURE, QueueRecord};
use super::state::ContextQueue;
use crate::log::{AppendRequest, ListQuery, LogError, LogErrorKind, Record, TaskLog};
use crate::types::{Task, TaskState};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stream id of the queue of `context` for `authority`
/// (length-prefixed: distinct pairs never share an id, and the SQLite and
/// PostgreSQL logs key streams by id alone).
pub(crate) fn stream_id(authority: &str, context: &str) -> String {
    crate::log::stream_id(
        QUEUE_FEATURE,
        &format!("{}:{authority}:{context}", authority.len()),
    )
}

/// The writer epoch of every append to a queue stream: nothing takes a
/// queue stream over (recovery leaves them alone), the revision alone
/// orders its writers.
const STREAM_EPOCH: u64 = 1;

/// This host's view of one context's queue: the projection, caught up from
/// the log before every decision, and the context's drain gate.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) authority: String,
    pub(crate) context_id: String,
    pub(crate) id: String,
    pub(crate) gate: DrainGate,
    /// Held across each decision and its commit: one change at a time per
    /// context on this host (other hosts are held off by the revision). A
    /// run's closing commit that settles it holds it too (`closing`).
    pub(crate) state: Arc<tokio::sync::Mutex<ContextQueue>>,
    /// The tasks of this host's runs in the context as their executions'
    /// end left them (terminal), until the queue settles them: the drain
    /// reads no task to learn that a run of its own ended.
    pub(crate) ended: Mutex<HashMap<String, Arc<Task>>>,
    /// The new inputs waiting for their enqueue commit.
    pub(crate) pending: Pending,
}

/// At most this many ended runs of a context wait for their settlement in
/// memory (any further one is read from the log, as another host's run).
const ENDED_RUNS: usize = 1024;

impl Slot {
    /// Keeps the task a run of this host ended with, for its settlement.
    pub(crate) fn run_ended(&self, task: Arc<Task>) {
        let mut ended = lock(&self.ended);
        if ended.len() < ENDED_RUNS {
            ended.insert(task.id.clone(), task);
        }
    }

    /// The task the run of `task_id` ended with, if it ran on this host.
    pub(crate) fn ended_run(&self, task_id: &str) -> Option<Arc<Task>> {
        lock(&self.ended).get(task_id).cloned()
    }

    /// Forgets the ended runs the view has settled (or never had).
    pub(crate) fn forget_settled(&self, state: &ContextQueue) {
        let mut ended = lock(&self.ended);
        if !ended.is_empty() {
            ended.retain(|task_id, _| state.active().values().any(|r| r.task_id == *task_id));
        }
    }

    /// Applies the records committed since the view's revision; reads
    /// nothing when the log's cached head says the stream has not moved
    /// (every writer of this host holds `state`'s lock, and a cached head
    /// is never behind the log while no append to it is in flight).
    pub(crate) async fn catch_up(
        &self,
        log: &dyn TaskLog,
        state: &mut ContextQueue,
    ) -> Result<(), LogError> {
        if state.seq > 0 && log.cached_head(&self.authority, &self.id) == Some(state.seq) {
            return Ok(());
        }
        let records = match log.read(&self.authority, &self.id, state.seq).await {
            Ok(r) => r,
            Err(e) if e.kind() == LogErrorKind::NotFound => {
                if state.seq == 0 && !state.derived() {
                    let replier = self.streamless_replier(log).await?;
                    state.without_stream(replier);
                }
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if state.seq == 0 && !records.is_empty() {
            // The stream is the queue now, not what was read without it.
            state.without_stream(None);
        }
        for r in records {
            if let Some(q) = QueueRecord::of(&r.record) {
                state.apply(r.seq, &q);
            } else {
                state.seq = r.seq;
            }
        }
        Ok(())
    }

    /// The last replier of a context with no stream: the agent of its
    /// latest completed task, if the context may hold one whose message
    /// kept no stream (its id is one a host made: a UUIDv7; see
    /// `at_once`). Any other context with no stream has no replier.
    async fn streamless_replier(&self, log: &dyn TaskLog) -> Result<Option<String>, LogError> {
        let made_here =
            uuid::Uuid::try_parse(&self.context_id).is_ok_and(|u| u.get_version_num() == 7);
        if !made_here {
            return Ok(None);
        }
        let query = ListQuery {
            context_id: Some(self.context_id.clone()),
            page_size: 8,
            ..ListQuery::default()
        };
        let page = log.list(&self.authority, &query).await?;
        Ok(page.tasks.iter().find_map(|t| {
            let agent = t.metadata.as_ref()?.get(super::AGENT_KEY)?.as_str()?;
            (t.status.state == TaskState::Completed).then(|| agent.to_owned())
        }))
    }

    /// Applies `records`, committed by this host with
    /// [`append`](Self::append) at the view's revision, as the catch-up
    /// would read them back: the view is then at their commit, with no read.
    pub(crate) fn applied(state: &mut ContextQueue, records: &[QueueRecord]) {
        let mut seq = state.seq;
        if seq == 0 {
            // The stream's `created` record, and the restatement of a last
            // replier the view knew without a stream (already its own).
            seq = 1 + u64::from(state.last_replier().is_some());
        }
        for record in records {
            seq += 1;
            state.apply(seq, record);
        }
    }

    /// The append of `records` to the stream at the view's revision
    /// (creating the stream first if it has none).
    pub(crate) fn append(&self, state: &ContextQueue, records: &[QueueRecord]) -> AppendRequest {
        self.append_at(state.seq, state.last_replier(), records)
    }

    /// An append of no record at the revision `seq` (> 0): it changes
    /// nothing, and is refused as any append there would be if the stream
    /// has moved on. The condition of a commit that leaves the queue as it
    /// found it.
    pub(crate) fn check_at(&self, seq: u64) -> AppendRequest {
        debug_assert!(seq > 0, "a stream to check exists");
        AppendRequest::new(
            self.authority.clone(),
            self.id.clone(),
            seq,
            STREAM_EPOCH,
            Vec::new(),
        )
    }

    /// [`append`](Self::append) at the revision `seq`; a stream created
    /// (`seq` 0) starts with `replier`, the last replier its view knew
    /// without it.
    pub(crate) fn append_at(
        &self,
        seq: u64,
        replier: Option<&str>,
        records: &[QueueRecord],
    ) -> AppendRequest {
        let mut all = Vec::with_capacity(records.len() + 2);
        let restated = replier.filter(|_| seq == 0).map(|r| QueueRecord::Restated {
            last_replier: Some(r.to_owned()),
        });
        if seq == 0 {
            all.push(Record::created(self.id.clone(), self.context_id.clone()));
        }
        let mut records = restated.iter().chain(records);
        if seq == 0 {
            all.extend(records.next().map(QueueRecord::first_record));
        }
        all.extend(records.map(QueueRecord::record));
        AppendRequest::new(
            self.authority.clone(),
            self.id.clone(),
            seq,
            STREAM_EPOCH,
            all,
        )
    }
}

/// The contexts this host has touched, by `(authority, context)`; an idle
/// context that nothing holds is forgotten (see [`Slots::get`]).
#[derive(Debug, Default)]
pub(crate) struct Slots {
    map: Mutex<Map>,
}

#[derive(Debug, Default)]
struct Map {
    slots: HashMap<(String, String), Arc<Slot>>,
    /// The next sweep runs once the map holds this many slots.
    sweep_at: usize,
}

/// The fewest slots a sweep is run for.
const SWEEP_FLOOR: usize = 256;

impl Slots {
    /// The slot of a context, made on first use.
    ///
    /// A slot is a cache of the log's queue stream (the view, caught up
    /// before every decision) with this host's drain gate, so forgetting one
    /// loses nothing once nobody uses it. When the map has grown to twice
    /// what its last sweep left (at least [`SWEEP_FLOOR`]), the slots that
    /// nothing else holds (no drain, no enqueue, no closing commit: the map's
    /// `Arc` is the only one, of the slot and of its view's lock) and whose
    /// view is idle (nothing queued, nothing running, so no input of this
    /// host kept in it and no depth counted) are dropped, under the map's
    /// lock: a context never has two slots on one host, and its next use
    /// makes a fresh one that reads the stream from the log. Amortised, a
    /// sweep costs O(1) per slot made; the map stays within twice the
    /// contexts in use.
    pub(crate) fn get(&self, authority: &str, context_id: &str) -> Arc<Slot> {
        let mut map = lock(&self.map);
        let key = (authority.to_owned(), context_id.to_owned());
        if let Some(slot) = map.slots.get(&key) {
            return slot.clone();
        }
        if map.slots.len() >= map.sweep_at.max(SWEEP_FLOOR) {
            map.slots.retain(|_, slot| !forgettable(slot));
            map.sweep_at = map.slots.len() * 2;
        }
        let slot = Arc::new(Slot {
            authority: authority.to_owned(),
            context_id: context_id.to_owned(),
            id: stream_id(authority, context_id),
            gate: DrainGate::default(),
            state: Arc::new(tokio::sync::Mutex::new(ContextQueue::default())),
            ended: Mutex::default(),
            pending: Pending::default(),
        });
        map.slots.insert(key, slot.clone());
        slot
    }

    /// How many contexts this host keeps a slot for.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.map).slots.len()
    }
}

/// Nothing but the map holds `slot` (nor its view's lock), no drain runs,
/// and its view is idle: dropping it loses nothing the log does not hold.
/// Called under the map's lock, so no new holder can appear meanwhile.
fn forgettable(slot: &Arc<Slot>) -> bool {
    Arc::strong_count(slot) == 1
        && Arc::strong_count(&slot.state) == 1
        && !slot.gate.is_running()
        && slot.pending.is_empty()
        && slot.state.try_lock().is_ok_and(|view| view.is_idle())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_never_collide() {
        assert_ne!(stream_id("a:1", "c"), stream_id("a", "1:c"));
        assert_ne!(stream_id("a", "b:c"), stream_id("a:b", "c"));
        assert_eq!(
            crate::log::stream_of(&stream_id("a", "c")),
            Some((super::QUEUE_FEATURE, "1:a:c"))
        );
    }

    #[tokio::test]
    async fn idle_contexts_nothing_holds_are_forgotten_and_no_other() {
        let slots = Slots::default();
        let forgotten = Arc::downgrade(&slots.get("a", "idle"));
        let held = slots.get("a", "held");
        let view = slots.get("a", "view").state.clone();
        let locked = slots.get("a", "locked").state.clone().lock_owned().await;
        let draining = slots.get("a", "draining");
        assert!(draining.gate.notify());
        let draining = Arc::downgrade(&draining);
        let busy = Arc::downgrade(&slots.get("a", "busy"));
        slots.get("a", "busy").state.lock().await.apply(
            2,
            &QueueRecord::Admitted {
                task_id: "t-1".into(),
                agent: "echo".into(),
                hops: 0,
            },
        );
        for i in 0..SWEEP_FLOOR - 6 {
            slots.get("a", &format!("c-{i}"));
        }
        assert_eq!(slots.len(), SWEEP_FLOOR);
        // At the floor, the next new context sweeps, then makes its own.
        slots.get("a", "newest");
        assert_eq!(slots.len(), 6, "the five in use and the newest");
        assert!(
            forgotten.upgrade().is_none(),
            "an idle context nothing holds"
        );
        assert!(Arc::ptr_eq(&held, &slots.get("a", "held")));
        assert!(Arc::ptr_eq(&view, &slots.get("a", "view").state));
        assert!(Arc::ptr_eq(
            tokio::sync::OwnedMutexGuard::mutex(&locked),
            &slots.get("a", "locked").state
        ));
        let draining = draining.upgrade().expect("a context whose drain runs");
        assert!(draining.gate.is_running());
        assert!(busy.upgrade().is_some(), "a context with a run");
        // The next sweep waits for the map to double what the last one left.
        drop((held, view, locked, draining));
        for i in 0..SWEEP_FLOOR - 6 {
            slots.get("b", &format!("c-{i}"));
        }
        assert_eq!(slots.len(), SWEEP_FLOOR, "no sweep below the floor");
        slots.get("b", "last");
        assert_eq!(slots.len(), 3, "draining, busy and `last`");
    }

    #[test]
    fn ended_runs_are_kept_until_settled() {
        let slot = Slots::default().get("a", "c");
        let mut st = ContextQueue::default();
        st.apply(
            2,
            &QueueRecord::Admitted {
                task_id: "t-1".into(),
                agent: "echo".into(),
                hops: 0,
            },
        );
        let task = |id: &str| {
            Arc::new(Task {
                id: id.into(),
                ..Task::default()
            })
        };
        slot.run_ended(task("t-1"));
        slot.run_ended(task("t-other"));
        slot.forget_settled(&st);
        assert_eq!(
            slot.ended_run("t-1").map(|t| t.id.clone()).as_deref(),
            Some("t-1")
        );
        assert!(
            slot.ended_run("t-other").is_none(),
            "not a run of the queue"
        );
        st.apply(
            3,
            &QueueRecord::Settled {
                task_id: "t-1".into(),
                agent: "echo".into(),
                completed: true,
            },
        );
        slot.forget_settled(&st);
        assert!(slot.ended_run("t-1").is_none());
    }
}
