//! Capability validation (a2a-spec.md §4.8): an operation whose capability the
//! card does not declare fails before the core is called. Shared by the bindings.

use crate::types::AgentCapabilities;
use crate::{A2aError, ErrorKind, Operation};

/// The error for `op` if the card's capabilities do not allow it.
///
/// | undeclared            | operations                          | error  |
/// |-----------------------|-------------------------------------|--------|
/// | `streaming`           | SendStreamingMessage, SubscribeToTask | −32004 |
/// | `pushNotifications`   | the four push-config operations     | −32003 |
/// | `extendedAgentCard`   | GetExtendedAgentCard                | −32004 |
pub(crate) fn check(caps: &AgentCapabilities, op: &Operation) -> Result<(), A2aError> {
    let missing = match op {
        Operation::SendStreamingMessage(_) | Operation::SubscribeToTask(_) => {
            (!caps.streaming()).then_some(ErrorKind::UnsupportedOperation)
        }
        Operation::CreateTaskPushNotificationConfig(_)
        | Operation::GetTaskPushNotificationConfig(_)
        | Operation::ListTaskPushNotificationConfigs(_)
        | Operation::DeleteTaskPushNotificationConfig(_) => {
            (!caps.push_notifications()).then_some(ErrorKind::PushNotificationNotSupported)
        }
        Operation::GetExtendedAgentCard(_) => {
            (!caps.extended_agent_card()).then_some(ErrorKind::UnsupportedOperation)
        }
        _ => None,
    };
    missing.map_or(Ok(()), |k| Err(A2aError::new(k)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        GetExtendedAgentCardRequest, GetTaskRequest, SendMessageRequest,
        TaskPushNotificationConfig, TaskPushNotificationConfigId,
    };

    fn code(caps: &AgentCapabilities, op: &Operation) -> Option<i64> {
        check(caps, op).err().map(|e| e.kind().jsonrpc_code())
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
