//! Helpers of the AFL targets.

use a2a_tower::Operation;
use a2a_tower::jsonrpc::codec::Id;
use serde_json::{Value, json};

/// The canonical JSON-RPC request body of `op` under `id`.
pub fn envelope(id: &Id, op: &Operation) -> Vec<u8> {
    let params = match op {
        Operation::SendMessage(r) | Operation::SendStreamingMessage(r) => serde_json::to_value(r),
        Operation::GetTask(r) => serde_json::to_value(r),
        Operation::ListTasks(r) => serde_json::to_value(r),
        Operation::CancelTask(r) => serde_json::to_value(r),
        Operation::SubscribeToTask(r) => serde_json::to_value(r),
        Operation::CreateTaskPushNotificationConfig(r) => serde_json::to_value(r),
        Operation::GetTaskPushNotificationConfig(r)
        | Operation::DeleteTaskPushNotificationConfig(r) => serde_json::to_value(r),
        Operation::ListTaskPushNotificationConfigs(r) => serde_json::to_value(r),
        Operation::GetExtendedAgentCard(r) => serde_json::to_value(r),
        Operation::Extension(r) => Ok(Value::Object(r.params.clone())),
        _ => Ok(json!({})),
    }
    .expect("params serialize");
    let body =
        json!({"jsonrpc": "2.0", "id": id.to_value(), "method": op.method(), "params": params});
    serde_json::to_vec(&body).expect("a body serializes")
}
