//! The committed heads of recently written tasks: the snapshot the writer
//! committed last for each task, shared with the read side so that reads of
//! a task this process is working on need no query and no JSON decode. A
//! task that became terminal is forgotten: nothing more is written to it,
//! and its last snapshot stays its appender's alone (no copy for an answer).
//!
//! Only the writer thread inserts, after its COMMIT returned and before any
//! caller is answered, so a head is never ahead of the database; and since
//! the log owns its file (no other process writes it), a head present here is
//! never behind it either. A task missing here (never written by this
//! process, or evicted) is read from the database.
//!
//! An append planned on a head [takes](Heads::take) its projection out, so
//! that the append updates the task in place instead of copying it (a copy
//! per append would make each append cost as much as the whole task: a
//! long streamed artifact would cost its square). Until the writer puts the
//! next head, readers read the task from the database, and the writer still
//! sees the head's position.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, MutexGuard};

use crate::log::Snapshot;

/// The committed head of one task.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) authority: String,
    pub(crate) snapshot: Snapshot,
}

/// A bounded map task id → [`Head`], sharded to keep the writer and the
/// readers off each other's locks. Each shard keeps two generations: heads
/// go into the young one; when it is full it becomes the old one and the
/// previous old generation is dropped, so the bound costs nothing per insert
/// and a task written recently is always found.
#[derive(Debug)]
pub(crate) struct Heads {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    generation: usize,
}

#[derive(Debug, Default)]
struct Shard {
    young: HashMap<String, Slot>,
    old: HashMap<String, Slot>,
}

/// What a shard keeps of one task.
#[derive(Debug)]
pub(crate) enum Slot {
    /// The committed head.
    Kept(Head),
    /// The committed head's sequence number and epoch: its projection was
    /// [taken](Heads::take) by an append being planned on it.
    Taken(u64, u64),
}

impl Slot {
    fn position(&self) -> (u64, u64) {
        match self {
            Self::Kept(h) => (h.snapshot.seq, h.snapshot.epoch),
            Self::Taken(seq, epoch) => (*seq, *epoch),
        }
    }

    fn head(&self) -> Option<&Head> {
        match self {
            Self::Kept(h) => Some(h),
            Self::Taken(..) => None,
        }
    }
}

const SHARDS: usize = 16;

/// Heads [`Heads::put`] took out of the map, to be freed by its caller.
#[derive(Debug)]
#[allow(dead_code, reason = "never read: freed where dropped")]
pub(crate) enum Retired {
    /// A whole old generation, when the young one was full.
    Generation(HashMap<String, Slot>),
    /// A terminal head, which is not kept, and what it replaced.
    Terminal(Head, Option<Slot>),
}

impl Heads {
    /// Keeps between `capacity / 2` and `capacity` heads (rounded up to one
    /// per shard and generation); none at all when `capacity` is 0.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            generation: capacity.div_ceil(2 * SHARDS),
        }
    }

    fn shard(&self, task_id: &str) -> MutexGuard<'_, Shard> {
        let i = self.hasher.hash_one(task_id) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The committed head of `task_id`, if this process wrote it recently
    /// (and no append is being planned on it).
    pub(crate) fn get(&self, task_id: &str) -> Option<Head> {
        let shard = self.shard(task_id);
        shard
            .young
            .get(task_id)
            .or_else(|| shard.old.get(task_id))
            .and_then(Slot::head)
            .cloned()
    }

    /// The sequence number of the committed head of `task_id`, if kept and
    /// of `authority` (and no append is being planned on it).
    pub(crate) fn seq_of(&self, task_id: &str, authority: &str) -> Option<u64> {
        let shard = self.shard(task_id);
        shard
            .young
            .get(task_id)
            .or_else(|| shard.old.get(task_id))
            .and_then(Slot::head)
            .filter(|h| h.authority == authority)
            .map(|h| h.snapshot.seq)
    }

    /// Takes the committed head of `task_id` out, if it is at `seq` and of
    /// `authority`, for an append to be planned on it (see the module
    /// docs); its position stays, for the writer's checks, until the writer
    /// puts the next head.
    pub(crate) fn take(&self, task_id: &str, authority: &str, seq: u64) -> Option<Head> {
        let mut shard = self.shard(task_id);
        let Shard { young, old } = &mut *shard;
        let slot = match young.get_mut(task_id) {
            Some(slot) => slot,
            None => old.get_mut(task_id)?,
        };
        let head = slot.head()?;
        if head.snapshot.seq != seq || head.authority != authority {
            return None;
        }
        let (seq, epoch) = slot.position();
        match std::mem::replace(slot, Slot::Taken(seq, epoch)) {
            Slot::Kept(head) => Some(head),
            Slot::Taken(..) => None,
        }
    }

    /// The sequence number and epoch of the committed head of `task_id`, if
    /// kept.
    pub(crate) fn position(&self, task_id: &str) -> Option<(u64, u64)> {
        let shard = self.shard(task_id);
        shard
            .young
            .get(task_id)
            .or_else(|| shard.old.get(task_id))
            .map(Slot::position)
    }

    /// Records a committed head (writer thread only, after COMMIT). A
    /// terminal head is not kept: nothing more is written to its task, and
    /// its snapshot stays its appender's alone (a blocking SendMessage moves
    /// the task into its answer instead of copying it); it forgets the
    /// task's head instead. Returns what it took out of the map, if
    /// anything, for the caller to free (the writer hands it to a thread
    /// that is not its bottleneck).
    #[must_use = "the retired heads are freed where they are dropped"]
    pub(crate) fn put(&self, task_id: String, head: Head) -> Option<Retired> {
        if self.generation == 0 {
            return None;
        }
        if head.snapshot.projection.is_terminal() {
            let mut shard = self.shard(&task_id);
            let previous = shard.young.remove(&task_id);
            let previous = previous.or_else(|| shard.old.remove(&task_id));
            return Some(Retired::Terminal(head, previous));
        }
        let retired = {
            let mut shard = self.shard(&task_id);
            shard.old.remove(&task_id);
            let retired =
                if shard.young.len() >= self.generation && !shard.young.contains_key(&task_id) {
                    let young = std::mem::take(&mut shard.young);
                    Some(std::mem::replace(&mut shard.old, young))
                } else {
                    None
                };
            shard.young.insert(task_id, Slot::Kept(head));
            retired
        };
        // Freed outside the lock, by the caller.
        retired.map(Retired::Generation)
    }

    /// The number of heads kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap();
                s.young.len() + s.old.len()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Projection, Record};

    fn head(seq: u64) -> Head {
        let p = Projection::replay([&Record::created("t", "c")]).unwrap();
        Head {
            authority: "a".into(),
            snapshot: Snapshot::new(seq, 1, p),
        }
    }

    #[test]
    fn latest_put_wins_and_the_bound_holds() {
        let heads = Heads::new(64);
        let _ = heads.put("t".into(), head(1));
        let _ = heads.put("t".into(), head(2));
        assert_eq!(heads.get("t").unwrap().snapshot.seq, 2);
        assert!(heads.get("u").is_none());
        for i in 0..10_000 {
            let _ = heads.put(format!("t{i}"), head(1));
        }
        assert!(heads.len() <= 64, "{}", heads.len());
        // The most recent one is always kept.
        assert!(heads.get("t9999").is_some());
    }

    #[test]
    fn a_terminal_head_is_not_kept_and_forgets_the_live_one() {
        let heads = Heads::new(64);
        let _ = heads.put("t".into(), head(1));
        let done = Projection::replay([
            &Record::created("t", "c"),
            &Record::status(crate::types::TaskStatus::new(
                crate::types::TaskState::Completed,
            )),
        ])
        .unwrap();
        let terminal = Head {
            authority: "a".into(),
            snapshot: Snapshot::new(2, 1, done),
        };
        let retired = heads.put("t".into(), terminal);
        assert!(
            matches!(&retired, Some(Retired::Terminal(h, Some(Slot::Kept(previous))))
                if h.snapshot.seq == 2 && previous.snapshot.seq == 1),
            "{retired:?}"
        );
        assert!(heads.get("t").is_none());
        assert_eq!(heads.len(), 0);
    }

    #[test]
    fn a_taken_head_keeps_its_position_until_the_next_put() {
        let heads = Heads::new(64);
        let _ = heads.put("t".into(), head(3));
        assert!(heads.take("t", "a", 2).is_none(), "not at the expected seq");
        assert!(heads.take("t", "b", 3).is_none(), "another authority");
        let taken = heads.take("t", "a", 3).unwrap();
        assert_eq!(taken.snapshot.seq, 3);
        assert!(heads.get("t").is_none(), "readers go to the database");
        assert!(heads.take("t", "a", 3).is_none(), "taken once");
        assert_eq!(heads.position("t"), Some((3, 1)));
        let _ = heads.put("t".into(), head(4));
        assert_eq!(heads.get("t").unwrap().snapshot.seq, 4);
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let heads = Heads::new(0);
        assert!(heads.put("t".into(), head(1)).is_none());
        assert!(heads.get("t").is_none());
    }

    #[test]
    fn an_old_head_is_replaced_not_shadowed() {
        let heads = Heads::new(2 * SHARDS);
        let _ = heads.put("t".into(), head(1));
        // Age "t" into the old generation of its shard, then update it.
        for i in 0..1000 {
            let _ = heads.put(format!("x{i}"), head(1));
            if heads.get("t").is_none() {
                break;
            }
        }
        let _ = heads.put("t".into(), head(5));
        assert_eq!(heads.get("t").unwrap().snapshot.seq, 5);
    }
}
