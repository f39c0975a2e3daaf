//! Appends to [`MemoryTaskLog`](super::MemoryTaskLog): creating a task
//! (checked, room made, inserted under its shard lock) and continuing one
//! (authority, epoch, sequence number and records checked against the
//! entry), both all or nothing.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Inner;
use super::entry::{Body, Entry};
use super::not_found;
use super::size::{ENTRY_OVERHEAD, record_bytes};
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind, Projection, Record};

impl Inner {
    pub(super) fn append(&self, req: AppendRequest) -> Result<Appended, LogError> {
        let idx = self.shard_of(&req.task_id);
        let added: usize = req.records.iter().map(record_bytes).sum::<usize>() * 2;
        let ends = req.records.iter().any(Record::is_terminal);
        if req.expected == 0 {
            Projection::default()
                .check(&req.records)
                .map_err(|_| LogError::new(LogErrorKind::Invalid))?;
            if !matches!(req.records.first(), Some(Record::Created { task_id, .. }) if *task_id == req.task_id)
            {
                return Err(LogError::new(LogErrorKind::Invalid));
            }
            let bytes = added + ENTRY_OVERHEAD + req.task_id.len();
            if !self.make_room(1, bytes, idx) {
                return Err(LogError::new(LogErrorKind::Full));
            }
            let mut shard = self.lock(idx);
            if shard.map.contains_key(req.task_id.as_str()) {
                return Err(LogError::new(LogErrorKind::Conflict));
            }
            let key: Arc<str> = Arc::from(req.task_id.as_str());
            let mut entry = Box::new(Entry {
                authority: Arc::from(req.authority.as_str()),
                seq: 0,
                epoch: req.epoch,
                body: Body::Open(Projection::default()),
                records: Vec::with_capacity(req.records.len().max(4)),
                compacted: 0,
                bytes,
                watch: None,
                watchers: 0,
            });
            entry.push(req.records);
            self.tasks.fetch_add(1, Ordering::Relaxed);
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
            let out = entry.appended()?;
            shard.map.insert(key.clone(), entry);
            if ends {
                shard.ended(self, key);
            }
            return Ok(out);
        }
        if !ends && !self.make_room(0, added, idx) {
            return Err(LogError::new(LogErrorKind::Full));
        }
        let mut shard = self.lock(idx);
        let entry = shard
            .map
            .get_mut(req.task_id.as_str())
            .filter(|e| *e.authority == *req.authority)
            .ok_or_else(not_found)?;
        if req.epoch < entry.epoch {
            return Err(LogError::new(LogErrorKind::Fenced));
        }
        if req.expected != entry.seq {
            return Err(LogError::new(LogErrorKind::Conflict));
        }
        match &entry.body {
            Body::Open(p) => p
                .check(&req.records)
                .map_err(|_| LogError::new(LogErrorKind::Invalid))?,
            // Packed tasks are terminal: nothing may follow.
            Body::Packed(_) if !req.records.is_empty() => {
                return Err(LogError::new(LogErrorKind::Invalid));
            }
            Body::Packed(_) => {}
        }
        entry.epoch = req.epoch;
        entry.bytes += added;
        entry.push(req.records);
        self.bytes.fetch_add(added, Ordering::Relaxed);
        let out = entry.appended()?;
        if ends && let Some((key, _)) = shard.map.get_key_value(req.task_id.as_str()) {
            let key = key.clone();
            shard.ended(self, key);
        }
        Ok(out)
    }
}
