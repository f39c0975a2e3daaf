//! What a message asks of the queue (`queue.*` metadata), and the enqueue
//! commit: the queued task and its entry, together.

use serde_json::Value;

use super::core::Core;
use super::entry::Priority;
use super::record::{QueueRecord, QueuedInput};
use super::stream::Slot;
use super::{MODE_KEY, PRIORITY_KEY, TARGET_KEY};
use crate::log::{AppendRequest, LogErrorKind, Record, Snapshot, Watch};
use crate::types::{Message, Role, SendMessageRequest};
use crate::{A2aError, ErrorKind};

/// How a message meets the queue (`queue.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A new input: queued (no mode given).
    Queue,
    /// Into the running execution of the message's task.
    Append,
    /// Cancel the target's live run in the context; this input runs next.
    Steer,
}

/// The `queue.*` metadata of a message, checked.
#[derive(Debug, Clone)]
pub(crate) struct Directives {
    pub(crate) target: Option<String>,
    pub(crate) priority: Priority,
    pub(crate) mode: Mode,
}

fn invalid(field: &str, why: &str) -> A2aError {
    A2aError::invalid_params(format!("message.metadata.{field}"), why)
}

fn text<'a>(message: &'a Message, key: &str) -> Result<Option<&'a str>, A2aError> {
    match message.metadata.as_ref().and_then(|m| m.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(key, "must be a string")),
    }
}

/// Reads and checks the message's `queue.*` metadata against the team,
/// before anything is written.
pub(crate) fn directives(core: &Core, message: &Message) -> Result<Directives, A2aError> {
    let target = text(message, TARGET_KEY)?;
    if let Some(t) = target
        && !core.team.has(t)
    {
        return Err(invalid(TARGET_KEY, "names no agent of this server"));
    }
    let priority = match text(message, PRIORITY_KEY)? {
        None => Priority::Normal,
        Some(p) => Priority::parse(p)
            .ok_or_else(|| invalid(PRIORITY_KEY, "must be \"urgent\" or \"normal\""))?,
    };
    let mode = match text(message, MODE_KEY)? {
        None => Mode::Queue,
        Some("append") => Mode::Append,
        Some("steer") => Mode::Steer,
        Some(_) => return Err(invalid(MODE_KEY, "must be \"append\" or \"steer\"")),
    };
    let continues = !message.task_id.is_empty();
    match mode {
        Mode::Append if !continues => {
            return Err(invalid(
                MODE_KEY,
                "\"append\" needs the running task's taskId",
            ));
        }
        Mode::Steer if continues => {
            return Err(invalid(MODE_KEY, "\"steer\" starts a new input: no taskId"));
        }
        Mode::Steer if target.is_none() => {
            return Err(invalid(MODE_KEY, "\"steer\" needs queue.target"));
        }
        _ => {}
    }
    Ok(Directives {
        target: target.map(str::to_owned),
        priority,
        mode,
    })
}

/// What an enqueue left.
pub(crate) struct Enqueued {
    /// The queued task as created.
    pub(crate) snapshot: Snapshot,
    /// For a steer: the run of its target in the context when it was queued.
    pub(crate) steered: Option<String>,
    /// If asked for, the task's records after `snapshot`: registered before
    /// any drain of this host can admit the task, so its run cannot end
    /// first (and a memory log pack the task away before it is watched).
    pub(crate) watch: Option<Watch>,
}

/// Queues `req` (a message without a task id) as a new SUBMITTED task of
/// its context: the task and its queue entry in one commit; with `watch`,
/// also a watch of the task from then on.
pub(crate) async fn enqueue(
    core: &Core,
    authority: &str,
    req: SendMessageRequest,
    d: &Directives,
    watch: bool,
) -> Result<Enqueued, A2aError> {
    let push = crate::engine::admit::validate(&core.shared, &req)?;
    let mut message = req.message;
    message.role = Role::User;
    let task_id = crate::engine::id_text(uuid::Uuid::now_v7());
    if message.context_id.is_empty() {
        message.context_id = crate::engine::id_text(uuid::Uuid::now_v7());
    }
    message.task_id.clone_from(&task_id);
    let slot = core.slots.get(authority, &message.context_id);
    let log = &*core.shared.log;
    let mut st = slot.state.lock().await;
    for _ in 0..64 {
        slot.catch_up(log, &mut st).await?;
        let mut created = Record::created(task_id.clone(), message.context_id.clone());
        if let Record::Created { metadata, .. } = &mut created {
            metadata.clone_from(&req.metadata);
        }
        let queued = QueuedInput::Message {
            message: message.clone(),
        }
        .record();
        let mut records = vec![created, queued];
        records.extend(crate::engine::push_config::inline_record(
            push.clone(),
            &task_id,
        ));
        let task = AppendRequest::create(authority, task_id.clone(), records);
        let entered = QueueRecord::Entered {
            task_id: task_id.clone(),
            target: d.target.clone(),
            priority: d.priority,
            position: (d.mode == Mode::Steer).then(|| st.front()),
            hops: 0,
        };
        let entered = [entered];
        match log
            .append_all(vec![task, slot.append(&st, entered.to_vec())])
            .await
        {
            Ok(mut out) => {
                let snapshot = out.swap_remove(0).snapshot;
                // The view at this commit, and the input and task for its
                // admission: none is read back.
                Slot::applied(&mut st, &entered);
                st.keep_input(message, snapshot.clone());
                // Still under `st`, which every drain pass of this host holds.
                let watch = match watch {
                    true => Some(log.watch(authority, &task_id, Some(snapshot.seq)).await?),
                    false => None,
                };
                let steered = d
                    .target
                    .as_ref()
                    .filter(|_| d.mode == Mode::Steer)
                    .and_then(|t| st.active().get(t))
                    .map(|run| run.task_id.clone());
                drop(st);
                return Ok(Enqueued {
                    snapshot,
                    steered,
                    watch,
                });
            }
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {}
            Err(e) => {
                return Err(match e.kind() {
                    LogErrorKind::Full => A2aError::new(ErrorKind::Unavailable),
                    _ => e.into(),
                });
            }
        }
    }
    Err(A2aError::new(ErrorKind::Unavailable)
        .with_message("The context's queue is changing too fast; retry"))
}
