//! The A2A 1.0 wire model: ProtoJSON of `a2a.proto`, exactly.
//!
//! Emitting is strict: camelCase names, enums by proto name, oneofs by member
//! name, default values omitted, required arrays always written, timestamps in
//! UTC with milliseconds, `raw` bytes in standard base64. Parsing is lenient:
//! snake_case names, integer enums, `null` for any field, bare-array security
//! scopes, URL-safe or unpadded base64, any RFC 3339 offset. Unknown fields are
//! ignored. Numbers inside `data` and `metadata` keep their exact text.
//!
//! ```
//! use a2a_tower::types::{StreamResponse, TaskState};
//! let ev: StreamResponse = serde_json::from_str(
//!     r#"{"status_update":{"task_id":"t","contextId":"c","status":{"state":5}}}"#,
//! ).unwrap();
//! let StreamResponse::StatusUpdate(ev) = &ev else { panic!() };
//! assert_eq!(ev.status.state, TaskState::Canceled);
//! assert_eq!(
//!     serde_json::to_string(&StreamResponse::StatusUpdate(ev.clone())).unwrap(),
//!     r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELED"}}}"#
//! );
//! ```

#[doc(hidden)]
pub mod serde_util;

mod agent_card;
mod encoded;
mod events;
mod list_view;
mod message;
mod part;
mod requests;
mod security;
mod task;
mod timestamp;

pub use agent_card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC,
};
pub use encoded::Encoded;
pub use events::{
    SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};
#[doc(hidden)]
pub use list_view::ListTasksWithArtifacts;
pub use message::{Message, Role};
pub use part::{Part, PartContent};
pub use requests::{
    AuthenticationInfo, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigId,
};
pub use security::{
    ApiKeySecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow, MutualTlsSecurityScheme,
    OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme, PasswordOAuthFlow, ScopeList,
    Scopes, SecurityRequirement, SecurityScheme,
};
pub use task::{Artifact, Task, TaskState, TaskStatus};
pub use timestamp::{InvalidTimestamp, Timestamp};

/// A `google.protobuf.Struct`: a JSON object.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// A string was not the name of any value of the named enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownEnumValue(pub &'static str);

impl std::fmt::Display for UnknownEnumValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} value", self.0)
    }
}

impl std::error::Error for UnknownEnumValue {}
