//! The 0.3 JSON-RPC methods: names, parameters and results to and from
//! the 1.0 operations.

use serde_json::{Map, Value, json};

use super::card;
use super::objects::{
    copy, copy_all, event_from_v10, event_to_v10, message_from_v10, message_to_v10, obj,
    push_config_from_v10, push_config_to_v10, task_from_v10, task_push_config_from_v10,
    task_to_v10,
};

/// 0.3 method name, 1.0 method name.
const METHODS: &[(&str, &str)] = &[
    ("message/send", "SendMessage"),
    ("message/stream", "SendStreamingMessage"),
    ("tasks/get", "GetTask"),
    ("tasks/cancel", "CancelTask"),
    ("tasks/resubscribe", "SubscribeToTask"),
    (
        "tasks/pushNotificationConfig/set",
        "CreateTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/get",
        "GetTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/list",
        "ListTaskPushNotificationConfigs",
    ),
    (
        "tasks/pushNotificationConfig/delete",
        "DeleteTaskPushNotificationConfig",
    ),
    ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
];

/// The 1.0 method of a 0.3 one (`None` for a method 0.3 does not have).
pub fn method_to_v10(method: &str) -> Option<&'static str> {
    METHODS.iter().find(|(m, _)| *m == method).map(|(_, v)| *v)
}

/// The 0.3 method of a 1.0 one (`None` for ListTasks and extension
/// methods, which 0.3 does not have).
pub fn method_from_v10(method: &str) -> Option<&'static str> {
    METHODS.iter().find(|(_, v)| *v == method).map(|(m, _)| *m)
}

fn send_config_to_v10(c: &Value) -> Value {
    let c = obj(c);
    let mut out = Map::new();
    copy_all(&c, &mut out, &["acceptedOutputModes", "historyLength"]);
    if let Some(p) = c.get("pushNotificationConfig").filter(|p| p.is_object()) {
        out.insert(
            "taskPushNotificationConfig".into(),
            push_config_to_v10(&Value::Null, p),
        );
    }
    if let Some(b) = c.get("blocking").and_then(Value::as_bool) {
        out.insert("returnImmediately".into(), (!b).into());
    }
    Value::Object(out)
}

fn send_config_from_v10(c: &Value) -> Value {
    let c = obj(c);
    let mut out = Map::new();
    copy_all(&c, &mut out, &["acceptedOutputModes", "historyLength"]);
    if let Some(p) = c.get("taskPushNotificationConfig") {
        out.insert("pushNotificationConfig".into(), push_config_from_v10(p));
    }
    let immediately = c
        .get("returnImmediately")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    out.insert("blocking".into(), (!immediately).into());
    Value::Object(out)
}

/// The 1.0 parameters of a 0.3 call of `method` (a 0.3 method name).
/// A missing `blocking` stays missing: blocking, as 0.3 JSON-RPC servers
/// read it.
pub fn params_to_v10(method: &str, params: &Value) -> Value {
    let p = obj(params);
    let mut out = Map::new();
    match method {
        "message/send" | "message/stream" => {
            if let Some(m) = p.get("message") {
                out.insert("message".into(), message_to_v10(m));
            }
            if let Some(c) = p.get("configuration").filter(|c| c.is_object()) {
                out.insert("configuration".into(), send_config_to_v10(c));
            }
            copy(&p, &mut out, "metadata", "metadata");
        }
        "tasks/get" => copy_all(&p, &mut out, &["id", "historyLength"]),
        "tasks/cancel" => copy_all(&p, &mut out, &["id", "metadata"]),
        "tasks/resubscribe" => copy(&p, &mut out, "id", "id"),
        "tasks/pushNotificationConfig/set" => {
            let task = p.get("taskId").cloned().unwrap_or(Value::Null);
            let c = p.get("pushNotificationConfig").unwrap_or(&Value::Null);
            return push_config_to_v10(&task, c);
        }
        "tasks/pushNotificationConfig/get" | "tasks/pushNotificationConfig/delete" => {
            copy(&p, &mut out, "id", "taskId");
            copy(&p, &mut out, "id", "id");
            copy(&p, &mut out, "pushNotificationConfigId", "id");
        }
        "tasks/pushNotificationConfig/list" => copy(&p, &mut out, "id", "taskId"),
        "agent/getAuthenticatedExtendedCard" => {}
        _ => return params.clone(),
    }
    Value::Object(out)
}

/// The 0.3 parameters of a 1.0 call of `method` (a 1.0 method name).
pub fn params_from_v10(method: &str, params: &Value) -> Value {
    let p = obj(params);
    let mut out = Map::new();
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            if let Some(m) = p.get("message") {
                out.insert("message".into(), message_from_v10(m));
            }
            let c = p.get("configuration").cloned().unwrap_or(Value::Null);
            out.insert("configuration".into(), send_config_from_v10(&c));
            copy(&p, &mut out, "metadata", "metadata");
        }
        "GetTask" => copy_all(&p, &mut out, &["id", "historyLength"]),
        "CancelTask" => copy_all(&p, &mut out, &["id", "metadata"]),
        "SubscribeToTask" => copy(&p, &mut out, "id", "id"),
        "CreateTaskPushNotificationConfig" => return task_push_config_from_v10(params),
        "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
            copy(&p, &mut out, "taskId", "id");
            copy(&p, &mut out, "id", "pushNotificationConfigId");
        }
        "ListTaskPushNotificationConfigs" => copy(&p, &mut out, "taskId", "id"),
        "GetExtendedAgentCard" => {}
        _ => return params.clone(),
    }
    Value::Object(out)
}

/// The 0.3 result of a 1.0 `result` answering the 0.3 `method`; a stream
/// event of `message/stream` or `tasks/resubscribe` too.
pub fn result_from_v10(method: &str, result: &Value) -> Value {
    match method {
        "message/send" | "message/stream" | "tasks/resubscribe" => event_from_v10(result),
        "tasks/get" | "tasks/cancel" => task_from_v10(result),
        "tasks/pushNotificationConfig/set" | "tasks/pushNotificationConfig/get" => {
            task_push_config_from_v10(result)
        }
        "tasks/pushNotificationConfig/list" => Value::Array(
            result
                .get("configs")
                .and_then(Value::as_array)
                .map(|cs| cs.iter().map(task_push_config_from_v10).collect())
                .unwrap_or_default(),
        ),
        "tasks/pushNotificationConfig/delete" => Value::Null,
        "agent/getAuthenticatedExtendedCard" => card::card_from_v10(result),
        _ => result.clone(),
    }
}

fn task_push_config_to_v10(c: &Value) -> Value {
    let task = c.get("taskId").cloned().unwrap_or(Value::Null);
    push_config_to_v10(
        &task,
        c.get("pushNotificationConfig").unwrap_or(&Value::Null),
    )
}

/// The 1.0 result of a 0.3 `result` answering the 1.0 `method`; a stream
/// event of SendStreamingMessage or SubscribeToTask too.
pub fn result_to_v10(method: &str, result: &Value) -> Value {
    match method {
        "SendMessage" | "SendStreamingMessage" | "SubscribeToTask" => event_to_v10(result),
        "GetTask" | "CancelTask" => task_to_v10(result),
        "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => {
            task_push_config_to_v10(result)
        }
        "ListTaskPushNotificationConfigs" => {
            let list = result.as_array().cloned().unwrap_or_default();
            let configs: Vec<Value> = list.iter().map(task_push_config_to_v10).collect();
            json!({ "configs": configs })
        }
        "DeleteTaskPushNotificationConfig" => json!({}),
        "GetExtendedAgentCard" => card::card_to_v10(result),
        _ => result.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_both_ways() {
        for (m03, m10) in METHODS {
            assert_eq!(method_to_v10(m03), Some(*m10));
            assert_eq!(method_from_v10(m10), Some(*m03));
        }
        assert_eq!(method_from_v10("ListTasks"), None);
        assert_eq!(method_to_v10("SendMessage"), None);
    }

    #[test]
    fn send_params() {
        let p03 = json!({"message": {"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]},
            "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}});
        let p10 = params_to_v10("message/send", &p03);
        assert_eq!(
            p10,
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                "configuration": {"acceptedOutputModes": ["text/plain"], "returnImmediately": true}})
        );
        let back = params_from_v10("SendMessage", &p10);
        assert_eq!(back["message"], p03["message"]);
        assert_eq!(back["configuration"]["blocking"], false);
        // Without a configuration, 0.3 JSON-RPC blocks: nothing is said.
        let bare = params_to_v10("message/send", &json!({"message": {"role": "user"}}));
        assert!(bare.get("configuration").is_none());
    }

    #[test]
    fn push_config_params_and_results() {
        let get = params_to_v10(
            "tasks/pushNotificationConfig/get",
            &json!({"id": "t", "pushNotificationConfigId": "p"}),
        );
        assert_eq!(get, json!({"taskId": "t", "id": "p"}));
        let get_first = params_to_v10("tasks/pushNotificationConfig/get", &json!({"id": "t"}));
        assert_eq!(get_first, json!({"taskId": "t", "id": "t"}));
        assert_eq!(
            params_from_v10("GetTaskPushNotificationConfig", &get),
            json!({"id": "t", "pushNotificationConfigId": "p"})
        );
        let list10 = json!({"configs": [{"taskId": "t", "id": "p", "url": "https://h"}]});
        let list03 = result_from_v10("tasks/pushNotificationConfig/list", &list10);
        assert_eq!(list03[0]["pushNotificationConfig"]["url"], "https://h");
        assert_eq!(
            result_to_v10("ListTaskPushNotificationConfigs", &list03),
            list10
        );
        assert_eq!(
            result_from_v10("tasks/pushNotificationConfig/delete", &json!({})),
            Value::Null
        );
    }
}
