//! [`Record`]: one committed fact about a task.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::{
    Artifact, Message, Metadata, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};

/// One committed fact about a task. Serialized as JSON by durable backends
/// (externally tagged, camelCase: `{"statusChanged":{"status":{…}}}`).
///
/// ```
/// use a2a_tower::log::Record;
/// use a2a_tower::types::{TaskState, TaskStatus};
/// let r = Record::status(TaskStatus { state: TaskState::Working, ..Default::default() });
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"statusChanged":{"status":{"state":"TASK_STATE_WORKING"}}}"#);
/// assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), r);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Record {
    /// The task exists (always the first record): SUBMITTED at `at`.
    #[serde(rename_all = "camelCase")]
    Created {
        /// The task id.
        task_id: String,
        /// The context id.
        context_id: String,
        /// When the task was created (its first status timestamp).
        at: Timestamp,
        /// Task metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Metadata>,
    },
    /// A client message was admitted to the task (appended to the history).
    MessageAdmitted {
        /// The message, with its task and context ids set.
        message: Message,
    },
    /// The status changed.
    StatusChanged {
        /// The new status.
        status: TaskStatus,
    },
    /// An artifact, or a chunk of one.
    #[serde(rename_all = "camelCase")]
    ArtifactChunk {
        /// The artifact (or the parts of this chunk).
        artifact: Artifact,
        /// Add the parts to the artifact with the same id.
        #[serde(default)]
        append: bool,
        /// This is the artifact's final chunk.
        #[serde(default)]
        last_chunk: bool,
    },
    /// The executor replied with a direct message: the task is COMPLETED
    /// with this message as its status message.
    Replied {
        /// The reply.
        message: Message,
        /// When it was recorded.
        at: Timestamp,
    },
    /// A client asked to cancel the task (the writer decides the outcome).
    CancelRequested {
        /// When it was asked.
        at: Timestamp,
    },
    /// A push-notification config was created or replaced (by id).
    PushConfigSet {
        /// The config.
        config: TaskPushNotificationConfig,
    },
    /// A push-notification config was deleted.
    PushConfigDeleted {
        /// The config id.
        id: String,
    },
    /// An execution of the task started on `host` (the engine's
    /// [`host_id`](crate::engine::TaskLayer::host_id)): start-up recovery
    /// closes only the live tasks of its own host. No event, no state change.
    ExecutionStarted {
        /// The id of the host running the execution.
        host: String,
    },
    /// The task's metadata was replaced (a managed run publishes its
    /// questions and process status this way).
    MetadataChanged {
        /// The new metadata, whole.
        metadata: Metadata,
    },
    /// A managed program run started (the journal's first entry): the
    /// program's name, the root process id and the admitted input, with its
    /// numbers' exact text.
    RunStarted {
        /// The program's name.
        program: String,
        /// The root process id.
        root: String,
        /// The input.
        input: Value,
    },
    /// A step of a managed process finished with `output`; on replay the
    /// output is returned and the step is not run again.
    StepRecorded {
        /// The process.
        process: String,
        /// The step's name (its occurrences are counted in order).
        name: String,
        /// The step's result.
        output: Value,
    },
    /// A managed process opened a wait: an external question addressed by
    /// `(process, key)`.
    WaitOpened {
        /// The process.
        process: String,
        /// The wait's key, unique within its process.
        key: String,
        /// The question, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<Value>,
        /// The answer's JSON Schema, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
    },
    /// An answer to a wait was admitted (by any host, without a writer
    /// epoch); the message that carried it joins the history.
    SignalAdmitted {
        /// The process of the wait.
        process: String,
        /// The wait's key.
        key: String,
        /// The answer, validated against the wait's schema.
        answer: Value,
        /// The message that carried it.
        message: Message,
    },
    /// A managed process started a child process.
    ChildStarted {
        /// The parent process.
        parent: String,
        /// The child process.
        process: String,
    },
    /// The task waits in its context's delivery queue with this input (see
    /// [`queue`](crate::queue)); its admission turns the input into the
    /// task's admitted message.
    InputQueued {
        /// The queued input.
        input: crate::queue::QueuedInput,
    },
    /// A fact of a context's delivery queue, recorded in the context's queue
    /// stream (see [`queue`](crate::queue)). No event, no state change.
    Queue(crate::queue::QueueRecord),
    /// A managed child process returned `output` (or failed, without one).
    ProcessExited {
        /// The process.
        process: String,
        /// Its result, when it returned one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
    },
}

impl Record {
    /// A `Created` record stamped now.
    pub fn created(task_id: impl Into<String>, context_id: impl Into<String>) -> Self {
        Self::Created {
            task_id: task_id.into(),
            context_id: context_id.into(),
            at: Timestamp::now(),
            metadata: None,
        }
    }

    /// A `StatusChanged` record.
    pub fn status(status: TaskStatus) -> Self {
        Self::StatusChanged { status }
    }

    /// What a cancel commits when its writer decides it: the request, then
    /// CANCELED, both stamped now.
    pub fn canceled() -> Vec<Self> {
        vec![
            Self::CancelRequested {
                at: Timestamp::now(),
            },
            Self::status(TaskStatus::new(TaskState::Canceled)),
        ]
    }

    /// The state this record moves the task to, if any.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Created { .. } => Some(TaskState::Submitted),
            Self::StatusChanged { status } => Some(status.state),
            Self::Replied { .. } => Some(TaskState::Completed),
            _ => None,
        }
    }

    /// The record ends the task: nothing may follow it.
    pub fn is_terminal(&self) -> bool {
        self.state().is_some_and(TaskState::is_terminal)
    }
}

/// A record with its sequence number (shared: reading never deep-copies it).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequenced {
    /// The sequence number, from 1.
    pub seq: u64,
    /// The task's last sequence number when the record was read (≥ `seq`):
    /// how far behind the log a reader is.
    pub head: u64,
    /// The record.
    pub record: Arc<Record>,
}
