//! Scans over every shard of [`MemoryTaskLog`](super::MemoryTaskLog): a
//! ListTasks page (filtered and ordered, packed tasks decoded outside the
//! locks) and the live tasks recovery resumes.

use std::cmp::Ordering as CmpOrdering;
use std::sync::Arc;

use super::entry::{Body, Entry};
use super::{Inner, packed};
use crate::types::{Task, Timestamp};
use crate::{ListPage, ListQuery, LiveTask, LogError, PageCursor};

/// A task taken out of a shard for a ListTasks page.
enum Listed {
    Task(Arc<Task>),
    Packed(bytes::Bytes),
}

impl Entry {
    fn listed(&self) -> Listed {
        match &self.body {
            Body::Open(p) => Listed::Task(p.task().clone()),
            Body::Packed(p) => Listed::Packed(p.json().clone()),
        }
    }
}

impl Inner {
    pub(super) fn list(&self, authority: &str, q: &ListQuery) -> Result<ListPage, LogError> {
        let mut total = 0;
        let mut page: Vec<(i128, Arc<str>, Listed)> = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                if *e.authority != *authority || crate::is_stream(id) {
                    continue;
                }
                let (context_id, state, timestamp) = e.list_key();
                if q.context_id.as_deref().is_some_and(|c| c != context_id)
                    || q.state.is_some_and(|s| s != state)
                    || q.status_after
                        .is_some_and(|after| timestamp.is_none_or(|ts| ts < after))
                {
                    continue;
                }
                total += 1;
                let nanos = timestamp.map_or(i128::MIN, Timestamp::unix_nanos);
                if q.after.as_ref().is_none_or(|c| {
                    PageCursor::cmp_order((c.timestamp_nanos, &c.task_id), (nanos, id))
                        == CmpOrdering::Less
                }) {
                    page.push((nanos, id.clone(), e.listed()));
                }
            }
        }
        let size = q.page_size.max(1);
        let order = |a: &(i128, Arc<str>, Listed), b: &(i128, Arc<str>, Listed)| {
            PageCursor::cmp_order((a.0, &a.1), (b.0, &b.1))
        };
        if page.len() > size + 1 {
            page.select_nth_unstable_by(size, order);
            page.truncate(size + 1);
        }
        page.sort_unstable_by(order);
        let more = page.len() > size;
        page.truncate(size);
        let next = more
            .then(|| {
                page.last().map(|(nanos, id, _)| PageCursor {
                    timestamp_nanos: *nanos,
                    task_id: id.to_string(),
                })
            })
            .flatten();
        // Packed tasks are decoded outside the shard locks, only for the page.
        let tasks = page
            .into_iter()
            .map(|(_, _, l)| match l {
                Listed::Task(t) => Ok(t),
                Listed::Packed(json) => packed::decode(&json),
            })
            .collect::<Result<_, _>>()?;
        Ok(ListPage { tasks, next, total })
    }

    pub(super) fn live_tasks(&self, after: Option<(&str, &str)>, limit: usize) -> Vec<LiveTask> {
        let mut out = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                let (context_id, state, _) = e.list_key();
                if e.is_live() && after.is_none_or(|a| a < (&*e.authority, &**id)) {
                    out.push(LiveTask {
                        authority: e.authority.to_string(),
                        task_id: id.to_string(),
                        context_id: context_id.to_owned(),
                        state,
                        seq: e.seq,
                        epoch: e.epoch,
                        host: e.host().map(str::to_owned),
                    });
                }
            }
        }
        out.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
        out.truncate(limit);
        out
    }

    /// At most `limit` tasks waiting for their client (INPUT_REQUIRED,
    /// AUTH_REQUIRED) with a status before `before` (retention's stale
    /// policy).
    pub(super) fn waiting(&self, before: Timestamp, limit: usize) -> Vec<LiveTask> {
        let mut out = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                if out.len() >= limit {
                    return out;
                }
                let (context_id, state, ts) = e.list_key();
                if state.is_interrupted() && ts.is_some_and(|t| t < before) && !crate::is_stream(id)
                {
                    out.push(LiveTask {
                        authority: e.authority.to_string(),
                        task_id: id.to_string(),
                        context_id: context_id.to_owned(),
                        state,
                        seq: e.seq,
                        epoch: e.epoch,
                        host: e.host().map(str::to_owned),
                    });
                }
            }
        }
        out
    }
}
