//! Appends to [`MemoryTaskLog`](super::MemoryTaskLog), one task at a time or
//! several tasks at once, all or nothing. Each append is staged (a
//! creation's records checked, room made for it) before any shard lock is
//! taken, then checked against its entry (authority, epoch, sequence number,
//! records) under its shard lock, then applied. Several appends hold their
//! shards' locks together, taken in ascending shard index, and apply
//! nothing until every one of them passed its checks.

use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use super::Inner;
use super::entry::{Body, Entry};
use super::not_found;
use super::shards::Shard;
use super::size::{ENTRY_OVERHEAD, record_bytes};
use crate::{AppendRequest, Appended, LogError, LogErrorKind, Projection, Record, distinct_tasks};

/// What an append needs before any lock: its shard, the room it may take
/// and whether it ends the task.
struct Staged {
    idx: usize,
    /// Room to make first, `(tasks, bytes)`: none for an append that ends
    /// its task (it frees more than it takes once compacted). The bytes are
    /// what the append may add (for a creation, the whole entry): each
    /// record twice, kept and applied to the projection; it is charged what
    /// it added (see `Entry::push`), never more.
    room: Option<(usize, usize)>,
    ends: bool,
}

fn invalid() -> LogError {
    LogError::new(LogErrorKind::Invalid)
}

impl Inner {
    pub(super) fn append(&self, req: AppendRequest) -> Result<Appended, LogError> {
        let staged = self.stage(&req)?;
        if let Some((tasks, bytes)) = staged.room
            && !self.make_room(tasks, bytes, staged.idx)
        {
            return Err(LogError::new(LogErrorKind::Full));
        }
        let mut shard = self.lock(staged.idx);
        check(&shard, &req)?;
        self.apply(&mut shard, req, &staged)
    }

    /// Commits `reqs` (each to a different task) together: stages them in
    /// order, making room for all of them, then checks each under the locks
    /// of all their shards and applies them only if none was refused; the
    /// error is that of the first refused request.
    pub(super) fn append_all(&self, reqs: Vec<AppendRequest>) -> Result<Vec<Appended>, LogError> {
        if !distinct_tasks(&reqs) {
            return Err(invalid());
        }
        let mut staged = Vec::with_capacity(reqs.len());
        let mut refused = None;
        let (mut tasks, mut bytes) = (0, 0);
        for req in &reqs {
            let s = match self.stage(req) {
                Ok(s) => s,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            };
            if let Some((t, b)) = s.room {
                // Room for this request and every one before it.
                (tasks, bytes) = (tasks + t, bytes + b);
                if !self.make_room(tasks, bytes, s.idx) {
                    refused = Some(LogError::new(LogErrorKind::Full));
                    break;
                }
            }
            staged.push(s);
        }
        let mut shards = Locked::new(self, &staged);
        // The requests before the one refused while staging may be refused
        // by their checks: theirs is the first refusal.
        for (req, s) in reqs.iter().zip(&staged) {
            check(shards.get(s.idx), req)?;
        }
        if let Some(e) = refused {
            return Err(e);
        }
        let out: Vec<_> = reqs
            .into_iter()
            .zip(&staged)
            .map(|(req, s)| self.apply(shards.get(s.idx), req, s))
            .collect();
        // Readers of any of the tasks wait for every lock to be released.
        drop(shards);
        out.into_iter().collect()
    }

    /// The checks that need no entry (a creation's records), and what the
    /// append will take.
    fn stage(&self, req: &AppendRequest) -> Result<Staged, LogError> {
        let idx = self.shard_of(&req.task_id);
        let added: usize = req.records.iter().map(record_bytes).sum::<usize>() * 2;
        let ends = req.records.iter().any(Record::is_terminal);
        if req.expected == 0 {
            Projection::default()
                .check(&req.records)
                .map_err(|_| invalid())?;
            if !matches!(req.records.first(), Some(Record::Created { task_id, .. }) if *task_id == req.task_id)
            {
                return Err(invalid());
            }
            let bytes = added + ENTRY_OVERHEAD + req.task_id.len();
            return Ok(Staged {
                idx,
                room: Some((1, bytes)),
                ends,
            });
        }
        Ok(Staged {
            idx,
            room: (!ends).then_some((0, added)),
            ends,
        })
    }

    /// The append `s` leaves its task to be compacted at once (see
    /// `Shard::ended`): it ends the task, and nobody watches it or waits
    /// for push deliveries of its records.
    fn compacts(&self, entry: &Entry, s: &Staged) -> bool {
        s.ends && !entry.keeps_records() && self.cfg.compact_terminal
    }

    /// Applies a staged and [checked](check) append under its shard lock.
    fn apply(
        &self,
        shard: &mut Shard,
        req: AppendRequest,
        s: &Staged,
    ) -> Result<Appended, LogError> {
        if req.expected == 0 {
            return self.create(shard, req, s);
        }
        let entry = shard
            .map
            .get_mut(req.task_id.as_str())
            .ok_or_else(not_found)?;
        // Records that may follow a terminal one, on a packed task: it is
        // unpacked for them, then packed again.
        let repack = !req.records.is_empty() && matches!(entry.body, Body::Packed(_));
        if let Body::Packed(p) = &entry.body
            && repack
        {
            entry.body = Body::Open(p.unpack()?);
        }
        entry.epoch = req.epoch;
        entry.track(&req);
        let keep = !repack && !self.compacts(entry, s);
        let added = entry.push(req.records, keep);
        self.resized(0, added);
        if repack {
            entry.compact(self);
        } else if !crate::is_stream(&req.task_id) {
            let freed = entry.trim(self.cfg.window);
            self.resized(freed, 0);
        }
        let mut out = entry.appended();
        if s.ends
            && let Some((key, _)) = shard.map.get_key_value(req.task_id.as_str())
        {
            let key = key.clone();
            let json = shard.ended(self, key);
            // Packed now: the answer carries the JSON it wrote.
            if let Ok(appended) = &mut out {
                appended.task_json = json;
            }
        }
        out
    }

    /// Applies an append that creates its task (checked: the id is free).
    fn create(
        &self,
        shard: &mut Shard,
        req: AppendRequest,
        s: &Staged,
    ) -> Result<Appended, LogError> {
        let mut entry = Box::new(Entry {
            authority: shard.authority(&req.authority),
            seq: 0,
            epoch: req.epoch,
            body: Body::Open(Projection::default()),
            records: Vec::new(),
            compacted: 0,
            restart: 0,
            bytes: ENTRY_OVERHEAD + req.task_id.len(),
            watch: None,
            watchers: 0,
            deliveries: None,
        });
        entry.track(&req);
        let keep = !self.compacts(&entry, s);
        entry.push(req.records, keep);
        // Counted at once, as soon as it is made: a creation counted later
        // lets more creations pass the bound's check together, and each
        // overshoot makes the next creation evict two tasks of its shard
        // (a drift of the shards' sizes that `make_room` has to bring back).
        self.tasks.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(entry.bytes, Ordering::Relaxed);
        if !crate::is_stream(&req.task_id) {
            let freed = entry.trim(self.cfg.window);
            self.resized(freed, 0);
        }
        // The answer is the task before it is packed, with the JSON packing
        // wrote for it.
        let mut out = entry.appended();
        if !keep {
            // It ends, and nobody watches it (see `compacts`).
            entry.compact(self);
            if let Ok(appended) = &mut out {
                appended.task_json = entry.packed_json();
            }
        }
        shard.created(Arc::from(req.task_id.as_str()), entry, s.ends);
        out
    }
}

/// Checks an append against its task's entry (or its absence), under its
/// shard lock; changes nothing.
fn check(shard: &Shard, req: &AppendRequest) -> Result<(), LogError> {
    if req.expected == 0 {
        if shard.map.contains_key(req.task_id.as_str()) {
            return Err(LogError::new(LogErrorKind::Conflict));
        }
        return Ok(());
    }
    let entry = shard
        .map
        .get(req.task_id.as_str())
        .filter(|e| *e.authority == *req.authority)
        .ok_or_else(not_found)?;
    if req.epoch < entry.epoch {
        return Err(LogError::new(LogErrorKind::Fenced));
    }
    if req.expected != entry.seq {
        return Err(LogError::new(LogErrorKind::Conflict));
    }
    match &entry.body {
        Body::Open(p) => p.check(&req.records).map_err(|_| invalid()),
        // Packed tasks are terminal: only what may follow that.
        Body::Packed(_) if req.records.iter().all(Record::may_follow_terminal) => Ok(()),
        Body::Packed(_) => Err(invalid()),
    }
}

/// The locks of several shards, held together: taken in ascending shard
/// index, each once, so that two callers locking overlapping sets cannot
/// deadlock.
struct Locked<'a> {
    idxs: Vec<usize>,
    guards: Vec<MutexGuard<'a, Shard>>,
}

impl<'a> Locked<'a> {
    fn new(inner: &'a Inner, staged: &[Staged]) -> Self {
        let mut idxs: Vec<usize> = staged.iter().map(|s| s.idx).collect();
        idxs.sort_unstable();
        idxs.dedup();
        let guards = idxs.iter().map(|&i| inner.lock(i)).collect();
        Self { idxs, guards }
    }

    fn get(&mut self, idx: usize) -> &mut Shard {
        let at = self
            .idxs
            .binary_search(&idx)
            .expect("every staged shard is locked");
        &mut self.guards[at]
    }
}

#[cfg(test)]
mod tests {
    use super::super::MemoryTaskLog;
    use super::super::tests::create;
    use crate::types::{TaskState, TaskStatus};
    use crate::{AppendRequest, Appended, LogErrorKind, Record};

    fn msg(i: u64) -> Record {
        Record::MessageAdmitted {
            message: crate::types::Message::user(format!("m{i}"), "x"),
        }
    }

    fn done() -> Record {
        Record::status(TaskStatus::new(TaskState::Completed))
    }

    /// The JSON an append that packs its task hands back is the task's own;
    /// an append that leaves the task open or unpacked hands back none.
    #[test]
    fn an_append_that_packs_its_task_carries_its_json() {
        let log = MemoryTaskLog::new();
        let json_of = |a: &Appended| a2a_tower_core::json::to_vec(&*a.snapshot.task).unwrap();
        // Created and ended at once (`create`).
        let req = AppendRequest::create("a", "t1", vec![Record::created("t1", "c"), done()]);
        let a = log.inner.append(req).unwrap();
        assert_eq!(a.task_json.as_deref(), Some(&json_of(&a)[..]));
        // Created, then ended by a later append (`apply`).
        create(&log, "t2");
        let a = log
            .inner
            .append(AppendRequest::new("a", "t2", 1, 1, vec![msg(1)]));
        assert!(a.unwrap().task_json.is_none(), "open tasks are not packed");
        let a = log
            .inner
            .append(AppendRequest::new("a", "t2", 2, 1, vec![done()]));
        let a = a.unwrap();
        assert_eq!(a.task_json.as_deref(), Some(&json_of(&a)[..]));
        // A task that is kept unpacked hands back none.
        let unpacked = MemoryTaskLog::builder()
            .compact_terminal(false)
            .build()
            .unwrap();
        let req = AppendRequest::create("a", "t3", vec![Record::created("t3", "c"), done()]);
        assert!(unpacked.inner.append(req).unwrap().task_json.is_none());
    }

    #[test]
    fn a_group_sharing_one_shard_locks_it_once() {
        let log = MemoryTaskLog::builder().shards(1).build().unwrap();
        create(&log, "t1");
        let out = log
            .inner
            .append_all(vec![
                AppendRequest::create("a", "t2", vec![Record::created("t2", "c")]),
                AppendRequest::new("a", "t1", 1, 1, vec![msg(1)]),
            ])
            .unwrap();
        assert_eq!(out.iter().map(|a| a.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn a_group_that_does_not_fit_takes_no_room() {
        let log = MemoryTaskLog::builder()
            .max_tasks(2)
            .shards(2)
            .build()
            .unwrap();
        create(&log, "t1");
        let bytes = log.bytes();
        let err = log
            .inner
            .append_all(vec![
                AppendRequest::new("a", "t1", 1, 1, vec![msg(1)]),
                AppendRequest::create("a", "t2", vec![Record::created("t2", "c")]),
                AppendRequest::create("a", "t3", vec![Record::created("t3", "c")]),
            ])
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Full);
        assert_eq!((log.len(), log.bytes()), (1, bytes));
        // A refusal by an earlier request's checks comes first.
        let err = log
            .inner
            .append_all(vec![
                AppendRequest::new("a", "t1", 5, 1, vec![msg(1)]),
                AppendRequest::create("a", "t2", vec![Record::created("t2", "c")]),
                AppendRequest::create("a", "t3", vec![Record::created("t3", "c")]),
            ])
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Conflict);
    }
}
