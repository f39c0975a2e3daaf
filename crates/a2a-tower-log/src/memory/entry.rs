//! One task as [`MemoryTaskLog`](super::MemoryTaskLog) holds it: its
//! projection (or packed form once compacted), the records after the
//! compaction point, its watch channel; reads of records after a cursor,
//! and compaction of a terminal task.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::watch;

use super::Inner;
use super::packed::Packed;
use super::size::{ENTRY_OVERHEAD, payload_bytes, record_bytes};
use crate::projection::approx_task_bytes;
use crate::types::{TaskState, Timestamp};
use crate::{Appended, LogError, LogErrorKind, Projection, Record, Sequenced, Snapshot};

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) authority: Arc<str>,
    pub(super) seq: u64,
    pub(super) epoch: u64,
    pub(super) body: Body,
    /// Records with `seq > compacted`.
    pub(super) records: Vec<Sequenced>,
    pub(super) compacted: u64,
    /// The position of a record restating the stream's records before it
    /// ([`compact_before`](Self::compact_before)), 0 if none: a read from
    /// before it starts at it while it is the first record kept.
    pub(super) restart: u64,
    pub(super) bytes: usize,
    pub(super) watch: Option<watch::Sender<u64>>,
    pub(super) watchers: u32,
    /// Push delivery cursors and lease, while the task has any.
    pub(super) deliveries: Option<Box<super::deliveries::Deliveries>>,
}

/// A task as the log holds it.
#[derive(Debug)]
pub(super) enum Body {
    /// The projection, shared with readers as `Arc` snapshots.
    Open(Projection),
    /// A compacted terminal task.
    Packed(Packed),
}

impl Entry {
    /// Applies `records` to the projection and keeps them, adding to the
    /// entry's bytes what they take: each record, and what the projection
    /// grew by (a text chunk appended to a text part grows it by its text
    /// only, see [`Projection::apply_chunk`]). Returns the bytes added.
    ///
    /// Unless `keep`: the task is compacted right after (it ends and nobody
    /// watches it), which drops its records, so they are not kept at all:
    /// their values are moved into the projection
    /// ([`Projection::apply_owned`]) instead of copied, and only what the
    /// projection grew by is added (compaction counts the task anew).
    pub(super) fn push(&mut self, records: Vec<Record>, keep: bool) -> usize {
        let Body::Open(projection) = &mut self.body else {
            // A packed task is unpacked for any records first.
            debug_assert!(records.is_empty());
            return 0;
        };
        let mut added = 0;
        if keep {
            self.records.reserve(records.len());
        }
        for r in records {
            self.seq += 1;
            if !keep {
                added += match r {
                    Record::ArtifactChunk {
                        artifact, append, ..
                    } => projection.apply_chunk_owned(artifact, append),
                    other => {
                        let grew = payload_bytes(&other);
                        projection.apply_owned(other);
                        grew
                    }
                };
                continue;
            }
            let grew = match &r {
                Record::ArtifactChunk {
                    artifact, append, ..
                } => projection.apply_chunk(artifact, *append),
                other => {
                    projection.apply(other);
                    payload_bytes(other)
                }
            };
            added += grew + record_bytes(&r);
            self.records.push(Sequenced {
                seq: self.seq,
                head: self.seq,
                record: Arc::new(r),
            });
        }
        if let Some(w) = &self.watch {
            w.send_replace(self.seq);
        }
        self.bytes += added;
        added
    }

    /// The projection (decoded if the task is packed).
    fn projection(&self) -> Result<Cow<'_, Projection>, LogError> {
        match &self.body {
            Body::Open(p) => Ok(Cow::Borrowed(p)),
            Body::Packed(p) => p.unpack().map(Cow::Owned),
        }
    }

    pub(super) fn is_terminal(&self) -> bool {
        match &self.body {
            Body::Open(p) => p.is_terminal(),
            Body::Packed(_) => true,
        }
    }

    /// What ListTasks filters on: context id, state, status timestamp.
    pub(super) fn list_key(&self) -> (&str, TaskState, Option<Timestamp>) {
        match &self.body {
            Body::Open(p) => {
                let t = p.task();
                (&t.context_id, t.status.state, t.status.timestamp)
            }
            Body::Packed(p) => (p.context_id(), p.state(), p.timestamp()),
        }
    }

    /// Some host must be running the task (see [`Projection::is_live`]); a
    /// packed task is terminal.
    pub(super) fn is_live(&self) -> bool {
        match &self.body {
            Body::Open(p) => p.is_live(),
            Body::Packed(_) => false,
        }
    }

    /// The host of the task's latest execution.
    pub(super) fn host(&self) -> Option<&str> {
        match &self.body {
            Body::Open(p) => p.host(),
            Body::Packed(p) => p.host(),
        }
    }

    /// The task's ProtoJSON, if it is packed.
    pub(super) fn packed_json(&self) -> Option<Bytes> {
        match &self.body {
            Body::Packed(p) => Some(p.json().clone()),
            Body::Open(_) => None,
        }
    }

    pub(super) fn appended(&self) -> Result<Appended, LogError> {
        Ok(Appended {
            seq: self.seq,
            snapshot: self.snapshot()?,
            task_json: None,
        })
    }

    pub(super) fn snapshot(&self) -> Result<Snapshot, LogError> {
        Ok(Snapshot::new(
            self.seq,
            self.epoch,
            self.projection()?.into_owned(),
        ))
    }

    pub(super) fn after(&self, after: u64) -> Result<Vec<Sequenced>, LogError> {
        self.after_at_most(after, usize::MAX)
    }

    /// At most `limit` records after `after`, stamped with the current head.
    pub(super) fn after_at_most(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Sequenced>, LogError> {
        if after >= self.seq {
            return Ok(Vec::new());
        }
        let after = if after >= self.compacted {
            after
        } else if self.restart > 0 && self.restart == self.compacted + 1 {
            // Before a restatement still kept: the records from it on.
            self.compacted
        } else {
            return Err(LogError::new(LogErrorKind::Compacted));
        };
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

    /// Drops the oldest records of the task beyond `window` (once they pass
    /// it by an eighth, so the drops are amortized); not while push delivery
    /// cursors may need them. Returns the bytes freed.
    pub(super) fn trim(&mut self, window: usize) -> usize {
        if self.records.len() <= window.saturating_add(window / 8 + 1) || self.deliveries.is_some()
        {
            return 0;
        }
        let n = self.records.len() - window;
        let freed: usize = self.records[..n]
            .iter()
            .map(|r| super::size::record_bytes(&r.record))
            .sum();
        self.records.drain(..n);
        self.compacted = self.records.first().map_or(self.seq, |r| r.seq - 1);
        let freed = freed.min(self.bytes.saturating_sub(ENTRY_OVERHEAD));
        self.bytes -= freed;
        freed
    }

    /// Drops the records of a stream numbered before `keep_from` (the
    /// position of a record restating them), keeping its sequence number
    /// and projection; a read from before it then starts at it. Returns
    /// how many records it dropped and the bytes freed.
    pub(super) fn compact_before(&mut self, keep_from: u64) -> (usize, usize) {
        if keep_from > self.seq || keep_from <= self.compacted + 1 {
            return (0, 0);
        }
        let n = self.records.partition_point(|r| r.seq < keep_from);
        let freed: usize = self.records[..n]
            .iter()
            .map(|r| record_bytes(&r.record))
            .sum();
        self.records.drain(..n);
        self.compacted = keep_from - 1;
        self.restart = keep_from;
        let freed = freed.min(self.bytes.saturating_sub(ENTRY_OVERHEAD));
        self.bytes -= freed;
        (n, freed)
    }

    /// Drops the records of a terminal task nobody watches, packs it (see
    /// [`Packed`]) and accounts for the bytes it holds now.
    pub(super) fn compact(&mut self, inner: &Inner) {
        let before = self.bytes;
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
        self.bytes = ENTRY_OVERHEAD + body;
        inner.resized(before, self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::super::MemoryTaskLog;
    use super::super::tests::{create, finish};
    use crate::LogErrorKind;
    use crate::types::TaskState;

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

    #[test]
    fn a_packed_task_takes_push_configs_and_stays_packed() {
        use crate::types::{TaskPushNotificationConfig, TaskStatus};
        use crate::{AppendRequest, Record};
        let log = MemoryTaskLog::new();
        create(&log, "t1");
        finish(&log, "t1");
        let packed = |log: &MemoryTaskLog| {
            log.inner
                .with_entry("a", "t1", |e| Ok(matches!(e.body, super::Body::Packed(_))))
                .unwrap()
        };
        assert!(packed(&log));
        let config = TaskPushNotificationConfig {
            id: "p".into(),
            ..Default::default()
        };
        let set = AppendRequest::new("a", "t1", 2, 1, vec![Record::PushConfigSet { config }]);
        let appended = log.inner.append(set).unwrap();
        assert_eq!(appended.seq, 3);
        assert!(packed(&log), "packed again");
        let snap = log.inner.with_entry("a", "t1", |e| e.snapshot()).unwrap();
        assert_eq!(snap.projection.push_configs()[0].id, "p");
        assert_eq!(snap.task.status.state, TaskState::Completed);
        let none = log
            .inner
            .with_entry("a", "t1", |e| Ok(e.deliveries.is_none()));
        assert!(none.unwrap(), "no delivery cursor");
        // A status still may not follow.
        let status = Record::status(TaskStatus::new(TaskState::Working));
        let err = log
            .inner
            .append(AppendRequest::new("a", "t1", 3, 1, vec![status]))
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Invalid);
    }

    // A live task streaming a long text artifact on the default log (256
    // MiB, a window of 131,072 records) takes its window of records and its
    // text: before text chunks continued one part, each chunk kept a part in
    // the projection and the append after about 191,745 chunks was refused.
    #[test]
    fn a_long_artifact_fits_the_default_log_in_bounded_bytes() {
        use crate::types::{Artifact, Part};
        use crate::{AppendRequest, Record};
        let chunk = |i: u64| Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text(format!("w{} ", i % 1000))],
                ..Artifact::default()
            },
            append: i > 0,
            last_chunk: false,
        };
        let log = MemoryTaskLog::new();
        create(&log, "t1");
        // The records kept at most, each at most the size of the longest.
        let records = (131_072 + 131_072 / 8 + 1) * super::record_bytes(&chunk(999));
        let (mut text, mut most) = (0, 0);
        for i in 0..240_000u64 {
            let record = chunk(i);
            let bound = 4096 + text + records;
            log.inner
                .append(AppendRequest::new("a", "t1", i + 1, 1, vec![record]))
                .unwrap();
            text += format!("w{} ", i % 1000).len();
            most = most.max(log.bytes());
            assert!(log.bytes() <= bound, "{} > {bound} at {i}", log.bytes());
        }
        // The window's records take most of it, well within the bound.
        assert!(most < 128 << 20, "at most {most} bytes");
        let snap = log.inner.with_entry("a", "t1", |e| e.snapshot()).unwrap();
        let parts = &snap.task.artifacts[0].parts;
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].as_text().map(str::len), Some(text));
    }

    #[test]
    fn a_live_task_keeps_a_window_of_records() {
        use crate::types::Message;
        use crate::{AppendRequest, Record};
        let log = MemoryTaskLog::builder().window(8).build().unwrap();
        create(&log, "t1");
        for i in 1..=40u64 {
            let m = Record::MessageAdmitted {
                message: Message::user(format!("m-{i}"), "x"),
            };
            log.inner
                .append(AppendRequest::new("a", "t1", i, 1, vec![m]))
                .unwrap();
        }
        let (records, compacted, seq) = log
            .inner
            .with_entry("a", "t1", |e| Ok((e.records.len(), e.compacted, e.seq)))
            .unwrap();
        assert_eq!(seq, 41);
        assert!((8..=10).contains(&records), "{records}");
        assert_eq!(compacted + records as u64, seq);
        let err = log.inner.with_entry("a", "t1", |e| e.after(0)).unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Compacted);
        let tail = log.inner.with_entry("a", "t1", |e| e.after(36)).unwrap();
        assert_eq!(
            tail.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [37, 38, 39, 40, 41]
        );
        // The projection keeps everything.
        let snap = log.inner.with_entry("a", "t1", |e| e.snapshot()).unwrap();
        assert_eq!(snap.task.history.len(), 40);
    }

    #[test]
    fn a_compacted_stream_reads_from_its_restatement_and_gives_bytes_back() {
        use crate::types::Message;
        use crate::{AppendRequest, Record, Retention};
        let log = MemoryTaskLog::builder().window(16).build().unwrap();
        let id = crate::stream_id("f", "s");
        let req = AppendRequest::create("a", &*id, vec![Record::created(&*id, "c")]);
        log.inner.append(req).unwrap();
        let m = |i: u64| Record::MessageAdmitted {
            message: Message::user(format!("m-{i}"), "x"),
        };
        for i in 1..=10u64 {
            let req = AppendRequest::new("a", &*id, i, 1, vec![m(i)]);
            log.inner.append(req).unwrap();
        }
        let before = log.bytes();
        let compact = |keep| {
            let fut = log.compact_stream("a", &id, keep);
            futures_util::FutureExt::now_or_never(fut).unwrap().unwrap()
        };
        assert_eq!(compact(12), 0, "past the head");
        assert_eq!(compact(9), 8);
        assert!(log.bytes() < before, "{} < {before}", log.bytes());
        let after = |n| log.inner.with_entry("a", &id, |e| e.after(n));
        for n in [0, 3, 8] {
            let seqs: Vec<u64> = after(n).unwrap().iter().map(|r| r.seq).collect();
            assert_eq!(seqs, [9, 10, 11], "after {n}");
        }
        assert_eq!(compact(5), 0, "already dropped");
        // A stream is never trimmed to the window: later records are all
        // kept, after the restatement.
        for i in 11..=40u64 {
            let req = AppendRequest::new("a", &*id, i, 1, vec![m(i)]);
            log.inner.append(req).unwrap();
        }
        let seqs: Vec<u64> = after(3).unwrap().iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (9..=41).collect::<Vec<_>>());
    }
}
