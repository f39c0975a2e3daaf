//! The JSON the durable logs stored before feature records held their tasks
//! (SQLite schema 6, PostgreSQL schema 3), brought to today's form by their
//! next migration.
//!
//! Before, the log knew three features' records by type and derived what
//! they meant: a task was a managed run if its metadata named a program
//! (`scope.program`), queued while its last `inputQueued` record had no
//! admitted message after it (stored snapshots said `"queued": true`), and
//! a queue stream lived under the queue's reserved authority. Today the
//! records say it themselves with a [`Hold`](super::Hold): the first
//! member of a `runStarted`, `inputQueued` or `queue` record's body, and
//! the `hold` member of a stored snapshot. The upgrade adds exactly these;
//! every other byte stays (the JSON is re-serialized by the serde_json that
//! wrote it, with exact numbers and key order).

use serde_json::{Map, Value, json};

use super::LogError;

/// The hold a record of the old form sets, by its name.
fn record_hold(name: &str) -> Option<Value> {
    match name {
        "runStarted" => Some(json!({"by": "managed"})),
        "inputQueued" => Some(json!({"by": "queue", "untilAdmitted": true})),
        "queue" => Some(json!({"by": "queue"})),
        _ => None,
    }
}

/// `record` with its hold added, if it sets one and has none; `true` if it
/// changed.
fn upgrade_value(record: &mut Value) -> bool {
    let Some(outer) = record.as_object_mut().filter(|o| o.len() == 1) else {
        return false;
    };
    let (name, body) = outer.iter_mut().next().expect("one member");
    let (Some(hold), Some(body)) = (record_hold(name), body.as_object_mut()) else {
        return false;
    };
    if body.contains_key("hold") {
        return false;
    }
    let mut held = Map::with_capacity(body.len() + 1);
    held.insert("hold".into(), hold);
    held.extend(std::mem::take(body));
    *body = held;
    true
}

/// One stored record (PostgreSQL's `records.record`), upgraded; `None` if
/// it needs no change.
pub fn record(json: &str) -> Result<Option<String>, LogError> {
    let mut v: Value = serde_json::from_str(json).map_err(LogError::backend)?;
    if !upgrade_value(&mut v) {
        return Ok(None);
    }
    serde_json::to_string(&v)
        .map(Some)
        .map_err(LogError::backend)
}

/// The records of one stored append (SQLite's `entries.records`, a JSON
/// array), upgraded; `None` if none needs a change.
pub fn records(json: &str) -> Result<Option<String>, LogError> {
    let mut v: Vec<Value> = serde_json::from_str(json).map_err(LogError::backend)?;
    let mut changed = false;
    for r in &mut v {
        changed |= upgrade_value(r);
    }
    if !changed {
        return Ok(None);
    }
    serde_json::to_string(&v)
        .map(Some)
        .map_err(LogError::backend)
}

/// A stored snapshot, upgraded; `None` if it needs no change.
pub fn snapshot(json: &str) -> Result<Option<String>, LogError> {
    let mut v: Value = serde_json::from_str(json).map_err(LogError::backend)?;
    let Some(s) = v.as_object_mut() else {
        return Ok(None);
    };
    if s.contains_key("hold") {
        return Ok(None);
    }
    let queued = s.remove("queued").is_some_and(|q| q == Value::Bool(true));
    let metadata = s.get("task").and_then(|t| t.get("metadata"));
    let has = |key: &str| metadata.is_some_and(|m| m.get(key).is_some());
    let hold = if queued {
        json!({"by": "queue", "untilAdmitted": true})
    } else if has("scope.program") {
        json!({"by": "managed"})
    } else if has("queue.authority") {
        json!({"by": "queue"})
    } else {
        return Ok(None);
    };
    s.insert("hold".into(), hold);
    serde_json::to_string(&v)
        .map(Some)
        .map_err(LogError::backend)
}

/// The reserved authority the delivery queue kept its streams under before
/// streams were a kind of their own (SQLite schema 7, PostgreSQL schema 4).
pub const OLD_QUEUE_AUTHORITY: &str = "\u{1}a2a-tower.queue";

/// Where an old queue stream (id `queue:<len>:<authority>:<context>` under
/// [`OLD_QUEUE_AUTHORITY`]) lives now: its caller's authority, and the
/// [stream id](crate::stream_id) `stream_id("queue", "<len>:<authority>:<context>")`
/// the queue derives for the same context. `None` for an id of another form.
pub fn moved_stream(old_id: &str) -> Option<(String, String)> {
    let name = old_id.strip_prefix("queue:")?;
    let (len, rest) = name.split_once(':')?;
    let len: usize = len.parse().ok()?;
    let authority = rest.get(..len)?;
    rest.get(len..)?.strip_prefix(':')?;
    Some((authority.to_owned(), crate::stream_id("queue", name)))
}

/// `json` (one record, an array of records or a snapshot) with every string
/// value equal to `old` replaced by `new`; `None` if there is none.
pub fn renamed(json: &str, old: &str, new: &str) -> Result<Option<String>, LogError> {
    fn walk(v: &mut Value, old: &str, new: &str) -> bool {
        match v {
            Value::String(s) if s == old => {
                *s = new.to_owned();
                true
            }
            Value::Array(items) => items.iter_mut().fold(false, |c, i| walk(i, old, new) | c),
            Value::Object(members) => members
                .values_mut()
                .fold(false, |c, m| walk(m, old, new) | c),
            _ => false,
        }
    }
    let mut v: Value = serde_json::from_str(json).map_err(LogError::backend)?;
    if !walk(&mut v, old, new) {
        return Ok(None);
    }
    serde_json::to_string(&v)
        .map(Some)
        .map_err(LogError::backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_gain_their_hold_and_nothing_else() {
        let old = r#"[{"created":{"taskId":"t","contextId":"c","at":"2026-01-01T00:00:00Z"}},{"inputQueued":{"input":{"message":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"n":1.50}}]}}}}}]"#;
        let new = records(old).unwrap().unwrap();
        assert_eq!(
            new,
            old.replace(
                r#"{"inputQueued":{"input""#,
                r#"{"inputQueued":{"hold":{"by":"queue","untilAdmitted":true},"input""#
            )
        );
        assert_eq!(records(&new).unwrap(), None, "upgraded once");
        let start = r#"{"runStarted":{"program":"p","root":"r","input":{"n":1.50}}}"#;
        assert_eq!(
            record(start).unwrap().unwrap(),
            r#"{"runStarted":{"hold":{"by":"managed"},"program":"p","root":"r","input":{"n":1.50}}}"#
        );
        assert_eq!(
            record(r#"{"statusChanged":{"status":{"state":"TASK_STATE_WORKING"}}}"#).unwrap(),
            None
        );
        // User data that looks like a record is not one.
        assert_eq!(
            record(r#"{"metadataChanged":{"metadata":{"inputQueued":{}}}}"#).unwrap(),
            None
        );
    }

    #[test]
    fn old_queue_streams_move_to_their_authority() {
        let (authority, id) = moved_stream("queue:6:public:c-q:1").unwrap();
        assert_eq!(authority, "public");
        assert_eq!(crate::stream_of(&id), Some(("queue", "6:public:c-q:1")));
        // An authority with colons is length-prefixed.
        let (authority, _) = moved_stream("queue:3:a:b:c").unwrap();
        assert_eq!(authority, "a:b");
        for bad in ["t-1", "queue:x:a:c", "queue:9:a:c", "queue:1:ab"] {
            assert_eq!(moved_stream(bad), None, "{bad}");
        }
        let old = r#"[{"created":{"taskId":"queue:1:a:c","contextId":"c","note":"x\"queue:1:a:c\""}},{"queue":{"n":1.50}}]"#;
        let new = renamed(old, "queue:1:a:c", "\u{1}queue\u{1}1:a:c")
            .unwrap()
            .unwrap();
        assert_eq!(
            new,
            r#"[{"created":{"taskId":"\u0001queue\u00011:a:c","contextId":"c","note":"x\"queue:1:a:c\""}},{"queue":{"n":1.50}}]"#
        );
        assert_eq!(renamed(&new, "queue:1:a:c", "x").unwrap(), None);
    }

    #[test]
    fn snapshots_gain_the_hold_their_flags_meant() {
        let queued = r#"{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}},"queued":true}"#;
        assert_eq!(
            snapshot(queued).unwrap().unwrap(),
            r#"{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}},"hold":{"by":"queue","untilAdmitted":true}}"#
        );
        let run = r#"{"seq":70,"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"scope.program":"p"}}}"#;
        assert!(
            snapshot(run)
                .unwrap()
                .unwrap()
                .ends_with(r#","hold":{"by":"managed"}}"#)
        );
        let plain =
            r#"{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
        assert_eq!(snapshot(plain).unwrap(), None);
    }
}
