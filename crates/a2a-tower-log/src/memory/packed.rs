//! The packed form of a terminal task nobody watches: the task's ProtoJSON
//! (a shared view of a chunk, see [`super::chunks`]), plus the few fields
//! ListTasks filters on.
//!
//! A live task is kept as its projection, so readers share one immutable
//! `Arc<Task>` snapshot and are never deep-copied. A terminal task changes
//! no more and is mostly kept for the record; holding it as a tree of wire
//! structs costs a dozen allocations and about twice the bytes of its JSON.
//! The trade-off: every read of a packed task (GetTask, a ListTasks page,
//! a subscription) decodes it into a fresh `Arc<Task>`, a few microseconds
//! for a small task. The answer to the call that completed the task is the
//! snapshot of that append, taken before packing, so it is not decoded.

use std::sync::Arc;

use bytes::Bytes;

use super::chunks;
use crate::types::{Task, TaskPushNotificationConfig, TaskState, Timestamp};
use crate::{Hold, LogError, Projection};

/// The largest buffer a thread keeps for packing between tasks.
const KEPT_BUFFER: usize = 64 << 10;

thread_local! {
    /// Where a task is written before its copy into a chunk, so that a
    /// chunk holds no regrowth.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A terminal task as its JSON.
#[derive(Debug)]
pub(super) struct Packed {
    /// The task's ProtoJSON (shared, so a ListTasks scan can take it out of
    /// the shard lock and decode only the tasks of its page).
    json: Bytes,
    context_id: ContextId,
    timestamp: Option<Timestamp>,
    state: TaskState,
    cancel_requested: bool,
    push_configs: Box<[TaskPushNotificationConfig]>,
    /// The host of the task's latest execution (shared with its records).
    host: Option<Arc<str>>,
    /// The feature holding the task (a managed run).
    hold: Option<Box<Hold>>,
}

impl Packed {
    /// Packs a projection; `None` if its task cannot be serialized (it is
    /// then kept as it is).
    pub(super) fn pack(p: &Projection) -> Option<Self> {
        let task = p.task();
        // Written into this thread's buffer, then copied once at its size.
        let json = BUFFER.with_borrow_mut(|buffer| {
            buffer.clear();
            let written = a2a_tower_core::json::to_writer(buffer, &**task);
            let json = written.ok().map(|()| chunks::store(buffer));
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            json
        })?;
        Some(Self {
            context_id: ContextId::of(&json, task),
            json,
            timestamp: task.status.timestamp,
            state: task.status.state,
            cancel_requested: p.cancel_requested(),
            push_configs: p.push_configs().into(),
            host: p.shared_host().cloned(),
            hold: p.hold().cloned().map(Box::new),
        })
    }

    /// The projection back, with a freshly decoded task.
    pub(super) fn unpack(&self) -> Result<Projection, LogError> {
        let task = decode(&self.json)?;
        Ok(Projection::restore(
            task,
            self.cancel_requested,
            self.push_configs.to_vec(),
            self.host.clone(),
            self.hold.as_deref().cloned(),
        ))
    }

    /// The shared JSON, for a decode outside the shard lock.
    pub(super) fn json(&self) -> &Bytes {
        &self.json
    }

    pub(super) fn context_id(&self) -> &str {
        match &self.context_id {
            ContextId::InJson(start, end) => self
                .json
                .get(*start as usize..*end as usize)
                .and_then(|id| std::str::from_utf8(id).ok())
                .unwrap_or_default(),
            ContextId::Own(id) => id,
        }
    }

    pub(super) fn timestamp(&self) -> Option<Timestamp> {
        self.timestamp
    }

    pub(super) fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    pub(super) fn state(&self) -> TaskState {
        self.state
    }

    /// The bytes this form holds (for the log's memory bound).
    pub(super) fn bytes(&self) -> usize {
        self.json.len()
            + 16
            + match &self.context_id {
                ContextId::InJson(..) => 0,
                ContextId::Own(id) => id.len(),
            }
            + self.host.as_ref().map_or(0, |h| h.len())
            + self.hold.as_ref().map_or(0, |h| h.by.len())
            + self
                .push_configs
                .iter()
                .map(|c| c.url.len() + c.token.len() + c.id.len() + 64)
                .sum::<usize>()
    }
}

/// Where a packed task's context id is (what ListTasks filters on).
#[derive(Debug)]
enum ContextId {
    /// In the JSON, at this range (start, end): where serde writes it,
    /// right after the task id, as it is when neither id needs escaping.
    InJson(u32, u32),
    /// A copy of its own (an id the JSON escapes).
    Own(Box<str>),
}

impl ContextId {
    /// The context id of `task`, found in its `json` if it is there as it
    /// is (no allocation), else copied.
    fn of(json: &[u8], task: &Task) -> Self {
        let verbatim = |s: &str| !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
        let (head, middle) = (br#"{"id":""#, br#"","contextId":""#);
        let start = head.len() + task.id.len() + middle.len();
        let end = start + task.context_id.len();
        let found = verbatim(&task.id)
            && verbatim(&task.context_id)
            && json.starts_with(head)
            && json.get(head.len()..head.len() + task.id.len()) == Some(task.id.as_bytes())
            && json.get(start - middle.len()..start) == Some(&middle[..])
            && json.get(start..end) == Some(task.context_id.as_bytes());
        match (found, u32::try_from(start), u32::try_from(end)) {
            (true, Ok(start), Ok(end)) => Self::InJson(start, end),
            _ => Self::Own(task.context_id.as_str().into()),
        }
    }
}

/// Decodes a packed task.
pub(super) fn decode(json: &[u8]) -> Result<Arc<Task>, LogError> {
    serde_json::from_slice(json)
        .map(Arc::new)
        .map_err(LogError::backend)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    fn packed(task_id: &str, context_id: &str) -> Packed {
        let p = Projection::replay([&Record::created(task_id, context_id)]).unwrap();
        Packed::pack(&p).unwrap()
    }

    // The context id is read where the JSON holds it, unless escaped there.
    #[test]
    fn the_context_id_is_found_in_the_json_or_copied() {
        let plain = packed("t-1", "c-1");
        assert!(matches!(plain.context_id, ContextId::InJson(..)));
        assert_eq!(plain.context_id(), "c-1");
        let cases = [
            ("t\"1", "c-1", true),
            ("t-1", "c\\1", true),
            ("t-1", "c\n1", true),
            ("t-1", "c\"1", true),
            ("", "", false),
            ("t-é", "c-✓", false),
        ];
        for (task, context, copied) in cases {
            let p = packed(task, context);
            assert_eq!(p.context_id(), context, "{task:?} {context:?}");
            let own = matches!(p.context_id, ContextId::Own(_));
            assert_eq!(own, copied, "{task:?} {context:?}");
        }
    }
}
