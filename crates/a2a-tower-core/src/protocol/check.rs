//! The operation-level rules of the protocol, written once: the bindings call
//! them before the core, and the task engine calls them again for callers that
//! reach it without a binding (a host's own `Service<A2aRequest>` stack).
//!
//! - [`operation`]: what a2a-spec.md marks required (§3.7) and the ranges it
//!   gives (§3.8 `historyLength`, §4.4 `pageSize`). A failure is InvalidParams
//!   (JSON-RPC −32602, REST 400) with one BadRequest field violation per problem.
//! - [`capability`]: an operation whose capability the card does not declare
//!   fails before the core is called (§4.8).
//!
//! Only what the spec requires is checked here; anything else (a role, a
//! media type, whether a task exists) is the core's decision.

use crate::types::{AgentCapabilities, Message, SendMessageRequest};
use crate::{A2aError, ErrorKind, Operation, OperationKind};

/// Field violations collected for one request.
#[derive(Default)]
pub struct Violations(Vec<(&'static str, &'static str)>);

impl Violations {
    pub fn check(&mut self, ok: bool, field: &'static str, description: &'static str) {
        if !ok {
            self.0.push((field, description));
        }
    }

    fn history_length(&mut self, value: Option<i32>, field: &'static str) {
        self.check(value.is_none_or(|n| n >= 0), field, "must not be negative");
    }

    fn required(&mut self, value: &str, field: &'static str) {
        self.check(!value.is_empty(), field, "is required");
    }

    pub fn into_result(self) -> Result<(), A2aError> {
        if self.0.is_empty() {
            return Ok(());
        }
        Err(self
            .0
            .into_iter()
            .fold(A2aError::new(ErrorKind::InvalidParams), |e, (f, d)| {
                e.with_violation(f, d)
            }))
    }
}

fn send(v: &mut Violations, r: &SendMessageRequest) {
    if r.message == Message::default() {
        v.check(false, "message", "is required");
    } else {
        v.required(&r.message.message_id, "message.messageId");
        v.check(
            !r.message.parts.is_empty(),
            "message.parts",
            "must not be empty",
        );
    }
    if let Some(c) = &r.configuration {
        v.history_length(c.history_length, "configuration.historyLength");
    }
}

/// Checks the parameters of `op` against the spec's required fields and ranges.
pub fn operation(op: &Operation) -> Result<(), A2aError> {
    let mut v = Violations::default();
    match op {
        Operation::SendMessage(r) | Operation::SendStreamingMessage(r) => send(&mut v, r),
        Operation::GetTask(r) => {
            v.required(&r.id, "id");
            v.history_length(r.history_length, "historyLength");
        }
        Operation::ListTasks(r) => {
            v.check(
                r.page_size.is_none_or(|n| (1..=100).contains(&n)),
                "pageSize",
                "must be between 1 and 100",
            );
            v.history_length(r.history_length, "historyLength");
        }
        Operation::CancelTask(r) => v.required(&r.id, "id"),
        Operation::SubscribeToTask(r) => v.required(&r.id, "id"),
        Operation::CreateTaskPushNotificationConfig(r) => {
            v.required(&r.task_id, "taskId");
            v.required(&r.url, "url");
        }
        Operation::GetTaskPushNotificationConfig(r)
        | Operation::DeleteTaskPushNotificationConfig(r) => {
            v.required(&r.task_id, "taskId");
            v.required(&r.id, "id");
        }
        Operation::ListTaskPushNotificationConfigs(r) => {
            v.required(&r.task_id, "taskId");
            v.check(
                (0..=100).contains(&r.page_size),
                "pageSize",
                "must be between 1 and 100 (0: the default)",
            );
        }
        // An extension's parameters are its core's to check.
        Operation::GetExtendedAgentCard(_) | Operation::Extension(_) => {}
    }
    v.into_result()
}

/// The error for `op` if the card's capabilities do not allow it: the
/// operation table's [`Capability`](crate::Capability) of the operation, undeclared, is its
/// [`Capability::missing_error`](crate::Capability::missing_error).
///
/// | undeclared            | operations                          | error  |
/// |-----------------------|-------------------------------------|--------|
/// | `streaming`           | SendStreamingMessage, SubscribeToTask | −32004 |
/// | `pushNotifications`   | the four push-config operations     | −32003 |
/// | `extendedAgentCard`   | GetExtendedAgentCard                | −32004 |
pub fn capability(caps: &AgentCapabilities, op: &Operation) -> Result<(), A2aError> {
    match op.kind().and_then(OperationKind::capability) {
        Some(cap) if !cap.declared(caps) => Err(A2aError::new(cap.missing_error())),
        _ => Ok(()),
    }
}

/// What a core checks before anything else, for callers that reach it
/// without a binding: the card's capabilities first (they decide what
/// exists), then the parameters.
pub fn before_core(caps: &AgentCapabilities, op: &Operation) -> Result<(), A2aError> {
    capability(caps, op)?;
    operation(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        GetExtendedAgentCardRequest, TaskPushNotificationConfig, TaskPushNotificationConfigId,
    };
    use crate::types::{
        GetTaskRequest, ListTasksRequest, SendMessageConfiguration, SubscribeToTaskRequest,
    };

    fn fields(op: Operation) -> Vec<String> {
        match operation(&op) {
            Ok(()) => vec![],
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::InvalidParams);
                e.violations().iter().map(|(f, _)| f.clone()).collect()
            }
        }
    }

    #[test]
    fn send_message_requires_message_id_and_parts() {
        // §3.7: SendMessageRequest.message (R); §3.2: messageId, parts.
        let ok = SendMessageRequest {
            message: Message::user("m-1", "hi"),
            ..Default::default()
        };
        assert!(fields(Operation::SendMessage(ok.clone())).is_empty());
        assert_eq!(
            fields(Operation::SendMessage(SendMessageRequest::default())),
            ["message"]
        );
        let mut bad = ok.clone();
        bad.message.message_id.clear();
        bad.message.parts.clear();
        bad.configuration = Some(SendMessageConfiguration {
            history_length: Some(-1),
            ..Default::default()
        });
        assert_eq!(
            fields(Operation::SendStreamingMessage(bad)),
            [
                "message.messageId",
                "message.parts",
                "configuration.historyLength"
            ]
        );
    }

    #[test]
    fn ranges_and_ids() {
        // §3.8 negative historyLength; §4.4 pageSize 1..=100.
        let get = |id: &str, h| {
            Operation::GetTask(GetTaskRequest {
                id: id.into(),
                history_length: h,
                ..Default::default()
            })
        };
        assert!(fields(get("t", Some(0))).is_empty());
        assert_eq!(fields(get("", Some(-1))), ["id", "historyLength"]);
        let list = |n| {
            Operation::ListTasks(ListTasksRequest {
                page_size: n,
                ..Default::default()
            })
        };
        assert!(fields(list(None)).is_empty());
        assert!(fields(list(Some(1))).is_empty());
        assert!(fields(list(Some(100))).is_empty());
        assert_eq!(fields(list(Some(0))), ["pageSize"]);
        assert_eq!(fields(list(Some(101))), ["pageSize"]);
        assert_eq!(
            fields(Operation::SubscribeToTask(SubscribeToTaskRequest::default())),
            ["id"]
        );
    }

    /// The operation table's required parameters are what an operation
    /// with every field at its default is refused for.
    #[test]
    fn required_fields_are_the_table() {
        use crate::types::{
            CancelTaskRequest, ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfigId,
        };
        let empty = [
            Operation::SendMessage(SendMessageRequest::default()),
            Operation::SendStreamingMessage(SendMessageRequest::default()),
            Operation::GetTask(GetTaskRequest::default()),
            Operation::ListTasks(ListTasksRequest::default()),
            Operation::CancelTask(CancelTaskRequest::default()),
            Operation::SubscribeToTask(SubscribeToTaskRequest::default()),
            Operation::CreateTaskPushNotificationConfig(TaskPushNotificationConfig::default()),
            Operation::GetTaskPushNotificationConfig(TaskPushNotificationConfigId::default()),
            Operation::ListTaskPushNotificationConfigs(
                ListTaskPushNotificationConfigsRequest::default(),
            ),
            Operation::DeleteTaskPushNotificationConfig(TaskPushNotificationConfigId::default()),
            Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default()),
        ];
        let kinds: Vec<_> = empty.iter().filter_map(Operation::kind).collect();
        assert_eq!(kinds, OperationKind::ALL);
        for op in empty {
            let kind = op.kind().unwrap();
            assert_eq!(fields(op), kind.required_params(), "{kind}");
        }
    }

    fn code(caps: &AgentCapabilities, op: &Operation) -> Option<i64> {
        capability(caps, op).err().map(|e| e.kind().jsonrpc_code())
    }

    #[test]
    fn section_4_8_table() {
        let none = AgentCapabilities::default();
        let all = AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extended_agent_card: Some(true),
            ..Default::default()
        };
        let declared_false = AgentCapabilities {
            streaming: Some(false),
            push_notifications: Some(false),
            extended_agent_card: Some(false),
            ..Default::default()
        };
        let cases = [
            (
                Operation::SendStreamingMessage(SendMessageRequest::default()),
                -32004,
            ),
            (Operation::SubscribeToTask(Default::default()), -32004),
            (
                Operation::CreateTaskPushNotificationConfig(TaskPushNotificationConfig::default()),
                -32003,
            ),
            (
                Operation::GetTaskPushNotificationConfig(TaskPushNotificationConfigId::default()),
                -32003,
            ),
            (
                Operation::ListTaskPushNotificationConfigs(Default::default()),
                -32003,
            ),
            (
                Operation::DeleteTaskPushNotificationConfig(Default::default()),
                -32003,
            ),
            (
                Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default()),
                -32004,
            ),
        ];
        for (op, want) in &cases {
            assert_eq!(code(&none, op), Some(*want), "{}", op.method());
            assert_eq!(code(&declared_false, op), Some(*want), "{}", op.method());
            assert_eq!(code(&all, op), None, "{}", op.method());
        }
        let get = Operation::GetTask(GetTaskRequest::default());
        assert_eq!(code(&none, &get), None);
    }
}
