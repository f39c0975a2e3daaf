//! The hash-sharded tables of [`MemoryTaskLog`](super::MemoryTaskLog) and
//! their eviction: each shard is a map of tasks behind its own lock, with
//! its terminal tasks queued in the order they ended, oldest evicted first
//! when a bound is reached.

use std::collections::hash_map::Entry::{Occupied, Vacant};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use bytes::Bytes;
use foldhash::fast::RandomState;

use super::entry::Entry;
use super::{Eviction, Inner, not_found};
use crate::LogError;
use crate::types::Timestamp;

#[derive(Debug, Default)]
pub(super) struct Shard {
    /// Keyed by task id under a per-map random seed.
    pub(super) map: HashMap<Arc<str>, Box<Entry>, RandomState>,
    /// Terminal tasks in the order they ended.
    terminal: VecDeque<Arc<str>>,
    /// The authority of the task last created here, shared by the tasks
    /// after it of the same one (most hosts have a single authority).
    authority: Option<Arc<str>>,
}

impl Inner {
    pub(super) fn shard_of(&self, task_id: &str) -> usize {
        (self.hasher.hash_one(task_id) as usize) % self.shards.len()
    }

    pub(super) fn lock(&self, idx: usize) -> MutexGuard<'_, Shard> {
        // A poisoned shard only means a panic elsewhere mid-update of plain
        // data that stays consistent per entry; keep serving.
        self.shards[idx].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the task's entry under its shard lock; NotFound if the
    /// task is missing or of another authority.
    pub(super) fn with_entry<T>(
        &self,
        authority: &str,
        task_id: &str,
        f: impl FnOnce(&mut Entry) -> Result<T, LogError>,
    ) -> Result<T, LogError> {
        let mut shard = self.lock(self.shard_of(task_id));
        let entry = shard
            .map
            .get_mut(task_id)
            .filter(|e| *e.authority == *authority)
            .ok_or_else(not_found)?;
        f(entry)
    }

    /// Counts an entry's change of size from `before` to `after` bytes: one
    /// update of the shared count, none if the size did not change (every
    /// worker updates it, so each update may wait for its cache line).
    pub(super) fn resized(&self, before: usize, after: usize) {
        if after > before {
            self.bytes.fetch_add(after - before, Ordering::Relaxed);
        } else if before > after {
            self.bytes.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    fn over(&self, tasks: usize, bytes: usize) -> bool {
        self.tasks.load(Ordering::Relaxed) + tasks > self.cfg.max_tasks
            || self.bytes.load(Ordering::Relaxed) + bytes > self.cfg.max_bytes
    }

    /// Evicts terminal tasks until `tasks` more tasks and `bytes` more bytes
    /// fit. Locks one shard at a time, starting at `home`, the shard of the
    /// task to be created, so that each creation takes the place of a task
    /// of its own shard and the shards keep their sizes; but a home holding
    /// well under its share of the tasks is passed over (tried last), and
    /// one holding well over it gives one task more, so that sizes that
    /// drifted apart are brought back (see [`Shard::evict_one`]).
    pub(super) fn make_room(&self, tasks: usize, bytes: usize, home: usize) -> bool {
        if !self.over(tasks, bytes) {
            return true;
        }
        if self.cfg.eviction == Eviction::Never {
            return false;
        }
        let n = self.shards.len();
        for i in 0..=n {
            let idx = (home + i) % n;
            let mut shard = self.lock(idx);
            let share = (i == 0).then(|| self.share(shard.map.len()));
            if share == Some(Share::Under) {
                continue;
            }
            while self.over(tasks, bytes) {
                if !shard.evict_one(self) {
                    break;
                }
            }
            if share == Some(Share::Over) {
                shard.evict_one(self);
            }
            if !self.over(tasks, bytes) {
                return true;
            }
        }
        false
    }

    /// How a shard holding `len` tasks compares with its share of all
    /// (more than an eighth of it and one task apart).
    fn share(&self, len: usize) -> Share {
        let (n, all) = (self.shards.len(), self.tasks.load(Ordering::Relaxed));
        if 8 * n * (len + 1) < 7 * all {
            Share::Under
        } else if 8 * n * len.saturating_sub(1) > 9 * all {
            Share::Over
        } else {
            Share::Even
        }
    }
}

/// A shard's size against its share of the tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    Under,
    Even,
    Over,
}

impl Shard {
    /// `authority`, shared with the last task created here if it is the
    /// same.
    pub(super) fn authority(&mut self, authority: &str) -> Arc<str> {
        match &self.authority {
            Some(last) if **last == *authority => last.clone(),
            _ => self.authority.insert(Arc::from(authority)).clone(),
        }
    }

    /// Records that the task ended; compacts it if nobody watches, and then
    /// returns the JSON it was packed to (for the append's answer).
    pub(super) fn ended(&mut self, inner: &Inner, key: Arc<str>) -> Option<Bytes> {
        self.terminal.push_back(key.clone());
        let e = self.map.get_mut(&key)?;
        if e.keeps_records() || !inner.cfg.compact_terminal {
            return None;
        }
        e.compact(inner);
        e.packed_json()
    }

    /// Inserts the entry of a task its first append created (counted and,
    /// if that append ended it unwatched, compacted already); `ends`: it is
    /// queued for eviction. The shard's map is probed once (the append's
    /// check found the id absent under this lock).
    pub(super) fn created(&mut self, key: Arc<str>, entry: Box<Entry>, ends: bool) {
        if ends {
            self.terminal.push_back(key.clone());
        }
        self.map.insert(key, entry);
    }

    /// Removes at most `limit` terminal tasks whose status is before
    /// `before` (under the shard's lock: whole or gone); how many.
    pub(super) fn purge(&mut self, inner: &Inner, before: Timestamp, limit: usize) -> usize {
        let mut removed = 0;
        let map = &mut self.map;
        self.terminal.retain(|key| {
            if removed >= limit {
                return true;
            }
            let expired = map.get(key).is_some_and(|e| {
                let (_, _, ts) = e.list_key();
                e.is_terminal() && !crate::is_stream(key) && ts.is_none_or(|t| t < before)
            });
            if !expired {
                return map.contains_key(key);
            }
            if let Some(e) = map.remove(key) {
                inner.tasks.fetch_sub(1, Ordering::Relaxed);
                inner.bytes.fetch_sub(e.bytes, Ordering::Relaxed);
                removed += 1;
            }
            false
        });
        removed
    }

    /// Evicts the oldest terminal task nobody watches; false if none.
    ///
    /// A shard's oldest, not the log's: with the shards of about equal
    /// sizes (each creation takes the place of a task of its own shard, and
    /// [`Inner::make_room`] brings back the sizes that drift apart when
    /// creations pass the bound's check together), a shard's oldest task
    /// ended about as long ago as any other's. One task at a time:
    /// evicting several at once was measured, and the shards' sizes then
    /// drifted apart as a random walk (`docs/performance.md`, "The RSS of
    /// the memory-log stack grew under sustained load").
    fn evict_one(&mut self, inner: &Inner) -> bool {
        for _ in 0..self.terminal.len() {
            let Some(key) = self.terminal.pop_front() else {
                return false;
            };
            // One lookup: the entry is removed where it was found.
            match self.map.entry(key) {
                Occupied(e) if e.get().keeps_records() => {
                    let key = e.key().clone();
                    self.terminal.push_back(key);
                }
                Occupied(e) => {
                    let (_, e) = e.remove_entry();
                    inner.tasks.fetch_sub(1, Ordering::Relaxed);
                    inner.bytes.fetch_sub(e.bytes, Ordering::Relaxed);
                    return true;
                }
                Vacant(_) => {}
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::Body;
    use super::super::tests::{create, finish};
    use super::super::{Eviction, MemoryTaskLog};
    use crate::types::{TaskState, TaskStatus};
    use crate::{AppendRequest, LogErrorKind, Record};

    #[test]
    fn evicts_oldest_terminal_never_live() {
        let log = MemoryTaskLog::builder()
            .max_tasks(2)
            .shards(1)
            .build()
            .unwrap();
        create(&log, "t1");
        create(&log, "t2");
        let full = log
            .inner
            .append(AppendRequest::create(
                "a",
                "t3",
                vec![Record::created("t3", "c")],
            ))
            .unwrap_err();
        assert_eq!(full.kind(), LogErrorKind::Full, "no terminal task to evict");
        finish(&log, "t2");
        finish(&log, "t1");
        create(&log, "t3");
        assert_eq!(log.len(), 2);
        assert!(
            log.inner.with_entry("a", "t2", |_| Ok(())).is_err(),
            "t2 ended first"
        );
        assert!(log.inner.with_entry("a", "t1", |_| Ok(())).is_ok());
    }

    /// A task created and ended by one append, as a quick SendMessage's.
    fn create_ended(log: &MemoryTaskLog, id: &str) {
        let records = vec![
            Record::created(id, "c"),
            Record::status(TaskStatus::new(TaskState::Completed)),
        ];
        log.inner
            .append(AppendRequest::create("a", id, records))
            .unwrap();
    }

    #[test]
    fn a_task_created_ended_is_packed_queued_and_counted() {
        let log = MemoryTaskLog::builder()
            .max_tasks(1)
            .shards(1)
            .build()
            .unwrap();
        create_ended(&log, "t1");
        let one = log.bytes();
        assert!(one > 0);
        log.inner
            .with_entry("a", "t1", |e| {
                assert!(matches!(e.body, Body::Packed(_)), "nobody watches it");
                assert_eq!(e.bytes, one, "the log counts its packed size");
                Ok(())
            })
            .unwrap();
        // Queued for eviction: the bound of one makes room by evicting it,
        // and the count is that of the one task left.
        create_ended(&log, "t2");
        assert_eq!(log.len(), 1);
        assert!(log.inner.with_entry("a", "t1", |_| Ok(())).is_err());
        assert_eq!(log.bytes(), one);
    }

    /// Task ids that fall in shard `idx` of `log`, in order.
    fn ids_of_shard(log: &MemoryTaskLog, idx: usize) -> impl Iterator<Item = String> + '_ {
        (0..)
            .map(|i| format!("t{i}"))
            .filter(move |id| log.inner.shard_of(id) == idx)
    }

    #[test]
    fn shards_that_drifted_apart_are_brought_back_and_the_oldest_evicted() {
        // The log's 64 tasks, all in shard 0 (as the shards' sizes drift
        // when creations pass the bound together, or a large task evicts
        // several small ones of its shard).
        let log = MemoryTaskLog::builder()
            .max_tasks(64)
            .shards(4)
            .build()
            .unwrap();
        let old: Vec<_> = ids_of_shard(&log, 0).take(64).collect();
        for id in &old {
            create_ended(&log, id);
        }
        // Then new tasks in every shard, in turn, four times the bound.
        let mut ids: Vec<_> = (0..4).map(|i| ids_of_shard(&log, i).skip(64)).collect();
        let mut new = Vec::new();
        for _ in 0..64 {
            for shard in &mut ids {
                let id = shard.next().unwrap();
                create_ended(&log, &id);
                new.push(id);
            }
        }
        assert_eq!(log.len(), 64);
        let held = |id: &String| log.inner.with_entry("a", id, |_| Ok(())).is_ok();
        // Each shard holds about its share: a creation in a shard far under
        // it took the place of another shard's task. Otherwise shards 1-3
        // would hold one task each (each new one evicting the one before)
        // and shard 0 the old tasks.
        let sizes: Vec<_> = (0..4).map(|i| log.inner.lock(i).map.len()).collect();
        assert!(sizes.iter().all(|n| (12..=20).contains(n)), "{sizes:?}");
        assert!(!old.iter().any(held), "the old tasks are gone first");
        let kept = new.iter().rev().take(48).filter(|id| held(id)).count();
        assert_eq!(kept, 48, "the newest tasks are kept");
    }

    #[test]
    fn never_policy_rejects() {
        let log = MemoryTaskLog::builder()
            .max_tasks(1)
            .eviction(Eviction::Never)
            .build()
            .unwrap();
        create(&log, "t1");
        finish(&log, "t1");
        let err = log
            .inner
            .append(AppendRequest::create(
                "a",
                "t2",
                vec![Record::created("t2", "c")],
            ))
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Full);
    }
}
