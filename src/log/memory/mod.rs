//! [`MemoryTaskLog`]: a bounded, sharded, in-process [`TaskLog`].

use std::borrow::Cow;
use std::cmp::Ordering as CmpOrdering;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

mod builder;
mod packed;
mod stream;

pub use self::builder::{Eviction, MemoryTaskLogBuilder};

use self::packed::Packed;
use self::stream::{WatchGuard, WatchState};
use super::projection::{artifact_bytes, map_bytes, message_bytes};
use super::{
    AppendRequest, Appended, ListPage, ListQuery, LiveTask, LogError, LogErrorKind, LogFuture,
    PageCursor, Projection, Record, RecordStream, Sequenced, Snapshot, TaskLog, Watch,
    approx_task_bytes,
};
use crate::types::{Task, TaskState, Timestamp};

/// A bounded in-process task log for tests and short-lived hosts.
///
/// Tasks live in hash-sharded tables, each behind its own lock, so no call
/// waits on a global lock or a whole-log rehash. Snapshots of live tasks are
/// shared `Arc`s. A terminal task nobody watches is compacted: its records
/// are dropped and the task is kept as its ProtoJSON in one allocation
/// (under 1 KiB resident for a small echo task instead of about 3 KiB as
/// wire structs),
/// decoded again on each read. Cloning shares the log.
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

#[derive(Debug, Default)]
struct Shard {
    map: HashMap<Arc<str>, Box<Entry>>,
    /// Terminal tasks in the order they ended.
    terminal: VecDeque<Arc<str>>,
}

#[derive(Debug)]
struct Entry {
    authority: Arc<str>,
    seq: u64,
    epoch: u64,
    body: Body,
    /// Records with `seq > compacted`.
    records: Vec<Sequenced>,
    compacted: u64,
    bytes: usize,
    watch: Option<watch::Sender<u64>>,
    watchers: u32,
}

/// A task as the log holds it.
#[derive(Debug)]
enum Body {
    /// The projection, shared with readers as `Arc` snapshots.
    Open(Projection),
    /// A compacted terminal task.
    Packed(Packed),
}

/// A task taken out of a shard for a ListTasks page.
enum Listed {
    Task(Arc<Task>),
    Packed(Arc<[u8]>),
}

/// Records a watch copies out per lock.
const WATCH_BATCH: usize = 256;

const ENTRY_OVERHEAD: usize = size_of::<Entry>() + 64;

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

impl Inner {
    fn shard_of(&self, task_id: &str) -> usize {
        (self.hasher.hash_one(task_id) as usize) % self.shards.len()
    }

    fn lock(&self, idx: usize) -> MutexGuard<'_, Shard> {
        // A poisoned shard only means a panic elsewhere mid-update of plain
        // data that stays consistent per entry; keep serving.
        self.shards[idx].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn over(&self, tasks: usize, bytes: usize) -> bool {
        self.tasks.load(Ordering::Relaxed) + tasks > self.cfg.max_tasks
            || self.bytes.load(Ordering::Relaxed) + bytes > self.cfg.max_bytes
    }

    /// Evicts terminal tasks until `tasks` more tasks and `bytes` more bytes
    /// fit. Locks one shard at a time, starting at `home`.
    fn make_room(&self, tasks: usize, bytes: usize, home: usize) -> bool {
        if !self.over(tasks, bytes) {
            return true;
        }
        if self.cfg.eviction == Eviction::Never {
            return false;
        }
        let n = self.shards.len();
        for i in 0..n {
            let idx = (home + i) % n;
            let mut shard = self.lock(idx);
            while self.over(tasks, bytes) {
                if !shard.evict_one(self) {
                    break;
                }
            }
            if !self.over(tasks, bytes) {
                return true;
            }
        }
        false
    }

    fn append(&self, req: AppendRequest) -> Result<Appended, LogError> {
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

    fn with_entry<T>(
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

    fn list(&self, authority: &str, q: &ListQuery) -> Result<ListPage, LogError> {
        let mut total = 0;
        let mut page: Vec<(i128, Arc<str>, Listed)> = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                if *e.authority != *authority {
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
}

impl Inner {
    fn live_tasks(&self, after: Option<(&str, &str)>, limit: usize) -> Vec<LiveTask> {
        let mut out = Vec::new();
        for idx in 0..self.shards.len() {
            let shard = self.lock(idx);
            for (id, e) in &shard.map {
                let (context_id, state, _) = e.list_key();
                if LiveTask::is_live(state) && after.is_none_or(|a| a < (&*e.authority, &**id)) {
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
}

impl Shard {
    /// Records that the task ended; compacts it if nobody watches.
    fn ended(&mut self, inner: &Inner, key: Arc<str>) {
        self.terminal.push_back(key.clone());
        if let Some(e) = self.map.get_mut(&key)
            && e.watchers == 0
            && inner.cfg.compact_terminal
        {
            e.compact(inner);
        }
    }

    /// Evicts the oldest terminal task nobody watches; false if none.
    fn evict_one(&mut self, inner: &Inner) -> bool {
        for _ in 0..self.terminal.len() {
            let Some(key) = self.terminal.pop_front() else {
                return false;
            };
            match self.map.get(&key) {
                Some(e) if e.watchers > 0 => self.terminal.push_back(key),
                Some(_) => {
                    if let Some(e) = self.map.remove(&key) {
                        inner.tasks.fetch_sub(1, Ordering::Relaxed);
                        inner.bytes.fetch_sub(e.bytes, Ordering::Relaxed);
                    }
                    return true;
                }
                None => {}
            }
        }
        false
    }
}

impl Entry {
    fn push(&mut self, records: Vec<Record>) {
        let Body::Open(projection) = &mut self.body else {
            // A packed task is terminal: only an empty batch gets here.
            debug_assert!(records.is_empty());
            return;
        };
        for r in records {
            projection.apply(&r);
            self.seq += 1;
            self.records.push(Sequenced {
                seq: self.seq,
                head: self.seq,
                record: Arc::new(r),
            });
        }
        if let Some(w) = &self.watch {
            w.send_replace(self.seq);
        }
    }

    /// The projection (decoded if the task is packed).
    fn projection(&self) -> Result<Cow<'_, Projection>, LogError> {
        match &self.body {
            Body::Open(p) => Ok(Cow::Borrowed(p)),
            Body::Packed(p) => p.unpack().map(Cow::Owned),
        }
    }

    fn is_terminal(&self) -> bool {
        match &self.body {
            Body::Open(p) => p.is_terminal(),
            Body::Packed(_) => true,
        }
    }

    /// What ListTasks filters on: context id, state, status timestamp.
    fn list_key(&self) -> (&str, TaskState, Option<Timestamp>) {
        match &self.body {
            Body::Open(p) => {
                let t = p.task();
                (&t.context_id, t.status.state, t.status.timestamp)
            }
            Body::Packed(p) => (p.context_id(), p.state(), p.timestamp()),
        }
    }

    /// The host of the task's latest execution.
    fn host(&self) -> Option<&str> {
        match &self.body {
            Body::Open(p) => p.host(),
            Body::Packed(p) => p.host(),
        }
    }

    fn listed(&self) -> Listed {
        match &self.body {
            Body::Open(p) => Listed::Task(p.task().clone()),
            Body::Packed(p) => Listed::Packed(p.json().clone()),
        }
    }

    fn appended(&self) -> Result<Appended, LogError> {
        Ok(Appended {
            seq: self.seq,
            snapshot: self.snapshot()?,
        })
    }

    fn snapshot(&self) -> Result<Snapshot, LogError> {
        Ok(Snapshot::new(
            self.seq,
            self.epoch,
            self.projection()?.into_owned(),
        ))
    }

    fn after(&self, after: u64) -> Result<Vec<Sequenced>, LogError> {
        self.after_at_most(after, usize::MAX)
    }

    /// At most `limit` records after `after`, stamped with the current head.
    fn after_at_most(&self, after: u64, limit: usize) -> Result<Vec<Sequenced>, LogError> {
        if after >= self.seq {
            return Ok(Vec::new());
        }
        if after < self.compacted {
            return Err(LogError::new(LogErrorKind::Compacted));
        }
        let start = usize::try_from(after - self.compacted).unwrap_or(usize::MAX);
        let records = self.records.get(start..).unwrap_or_default();
        Ok(records
            .iter()
            .take(limit)
            .map(|r| Sequenced {
                seq: r.seq,
                head: self.seq,
                record: r.record.clone(),
            })
            .collect())
    }

    fn compact(&mut self, inner: &Inner) {
        self.records = Vec::new();
        self.compacted = self.seq;
        self.watch = None;
        if let Body::Open(p) = &self.body
            && let Some(packed) = Packed::pack(p)
        {
            self.body = Body::Packed(packed);
        }
        let body = match &mut self.body {
            Body::Open(p) => {
                p.shrink();
                approx_task_bytes(p.task())
            }
            Body::Packed(p) => p.bytes(),
        };
        let bytes = ENTRY_OVERHEAD + body;
        inner.bytes.fetch_add(bytes, Ordering::Relaxed);
        inner.bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        self.bytes = bytes;
    }
}

/// An estimate of a record's size, payload included.
fn record_bytes(r: &Record) -> usize {
    size_of::<Sequenced>()
        + size_of::<Record>()
        + 16
        + match r {
            Record::Created {
                task_id,
                context_id,
                metadata,
                ..
            } => task_id.len() + context_id.len() + metadata.as_ref().map_or(0, map_bytes),
            Record::MessageAdmitted { message } | Record::Replied { message, .. } => {
                message_bytes(message)
            }
            Record::StatusChanged { status } => status.message.as_ref().map_or(0, message_bytes),
            Record::ArtifactChunk { artifact, .. } => artifact_bytes(artifact),
            Record::CancelRequested { .. } => 0,
            Record::PushConfigSet { config } => {
                config.url.len() + config.token.len() + config.id.len() + 64
            }
            Record::PushConfigDeleted { id } | Record::ExecutionStarted { host: id } => id.len(),
        }
}

impl TaskLog for MemoryTaskLog {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        let out = self.inner.append(request);
        Box::pin(std::future::ready(out))
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        let out = self.inner.with_entry(authority, task_id, |e| e.snapshot());
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
        let out = self.inner.with_entry(authority, task_id, |e| {
            let snapshot = e.snapshot()?;
            let cursor = after.unwrap_or(e.seq);
            let buf: VecDeque<Sequenced> = e.after_at_most(cursor, WATCH_BATCH)?.into();
            let rx = e
                .watch
                .get_or_insert_with(|| watch::Sender::new(e.seq))
                .subscribe();
            e.watchers += 1;
            let caught_up = buf.back().is_none_or(|r| r.seq == e.seq);
            Ok((
                snapshot,
                buf,
                rx,
                caught_up && e.is_terminal(),
                e.authority.clone(),
            ))
        });
        let out = out.map(|(snapshot, buf, rx, terminal, authority)| {
            let state = WatchState {
                guard: WatchGuard {
                    inner: self.inner.clone(),
                    key: Arc::from(task_id),
                },
                authority,
                cursor: buf.back().map_or(after.unwrap_or(snapshot.seq), |r| r.seq),
                rx,
                buf,
                done: terminal,
                sender_gone: false,
            };
            let records: RecordStream =
                Box::pin(futures_util::stream::unfold(state, WatchState::next));
            Watch { snapshot, records }
        });
        Box::pin(std::future::ready(out))
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        Box::pin(std::future::ready(self.inner.list(authority, query)))
    }

    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>> {
        Box::pin(std::future::ready(Ok(self.inner.live_tasks(after, limit))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{TaskState, TaskStatus};

    fn create(log: &MemoryTaskLog, id: &str) {
        let req = AppendRequest::create("a", id, vec![Record::created(id, "c")]);
        log.inner.append(req).unwrap();
    }

    fn finish(log: &MemoryTaskLog, id: &str) {
        let req = AppendRequest::new(
            "a",
            id,
            1,
            1,
            vec![Record::status(TaskStatus::new(TaskState::Completed))],
        );
        log.inner.append(req).unwrap();
    }

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

    #[test]
    fn compaction_keeps_the_snapshot_and_bytes_shrink() {
        let log = MemoryTaskLog::new();
        create(&log, "t1");
        let before = log.bytes();
        finish(&log, "t1");
        let after = log.inner.with_entry("a", "t1", |e| e.snapshot()).unwrap();
        assert_eq!(after.task.status.state, TaskState::Completed);
        assert_eq!(after.seq, 2);
        assert!(log.bytes() <= before + 256);
        let err = log.inner.with_entry("a", "t1", |e| e.after(0)).unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Compacted);
        assert!(
            log.inner
                .with_entry("a", "t1", |e| e.after(2))
                .unwrap()
                .is_empty()
        );
    }
}
