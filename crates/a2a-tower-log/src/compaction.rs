//! Compaction of idle streams: a feature that keeps its state as a
//! [stream](crate::stream_id) (the delivery queue's per-context queues)
//! says, through [`Restate`], when the state its records make can be
//! restated as one record (nothing pending in it); a sweep then appends that
//! record at the head it read (a conditional append: a writer that moved
//! first wins, and the sweep leaves the stream alone) and drops the records
//! before it ([`Retention::compact_stream`]). The sequence numbers, head and
//! snapshot stay; a reader behind the restatement reads from it.
//!
//! [`StreamCompaction`] sweeps the streams of one feature whose head has not
//! moved for a host-set age (as this host's sweeps saw it: a stream is
//! compacted once two sweeps at least that far apart found it at the same
//! head, or at once with an age of zero). [`RetentionPolicy::compact_streams`]
//! adds one to a retention policy's sweep.
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::log::{
//!     AppendRequest, FeatureRecord, Hold, MemoryTaskLog, Record, Restate, Sequenced,
//!     StreamCompaction, TaskLog, stream_id,
//! };
//! use serde_json::{Value, json};
//!
//! /// A tally's stream: `{"tally": {"add": n}}` records, restated as
//! /// `{"tally": {"total": n}}`, each holding the stream.
//! fn tally(body: Value) -> Record {
//!     let f = FeatureRecord::new("tally", &body).unwrap();
//!     Record::Feature(f.holding(Hold::always("tally")))
//! }
//! fn amount(r: &Record) -> u64 {
//!     let Record::Feature(f) = r else { return 0 };
//!     let body = f.body();
//!     body["add"].as_u64().or(body["total"].as_u64()).unwrap_or(0)
//! }
//! struct Tally;
//! impl Restate for Tally {
//!     fn feature(&self) -> &str {
//!         "tally"
//!     }
//!     fn restate(&self, records: &[Sequenced]) -> Option<Record> {
//!         let total: u64 = records.iter().map(|r| amount(&r.record)).sum();
//!         Some(tally(json!({ "total": total })))
//!     }
//!     fn restates(&self, record: &Record) -> bool {
//!         matches!(record, Record::Feature(f) if f.body().get("total").is_some())
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! let id = stream_id("tally", "c-1");
//! let mut records = vec![Record::created(id.clone(), "c-1")];
//! records.extend((1..=3).map(|n| tally(json!({ "add": n }))));
//! log.append(AppendRequest::create("alice", id.clone(), records)).await.unwrap();
//!
//! let compaction = StreamCompaction::new(Tally, Duration::ZERO);
//! assert_eq!(compaction.sweep(&log, 64).await.unwrap(), 1);
//! // Restated at 5; a read from the start reads the restatement alone.
//! let read = log.read("alice", &id, 0).await.unwrap();
//! assert_eq!(read.iter().map(|r| r.seq).collect::<Vec<_>>(), [5]);
//! assert_eq!(amount(&read[0].record), 6);
//! // Nothing more to do at that head.
//! assert_eq!(compaction.sweep(&log, 64).await.unwrap(), 0);
//! # });
//! //! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{AppendRequest, LiveTask, LogError, LogErrorKind, Record, Retention, Sequenced};

/// What a feature knows of its streams that compaction needs.
pub trait Restate: Send + Sync + 'static {
    /// The feature whose streams these are (the first part of their
    /// [`stream_id`](crate::stream_id)).
    fn feature(&self) -> &str;

    /// The record restating the state that `records` make (a stream's
    /// records as a read from its start answers them: from its first, or
    /// from its latest restatement), or `None` when that state cannot be
    /// restated now (something is pending in it). The record replaces the
    /// whole state when applied, and carries the stream's hold if the
    /// feature holds its streams.
    fn restate(&self, records: &[Sequenced]) -> Option<Record>;

    /// The record is a restatement (one [`restate`](Self::restate) made).
    fn restates(&self, record: &Record) -> bool;
}

/// Restates `stream` (a stream of `restate`'s feature) at the head it reads
/// and drops the records before the restatement. `Ok(None)`: nothing done
/// (the state cannot be restated, it is restated already, or a writer moved
/// first); else the restatement's position and how many records were
/// dropped. Safe beside any writer: the
/// restatement is conditional on the head read, and the records dropped are
/// those before a record restating them.
pub async fn restate_stream<L: Retention + ?Sized>(
    log: &L,
    restate: &dyn Restate,
    stream: &LiveTask,
) -> Result<Option<(u64, usize)>, LogError> {
    let (authority, id) = (&stream.authority, &stream.task_id);
    let records = match log.read(authority, id, 0).await {
        Ok(r) => r,
        Err(e) if e.kind() == LogErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(last) = records.last() else {
        return Ok(None);
    };
    let keep_from = if restate.restates(&last.record) {
        if records.len() == 1 {
            return Ok(None);
        }
        // An earlier restatement whose records were not dropped.
        last.seq
    } else {
        let Some(record) = restate.restate(&records) else {
            return Ok(None);
        };
        let req = AppendRequest::new(&**authority, &**id, last.seq, stream.epoch, vec![record]);
        match log.append(req).await {
            Ok(appended) => appended.seq,
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
    };
    let dropped = log.compact_stream(authority, id, keep_from).await?;
    Ok(Some((keep_from, dropped)))
}

/// The streams of one feature compacted once idle for a host-set age: a
/// stream is restated ([`restate_stream`]) once two sweeps at least that
/// far apart found it at the same head (at once with an age of zero). Clones
/// share what the sweeps have seen.
#[derive(Clone)]
pub struct StreamCompaction {
    restate: Arc<dyn Restate>,
    idle: Duration,
    seen: Arc<Mutex<Seen>>,
}

impl std::fmt::Debug for StreamCompaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamCompaction")
            .field("feature", &self.restate.feature())
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

/// The heads the sweeps saw, by stream (a hash of authority and id: a
/// collision only compacts a stream sooner, which is as safe).
#[derive(Default)]
struct Seen {
    hasher: RandomState,
    heads: HashMap<u64, Head>,
}

#[derive(Clone, Copy)]
struct Head {
    seq: u64,
    since: Instant,
    /// Nothing to do at this head (compacted, or not restatable then).
    settled: bool,
}

impl StreamCompaction {
    /// Compacts the streams of `restate`'s feature whose head has not moved
    /// for `idle`.
    pub fn new(restate: impl Restate, idle: Duration) -> Self {
        Self {
            restate: Arc::new(restate),
            idle,
            seen: Arc::default(),
        }
    }

    /// One sweep over the live streams (`page` per scan): each stream of the
    /// feature seen at the same head for the idle age is restated and
    /// compacted. Returns how many were compacted.
    pub async fn sweep<L: Retention + ?Sized>(
        &self,
        log: &L,
        page: usize,
    ) -> Result<usize, LogError> {
        let page = page.max(1);
        let now = Instant::now();
        let mut compacted = 0;
        let mut heads = HashMap::new();
        let mut after: Option<(String, String)> = None;
        loop {
            let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
            let live = log.live_tasks(key, page).await?;
            for stream in &live {
                if stream.stream().map(|(f, _)| f) != Some(self.restate.feature()) {
                    continue;
                }
                let key = self.key(stream);
                let head = match self.previous(key) {
                    Some(h) if h.seq == stream.seq => h,
                    _ => Head {
                        seq: stream.seq,
                        since: now,
                        settled: false,
                    },
                };
                let due = !head.settled && now.duration_since(head.since) >= self.idle;
                let head = if due {
                    let done = restate_stream(log, &*self.restate, stream).await?;
                    compacted += usize::from(done.is_some());
                    // Settled at the head it left (a writer that moved
                    // meanwhile makes the next sweep start the clock again).
                    Head {
                        seq: done.map_or(stream.seq, |(at, _)| at),
                        since: now,
                        settled: true,
                    }
                } else {
                    head
                };
                heads.insert(key, head);
            }
            match live.last() {
                Some(last) if live.len() == page => {
                    after = Some((last.authority.clone(), last.task_id.clone()));
                }
                _ => break,
            }
        }
        // Streams no longer live (or gone) are forgotten.
        lock(&self.seen).heads = heads;
        Ok(compacted)
    }

    fn key(&self, stream: &LiveTask) -> u64 {
        let seen = lock(&self.seen);
        seen.hasher.hash_one((&stream.authority, &stream.task_id))
    }

    fn previous(&self, key: u64) -> Option<Head> {
        lock(&self.seen).heads.get(&key).copied()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
