//! The packed form of a terminal task nobody watches: the task's ProtoJSON
//! in one shared allocation, plus the few fields ListTasks filters on.
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

use crate::projection::approx_task_bytes;
use crate::types::{Task, TaskPushNotificationConfig, TaskState, Timestamp};
use crate::{Hold, LogError, Projection};

/// A terminal task as its JSON.
#[derive(Debug)]
pub(super) struct Packed {
    /// The task's ProtoJSON (shared, so a ListTasks scan can take it out of
    /// the shard lock and decode only the tasks of its page).
    json: Arc<[u8]>,
    context_id: Box<str>,
    timestamp: Option<Timestamp>,
    state: TaskState,
    cancel_requested: bool,
    push_configs: Box<[TaskPushNotificationConfig]>,
    /// The host of the task's latest execution.
    host: Option<Box<str>>,
    /// The feature holding the task (a managed run).
    hold: Option<Box<Hold>>,
}

impl Packed {
    /// Packs a projection; `None` if its task cannot be serialized (it is
    /// then kept as it is).
    pub(super) fn pack(p: &Projection) -> Option<Self> {
        let task = p.task();
        // The JSON is about half the estimate of the wire structs: one
        // buffer, no regrowth, then one exact-size copy.
        let mut json = Vec::with_capacity(approx_task_bytes(task) / 2);
        serde_json::to_writer(&mut json, &**task).ok()?;
        Some(Self {
            json: Arc::from(json),
            context_id: task.context_id.as_str().into(),
            timestamp: task.status.timestamp,
            state: task.status.state,
            cancel_requested: p.cancel_requested(),
            push_configs: p.push_configs().into(),
            host: p.host().map(Into::into),
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
            self.host.as_deref().map(str::to_owned),
            self.hold.as_deref().cloned(),
        ))
    }

    /// The shared JSON, for a decode outside the shard lock.
    pub(super) fn json(&self) -> &Arc<[u8]> {
        &self.json
    }

    pub(super) fn context_id(&self) -> &str {
        &self.context_id
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
            + self.context_id.len()
            + self.host.as_ref().map_or(0, |h| h.len())
            + self.hold.as_ref().map_or(0, |h| h.by.len())
            + self
                .push_configs
                .iter()
                .map(|c| c.url.len() + c.token.len() + c.id.len() + 64)
                .sum::<usize>()
    }
}

/// Decodes a packed task.
pub(super) fn decode(json: &[u8]) -> Result<Arc<Task>, LogError> {
    serde_json::from_slice(json)
        .map(Arc::new)
        .map_err(LogError::backend)
}
