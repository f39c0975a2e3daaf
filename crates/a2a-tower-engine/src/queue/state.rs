//! [`ContextQueue`]: a context's queue as its stream's records make it — the
//! entries in comparator order, the runs admitted and not yet settled, and
//! the context's last replier. Rebuilt from the log, never the other way;
//! beside it, the inputs this host queued and their tasks as enqueued, so
//! that their admission needs no read.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::entry::{Entry, Key};
use super::record::QueueRecord;
use crate::log::Snapshot;
use crate::types::Message;

/// At most this many queued inputs of a context are kept in memory for
/// their admission, those nearest the head (the rest are read back from
/// the log when admitted).
const KEPT_INPUTS: usize = 1024;

/// Adds `delta` to the queue-depth gauge of `entry`'s target (`*`: none).
fn depth(entry: &Entry, delta: f64) {
    let target = entry.target.as_deref().unwrap_or("*");
    a2a_tower_core::telemetry::queue_depth(target, delta);
}

/// A run the queue admitted and has not settled yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    /// The run's task.
    pub(crate) task_id: String,
    /// The handoff count of the input it runs.
    pub(crate) hops: u32,
}

/// The projection of one context's queue stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextQueue {
    /// The sequence number of the last record applied: the queue's revision.
    pub(crate) seq: u64,
    entries: BTreeMap<Key, Entry>,
    index: HashMap<String, Key>,
    /// By agent: each agent runs at most one input of the context at a time.
    active: BTreeMap<String, Run>,
    last_replier: Option<String>,
    /// The inputs this host queued, until they leave the queue.
    kept: HashMap<String, Kept>,
    /// The keys of the kept inputs' entries.
    kept_keys: BTreeSet<Key>,
    /// Not a host's view (a compaction's reading): the queue-depth gauge
    /// is left alone.
    unmetered: bool,
    /// With no stream yet (revision 0): the last replier was found among
    /// the context's tasks, or the context's one message kept no stream
    /// (see [`without_stream`](Self::without_stream)).
    derived: bool,
}

/// An input this host queued, as its enqueue committed it.
#[derive(Debug, Clone)]
struct Kept {
    /// The queued message (immutable once queued).
    message: Message,
    /// The task as the enqueue's commit left it; `None` once a commit
    /// conditional on it was refused (the task moved: a push config, say).
    task: Option<Snapshot>,
}

impl Kept {
    fn task_id(&self) -> &str {
        &self.message.task_id
    }
}

/// What undoes a settlement applied before its commit
/// ([`ContextQueue::settle`]).
#[derive(Debug)]
pub(crate) struct Undo {
    agent: String,
    run: Option<Run>,
    last_replier: Option<String>,
}

impl ContextQueue {
    /// A projection that leaves the queue-depth gauge alone (not a host's
    /// view of the queue).
    pub(crate) fn unmetered() -> Self {
        Self {
            unmetered: true,
            ..Self::default()
        }
    }

    /// Nothing is queued and nothing runs.
    pub(crate) fn is_idle(&self) -> bool {
        self.entries.is_empty() && self.active.is_empty()
    }

    /// Applies the record committed at `seq`.
    pub(crate) fn apply(&mut self, seq: u64, record: &QueueRecord) {
        self.seq = seq;
        match record {
            QueueRecord::Entered {
                task_id,
                target,
                priority,
                position,
                hops,
            } => {
                let entry = Entry {
                    task_id: task_id.clone(),
                    target: target.clone(),
                    priority: *priority,
                    position: *position,
                    arrival: seq,
                    hops: *hops,
                };
                self.remove(task_id);
                self.insert(entry);
            }
            QueueRecord::Reordered { task_ids } => {
                for (i, id) in task_ids.iter().enumerate() {
                    if let Some(mut entry) = self.remove(id) {
                        entry.position = Some(i64::try_from(i).unwrap_or(i64::MAX));
                        self.insert(entry);
                    }
                }
            }
            QueueRecord::Admitted {
                task_id,
                agent,
                hops,
            } => {
                self.remove(task_id);
                self.kept.remove(task_id);
                self.active.insert(
                    agent.clone(),
                    Run {
                        task_id: task_id.clone(),
                        hops: *hops,
                    },
                );
            }
            QueueRecord::Removed { task_id } => {
                self.remove(task_id);
                self.kept.remove(task_id);
            }
            QueueRecord::Settled {
                task_id,
                agent,
                completed,
            } => {
                if self
                    .active
                    .get(agent)
                    .is_some_and(|r| r.task_id == *task_id)
                {
                    self.active.remove(agent);
                }
                if *completed {
                    self.last_replier = Some(agent.clone());
                }
            }
            QueueRecord::Restated { last_replier } => {
                // The whole queue: what a view behind it held is gone.
                let ids: Vec<String> = self.index.keys().cloned().collect();
                for id in ids {
                    self.remove(&id);
                }
                self.kept.clear();
                self.kept_keys.clear();
                self.active.clear();
                self.last_replier = last_replier.clone();
            }
        }
    }

    /// The settlement of `agent`'s run, applied before it is committed so
    /// that the head can be decided in the same commit; [`undo`](Self::undo)
    /// takes it back before the commit's records are applied.
    pub(crate) fn settle(&mut self, agent: &str, completed: bool) -> Undo {
        let undo = Undo {
            agent: agent.to_owned(),
            run: self.active.remove(agent),
            last_replier: self.last_replier.clone(),
        };
        if completed {
            self.last_replier = Some(agent.to_owned());
        }
        undo
    }

    /// Takes back a settlement applied by [`settle`](Self::settle).
    pub(crate) fn undo(&mut self, undo: Undo) {
        if let Some(run) = undo.run {
            self.active.insert(undo.agent, run);
        }
        self.last_replier = undo.last_replier;
    }

    /// Keeps the message of an input this host queued and its task as the
    /// enqueue committed it, for its admission; when [`KEPT_INPUTS`] are
    /// kept, in place of the one furthest from the head if it is nearer.
    pub(crate) fn keep_input(&mut self, message: Message, task: Snapshot) {
        let Some(key) = self.index.get(&task.task.id) else {
            return;
        };
        if self.kept.len() >= KEPT_INPUTS {
            match self.kept_keys.last() {
                Some(last) if key < last => {
                    let last = self.kept_keys.pop_last().expect("a last key");
                    self.kept.remove(last.task_id());
                }
                _ => return,
            }
        }
        self.kept_keys.insert(key.clone());
        let kept = Kept {
            message,
            task: Some(task),
        };
        self.kept.insert(kept.task_id().to_owned(), kept);
    }

    /// The message of a queued input this host kept.
    pub(crate) fn input(&self, task_id: &str) -> Option<&Message> {
        self.kept.get(task_id).map(|k| &k.message)
    }

    /// The task of a queued input this host kept, as its enqueue committed
    /// it; nothing else writes a queued task but what takes it out of the
    /// queue in the same commit, so it is current unless a push config was
    /// added meanwhile (then the commit conditional on it is refused and
    /// [`forget_task`](Self::forget_task) drops it).
    pub(crate) fn kept_task(&self, task_id: &str) -> Option<&Snapshot> {
        self.kept.get(task_id).and_then(|k| k.task.as_ref())
    }

    /// Drops the kept task of `task_id` (a commit conditional on it was
    /// refused): its admission reads it.
    pub(crate) fn forget_task(&mut self, task_id: &str) {
        if let Some(k) = self.kept.get_mut(task_id) {
            k.task = None;
        }
    }

    fn insert(&mut self, entry: Entry) {
        if !self.unmetered {
            depth(&entry, 1.0);
        }
        let key = entry.key();
        if self.kept.contains_key(&entry.task_id) {
            self.kept_keys.insert(key.clone());
        }
        self.index.insert(entry.task_id.clone(), key.clone());
        self.entries.insert(key, entry);
    }

    fn remove(&mut self, task_id: &str) -> Option<Entry> {
        let key = self.index.remove(task_id)?;
        self.kept_keys.remove(&key);
        let entry = self.entries.remove(&key)?;
        if !self.unmetered {
            depth(&entry, -1.0);
        }
        Some(entry)
    }

    /// The comparator's head.
    pub(crate) fn head(&self) -> Option<&Entry> {
        self.entries.values().next()
    }

    /// The entries in comparator order.
    pub(crate) fn entries(&self) -> impl ExactSizeIterator<Item = &Entry> {
        self.entries.values()
    }

    /// The number of queued entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The task is queued here.
    pub(crate) fn contains(&self, task_id: &str) -> bool {
        self.index.contains_key(task_id)
    }

    /// The runs admitted and not settled, by agent.
    pub(crate) fn active(&self) -> &BTreeMap<String, Run> {
        &self.active
    }

    /// The agent that last completed a reply in the context.
    pub(crate) fn last_replier(&self) -> Option<&str> {
        self.last_replier.as_deref()
    }

    /// Whether the view at revision 0 knows its last replier without a
    /// stream (derived, or left by a message that kept none).
    pub(crate) fn derived(&self) -> bool {
        self.derived
    }

    /// The context has no stream, and `replier` (if any) last completed a
    /// reply in it: a context whose one message ended in the commit that
    /// created its task kept no stream, and a context with no stream had
    /// its tasks read for this. A stream created later starts with it
    /// (`Restated`).
    pub(crate) fn without_stream(&mut self, replier: Option<String>) {
        debug_assert_eq!(self.seq, 0, "a context with a stream has its own replier");
        self.last_replier = replier;
        self.derived = true;
    }

    /// A manual position before every entry (a steer's).
    pub(crate) fn front(&self) -> i64 {
        match self.head().and_then(|e| e.position) {
            Some(p) => p.saturating_sub(1),
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Priority;

    fn entered(id: &str, priority: Priority) -> QueueRecord {
        QueueRecord::Entered {
            task_id: id.into(),
            target: None,
            priority,
            position: None,
            hops: 0,
        }
    }

    fn order(q: &ContextQueue) -> Vec<&str> {
        q.entries().map(|e| e.task_id.as_str()).collect()
    }

    #[test]
    fn records_make_the_queue() {
        let mut q = ContextQueue::default();
        q.apply(2, &entered("a", Priority::Normal));
        q.apply(3, &entered("b", Priority::Normal));
        q.apply(4, &entered("c", Priority::Urgent));
        assert_eq!(order(&q), ["c", "a", "b"]);
        q.apply(
            5,
            &QueueRecord::Reordered {
                task_ids: vec!["b".into(), "a".into(), "c".into()],
            },
        );
        assert_eq!(order(&q), ["b", "a", "c"]);
        // A later urgent entry has no manual position: after the placed ones.
        q.apply(6, &entered("d", Priority::Urgent));
        assert_eq!(order(&q), ["b", "a", "c", "d"]);
        assert_eq!(q.front(), -1);
        q.apply(
            7,
            &QueueRecord::Admitted {
                task_id: "b".into(),
                agent: "echo".into(),
                hops: 0,
            },
        );
        q.apply(
            8,
            &QueueRecord::Removed {
                task_id: "c".into(),
            },
        );
        assert_eq!(order(&q), ["a", "d"]);
        assert_eq!(q.active()["echo"].task_id, "b");
        // A settlement of another task leaves the run alone.
        q.apply(
            9,
            &QueueRecord::Settled {
                task_id: "x".into(),
                agent: "echo".into(),
                completed: false,
            },
        );
        assert!(q.active().contains_key("echo"));
        q.apply(
            10,
            &QueueRecord::Settled {
                task_id: "b".into(),
                agent: "echo".into(),
                completed: true,
            },
        );
        assert!(q.active().is_empty());
        assert_eq!(q.last_replier(), Some("echo"));
        assert_eq!(q.seq, 10);
        assert!(q.contains("a") && !q.contains("b"));
        assert_eq!(q.len(), 2);
    }

    /// A queued input as its enqueue left it.
    fn queued(id: &str) -> (Message, Snapshot) {
        let mut message = Message::user(format!("m-{id}"), "hi");
        message.task_id = id.into();
        let created = crate::log::Record::created(id, "c");
        let p = crate::log::Projection::replay([&created]).unwrap();
        (message, Snapshot::new(1, 1, p))
    }

    #[test]
    fn the_inputs_nearest_the_head_are_kept() {
        let mut q = ContextQueue::default();
        let n = KEPT_INPUTS + 2;
        for i in 0..n {
            let id = format!("t{i}");
            q.apply(2 + i as u64, &entered(&id, Priority::Normal));
            let (m, s) = queued(&id);
            q.keep_input(m, s);
        }
        assert_eq!(q.kept.len(), KEPT_INPUTS);
        assert_eq!(q.input("t0").map(|m| m.message_id.as_str()), Some("m-t0"));
        assert!(
            q.input(&format!("t{}", n - 1)).is_none(),
            "behind every kept one"
        );
        // An urgent input goes to the head: kept, in place of the last kept.
        q.apply(2 + n as u64, &entered("u", Priority::Urgent));
        let (m, s) = queued("u");
        q.keep_input(m, s);
        assert_eq!(q.kept.len(), KEPT_INPUTS);
        assert_eq!(q.kept_task("u").map(|s| s.task.id.as_str()), Some("u"));
        assert!(q.input(&format!("t{}", KEPT_INPUTS - 1)).is_none());
        assert!(q.input(&format!("t{}", KEPT_INPUTS - 2)).is_some());
        // A reorder moves the kept keys with their entries.
        let mut order: Vec<String> = q.entries().map(|e| e.task_id.clone()).collect();
        order.reverse();
        q.apply(3 + n as u64, &QueueRecord::Reordered { task_ids: order });
        assert_eq!(q.kept_keys.len(), KEPT_INPUTS);
        assert!(q.kept_keys.iter().all(|k| q.kept.contains_key(k.task_id())));
        // A refused commit forgets the task, not the message.
        q.forget_task("u");
        assert!(q.kept_task("u").is_none() && q.input("u").is_some());
        // Admitted: it leaves with its entry.
        q.apply(
            4 + n as u64,
            &QueueRecord::Admitted {
                task_id: "u".into(),
                agent: "echo".into(),
                hops: 0,
            },
        );
        assert!(q.input("u").is_none());
        assert_eq!(q.kept.len(), KEPT_INPUTS - 1);
        assert_eq!(q.kept_keys.len(), KEPT_INPUTS - 1);
    }
}
