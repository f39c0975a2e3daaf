//! `Task`, its status and state, and `Artifact`.

use serde::{Deserialize, Serialize};

use super::serde_util::{null_default, proto_enum};
use super::{Message, Metadata, Part, Timestamp};

proto_enum! {
    /// The lifecycle state of a task.
    pub enum TaskState {
        /// Unknown or unset.
        #[default]
        Unspecified = (0, "TASK_STATE_UNSPECIFIED"),
        /// Acknowledged.
        Submitted = (1, "TASK_STATE_SUBMITTED"),
        /// In progress.
        Working = (2, "TASK_STATE_WORKING"),
        /// Finished successfully (terminal).
        Completed = (3, "TASK_STATE_COMPLETED"),
        /// Finished with an error (terminal).
        Failed = (4, "TASK_STATE_FAILED"),
        /// Canceled (terminal).
        Canceled = (5, "TASK_STATE_CANCELED"),
        /// Waiting for user input (interrupted).
        InputRequired = (6, "TASK_STATE_INPUT_REQUIRED"),
        /// The agent declined the task (terminal).
        Rejected = (7, "TASK_STATE_REJECTED"),
        /// Waiting for authorization (interrupted).
        AuthRequired = (8, "TASK_STATE_AUTH_REQUIRED"),
    }
}

impl TaskState {
    /// COMPLETED, FAILED, CANCELED or REJECTED: the task accepts nothing more.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// INPUT_REQUIRED or AUTH_REQUIRED: the task waits for the client.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// The status of a task: its state, an optional agent message, and when it was recorded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    #[serde(default)]
    pub state: TaskState,
    /// A message explaining the state (for example the question of INPUT_REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the status was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status with the given state, stamped now.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }
}

/// A task: the unit of work, with status, artifacts and history.
///
/// ```
/// use a2a_tower::types::{Task, TaskState, TaskStatus};
/// let task = Task {
///     id: "t-1".into(),
///     context_id: "c-1".into(),
///     status: TaskStatus { state: TaskState::Completed, ..Default::default() },
///     ..Default::default()
/// };
/// assert_eq!(
///     serde_json::to_string(&task).unwrap(),
///     r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Context id.
    #[serde(default, deserialize_with = "null_default", alias = "context_id")]
    pub context_id: String,
    /// Current status.
    #[serde(default, deserialize_with = "null_default")]
    pub status: TaskStatus,
    /// Output artifacts.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub artifacts: Vec<Artifact>,
    /// Message history.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub history: Vec<Message>,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    #[serde(default, deserialize_with = "null_default", alias = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// Human-readable description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Content; at least one part.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs present in this artifact.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
}
