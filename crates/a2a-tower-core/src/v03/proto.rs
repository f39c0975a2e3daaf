//! The 0.3 HTTP+JSON objects (the ProtoJSON of the 0.3 `a2a.proto`, as
//! the 0.3 SDKs send and read them: `content` for a message's parts,
//! `file`/`data` part wrappers, `TASK_STATE_CANCELLED`, a push config
//! named `tasks/{id}/pushNotificationConfigs/{configId}`) to and from the
//! 1.0 JSON ones.

use serde_json::{Map, Value, json};

use super::objects::{copy, copy_all, is_final_v10, map_list, obj};

/// A 0.3 proto part as a 1.0 part.
pub fn part_to_v10(p: &Value) -> Value {
    let p = obj(p);
    let mut out = Map::new();
    if let Some(f) = p.get("file").and_then(Value::as_object) {
        copy(f, &mut out, "fileWithBytes", "raw");
        copy(f, &mut out, "file_with_bytes", "raw");
        copy(f, &mut out, "fileWithUri", "url");
        copy(f, &mut out, "file_with_uri", "url");
        copy(f, &mut out, "mimeType", "mediaType");
        copy(f, &mut out, "mime_type", "mediaType");
        copy(f, &mut out, "name", "filename");
    } else if let Some(d) = p.get("data") {
        let inner = d.get("data").cloned().unwrap_or(Value::Object(Map::new()));
        out.insert("data".into(), inner);
    } else {
        copy(&p, &mut out, "text", "text");
    }
    copy(&p, &mut out, "metadata", "metadata");
    Value::Object(out)
}

/// A 1.0 part as a 0.3 proto part (a file's name and a part's metadata
/// have no 0.3 proto field and are dropped; data that is not an object is
/// wrapped as `{"value": …}`).
pub fn part_from_v10(p: &Value) -> Value {
    let p = obj(p);
    if let Some(t) = p.get("text") {
        return json!({ "text": t });
    }
    if p.contains_key("raw") || p.contains_key("url") {
        let mut f = Map::new();
        copy(&p, &mut f, "raw", "fileWithBytes");
        copy(&p, &mut f, "url", "fileWithUri");
        copy(&p, &mut f, "mediaType", "mimeType");
        return json!({ "file": f });
    }
    let data = p.get("data").cloned().unwrap_or(Value::Null);
    let data = if data.is_object() {
        data
    } else {
        json!({ "value": data })
    };
    json!({ "data": { "data": data } })
}

const MESSAGE_KEYS: &[&str] = &["messageId", "contextId", "taskId", "metadata", "extensions"];

/// A 0.3 proto message (`content`) as a 1.0 message (`parts`).
pub fn message_to_v10(m: &Value) -> Value {
    let m = obj(m);
    let mut out = Map::new();
    copy_all(&m, &mut out, MESSAGE_KEYS);
    copy(&m, &mut out, "message_id", "messageId");
    copy(&m, &mut out, "context_id", "contextId");
    copy(&m, &mut out, "task_id", "taskId");
    copy(&m, &mut out, "role", "role");
    map_list(&m, &mut out, "content", "parts", part_to_v10);
    map_list(&m, &mut out, "parts", "parts", part_to_v10);
    Value::Object(out)
}

/// A 1.0 message as a 0.3 proto message.
pub fn message_from_v10(m: &Value) -> Value {
    let m = obj(m);
    let mut out = Map::new();
    copy_all(&m, &mut out, MESSAGE_KEYS);
    copy(&m, &mut out, "role", "role");
    out.insert("content".into(), Value::Array(Vec::new()));
    map_list(&m, &mut out, "parts", "content", part_from_v10);
    Value::Object(out)
}

fn state_to_v10(s: &Value) -> Value {
    match s.as_str() {
        Some("TASK_STATE_CANCELLED") => "TASK_STATE_CANCELED".into(),
        _ => s.clone(),
    }
}

fn state_from_v10(s: &Value) -> Value {
    match s.as_str() {
        Some("TASK_STATE_CANCELED") => "TASK_STATE_CANCELLED".into(),
        _ => s.clone(),
    }
}

fn status_to_v10(s: &Value) -> Value {
    let s = obj(s);
    let mut out = Map::new();
    if let Some(st) = s.get("state") {
        out.insert("state".into(), state_to_v10(st));
    }
    let update = s.get("message").or_else(|| s.get("update"));
    if let Some(m) = update.filter(|m| m.is_object()) {
        out.insert("message".into(), message_to_v10(m));
    }
    copy(&s, &mut out, "timestamp", "timestamp");
    Value::Object(out)
}

fn status_from_v10(s: &Value) -> Value {
    let s = obj(s);
    let mut out = Map::new();
    if let Some(st) = s.get("state") {
        out.insert("state".into(), state_from_v10(st));
    }
    if let Some(m) = s.get("message").filter(|m| m.is_object()) {
        out.insert("message".into(), message_from_v10(m));
    }
    copy(&s, &mut out, "timestamp", "timestamp");
    Value::Object(out)
}

const ARTIFACT_KEYS: &[&str] = &[
    "artifactId",
    "name",
    "description",
    "metadata",
    "extensions",
];

fn artifact_to_v10(a: &Value) -> Value {
    let a = obj(a);
    let mut out = Map::new();
    copy_all(&a, &mut out, ARTIFACT_KEYS);
    map_list(&a, &mut out, "parts", "parts", part_to_v10);
    Value::Object(out)
}

fn artifact_from_v10(a: &Value) -> Value {
    let a = obj(a);
    let mut out = Map::new();
    copy_all(&a, &mut out, ARTIFACT_KEYS);
    map_list(&a, &mut out, "parts", "parts", part_from_v10);
    Value::Object(out)
}

/// A 0.3 proto task as a 1.0 task.
pub fn task_to_v10(t: &Value) -> Value {
    let t = obj(t);
    let mut out = Map::new();
    copy_all(&t, &mut out, &["id", "contextId", "metadata"]);
    if let Some(s) = t.get("status") {
        out.insert("status".into(), status_to_v10(s));
    }
    map_list(&t, &mut out, "artifacts", "artifacts", artifact_to_v10);
    map_list(&t, &mut out, "history", "history", message_to_v10);
    Value::Object(out)
}

/// A 1.0 task as a 0.3 proto task.
pub fn task_from_v10(t: &Value) -> Value {
    let t = obj(t);
    let mut out = Map::new();
    copy_all(&t, &mut out, &["id", "contextId", "metadata"]);
    if let Some(s) = t.get("status") {
        out.insert("status".into(), status_from_v10(s));
    }
    map_list(&t, &mut out, "artifacts", "artifacts", artifact_from_v10);
    map_list(&t, &mut out, "history", "history", message_from_v10);
    Value::Object(out)
}

/// A 1.0 `StreamResponse` or `SendMessageResponse` as the 0.3 proto one
/// (`final` added to a status update).
pub fn event_from_v10(e: &Value) -> Value {
    let e = obj(e);
    if let Some(t) = e.get("task") {
        return json!({ "task": task_from_v10(t) });
    }
    if let Some(m) = e.get("message") {
        return json!({ "message": message_from_v10(m) });
    }
    if let Some(u) = e.get("statusUpdate") {
        let u = obj(u);
        let mut out = Map::new();
        copy_all(&u, &mut out, &["taskId", "contextId", "metadata"]);
        let status = u.get("status").cloned().unwrap_or(Value::Null);
        let state = status.get("state").and_then(Value::as_str).unwrap_or("");
        out.insert("final".into(), is_final_v10(state).into());
        out.insert("status".into(), status_from_v10(&status));
        return json!({ "statusUpdate": out });
    }
    if let Some(u) = e.get("artifactUpdate") {
        let u = obj(u);
        let mut out = Map::new();
        copy_all(
            &u,
            &mut out,
            &["taskId", "contextId", "metadata", "append", "lastChunk"],
        );
        if let Some(a) = u.get("artifact") {
            out.insert("artifact".into(), artifact_from_v10(a));
        }
        return json!({ "artifactUpdate": out });
    }
    Value::Object(e)
}

/// A 0.3 proto `StreamResponse` or `SendMessageResponse` as the 1.0 one.
pub fn event_to_v10(e: &Value) -> Value {
    let e = obj(e);
    if let Some(t) = e.get("task") {
        return json!({ "task": task_to_v10(t) });
    }
    if let Some(m) = e.get("message").or_else(|| e.get("msg")) {
        return json!({ "message": message_to_v10(m) });
    }
    if let Some(u) = e.get("statusUpdate").or_else(|| e.get("status_update")) {
        let u = obj(u);
        let mut out = Map::new();
        copy_all(&u, &mut out, &["taskId", "contextId", "metadata"]);
        if let Some(s) = u.get("status") {
            out.insert("status".into(), status_to_v10(s));
        }
        return json!({ "statusUpdate": out });
    }
    if let Some(u) = e.get("artifactUpdate").or_else(|| e.get("artifact_update")) {
        let u = obj(u);
        let mut out = Map::new();
        copy_all(
            &u,
            &mut out,
            &["taskId", "contextId", "metadata", "append", "lastChunk"],
        );
        if let Some(a) = u.get("artifact") {
            out.insert("artifact".into(), artifact_to_v10(a));
        }
        return json!({ "artifactUpdate": out });
    }
    Value::Object(e)
}

/// A 0.3 proto `SendMessageRequest` (`request` or `message`, then
/// `configuration`, `metadata`) as the 1.0 one. A missing `blocking` is
/// false, as the 0.3 HTTP+JSON servers read it: `returnImmediately`.
pub fn send_to_v10(r: &Value) -> Value {
    let r = obj(r);
    let mut out = Map::new();
    if let Some(m) = r.get("request").or_else(|| r.get("message")) {
        out.insert("message".into(), message_to_v10(m));
    }
    let c = obj(r.get("configuration").unwrap_or(&Value::Null));
    let mut conf = Map::new();
    copy(&c, &mut conf, "acceptedOutputModes", "acceptedOutputModes");
    copy(&c, &mut conf, "historyLength", "historyLength");
    if let Some(p) = c.get("pushNotification").filter(|p| p.is_object()) {
        conf.insert(
            "taskPushNotificationConfig".into(),
            super::objects::push_config_to_v10(&Value::Null, p),
        );
    }
    let blocking = c.get("blocking").and_then(Value::as_bool).unwrap_or(false);
    conf.insert("returnImmediately".into(), (!blocking).into());
    out.insert("configuration".into(), Value::Object(conf));
    copy(&r, &mut out, "metadata", "metadata");
    Value::Object(out)
}

/// A 1.0 `SendMessageRequest` as the 0.3 proto one (`blocking` always
/// written).
pub fn send_from_v10(r: &Value) -> Value {
    let r = obj(r);
    let mut out = Map::new();
    if let Some(m) = r.get("message") {
        out.insert("request".into(), message_from_v10(m));
    }
    let c = obj(r.get("configuration").unwrap_or(&Value::Null));
    let mut conf = Map::new();
    copy(&c, &mut conf, "acceptedOutputModes", "acceptedOutputModes");
    copy(&c, &mut conf, "historyLength", "historyLength");
    if let Some(p) = c.get("taskPushNotificationConfig") {
        conf.insert(
            "pushNotification".into(),
            super::objects::push_config_from_v10(p),
        );
    }
    let immediately = c
        .get("returnImmediately")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    conf.insert("blocking".into(), (!immediately).into());
    out.insert("configuration".into(), Value::Object(conf));
    copy(&r, &mut out, "metadata", "metadata");
    Value::Object(out)
}

/// A 1.0 `TaskPushNotificationConfig` as the 0.3 proto one (`name`,
/// `pushNotificationConfig`).
pub fn push_config_from_v10(c: &Value) -> Value {
    let task = c.get("taskId").and_then(Value::as_str).unwrap_or("");
    let id = c.get("id").and_then(Value::as_str).unwrap_or("");
    json!({
        "name": format!("tasks/{task}/pushNotificationConfigs/{id}"),
        "pushNotificationConfig": super::objects::push_config_from_v10(c),
    })
}

/// A 0.3 proto `TaskPushNotificationConfig` of `task_id` as the 1.0 one.
pub fn push_config_to_v10(task_id: &str, c: &Value) -> Value {
    let inner = c
        .get("pushNotificationConfig")
        .or_else(|| c.get("push_notification_config"))
        .or_else(|| c.get("config"))
        .unwrap_or(c);
    super::objects::push_config_to_v10(&Value::from(task_id), inner)
}

/// A 0.3 proto task id out of a push config name
/// (`tasks/{id}/pushNotificationConfigs/{configId}`), for a client.
pub fn push_config_name_to_v10(c: &Value) -> Value {
    let name = c.get("name").and_then(Value::as_str).unwrap_or("");
    let task = name
        .strip_prefix("tasks/")
        .and_then(|r| r.split('/').next())
        .unwrap_or("");
    push_config_to_v10(task, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parts_and_states() {
        let m03 = json!({"messageId": "m", "role": "ROLE_USER", "content": [
            {"text": "hi"},
            {"file": {"fileWithUri": "https://x/f", "mimeType": "text/plain"}},
            {"data": {"data": {"k": 1}}}
        ]});
        let m10 = message_to_v10(&m03);
        assert_eq!(
            m10,
            json!({"messageId": "m", "role": "ROLE_USER", "parts": [
                {"text": "hi"}, {"url": "https://x/f", "mediaType": "text/plain"}, {"data": {"k": 1}}
            ]})
        );
        assert_eq!(message_from_v10(&m10), m03);
        let t10 = json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}});
        let t03 = task_from_v10(&t10);
        assert_eq!(t03["status"]["state"], "TASK_STATE_CANCELLED");
        assert_eq!(task_to_v10(&t03), t10);
    }

    #[test]
    fn send_requests_both_ways() {
        let py = json!({"request": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]},
            "configuration": {"blocking": true, "acceptedOutputModes": ["text/plain"]}});
        let v10 = send_to_v10(&py);
        assert_eq!(v10["message"]["parts"], json!([{"text": "x"}]));
        assert_eq!(v10["configuration"]["returnImmediately"], false);
        let js = json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": []}});
        assert_eq!(send_to_v10(&js)["configuration"]["returnImmediately"], true);
        let back = send_from_v10(&v10);
        assert_eq!(back["request"]["content"], json!([{"text": "x"}]));
        assert_eq!(back["configuration"]["blocking"], true);
    }

    #[test]
    fn events_and_push_configs() {
        let su = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}});
        let su03 = event_from_v10(&su);
        assert_eq!(su03["statusUpdate"]["final"], true);
        assert_eq!(event_to_v10(&su03), su);
        let c10 = json!({"taskId": "t", "id": "p", "url": "https://h/w"});
        let c03 = push_config_from_v10(&c10);
        assert_eq!(c03["name"], "tasks/t/pushNotificationConfigs/p");
        assert_eq!(push_config_name_to_v10(&c03), c10);
    }
}
