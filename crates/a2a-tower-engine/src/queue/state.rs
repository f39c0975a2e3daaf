//! [`ContextQueue`]: a context's queue as its stream's records make it — the
//! entries in comparator order, the runs admitted and not yet settled, and
//! the context's last replier. Rebuilt from the log, never the other way;
//! beside it, the inputs this host queued, so that their admission needs no
//! read.

use std::collections::{BTreeMap, HashMap};

use super::entry::{Entry, Key};
use super::record::QueueRecord;
use crate::types::Message;

/// At most this many queued inputs of a context are kept in memory for
/// their admission (the rest are read back from the log when admitted).
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
    /// The messages of inputs this host queued, until they leave the queue.
    inputs: HashMap<String, Message>,
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
                self.inputs.remove(task_id);
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
                self.inputs.remove(task_id);
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

    /// Keeps the message of an input this host queued, for its admission.
    pub(crate) fn keep_input(&mut self, task_id: String, message: Message) {
        if self.inputs.len() < KEPT_INPUTS && self.index.contains_key(&task_id) {
            self.inputs.insert(task_id, message);
        }
    }

    /// The message of a queued input this host kept.
    pub(crate) fn input(&self, task_id: &str) -> Option<&Message> {
        self.inputs.get(task_id)
    }

    fn insert(&mut self, entry: Entry) {
        depth(&entry, 1.0);
        let key = entry.key();
        self.index.insert(entry.task_id.clone(), key.clone());
        self.entries.insert(key, entry);
    }

    fn remove(&mut self, task_id: &str) -> Option<Entry> {
        let key = self.index.remove(task_id)?;
        let entry = self.entries.remove(&key)?;
        depth(&entry, -1.0);
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
}
