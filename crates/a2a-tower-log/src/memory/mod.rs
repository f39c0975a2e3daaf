//! [`MemoryTaskLog`]: a bounded, sharded, in-process [`TaskLog`].

mod append;
mod builder;
mod chunks;
mod deliveries;
mod entry;
mod packed;
mod scan;
mod shards;
mod size;
mod stream;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use foldhash::fast::RandomState;

pub use self::builder::{Eviction, MemoryTaskLogBuilder};

use self::shards::Shard;
use super::{
    Advance, AppendRequest, Appended, DeliveryCursor, DeliveryLog, ListPage, ListQuery, LiveTask,
    LiveTaskScan, LogError, LogErrorKind, LogFuture, PendingDelivery, Sequenced, Snapshot, TaskLog,
    Watch,
};

/// A bounded in-process task log for tests and short-lived hosts.
///
/// Tasks live in hash-sharded tables, each behind its own lock, so no call
/// waits on a global lock or a whole-log rehash. Snapshots of live tasks are
/// shared `Arc`s. A terminal task nobody watches is compacted: its records
/// are dropped and the task is kept as its ProtoJSON, written with the
/// JSON of the tasks packed before it into a chunk of 64 KiB (under 1 KiB
/// resident for a small echo task instead of about 3 KiB as wire structs),
/// decoded again on each read. A chunk is freed when the last of its tasks
/// leaves, so it can outlive most of them by a little: the log's byte bound
/// counts each task's own JSON. Cloning shares the log.
///
/// ```
/// use a2a_tower::log::{Eviction, MemoryTaskLog};
/// let log = MemoryTaskLog::builder()
///     .max_tasks(10_000)
///     .max_bytes(64 << 20)
///     .eviction(Eviction::OldestTerminal)
///     .build()
///     .unwrap();
/// assert_eq!(log.len(), 0);
/// assert!(MemoryTaskLog::builder().shards(0).build().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct MemoryTaskLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    cfg: MemoryTaskLogBuilder,
    tasks: AtomicUsize,
    bytes: AtomicUsize,
}

impl Default for MemoryTaskLog {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryTaskLog {
    /// A log with the default bounds (100 000 tasks, 256 MiB) and policy.
    pub fn new() -> Self {
        Self::builder().build().expect("default config is valid")
    }

    /// A builder to choose bounds and the eviction policy.
    pub fn builder() -> MemoryTaskLogBuilder {
        MemoryTaskLogBuilder::default()
    }

    /// The number of tasks held.
    pub fn len(&self) -> usize {
        self.inner.tasks.load(Ordering::Relaxed)
    }

    /// No task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The estimated bytes held.
    pub fn bytes(&self) -> usize {
        self.inner.bytes.load(Ordering::Relaxed)
    }
}

fn not_found() -> LogError {
    LogError::new(LogErrorKind::NotFound)
}

impl TaskLog for MemoryTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let began = std::time::Instant::now();
        let out = self.inner.append(request);
        a2a_tower_core::telemetry::record_commit("memory", 1, began.elapsed());
        Box::pin(std::future::ready(out))
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        let (began, n) = (std::time::Instant::now(), requests.len());
        let out = self.inner.append_all(requests);
        a2a_tower_core::telemetry::record_commit("memory", n, began.elapsed());
        Box::pin(std::future::ready(out))
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        let out = crate::task_view(task_id)
            .and_then(|()| self.inner.with_entry(authority, task_id, |e| e.snapshot()));
        Box::pin(std::future::ready(out))
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        let out = self
            .inner
            .with_entry(authority, task_id, |e| e.after(after));
        Box::pin(std::future::ready(out))
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        let out = crate::task_view(task_id)
            .and_then(|()| stream::watch(&self.inner, authority, task_id, after));
        Box::pin(std::future::ready(out))
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        Box::pin(std::future::ready(self.inner.list(authority, query)))
    }

    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        self.inner
            .with_entry(authority, task_id, |e| Ok(e.seq))
            .ok()
    }
}

impl LiveTaskScan for MemoryTaskLog {
    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        Box::pin(std::future::ready(Ok(self.inner.live_tasks(after, limit))))
    }
}

impl DeliveryLog for MemoryTaskLog {
    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>> {
        let out = self.inner.delivery_cursors(authority, task_id);
        Box::pin(std::future::ready(Ok(out)))
    }

    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>> {
        let out = self.inner.pending_deliveries(after, limit);
        Box::pin(std::future::ready(Ok(out)))
    }

    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> LogFuture<'a, bool> {
        let out = self.inner.claim(authority, task_id, holder, ttl);
        Box::pin(std::future::ready(Ok(out)))
    }

    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()> {
        self.inner.release(authority, task_id, holder);
        Box::pin(std::future::ready(Ok(())))
    }

    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.inner.advance(advance))))
    }
}

/// What the unit tests of the submodules share.
impl crate::Retention for MemoryTaskLog {
    fn purge_terminal(
        &self,
        before: crate::types::Timestamp,
        limit: usize,
    ) -> LogFuture<'_, usize> {
        let mut removed = 0;
        for idx in 0..self.inner.shards.len() {
            if removed >= limit {
                break;
            }
            removed += self
                .inner
                .lock(idx)
                .purge(&self.inner, before, limit - removed);
        }
        Box::pin(std::future::ready(Ok(removed)))
    }

    fn waiting_tasks(
        &self,
        before: crate::types::Timestamp,
        limit: usize,
    ) -> LogFuture<'_, Vec<crate::LiveTask>> {
        Box::pin(std::future::ready(Ok(self.inner.waiting(before, limit))))
    }

    fn compact_stream<'a>(
        &'a self,
        authority: &'a str,
        stream_id: &'a str,
        keep_from: u64,
    ) -> LogFuture<'a, usize> {
        let out = if crate::is_stream(stream_id) {
            let dropped = self.inner.with_entry(authority, stream_id, |e| {
                let (n, freed) = e.compact_before(keep_from);
                self.inner.bytes.fetch_sub(freed, Ordering::Relaxed);
                Ok(n)
            });
            match dropped {
                Err(e) if e.kind() == LogErrorKind::NotFound => Ok(0),
                other => other,
            }
        } else {
            Err(LogError::new(LogErrorKind::Invalid))
        };
        Box::pin(std::future::ready(out))
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryTaskLog;
    use crate::types::{TaskState, TaskStatus};
    use crate::{AppendRequest, Record};

    /// Creates task `id` of authority `a`.
    pub(super) fn create(log: &MemoryTaskLog, id: &str) {
        let req = AppendRequest::create("a", id, vec![Record::created(id, "c")]);
        log.inner.append(req).unwrap();
    }

    /// Completes task `id` (created by [`create`]).
    pub(super) fn finish(log: &MemoryTaskLog, id: &str) {
        let req = AppendRequest::new(
            "a",
            id,
            1,
            1,
            vec![Record::status(TaskStatus::new(TaskState::Completed))],
        );
        log.inner.append(req).unwrap();
    }
}
