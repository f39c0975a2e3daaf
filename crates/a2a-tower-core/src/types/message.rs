//! `Message` and `Role`: one unit of communication between client and agent.

use serde::{Deserialize, Serialize};

use super::serde_util::{null_default, proto_enum};
use super::{Metadata, Part};

proto_enum! {
    /// The sender of a message.
    pub enum Role {
        /// Unset.
        #[default]
        Unspecified = (0, "ROLE_UNSPECIFIED"),
        /// From the client to the agent.
        User = (1, "ROLE_USER"),
        /// From the agent to the client.
        Agent = (2, "ROLE_AGENT"),
    }
}

/// One unit of communication: a role, one or more parts, and optional task and context ids.
///
/// ```
/// use a2a_tower::types::{Message, Role};
/// let m = Message::user("m-1", "hello");
/// assert_eq!(
///     serde_json::to_string(&m).unwrap(),
///     r#"{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Sender-chosen unique id.
    #[serde(default, deserialize_with = "null_default", alias = "message_id")]
    pub message_id: String,
    /// Context the message belongs to; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "context_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Task the message belongs to; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "task_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub task_id: String,
    /// Sender role.
    #[serde(default)]
    pub role: Role,
    /// Content; at least one part.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs present in this message.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
    /// Ids of tasks this message refers to.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "reference_task_ids",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with one text part.
    pub fn new(role: Role, message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            message_id: message_id.into(),
            role,
            parts: vec![Part::text(text)],
            ..Self::default()
        }
    }

    /// A user message with one text part.
    pub fn user(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::User, message_id, text)
    }

    /// An agent message with one text part.
    pub fn agent(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::Agent, message_id, text)
    }

    /// The concatenated text of all text parts.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}
