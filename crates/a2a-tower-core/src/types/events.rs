//! Streaming events and the response wrappers (`StreamResponse`, `SendMessageResponse`).

use serde::{Deserialize, Serialize};

use super::serde_util::{is_false, null_default};
use super::{Artifact, Encoded, Message, Metadata, Task, TaskStatus};

/// A change of a task's status.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    #[serde(default, deserialize_with = "null_default", alias = "task_id")]
    pub task_id: String,
    /// The task's context.
    #[serde(default, deserialize_with = "null_default", alias = "context_id")]
    pub context_id: String,
    /// The new status.
    #[serde(default, deserialize_with = "null_default")]
    pub status: TaskStatus,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new or extended artifact of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    #[serde(default, deserialize_with = "null_default", alias = "task_id")]
    pub task_id: String,
    /// The task's context.
    #[serde(default, deserialize_with = "null_default", alias = "context_id")]
    pub context_id: String,
    /// The artifact (or the chunk of it).
    #[serde(default, deserialize_with = "null_default")]
    pub artifact: Artifact,
    /// Add these parts to the artifact already sent with the same id.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub append: bool,
    /// This is the artifact's final chunk.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "last_chunk",
        skip_serializing_if = "is_false"
    )]
    pub last_chunk: bool,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The result of SendMessage: a task or a direct message.
///
/// ```
/// use a2a_tower::types::{Message, SendMessageResponse};
/// let r = SendMessageResponse::Message(Message::agent("m-2", "hi"));
/// let json = serde_json::to_string(&r).unwrap();
/// assert!(json.starts_with(r#"{"message":{"#));
/// assert_eq!(serde_json::from_str::<SendMessageResponse>(&json).unwrap(), r);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)] // Task is the common case; boxing it would cost every send
pub enum SendMessageResponse {
    /// The task created or updated by the message (with its ProtoJSON when
    /// the log wrote it; see [`Encoded`]).
    Task(Encoded<Task>),
    /// A direct reply.
    Message(Message),
}

/// One event of a stream (SSE events, push-notification bodies).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)] // events are moved once, straight into the encoder
pub enum StreamResponse {
    /// The task snapshot.
    Task(Task),
    /// A direct message.
    Message(Message),
    /// A status change.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact change.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl From<SendMessageResponse> for StreamResponse {
    fn from(r: SendMessageResponse) -> Self {
        match r {
            SendMessageResponse::Task(t) => Self::Task(t.into_inner()),
            SendMessageResponse::Message(m) => Self::Message(m),
        }
    }
}
