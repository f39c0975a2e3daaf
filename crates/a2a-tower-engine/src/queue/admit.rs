//! Admission, the one switch point: a single conditional commit turns the
//! queued head into its task's admitted message and WORKING status and
//! records the run in the context's queue; only then does the agent run.

use std::sync::Arc;

use super::core::Core;
use super::drain::{Plan, Wait};
use super::entry::Entry;
use super::record::{QueueRecord, QueuedInput};
use super::state::ContextQueue;
use super::stream::Slot;
use super::team::Dispatch;
use super::{AGENT_KEY, ERROR_KEY, HANDOFF_KEY};
use crate::CallContext;
use crate::engine::executor::{Emitter, Execution};
use crate::engine::run::Driver;
use crate::engine::writer::Writer;
use crate::log::{AppendRequest, Appended, LogError, Record, Snapshot};
use crate::types::{Message, Metadata, Part, Role, Task, TaskState, TaskStatus, Timestamp};

/// The status message of an input whose named agent is not hosted here
/// (reason `TARGET_UNAVAILABLE`).
pub const TARGET_UNAVAILABLE_MESSAGE: &str = "The agent this input names is not hosted here.";
/// The status message of a handoff whose reply is gone from the log (reason
/// `INPUT_UNAVAILABLE`).
pub const INPUT_UNAVAILABLE_MESSAGE: &str = "The reply this input refers to is gone.";

/// The agent to admit the head for, or [`Wait`]. An input naming an agent
/// waits while that agent runs an input of the context; one naming none
/// waits until the context is idle, then goes to the context's last
/// replier, else the default agent. The name may be one this host does not
/// have (the team changed since it was queued): admission fails it.
pub(crate) fn resolve_agent(core: &Core, st: &ContextQueue, head: &Entry) -> Result<String, Wait> {
    let agent = match &head.target {
        Some(t) => t.clone(),
        None if !st.active().is_empty() => return Err(Wait),
        None => st
            .last_replier()
            .filter(|a| core.team.has(a))
            .unwrap_or(core.team.default_agent())
            .to_owned(),
    };
    if st.active().contains_key(&agent) {
        return Err(Wait);
    }
    Ok(agent)
}

/// Plans the admission of `head` for `agent` (re-validated here), whose
/// run starts once it is committed, or fails it visibly when the agent is
/// not hosted.
pub(crate) async fn admit(
    core: &Arc<Core>,
    slot: &Slot,
    st: &ContextQueue,
    head: &Entry,
    snap: Snapshot,
    agent: String,
    plan: &mut Plan,
) -> Result<(), LogError> {
    if !core.team.has(&agent) {
        let why = (TARGET_UNAVAILABLE_MESSAGE, "TARGET_UNAVAILABLE");
        fail_visibly(slot, head, &snap, why, plan);
        return Ok(());
    }
    let Some(message) = input(core, slot, st, &snap).await? else {
        let why = (INPUT_UNAVAILABLE_MESSAGE, "INPUT_UNAVAILABLE");
        fail_visibly(slot, head, &snap, why, plan);
        return Ok(());
    };
    let mut records = vec![Record::MetadataChanged {
        metadata: with_agent(snap.task.metadata.as_ref(), &agent),
    }];
    records.extend(admission(core, &message));
    // A newer epoch fences anything that wrote the task before.
    let epoch = snap.epoch + 1;
    let task = AppendRequest::new(
        slot.authority.clone(),
        head.task_id.clone(),
        snap.seq,
        epoch,
        records,
    );
    debug_assert!(plan.tasks.is_empty(), "the admission's append comes first");
    plan.tasks.insert(0, task);
    // Queued since its SUBMITTED status (its enqueue's commit).
    let waited = snap.task.status.timestamp.map(|t| {
        let ms = Timestamp::now()
            .unix_millis()
            .saturating_sub(t.unix_millis());
        std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
    });
    plan.records.push(QueueRecord::Admitted {
        task_id: head.task_id.clone(),
        agent: agent.clone(),
        hops: head.hops,
    });
    plan.start = Some(Start {
        task_id: head.task_id.clone(),
        epoch,
        message,
        agent,
        waited,
    });
    Ok(())
}

/// `metadata` with the agent an input is admitted for (`queue.agent`).
pub(crate) fn with_agent(metadata: Option<&Metadata>, agent: &str) -> Metadata {
    let mut metadata = metadata.cloned().unwrap_or_default();
    metadata.insert(AGENT_KEY.into(), agent.into());
    metadata
}

/// What admits `message` to its task after its metadata names the agent:
/// the message joins the history, the task is WORKING, and this host runs
/// it.
pub(crate) fn admission(core: &Core, message: &Message) -> [Record; 3] {
    [
        Record::MessageAdmitted {
            message: message.clone(),
        },
        Record::status(TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: Some(Timestamp::now()),
        }),
        Record::ExecutionStarted {
            host: core.shared.host_id.clone(),
        },
    ]
}

/// An admission's run, to start once the admission is committed.
pub(crate) struct Start {
    task_id: String,
    epoch: u64,
    message: Message,
    agent: String,
    /// How long the input was queued, recorded once the admission commits.
    waited: Option<std::time::Duration>,
}

impl Start {
    /// Starts the run of the task admitted as `appended`.
    pub(crate) fn run(self, core: &Arc<Core>, slot: &Slot, appended: Appended) {
        if let Some(waited) = self.waited {
            a2a_tower_core::telemetry::admission_wait(&self.agent, waited);
        }
        let writer = Arc::new(
            Writer::new(
                core.shared.log.clone(),
                slot.authority.clone(),
                self.task_id,
                slot.context_id.clone(),
                appended.seq,
                self.epoch,
            )
            .riding(Some(core.rider.clone())),
        );
        // A fresh admission: no writer of this task runs here.
        if core.shared.registry.claim(&writer) {
            let execution = Execution {
                message: self.message,
                task: appended.snapshot.task,
                context: CallContext::default(),
                inputs: writer.open_inputs(),
                emit: Emitter::new(writer.clone()),
            };
            let dispatch = Dispatch {
                team: core.team.clone(),
            };
            Driver::new(core.shared.clone(), dispatch, execution, writer).detach();
        }
    }
}

/// Plans the end of the head's task, FAILED with a typed, visible reason,
/// and its removal from the queue, in one commit; it never goes to another
/// agent.
fn fail_visibly(
    slot: &Slot,
    head: &Entry,
    snap: &Snapshot,
    (text, reason): (&str, &str),
    plan: &mut Plan,
) {
    let mut message = Message::new(
        Role::Agent,
        crate::engine::id_text(uuid::Uuid::new_v4()),
        text,
    );
    message.task_id.clone_from(&head.task_id);
    message.context_id.clone_from(&slot.context_id);
    let mut meta = crate::types::Metadata::new();
    meta.insert(ERROR_KEY.into(), reason.into());
    message.metadata = Some(meta);
    let failed = Record::status(TaskStatus {
        state: TaskState::Failed,
        message: Some(message),
        timestamp: Some(Timestamp::now()),
    });
    plan.tasks.push(AppendRequest::new(
        slot.authority.clone(),
        head.task_id.clone(),
        snap.seq,
        snap.epoch,
        vec![failed],
    ));
    plan.records.push(QueueRecord::Removed {
        task_id: head.task_id.clone(),
    });
}

/// The message the head's task is admitted with: its own (kept by this
/// host since its enqueue, else read back), or, for a handoff, one that
/// refers to the reply it was woken by. `None` when a handoff's reply is
/// gone.
async fn input(
    core: &Core,
    slot: &Slot,
    st: &ContextQueue,
    snap: &Snapshot,
) -> Result<Option<Message>, LogError> {
    let queued = match st.input(&snap.task.id) {
        Some(message) => Some(QueuedInput::Message {
            message: message.clone(),
        }),
        None => {
            let records = core
                .shared
                .log
                .read(&slot.authority, &snap.task.id, 0)
                .await?;
            records
                .iter()
                .rev()
                .find_map(|r| QueuedInput::of(&r.record))
        }
    };
    let mut message = match queued {
        Some(QueuedInput::Message { message }) => message,
        Some(QueuedInput::Handoff { task_id }) => {
            let Some(from) = super::drain::task(core, slot, &task_id).await? else {
                return Ok(None);
            };
            handoff_message(&from.task)
        }
        None => return Ok(None),
    };
    message.role = Role::User;
    message.task_id.clone_from(&snap.task.id);
    message.context_id.clone_from(&slot.context_id);
    Ok(Some(message))
}

/// The input of a handoff: the reply's parts, referring to its task (and
/// its message, when the reply was one).
fn handoff_message(from: &Task) -> Message {
    let (parts, message_id): (Vec<Part>, Option<&str>) = match &from.status.message {
        Some(m) if from.artifacts.is_empty() => (m.parts.clone(), Some(&m.message_id)),
        _ => (
            from.artifacts
                .iter()
                .flat_map(|a| a.parts.iter().cloned())
                .collect(),
            None,
        ),
    };
    let mut reference = serde_json::Map::new();
    reference.insert("taskId".into(), from.id.clone().into());
    if let Some(id) = message_id {
        reference.insert("messageId".into(), id.into());
    }
    let mut meta = crate::types::Metadata::new();
    meta.insert(HANDOFF_KEY.into(), reference.into());
    Message {
        message_id: crate::engine::id_text(uuid::Uuid::new_v4()),
        role: Role::User,
        parts,
        metadata: Some(meta),
        reference_task_ids: vec![from.id.clone()],
        ..Message::default()
    }
}
