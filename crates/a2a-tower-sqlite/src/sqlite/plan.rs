//! Planning an append: checking it against the task's head and applying it
//! (the projection, the indexed columns, the snapshot to store), on the
//! caller's thread when it can ([`prepare`]), else on the writer's ([`plan`]).

use std::collections::HashMap;

use rusqlite::Connection;

use super::heads::{Head, Heads};
use super::read;
use crate::log::stored::{Current, Plan};
use crate::log::{AppendRequest, LogError, Snapshot};

/// An append checked and applied by its caller against the committed head
/// (see [`prepare`]): the writer only confirms that head is still the latest
/// before writing it, and plans the append itself otherwise.
pub(crate) struct Prepared {
    /// The head's sequence number and epoch the plan was made on (0, 0: a
    /// new task). Both: an append without records raises the epoch alone.
    base: (u64, u64),
    plan: Plan,
    snapshot: Option<String>,
}

/// Plans `req` on the caller's thread, off the writer's, when the committed
/// head in `heads` is the one it expects (always so for an execution's own
/// appends, which wait for each other's commit); `None` leaves the planning,
/// and any error, to the writer.
pub(crate) fn prepare(heads: &Heads, req: &AppendRequest) -> Option<Prepared> {
    if req.expected == 0 {
        let plan = Plan::new(req, None, |_| Err(LogError::backend("no head"))).ok()?;
        let snapshot = snapshot_of(&plan, req).ok()?;
        return Some(Prepared {
            base: (0, 0),
            plan,
            snapshot,
        });
    }
    // Taken, not cloned: the projection is then updated in place (see
    // `Heads::take`).
    let Head {
        authority,
        snapshot,
    } = heads.take(&req.task_id, &req.authority, req.expected)?;
    let Snapshot {
        seq,
        epoch,
        projection,
        task,
    } = snapshot;
    // The snapshot's second handle on the task.
    drop(task);
    let base = (seq, epoch);
    let current = Current {
        authority,
        seq,
        epoch,
    };
    let plan = Plan::new(req, Some(current), |_| Ok(projection)).ok()?;
    let snapshot = snapshot_of(&plan, req).ok()?;
    Some(Prepared {
        base,
        plan,
        snapshot,
    })
}

/// The snapshot JSON an append stores with its entry: when the task comes
/// to rest, or at a [snapshot point](Plan::crosses_snapshot_point); never for
/// an append without records (it has no entry), nor for the task's first
/// entry: that entry holds the task's whole log, which reads replay as
/// cheaply as they would decode a snapshot (a task created and answered in
/// one append, as a SendMessage to a quick agent is, writes it once).
fn snapshot_of(plan: &Plan, req: &AppendRequest) -> Result<Option<String>, LogError> {
    let at_rest = !plan.row.live;
    let every = plan.crosses_snapshot_point();
    let whole_log = plan.first == 1;
    if !req.records.is_empty() && !whole_log && (at_rest || every) {
        plan.snapshot_json().map(Some)
    } else {
        Ok(None)
    }
}

/// The sequence number and epoch of the task's latest head in memory (this
/// batch's, else the committed one).
fn in_memory(heads: &Heads, pending: &HashMap<String, Head>, task_id: &str) -> Option<(u64, u64)> {
    match pending.get(task_id) {
        Some(h) => Some((h.snapshot.seq, h.snapshot.epoch)),
        None => heads.position(task_id),
    }
}

/// The sequence number and epoch of the task's latest head (in memory, else
/// its row), `None` when the task does not exist.
fn latest(
    conn: &Connection,
    heads: &Heads,
    pending: &HashMap<String, Head>,
    task_id: &str,
) -> Result<Option<(u64, u64)>, LogError> {
    match in_memory(heads, pending, task_id) {
        Some(at) => Ok(Some(at)),
        None => Ok(read::row(conn, task_id)?.map(|r| (r.seq, r.epoch))),
    }
}

/// Checks `req` against the task's head and applies it; with the
/// snapshot JSON to store, when this append stores one. A prepared plan is
/// taken as is when its head is still the latest.
pub(crate) fn plan(
    conn: &Connection,
    heads: &Heads,
    pending: &HashMap<String, Head>,
    req: &AppendRequest,
    prepared: Option<Prepared>,
) -> Result<(Plan, Option<String>), LogError> {
    if let Some(prepared) = prepared {
        let fresh = if prepared.base.0 == 0 {
            // A creation: only memory is consulted here; the INSERT itself
            // refuses a task that exists in the database (see
            // `writer::write`), which saves a lookup per new task.
            in_memory(heads, pending, &req.task_id).is_none()
        } else {
            latest(conn, heads, pending, &req.task_id)? == Some(prepared.base)
        };
        if fresh {
            return Ok((prepared.plan, prepared.snapshot));
        }
    }
    let known = pending
        .get(&req.task_id)
        .cloned()
        .or_else(|| heads.get(&req.task_id));
    let plan = match known {
        Some(head) => {
            let current = Current {
                authority: head.authority,
                seq: head.snapshot.seq,
                epoch: head.snapshot.epoch,
            };
            Plan::new(req, Some(current), |_| Ok(head.snapshot.projection))?
        }
        None => {
            let row = read::row(conn, &req.task_id)?;
            let current = row.as_ref().map(|r| Current {
                authority: r.authority.clone(),
                seq: r.seq,
                epoch: r.epoch,
            });
            Plan::new(req, current, |_| match &row {
                Some(r) => r.projection(conn, &req.task_id),
                None => Err(LogError::backend("task row vanished")),
            })?
        }
    };
    let snapshot = snapshot_of(&plan, req)?;
    Ok((plan, snapshot))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Projection, Record, Snapshot};
    use crate::types::{Message, TaskState, TaskStatus};

    fn msg(i: u64) -> Record {
        Record::MessageAdmitted {
            message: Message::user(format!("m{i}"), "x"),
        }
    }

    fn head_at(seq: u64, records: &[Record]) -> Head {
        Head {
            authority: "a".into(),
            snapshot: Snapshot::new(seq, 1, Projection::replay(records).unwrap()),
        }
    }

    #[test]
    fn snapshots_are_stored_at_rest_and_every_64_records() {
        let heads = Heads::new(64);
        let created = [Record::created("t", "c")];
        let create = AppendRequest::create("a", "t", created.to_vec());
        let p = prepare(&heads, &create).unwrap();
        assert!(p.snapshot.is_none(), "a running task stores none");
        let answered = AppendRequest::create(
            "a",
            "t",
            vec![
                Record::created("t", "c"),
                Record::status(TaskStatus::new(TaskState::Completed)),
            ],
        );
        let p = prepare(&heads, &answered).unwrap();
        assert!(p.snapshot.is_none(), "the first entry is the whole log");
        let _ = heads.put("t".into(), head_at(63, &created));
        let crossing = AppendRequest::new("a", "t", 63, 1, vec![msg(1)]);
        assert!(prepare(&heads, &crossing).unwrap().snapshot.is_some());
        // Each prepare takes the head out: put it back.
        let _ = heads.put("t".into(), head_at(63, &created));
        let done = AppendRequest::new(
            "a",
            "t",
            63,
            1,
            vec![Record::status(TaskStatus::new(TaskState::Completed))],
        );
        assert!(prepare(&heads, &done).unwrap().snapshot.is_some());
        let _ = heads.put("t".into(), head_at(63, &created));
        let empty = AppendRequest::new("a", "t", 63, 2, vec![]);
        assert!(prepare(&heads, &empty).unwrap().snapshot.is_none());
    }

    #[test]
    fn a_long_task_stores_its_snapshot_ever_more_rarely() {
        let heads = Heads::new(64);
        let created = [Record::created("t", "c")];
        let stores = |at: u64, records: u64| {
            let _ = heads.put("t".into(), head_at(at, &created));
            let batch = (0..records).map(msg).collect();
            let req = AppendRequest::new("a", "t", at, 1, batch);
            prepare(&heads, &req).unwrap().snapshot.is_some()
        };
        // Every 64 records up to 128, then every half of the records before.
        assert!(stores(100, 28));
        assert!(!stores(128, 63));
        assert!(stores(128, 64));
        assert!(!stores(16_384, 8191));
        assert!(stores(16_384, 8192));
        assert!(!stores(24_576, 8191));
        assert!(stores(32_767, 1));
        assert!(!stores(32_768, 16_383));
    }

    #[test]
    fn only_the_expected_head_is_planned_on() {
        let heads = Heads::new(64);
        assert!(prepare(&heads, &AppendRequest::new("a", "t", 1, 1, vec![msg(1)])).is_none());
        let _ = heads.put("t".into(), head_at(1, &[Record::created("t", "c")]));
        assert!(prepare(&heads, &AppendRequest::new("a", "t", 2, 1, vec![msg(1)])).is_none());
        // Refusals are left to the writer, which answers them.
        assert!(prepare(&heads, &AppendRequest::new("b", "t", 1, 1, vec![msg(1)])).is_none());
        assert!(prepare(&heads, &AppendRequest::new("a", "t", 1, 1, vec![msg(1)])).is_some());
    }

    #[test]
    fn a_stale_plan_is_redone_against_the_latest_head() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let heads = Heads::new(64);
        let created = [Record::created("t", "c")];
        let _ = heads.put("t".into(), head_at(1, &created));
        let req = AppendRequest::new("a", "t", 1, 1, vec![msg(1)]);
        let prepared = prepare(&heads, &req).unwrap();
        // Another append of the batch moved the task on in the meantime.
        let mut pending = HashMap::new();
        pending.insert("t".to_owned(), head_at(2, &[created[0].clone(), msg(0)]));
        let Err(err) = plan(&conn, &heads, &pending, &req, Some(prepared)) else {
            panic!("planned on a stale head");
        };
        assert_eq!(err.kind(), crate::log::LogErrorKind::Conflict);
        // An append without records raised the epoch alone: fenced.
        let _ = heads.put("t".into(), head_at(1, &created));
        let prepared = prepare(&heads, &req).unwrap();
        let mut pending = HashMap::new();
        let mut raised = head_at(1, &created);
        raised.snapshot.epoch = 2;
        pending.insert("t".to_owned(), raised);
        let Err(err) = plan(&conn, &heads, &pending, &req, Some(prepared)) else {
            panic!("planned on a lower epoch");
        };
        assert_eq!(err.kind(), crate::log::LogErrorKind::Fenced);
        // Unmoved, the prepared plan is taken as is.
        let _ = heads.put("t".into(), head_at(1, &created));
        let prepared = prepare(&heads, &req).unwrap();
        let (p, _) = plan(&conn, &heads, &HashMap::new(), &req, Some(prepared)).unwrap();
        assert_eq!(p.seq, 2);
    }
}
