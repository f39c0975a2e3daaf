//! Request and response messages of the eleven A2A operations.

use serde::{Deserialize, Serialize};

use super::serde_util::{is_false, null_default};
use super::{Message, Metadata, Task, TaskState, Timestamp};

/// Parameters of SendMessage and SendStreamingMessage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// The message.
    #[serde(default, deserialize_with = "null_default")]
    pub message: Message,
    /// Send options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Options of a send.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts for output parts.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "accepted_output_modes",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook to register for the new task.
    #[serde(
        default,
        alias = "task_push_notification_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// Most recent messages to return in the task's history.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return as soon as the task exists instead of waiting.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "return_immediately",
        skip_serializing_if = "is_false"
    )]
    pub return_immediately: bool,
}

/// Parameters of GetTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Task id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Most recent messages to return.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
}

/// Parameters of ListTasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Only tasks of this context.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "context_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Only tasks in this state (`Unspecified`: any).
    #[serde(default, skip_serializing_if = "is_unspecified")]
    pub status: TaskState,
    /// Page size, 1..=100; 50 when unset.
    #[serde(default, alias = "page_size", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Token from a previous page.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "page_token",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
    /// Most recent messages per task.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this.
    #[serde(
        default,
        alias = "status_timestamp_after",
        alias = "lastUpdatedAfter",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (omitted when false or unset).
    #[serde(
        default,
        alias = "include_artifacts",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
}

fn is_unspecified(s: &TaskState) -> bool {
    *s == TaskState::Unspecified
}

/// Result of ListTasks; every field is always present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The page.
    #[serde(default, deserialize_with = "null_default")]
    pub tasks: Vec<Task>,
    /// Token of the next page; empty on the last page.
    #[serde(default, deserialize_with = "null_default", alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(default, deserialize_with = "null_default", alias = "page_size")]
    pub page_size: i32,
    /// Matching tasks before pagination.
    #[serde(default, deserialize_with = "null_default", alias = "total_size")]
    pub total_size: i32,
}

/// Parameters of CancelTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Task id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Parameters of SubscribeToTask.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Task id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
}

/// A webhook registered for a task (create input, get result, list item).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Config id; assigned by the server when empty.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub id: String,
    /// Task id.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "task_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub task_id: String,
    /// Webhook URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// Opaque token for the receiver.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub token: String,
    /// Credentials to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// Credentials for a push notification.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AuthenticationInfo {
    /// IANA auth scheme, e.g. `Bearer`.
    #[serde(default, deserialize_with = "null_default")]
    pub scheme: String,
    /// Credentials for the scheme.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub credentials: String,
}

/// Parameters of GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigId {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Task id.
    #[serde(default, deserialize_with = "null_default", alias = "task_id")]
    pub task_id: String,
    /// Config id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
}

/// Parameters of GetTaskPushNotificationConfig.
pub type GetTaskPushNotificationConfigRequest = TaskPushNotificationConfigId;
/// Parameters of DeleteTaskPushNotificationConfig.
pub type DeleteTaskPushNotificationConfigRequest = TaskPushNotificationConfigId;

/// Parameters of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Task id.
    #[serde(default, deserialize_with = "null_default", alias = "task_id")]
    pub task_id: String,
    /// Page size; 0 means the server's default.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "page_size",
        skip_serializing_if = "is_zero"
    )]
    pub page_size: i32,
    /// Token from a previous page.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "page_token",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Result of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Token of the next page; empty on the last page.
    #[serde(default, deserialize_with = "null_default", alias = "next_page_token")]
    pub next_page_token: String,
}

/// Parameters of GetExtendedAgentCard.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetExtendedAgentCardRequest {
    /// Tenant; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
}
