//! The 0.3 HTTP+JSON routes (under `<interface URL>/v1`) and bodies to
//! and from the 1.0 ones.

use serde_json::{Value, json};

use super::{card, proto};
use crate::OperationKind;

/// The 0.3 operation of an HTTP+JSON request: `path` is the request path
/// after the interface's base (`/v1/...`). Gives the operation and the 1.0
/// path (the same without `/v1`; `/v1/card` is `/extendedAgentCard`), or
/// `None` for a path that is no 0.3 route.
pub fn route_to_v10(method: &http::Method, path: &str) -> Option<(OperationKind, String)> {
    use OperationKind as K;
    let rest = path.strip_prefix("/v1")?;
    let get = method == http::Method::GET;
    let post = method == http::Method::POST;
    let kind = match rest {
        "/message:send" if post => K::SendMessage,
        "/message:stream" if post => K::SendStreamingMessage,
        "/card" if get => return Some((K::GetExtendedAgentCard, "/extendedAgentCard".into())),
        _ => {
            let tail = rest.strip_prefix("/tasks/")?;
            let (id, more) = tail.split_once('/').unwrap_or((tail, ""));
            match (more, id) {
                ("", id) if post && id.ends_with(":cancel") => K::CancelTask,
                ("", id) if (get || post) && id.ends_with(":subscribe") => K::SubscribeToTask,
                ("", _) if get => K::GetTask,
                ("pushNotificationConfigs", _) if post => K::CreateTaskPushNotificationConfig,
                ("pushNotificationConfigs", _) if get => K::ListTaskPushNotificationConfigs,
                (c, _) if c.starts_with("pushNotificationConfigs/") && get => {
                    K::GetTaskPushNotificationConfig
                }
                (c, _)
                    if c.starts_with("pushNotificationConfigs/")
                        && method == http::Method::DELETE =>
                {
                    K::DeleteTaskPushNotificationConfig
                }
                _ => return None,
            }
        }
    };
    Some((kind, rest.to_owned()))
}

/// The 0.3 path of a 1.0 HTTP+JSON path (for a client).
pub fn path_from_v10(path: &str) -> String {
    if path == "/extendedAgentCard" {
        "/v1/card".to_owned()
    } else {
        format!("/v1{path}")
    }
}

/// The task id in a 1.0 `/tasks/{id}...` path (still percent-encoded).
fn task_of(path: &str) -> &str {
    let tail = path.strip_prefix("/tasks/").unwrap_or("");
    let id = tail.split('/').next().unwrap_or("");
    id.split(':').next().unwrap_or("")
}

/// `%XX` escapes decoded (an invalid sequence is kept as it is).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The 1.0 body of a 0.3 request body of `kind` at the 1.0 `path`.
pub fn request_to_v10(kind: OperationKind, path: &str, body: &Value) -> Value {
    match kind {
        OperationKind::SendMessage | OperationKind::SendStreamingMessage => {
            proto::send_to_v10(body)
        }
        OperationKind::CreateTaskPushNotificationConfig => {
            let task = percent_decode(task_of(path));
            let mut c = proto::push_config_to_v10(&task, body);
            if let Some(o) = c.as_object_mut() {
                o.remove("taskId");
            }
            c
        }
        _ => body.clone(),
    }
}

/// The 0.3 body of a 1.0 request body of `kind` (for a client).
pub fn request_from_v10(kind: OperationKind, body: &Value) -> Value {
    match kind {
        OperationKind::SendMessage | OperationKind::SendStreamingMessage => {
            proto::send_from_v10(body)
        }
        OperationKind::CreateTaskPushNotificationConfig => {
            let mut c = proto::push_config_from_v10(body);
            c["pushNotificationConfig"]
                .as_object_mut()
                .map(|o| o.remove("taskId"));
            c
        }
        _ => body.clone(),
    }
}

/// The 0.3 body of a 1.0 answer (or stream event) of `kind`.
pub fn response_from_v10(kind: OperationKind, body: &Value) -> Value {
    use OperationKind as K;
    match kind {
        K::SendMessage | K::SendStreamingMessage | K::SubscribeToTask => {
            proto::event_from_v10(body)
        }
        K::GetTask | K::CancelTask => proto::task_from_v10(body),
        K::CreateTaskPushNotificationConfig | K::GetTaskPushNotificationConfig => {
            proto::push_config_from_v10(body)
        }
        K::ListTaskPushNotificationConfigs => {
            let configs: Vec<Value> = body
                .get("configs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(proto::push_config_from_v10)
                .collect();
            let mut out = json!({ "configs": configs });
            if let Some(t) = body.get("nextPageToken").filter(|t| *t != "") {
                out["nextPageToken"] = t.clone();
            }
            out
        }
        K::GetExtendedAgentCard => card::card_from_v10(body),
        _ => body.clone(),
    }
}

/// The 1.0 body of a 0.3 answer (or stream event) of `kind` (for a client).
pub fn response_to_v10(kind: OperationKind, body: &Value) -> Value {
    use OperationKind as K;
    match kind {
        K::SendMessage | K::SendStreamingMessage | K::SubscribeToTask => proto::event_to_v10(body),
        K::GetTask | K::CancelTask => proto::task_to_v10(body),
        K::CreateTaskPushNotificationConfig | K::GetTaskPushNotificationConfig => {
            proto::push_config_name_to_v10(body)
        }
        K::ListTaskPushNotificationConfigs => {
            let configs: Vec<Value> = body
                .get("configs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(proto::push_config_name_to_v10)
                .collect();
            json!({ "configs": configs })
        }
        K::GetExtendedAgentCard => card::card_to_v10(body),
        _ => body.clone(),
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;

    #[test]
    fn routes() {
        use OperationKind as K;
        let r = |m: Method, p: &str| route_to_v10(&m, p);
        assert_eq!(
            r(Method::POST, "/v1/message:send"),
            Some((K::SendMessage, "/message:send".into()))
        );
        assert_eq!(
            r(Method::POST, "/v1/message:stream").unwrap().0,
            K::SendStreamingMessage
        );
        assert_eq!(
            r(Method::GET, "/v1/tasks/t-1").unwrap(),
            (K::GetTask, "/tasks/t-1".into())
        );
        assert_eq!(
            r(Method::POST, "/v1/tasks/t-1:cancel").unwrap().0,
            K::CancelTask
        );
        assert_eq!(
            r(Method::POST, "/v1/tasks/t-1:subscribe").unwrap().0,
            K::SubscribeToTask
        );
        assert_eq!(
            r(Method::GET, "/v1/tasks/t-1:subscribe").unwrap().0,
            K::SubscribeToTask
        );
        assert_eq!(
            r(Method::POST, "/v1/tasks/t/pushNotificationConfigs")
                .unwrap()
                .0,
            K::CreateTaskPushNotificationConfig
        );
        assert_eq!(
            r(Method::GET, "/v1/tasks/t/pushNotificationConfigs")
                .unwrap()
                .0,
            K::ListTaskPushNotificationConfigs
        );
        assert_eq!(
            r(Method::DELETE, "/v1/tasks/t/pushNotificationConfigs/p")
                .unwrap()
                .0,
            K::DeleteTaskPushNotificationConfig
        );
        assert_eq!(
            r(Method::GET, "/v1/card").unwrap(),
            (K::GetExtendedAgentCard, "/extendedAgentCard".into())
        );
        assert_eq!(r(Method::GET, "/message:send"), None);
        assert_eq!(r(Method::PUT, "/v1/tasks/t"), None);
        assert_eq!(path_from_v10("/tasks/t:cancel"), "/v1/tasks/t:cancel");
        assert_eq!(path_from_v10("/extendedAgentCard"), "/v1/card");
    }

    #[test]
    fn push_config_bodies() {
        let body = json!({"name": "tasks/t%2F1/pushNotificationConfigs/p",
            "pushNotificationConfig": {"id": "p", "url": "https://h/w"}});
        let v10 = request_to_v10(
            OperationKind::CreateTaskPushNotificationConfig,
            "/tasks/t%2F1/pushNotificationConfigs",
            &body,
        );
        assert_eq!(v10, json!({"id": "p", "url": "https://h/w"}));
        let no_id = json!({"pushNotificationConfig": {"url": "https://h/w"}});
        let v10b = request_to_v10(
            OperationKind::CreateTaskPushNotificationConfig,
            "/tasks/t%2F1/pushNotificationConfigs",
            &no_id,
        );
        assert_eq!(v10b["id"], "t/1");
        let back = request_from_v10(OperationKind::CreateTaskPushNotificationConfig, &v10);
        assert_eq!(back["pushNotificationConfig"]["url"], "https://h/w");
        let answer = json!({"taskId": "t", "id": "p", "url": "https://h/w"});
        let a03 = response_from_v10(OperationKind::GetTaskPushNotificationConfig, &answer);
        assert_eq!(a03["name"], "tasks/t/pushNotificationConfigs/p");
        assert_eq!(
            response_to_v10(OperationKind::GetTaskPushNotificationConfig, &a03),
            answer
        );
    }
}
