//! Push delivery progress in [`MemoryTaskLog`](super::MemoryTaskLog) (see
//! the [log's rules](crate#push-delivery)): kept in each task's entry,
//! changed under its shard lock. A task with delivery cursors keeps its
//! records: it is neither compacted nor evicted until they are cleaned up.

use std::time::{Duration, Instant};

use super::Inner;
use super::entry::Entry;
use crate::delivery::{CursorChange, cursor_changes};
use crate::{Advance, AppendRequest, DeliveryCursor, PendingDelivery};

/// The cursors of a task's push configs (by config id) and its lease.
#[derive(Debug, Default)]
pub(super) struct Deliveries {
    cursors: Vec<(String, u64)>,
    lease: Option<(String, Instant)>,
}

impl Deliveries {
    fn held_by(&self, holder: &str, now: Instant) -> bool {
        self.lease
            .as_ref()
            .is_some_and(|(h, until)| h == holder && *until > now)
    }
}

impl Entry {
    /// Applies the cursor changes of `req`, appended after `req.expected`.
    pub(super) fn track(&mut self, req: &AppendRequest) {
        let ended = req.expected > 0 && self.is_terminal();
        for change in cursor_changes(req, ended) {
            match change {
                CursorChange::Set(id) => {
                    let d = self.deliveries.get_or_insert_with(Box::default);
                    if let Err(at) = d.cursors.binary_search_by(|(c, _)| c.as_str().cmp(id)) {
                        d.cursors.insert(at, (id.to_owned(), req.expected));
                    }
                }
                CursorChange::Delete(id) => {
                    if let Some(d) = &mut self.deliveries {
                        d.cursors.retain(|(c, _)| c != id);
                        if d.cursors.is_empty() {
                            self.deliveries = None;
                        }
                    }
                }
            }
        }
    }

    /// The task's records must be kept: someone watches it, or a push
    /// config has not been delivered its records.
    pub(super) fn keeps_records(&self) -> bool {
        self.watchers > 0 || self.deliveries.is_some()
    }

    fn pending(&self) -> bool {
        self.deliveries
            .as_ref()
            .is_some_and(|d| d.cursors.iter().any(|(_, seq)| *seq < self.seq))
    }
}

impl Inner {
    pub(super) fn delivery_cursors(&self, authority: &str, task_id: &str) -> Vec<DeliveryCursor> {
        self.with_entry(authority, task_id, |e| {
            Ok(e.deliveries.as_ref().map_or_else(Vec::new, |d| {
                d.cursors
                    .iter()
                    .map(|(id, seq)| DeliveryCursor {
                        config_id: id.clone(),
                        seq: *seq,
                    })
                    .collect()
            }))
        })
        .unwrap_or_default()
    }

    pub(super) fn pending_deliveries(
        &self,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Vec<PendingDelivery> {
        let mut out = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                if e.pending() && after.is_none_or(|a| a < (&*e.authority, &**id)) {
                    out.push(PendingDelivery {
                        authority: e.authority.to_string(),
                        task_id: id.to_string(),
                    });
                }
            }
        }
        out.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
        out.truncate(limit);
        out
    }

    pub(super) fn claim(
        &self,
        authority: &str,
        task_id: &str,
        holder: &str,
        ttl: Duration,
    ) -> bool {
        let now = Instant::now();
        self.with_entry(authority, task_id, |e| {
            let Some(d) = &mut e.deliveries else {
                return Ok(false);
            };
            let free = d
                .lease
                .as_ref()
                .is_none_or(|(h, until)| h == holder || *until <= now);
            if free {
                d.lease = Some((holder.to_owned(), now + ttl));
            }
            Ok(free)
        })
        .unwrap_or(false)
    }

    pub(super) fn release(&self, authority: &str, task_id: &str, holder: &str) {
        let _ = self.with_entry(authority, task_id, |e| {
            if let Some(d) = &mut e.deliveries
                && d.lease.as_ref().is_some_and(|(h, _)| h == holder)
            {
                d.lease = None;
            }
            Ok(())
        });
    }

    pub(super) fn advance(&self, a: &Advance) -> bool {
        let now = Instant::now();
        let mut shard = self.lock(self.shard_of(&a.task_id));
        let Some(e) = shard
            .map
            .get_mut(a.task_id.as_str())
            .filter(|e| *e.authority == *a.authority)
        else {
            return false;
        };
        let (head, terminal) = (e.seq, e.is_terminal());
        let Some(d) = &mut e.deliveries else {
            return false;
        };
        if a.to > head || a.to < a.from || !d.held_by(&a.holder, now) {
            return false;
        }
        let Some(cursor) = d
            .cursors
            .iter_mut()
            .find(|(id, seq)| *id == a.config_id && *seq == a.from)
        else {
            return false;
        };
        cursor.1 = a.to;
        if terminal && d.cursors.iter().all(|(_, seq)| *seq == head) {
            e.deliveries = None;
            if e.watchers == 0 && self.cfg.compact_terminal {
                e.compact(self);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::MemoryTaskLog;
    use crate::types::{TaskPushNotificationConfig, TaskState, TaskStatus};
    use crate::{Advance, AppendRequest, LogErrorKind, Record};

    fn done_with_config(log: &MemoryTaskLog, id: &str) {
        let config = TaskPushNotificationConfig {
            id: "p".into(),
            ..Default::default()
        };
        let records = vec![
            Record::created(id, "c"),
            Record::PushConfigSet { config },
            Record::status(TaskStatus::new(TaskState::Completed)),
        ];
        log.inner
            .append(AppendRequest::create("a", id, records))
            .unwrap();
    }

    #[test]
    fn undelivered_tasks_are_neither_compacted_nor_evicted() {
        let log = MemoryTaskLog::builder()
            .max_tasks(1)
            .shards(1)
            .build()
            .unwrap();
        done_with_config(&log, "t1");
        assert_eq!(
            log.inner
                .with_entry("a", "t1", |e| e.after(0))
                .unwrap()
                .len(),
            3
        );
        let next = AppendRequest::create("a", "t2", vec![Record::created("t2", "c")]);
        assert_eq!(
            log.inner.append(next.clone()).unwrap_err().kind(),
            LogErrorKind::Full
        );
        // Delivered: cleaned up and compacted, then evictable.
        assert!(log.inner.claim("a", "t1", "h", Duration::from_secs(60)));
        let advance = Advance {
            authority: "a".into(),
            task_id: "t1".into(),
            config_id: "p".into(),
            holder: "h".into(),
            from: 0,
            to: 3,
        };
        assert!(log.inner.advance(&advance));
        let compacted = log.inner.with_entry("a", "t1", |e| e.after(0));
        assert_eq!(compacted.unwrap_err().kind(), LogErrorKind::Compacted);
        log.inner.append(next).unwrap();
    }
}
