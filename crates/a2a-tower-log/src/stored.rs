//! What the durable backends share: the JSON forms of records and snapshots,
//! the check-and-apply of an append against the stored task row, and a small
//! cache of writers' projections.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{
    AppendRequest, Appended, Hold, LogError, LogErrorKind, Projection, Record, Sequenced, Snapshot,
};
use crate::types::{Task, TaskPushNotificationConfig};

use super::page::sort_nanos;

/// A live task's snapshot is stored at least every this many records (see
/// [`snapshot_step`]).
pub const SNAPSHOT_EVERY: u64 = 64;

/// How many records after a stored snapshot the next one of a live task
/// is stored, at `seq`: [`SNAPSHOT_EVERY`], or half the records before
/// `seq` (rounded down to a power of two) once that is more. A snapshot is
/// as large as the task, so storing one every 64 records would make each
/// append to a long task cost as much as the whole task (a streamed
/// artifact of N chunks, N² in all); stored at these points, the snapshots
/// of a task add up to a few times its final size, and a read replays at
/// most half the task's records after the last one.
pub fn snapshot_step(seq: u64) -> u64 {
    let half = if seq < 2 { 1 } else { 1 << (seq.ilog2() - 1) };
    SNAPSHOT_EVERY.max(half)
}

/// The stored snapshot: the task plus the projection's non-wire state, and
/// (PostgreSQL) the sequence number it was taken at.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    task: &'a Task,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cancel_requested: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    push_configs: &'a [TaskPushNotificationConfig],
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hold: Option<&'a Hold>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotOwned {
    #[serde(default)]
    seq: Option<u64>,
    task: Task,
    #[serde(default)]
    cancel_requested: bool,
    #[serde(default)]
    push_configs: Vec<TaskPushNotificationConfig>,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    hold: Option<Hold>,
}

#[derive(Deserialize)]
struct TaskOnly {
    #[serde(default)]
    seq: Option<u64>,
    task: Task,
}

/// The stored snapshot of `p`; `seq`, when given, is stored with it.
pub fn encode_projection(p: &Projection, seq: Option<u64>) -> Result<String, LogError> {
    a2a_tower_core::json::to_string(&SnapshotRef {
        seq,
        task: p.task(),
        cancel_requested: p.cancel_requested(),
        push_configs: p.push_configs(),
        host: p.host(),
        hold: p.hold(),
    })
    .map_err(LogError::backend)
}

/// Rebuilds a projection from its stored snapshot.
pub fn decode_projection(json: &str) -> Result<Projection, LogError> {
    decode_projection_at(json).map(|(p, _)| p)
}

/// [`decode_projection`], and the sequence number stored with the snapshot
/// (`None`: the snapshot is at the task's sequence number).
pub fn decode_projection_at(json: &str) -> Result<(Projection, Option<u64>), LogError> {
    let s: SnapshotOwned = serde_json::from_str(json).map_err(LogError::backend)?;
    let p = Projection::restore(
        Arc::new(s.task),
        s.cancel_requested,
        s.push_configs,
        s.host.map(Arc::from),
        s.hold,
    );
    Ok((p, s.seq))
}

/// The task of a stored snapshot (for lists).
pub fn decode_task(json: &str) -> Result<Arc<Task>, LogError> {
    decode_task_at(json).map(|(t, _)| t)
}

/// [`decode_task`], and the sequence number stored with the snapshot.
pub fn decode_task_at(json: &str) -> Result<(Arc<Task>, Option<u64>), LogError> {
    let t: TaskOnly = serde_json::from_str(json).map_err(LogError::backend)?;
    Ok((Arc::new(t.task), t.seq))
}

/// The records of one stored append (a JSON array, the first numbered
/// `first`) that come after `after`; their `head` is their own sequence
/// until [`with_heads`] sets the read's.
pub fn decode_entry(
    first: i64,
    json: &str,
    after: u64,
    out: &mut Vec<Sequenced>,
) -> Result<(), LogError> {
    let records: Vec<Record> = serde_json::from_str(json).map_err(LogError::backend)?;
    let first = from_i64(first)?;
    for (i, record) in records.into_iter().enumerate() {
        let seq = first + i as u64;
        if seq > after {
            out.push(Sequenced {
                seq,
                head: seq,
                record: Arc::new(record),
            });
        }
    }
    Ok(())
}

/// Records read in one query up to the task's head: each record's `head` is
/// the last sequence read.
pub fn with_heads(mut records: Vec<Sequenced>) -> Vec<Sequenced> {
    if let Some(head) = records.last().map(|r| r.seq) {
        for r in &mut records {
            r.head = head;
        }
    }
    records
}

/// A sequence number or epoch as a database integer.
pub fn to_i64(n: u64) -> Result<i64, LogError> {
    i64::try_from(n).map_err(|_| LogError::new(LogErrorKind::Invalid))
}

pub fn from_i64(n: i64) -> Result<u64, LogError> {
    u64::try_from(n).map_err(|_| LogError::backend("negative sequence number or epoch"))
}

/// A list sort key as a database integer: nanoseconds, saturated to `i64`
/// (years 1677..2262 exactly); an unset timestamp is `i64::MIN`.
pub fn clamp_nanos(n: i128) -> i64 {
    i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX })
}

/// The indexed columns of a task row.
pub struct TaskRow {
    pub context_id: String,
    pub state: i32,
    pub status_ts: i64,
    pub live: bool,
    /// The host of the latest execution.
    pub host: Option<String>,
}

impl TaskRow {
    pub fn of(p: &Projection) -> Self {
        let t = p.task();
        Self {
            context_id: t.context_id.clone(),
            state: t.status.state.number(),
            status_ts: clamp_nanos(sort_nanos(t)),
            live: p.is_live(),
            host: p.host().map(str::to_owned),
        }
    }
}

/// The stored head of a task, read by the writer under its lock.
pub struct Current {
    pub authority: String,
    pub seq: u64,
    pub epoch: u64,
}

/// An append that passed every check, ready to be written.
pub struct Plan {
    /// The task row does not exist yet.
    pub create: bool,
    /// The sequence number of the first new record.
    pub first: u64,
    pub row: TaskRow,
    pub seq: u64,
    pub epoch: u64,
    pub projection: Projection,
    /// The task was terminal before the append (its new configs get no
    /// delivery cursor: see [`cursor_changes`](crate::delivery::cursor_changes)).
    pub ended: bool,
    /// The append changes nothing stored: no record, at the epoch the task
    /// has (a check that the task is at `expected`; its row need not be
    /// written).
    pub unchanged: bool,
}

impl Plan {
    /// Checks `req` against the stored head (the same rules and order as the
    /// memory log) and applies it to the projection `load` returns.
    pub fn new(
        req: &AppendRequest,
        current: Option<Current>,
        load: impl FnOnce(u64) -> Result<Projection, LogError>,
    ) -> Result<Self, LogError> {
        to_i64(req.epoch)?;
        let create = req.expected == 0;
        let mut ended = false;
        let mut unchanged = false;
        let mut projection = if create {
            Projection::default()
                .check(&req.records)
                .map_err(|_| LogError::new(LogErrorKind::Invalid))?;
            if !matches!(req.records.first(), Some(Record::Created { task_id, .. }) if *task_id == req.task_id)
            {
                return Err(LogError::new(LogErrorKind::Invalid));
            }
            if current.is_some() {
                return Err(LogError::new(LogErrorKind::Conflict));
            }
            Projection::default()
        } else {
            let cur = current
                .filter(|c| c.authority == req.authority)
                .ok_or_else(|| LogError::new(LogErrorKind::NotFound))?;
            if req.epoch < cur.epoch {
                return Err(LogError::new(LogErrorKind::Fenced));
            }
            if req.expected != cur.seq {
                return Err(LogError::new(LogErrorKind::Conflict));
            }
            let p = load(cur.seq)?;
            p.check(&req.records)
                .map_err(|_| LogError::new(LogErrorKind::Invalid))?;
            ended = p.is_terminal();
            unchanged = req.records.is_empty() && req.epoch == cur.epoch;
            p
        };
        for r in &req.records {
            projection.apply(r);
        }
        let seq = req.expected + req.records.len() as u64;
        to_i64(seq)?;
        Ok(Self {
            create,
            first: req.expected + 1,
            row: TaskRow::of(&projection),
            seq,
            epoch: req.epoch,
            projection,
            ended,
            unchanged,
        })
    }

    /// The stored snapshot of the task after the append.
    pub fn snapshot_json(&self) -> Result<String, LogError> {
        encode_projection(&self.projection, None)
    }

    /// The stored snapshot of the task after the append, with its sequence
    /// number.
    pub fn snapshot_json_at(&self) -> Result<String, LogError> {
        encode_projection(&self.projection, Some(self.seq))
    }

    /// The append reaches a point where a live task stores its snapshot: it
    /// crosses a multiple of the [`snapshot_step`] at its first record.
    pub fn crosses_snapshot_point(&self) -> bool {
        let before = self.first - 1;
        let step = snapshot_step(before);
        self.seq / step > before / step
    }

    /// The stored entry of the append: its records as one JSON array (see
    /// [`decode_entry`]), or `None` when it has none (nothing to store).
    pub fn entry_json(&self, req: &AppendRequest) -> Result<Option<String>, LogError> {
        if req.records.is_empty() {
            return Ok(None);
        }
        a2a_tower_core::json::to_string(&req.records)
            .map(Some)
            .map_err(LogError::backend)
    }

    /// The caller's answer once the plan is committed.
    pub fn appended(&self) -> Appended {
        Appended {
            seq: self.seq,
            snapshot: Snapshot::new(self.seq, self.epoch, self.projection.clone()),
            task_json: None,
        }
    }
}

/// A bounded cache of the projections writers last committed, keyed by task
/// and valid only at the sequence number it was stored with.
#[derive(Debug, Default)]
pub struct ProjectionCache {
    map: std::collections::HashMap<String, (u64, Projection)>,
}

const CACHE_TASKS: usize = 4096;

impl ProjectionCache {
    /// Takes the projection of `task_id` at `seq` out of the cache.
    pub fn take(&mut self, task_id: &str, seq: u64) -> Option<Projection> {
        match self.map.remove(task_id) {
            Some((s, p)) if s == seq => Some(p),
            _ => None,
        }
    }

    /// Keeps a committed projection (terminal tasks are not kept).
    pub fn put(&mut self, task_id: &str, seq: u64, p: Projection) {
        if p.is_terminal() {
            self.map.remove(task_id);
            return;
        }
        if self.map.len() >= CACHE_TASKS
            && !self.map.contains_key(task_id)
            && let Some(k) = self.map.keys().next().cloned()
        {
            self.map.remove(&k);
        }
        self.map.insert(task_id.to_owned(), (seq, p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;

    /// An append's entry is its records as one JSON array; read back after
    /// a cursor inside it, it gives the records after the cursor, numbered
    /// from its first.
    #[test]
    fn an_entry_reads_back_after_any_cursor() {
        let records = vec![
            Record::created("t", "c"),
            Record::MessageAdmitted {
                message: Message::user("m1", "hi"),
            },
            Record::MessageAdmitted {
                message: Message::user("m2", "ho"),
            },
        ];
        let req = AppendRequest::create("a", "t", records.clone());
        let plan = Plan::new(&req, None, |_| unreachable!("a creation loads nothing")).unwrap();
        let json = plan.entry_json(&req).unwrap().expect("an entry");
        assert!(json.starts_with('['), "{json}");
        for after in 0..=4 {
            let mut out = Vec::new();
            decode_entry(1, &json, after, &mut out).unwrap();
            let seqs: Vec<u64> = out.iter().map(|r| r.seq).collect();
            assert_eq!(seqs, (after + 1..=3).collect::<Vec<_>>(), "after {after}");
            for r in &out {
                assert_eq!(*r.record, records[r.seq as usize - 1]);
            }
        }
        // Appended to what was read before, numbered from the entry's first.
        let mut out = Vec::new();
        decode_entry(8, &json, 8, &mut out).unwrap();
        assert_eq!(out.iter().map(|r| r.seq).collect::<Vec<_>>(), [9, 10]);
        // Bad stored JSON is an error, never a panic.
        assert!(decode_entry(1, "[{", 0, &mut out).is_err());
        assert!(decode_entry(-1, &json, 0, &mut out).is_err());
        // An append without records stores no entry.
        let empty = AppendRequest::new("a", "t", 3, 1, Vec::new());
        assert_eq!(plan.entry_json(&empty).unwrap(), None);
    }
}
