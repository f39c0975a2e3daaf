//! The 0.3 JSON objects of the JSON-RPC binding (`kind`-tagged parts,
//! messages, tasks and events, lowercase states and roles) to and from
//! the 1.0 JSON ones, as a2a-sdk's `a2a/compat/v0_3` maps them.

use serde_json::{Map, Value, json};

/// A JSON object (empty for anything else).
pub(crate) fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Copies `from[key]` to `to[as_key]` when present and not null.
pub(crate) fn copy(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    as_key: &str,
) {
    if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
        to.insert(as_key.to_owned(), v.clone());
    }
}

/// Copies each key unchanged.
pub(crate) fn copy_all(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        copy(from, to, k, k);
    }
}

/// Maps each element of the array `from[key]` into `to[as_key]`.
pub(crate) fn map_list(
    from: &Map<String, Value>,
    to: &mut Map<String, Value>,
    key: &str,
    as_key: &str,
    f: impl Fn(&Value) -> Value,
) {
    if let Some(Value::Array(items)) = from.get(key) {
        to.insert(as_key.to_owned(), items.iter().map(f).collect());
    }
}

/// The 0.3 name of a 1.0 task state (`unknown` for UNSPECIFIED).
pub fn state_from_v10(state: &str) -> &'static str {
    match state {
        "TASK_STATE_SUBMITTED" => "submitted",
        "TASK_STATE_WORKING" => "working",
        "TASK_STATE_COMPLETED" => "completed",
        "TASK_STATE_FAILED" => "failed",
        "TASK_STATE_CANCELED" | "TASK_STATE_CANCELLED" => "canceled",
        "TASK_STATE_INPUT_REQUIRED" => "input-required",
        "TASK_STATE_REJECTED" => "rejected",
        "TASK_STATE_AUTH_REQUIRED" => "auth-required",
        _ => "unknown",
    }
}

/// The 1.0 name of a 0.3 task state (UNSPECIFIED for `unknown` and
/// anything else).
pub fn state_to_v10(state: &str) -> &'static str {
    match state {
        "submitted" => "TASK_STATE_SUBMITTED",
        "working" => "TASK_STATE_WORKING",
        "completed" => "TASK_STATE_COMPLETED",
        "failed" => "TASK_STATE_FAILED",
        "canceled" => "TASK_STATE_CANCELED",
        "input-required" => "TASK_STATE_INPUT_REQUIRED",
        "rejected" => "TASK_STATE_REJECTED",
        "auth-required" => "TASK_STATE_AUTH_REQUIRED",
        _ => "TASK_STATE_UNSPECIFIED",
    }
}

fn role_to_v10(role: Option<&Value>) -> Value {
    match role.and_then(Value::as_str) {
        Some("agent") => "ROLE_AGENT".into(),
        Some("user") => "ROLE_USER".into(),
        _ => "ROLE_UNSPECIFIED".into(),
    }
}

fn role_from_v10(role: Option<&Value>) -> Value {
    match role.and_then(Value::as_str) {
        Some("ROLE_USER") => "user".into(),
        _ => "agent".into(),
    }
}

/// A 0.3 part (`kind` text, file or data) as a 1.0 part. A data part
/// marked `data_part_compat` in its metadata unwraps its `value`.
pub fn part_to_v10(p: &Value) -> Value {
    let p = obj(p);
    let mut out = Map::new();
    let mut metadata = p.get("metadata").and_then(Value::as_object).cloned();
    let kind = p.get("kind").and_then(Value::as_str);
    if kind == Some("file") || (kind.is_none() && p.contains_key("file")) {
        let file = obj(p.get("file").unwrap_or(&Value::Null));
        copy(&file, &mut out, "bytes", "raw");
        copy(&file, &mut out, "uri", "url");
        copy(&file, &mut out, "mimeType", "mediaType");
        copy(&file, &mut out, "name", "filename");
    } else if kind == Some("data") || (kind.is_none() && p.contains_key("data")) {
        let compat = metadata
            .as_mut()
            .and_then(|m| m.remove("data_part_compat"))
            .is_some_and(|v| v == Value::Bool(true));
        let data = p.get("data").cloned().unwrap_or(Value::Null);
        let data = if compat {
            data.get("value").cloned().unwrap_or(Value::Null)
        } else {
            data
        };
        out.insert("data".into(), data);
    } else {
        copy(&p, &mut out, "text", "text");
    }
    if let Some(m) = metadata.filter(|m| !m.is_empty()) {
        out.insert("metadata".into(), Value::Object(m));
    }
    Value::Object(out)
}

/// A 1.0 part as a 0.3 part: text, file (`raw` → `bytes`, `url` → `uri`)
/// or data; data that is not an object is wrapped as `{"value": …}` and
/// marked `data_part_compat: true` in the metadata.
pub fn part_from_v10(p: &Value) -> Value {
    let p = obj(p);
    let mut out = Map::new();
    let mut metadata = p.get("metadata").and_then(Value::as_object).cloned();
    if let Some(text) = p.get("text") {
        out.insert("kind".into(), "text".into());
        out.insert("text".into(), text.clone());
    } else if p.contains_key("raw") || p.contains_key("url") {
        let mut file = Map::new();
        copy(&p, &mut file, "raw", "bytes");
        copy(&p, &mut file, "url", "uri");
        copy(&p, &mut file, "mediaType", "mimeType");
        copy(&p, &mut file, "filename", "name");
        out.insert("kind".into(), "file".into());
        out.insert("file".into(), Value::Object(file));
    } else {
        let data = p.get("data").cloned().unwrap_or(Value::Null);
        out.insert("kind".into(), "data".into());
        if data.is_object() {
            out.insert("data".into(), data);
        } else {
            out.insert("data".into(), json!({ "value": data }));
            metadata
                .get_or_insert_with(Map::new)
                .insert("data_part_compat".into(), true.into());
        }
    }
    if let Some(m) = metadata {
        out.insert("metadata".into(), Value::Object(m));
    }
    Value::Object(out)
}

const MESSAGE_KEYS: &[&str] = &[
    "messageId",
    "contextId",
    "taskId",
    "referenceTaskIds",
    "metadata",
    "extensions",
];

/// A 0.3 message as a 1.0 message.
pub fn message_to_v10(m: &Value) -> Value {
    let m = obj(m);
    let mut out = Map::new();
    copy_all(&m, &mut out, MESSAGE_KEYS);
    out.insert("role".into(), role_to_v10(m.get("role")));
    map_list(&m, &mut out, "parts", "parts", part_to_v10);
    Value::Object(out)
}

/// A 1.0 message as a 0.3 message (`kind: "message"`).
pub fn message_from_v10(m: &Value) -> Value {
    let m = obj(m);
    let mut out = Map::new();
    out.insert("kind".into(), "message".into());
    copy_all(&m, &mut out, MESSAGE_KEYS);
    out.insert("role".into(), role_from_v10(m.get("role")));
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_list(&m, &mut out, "parts", "parts", part_from_v10);
    Value::Object(out)
}

fn status_to_v10(s: &Value) -> Value {
    let s = obj(s);
    let mut out = Map::new();
    let state = s.get("state").and_then(Value::as_str).unwrap_or("unknown");
    out.insert("state".into(), state_to_v10(state).into());
    if let Some(m) = s.get("message").filter(|m| m.is_object()) {
        out.insert("message".into(), message_to_v10(m));
    }
    copy(&s, &mut out, "timestamp", "timestamp");
    Value::Object(out)
}

fn status_from_v10(s: &Value) -> Value {
    let s = obj(s);
    let mut out = Map::new();
    let state = s.get("state").and_then(Value::as_str).unwrap_or("");
    out.insert("state".into(), state_from_v10(state).into());
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
    out.insert("parts".into(), Value::Array(Vec::new()));
    map_list(&a, &mut out, "parts", "parts", part_from_v10);
    Value::Object(out)
}

/// A 0.3 task as a 1.0 task.
pub fn task_to_v10(t: &Value) -> Value {
    let t = obj(t);
    let mut out = Map::new();
    copy_all(&t, &mut out, &["id", "contextId", "metadata"]);
    out.insert(
        "status".into(),
        status_to_v10(t.get("status").unwrap_or(&Value::Null)),
    );
    map_list(&t, &mut out, "artifacts", "artifacts", artifact_to_v10);
    map_list(&t, &mut out, "history", "history", message_to_v10);
    Value::Object(out)
}

/// A 1.0 task as a 0.3 task (`kind: "task"`).
pub fn task_from_v10(t: &Value) -> Value {
    let t = obj(t);
    let mut out = Map::new();
    out.insert("kind".into(), "task".into());
    copy_all(&t, &mut out, &["id", "contextId", "metadata"]);
    out.insert(
        "status".into(),
        status_from_v10(t.get("status").unwrap_or(&Value::Null)),
    );
    map_list(&t, &mut out, "artifacts", "artifacts", artifact_from_v10);
    map_list(&t, &mut out, "history", "history", message_from_v10);
    Value::Object(out)
}

/// Whether a 1.0 state ends a stream: terminal or interrupted (the 0.3
/// `final` flag).
pub(crate) fn is_final_v10(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
            | "TASK_STATE_INPUT_REQUIRED"
            | "TASK_STATE_AUTH_REQUIRED"
    )
}

/// A 1.0 `StreamResponse` (or `SendMessageResponse`) as the 0.3 object it
/// carries: a task, a message, a `status-update` (with `final` set when
/// the state ends the stream) or an `artifact-update`.
pub fn event_from_v10(e: &Value) -> Value {
    let e = obj(e);
    if let Some(t) = e.get("task") {
        return task_from_v10(t);
    }
    if let Some(m) = e.get("message") {
        return message_from_v10(m);
    }
    if let Some(u) = e.get("statusUpdate") {
        let u = obj(u);
        let mut out = Map::new();
        out.insert("kind".into(), "status-update".into());
        copy_all(&u, &mut out, &["taskId", "contextId", "metadata"]);
        let status = status_from_v10(u.get("status").unwrap_or(&Value::Null));
        let state = u
            .get("status")
            .and_then(|s| s.get("state"))
            .and_then(Value::as_str)
            .unwrap_or("");
        out.insert("status".into(), status);
        out.insert("final".into(), is_final_v10(state).into());
        return Value::Object(out);
    }
    if let Some(u) = e.get("artifactUpdate") {
        let u = obj(u);
        let mut out = Map::new();
        out.insert("kind".into(), "artifact-update".into());
        copy_all(
            &u,
            &mut out,
            &["taskId", "contextId", "metadata", "append", "lastChunk"],
        );
        if let Some(a) = u.get("artifact") {
            out.insert("artifact".into(), artifact_from_v10(a));
        }
        return Value::Object(out);
    }
    Value::Object(e)
}

/// A 0.3 result object (by its `kind`) as a 1.0 `StreamResponse`; a task
/// or a message is also a 1.0 `SendMessageResponse`.
pub fn event_to_v10(e: &Value) -> Value {
    let o = obj(e);
    match o.get("kind").and_then(Value::as_str) {
        Some("task") => json!({ "task": task_to_v10(e) }),
        Some("message") => json!({ "message": message_to_v10(e) }),
        Some("status-update") => {
            let mut out = Map::new();
            copy_all(&o, &mut out, &["taskId", "contextId", "metadata"]);
            out.insert(
                "status".into(),
                status_to_v10(o.get("status").unwrap_or(&Value::Null)),
            );
            json!({ "statusUpdate": out })
        }
        Some("artifact-update") => {
            let mut out = Map::new();
            copy_all(
                &o,
                &mut out,
                &["taskId", "contextId", "metadata", "append", "lastChunk"],
            );
            if let Some(a) = o.get("artifact") {
                out.insert("artifact".into(), artifact_to_v10(a));
            }
            json!({ "artifactUpdate": out })
        }
        _ => e.clone(),
    }
}

/// A 0.3 `PushNotificationConfig` (with the task id beside it) as a 1.0
/// `TaskPushNotificationConfig`: `authentication.schemes[0]` becomes
/// `scheme`. A config without an id gets the task id, as 0.3 servers did.
pub fn push_config_to_v10(task_id: &Value, c: &Value) -> Value {
    let c = obj(c);
    let mut out = Map::new();
    if !task_id.is_null() {
        out.insert("taskId".into(), task_id.clone());
    }
    copy_all(&c, &mut out, &["id", "url", "token"]);
    if !out.contains_key("id") && task_id.as_str().is_some_and(|t| !t.is_empty()) {
        out.insert("id".into(), task_id.clone());
    }
    if let Some(a) = c.get("authentication").and_then(Value::as_object) {
        let mut auth = Map::new();
        if let Some(s) = a.get("schemes").and_then(|s| s.get(0)) {
            auth.insert("scheme".into(), s.clone());
        }
        copy(a, &mut auth, "credentials", "credentials");
        out.insert("authentication".into(), Value::Object(auth));
    }
    Value::Object(out)
}

/// A 1.0 `TaskPushNotificationConfig` as the 0.3 `PushNotificationConfig`
/// inside it (`scheme` becomes `schemes: [scheme]`).
pub fn push_config_from_v10(c: &Value) -> Value {
    let c = obj(c);
    let mut out = Map::new();
    copy_all(&c, &mut out, &["id", "url", "token"]);
    if let Some(a) = c.get("authentication").and_then(Value::as_object) {
        let mut auth = Map::new();
        let schemes: Vec<Value> = a.get("scheme").into_iter().cloned().collect();
        auth.insert("schemes".into(), Value::Array(schemes));
        copy(a, &mut auth, "credentials", "credentials");
        out.insert("authentication".into(), Value::Object(auth));
    }
    Value::Object(out)
}

/// A 1.0 `TaskPushNotificationConfig` as a 0.3 one
/// (`{taskId, pushNotificationConfig}`).
pub fn task_push_config_from_v10(c: &Value) -> Value {
    json!({
        "taskId": c.get("taskId").cloned().unwrap_or(Value::Null),
        "pushNotificationConfig": push_config_from_v10(c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_both_ways() {
        let text = json!({"kind": "text", "text": "hi", "metadata": {"a": 1}});
        assert_eq!(
            part_to_v10(&text),
            json!({"text": "hi", "metadata": {"a": 1}})
        );
        assert_eq!(part_from_v10(&part_to_v10(&text)), text);
        let file =
            json!({"kind": "file", "file": {"bytes": "AAE=", "mimeType": "x/y", "name": "f"}});
        assert_eq!(
            part_to_v10(&file),
            json!({"raw": "AAE=", "mediaType": "x/y", "filename": "f"})
        );
        assert_eq!(part_from_v10(&part_to_v10(&file)), file);
        let uri = json!({"kind": "file", "file": {"uri": "https://x/f"}});
        assert_eq!(part_to_v10(&uri), json!({"url": "https://x/f"}));
        let data = json!({"kind": "data", "data": {"k": [1]}});
        assert_eq!(part_to_v10(&data), json!({"data": {"k": [1]}}));
        assert_eq!(part_from_v10(&part_to_v10(&data)), data);
        // A 1.0 data part that is not an object round-trips through the marker.
        let scalar = json!({"data": [1, 2]});
        let v03 = part_from_v10(&scalar);
        assert_eq!(
            v03,
            json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}})
        );
        assert_eq!(part_to_v10(&v03), scalar);
    }

    #[test]
    fn every_state_both_ways() {
        for s in [
            "submitted",
            "working",
            "completed",
            "failed",
            "canceled",
            "input-required",
            "rejected",
            "auth-required",
            "unknown",
        ] {
            assert_eq!(state_from_v10(state_to_v10(s)), s);
        }
        assert_eq!(state_to_v10("bogus"), "TASK_STATE_UNSPECIFIED");
    }

    #[test]
    fn tasks_and_events() {
        let t10 = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2025-01-01T00:00:00Z",
                "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "?"}]}},
            "history": [{"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "hi"}]}],
            "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}]
        });
        let t03 = task_from_v10(&t10);
        assert_eq!(t03["kind"], "task");
        assert_eq!(t03["status"]["state"], "input-required");
        assert_eq!(t03["status"]["message"]["role"], "agent");
        assert_eq!(t03["history"][0]["role"], "user");
        assert_eq!(t03["history"][0]["parts"][0]["kind"], "text");
        assert_eq!(task_to_v10(&t03), t10);
        assert_eq!(
            event_to_v10(&event_from_v10(&json!({"task": t10.clone()}))),
            json!({"task": t10})
        );

        let su = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}}});
        let su03 = event_from_v10(&su);
        assert_eq!(su03["kind"], "status-update");
        assert_eq!(su03["final"], false);
        assert_eq!(event_to_v10(&su03), su);
        let done = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}});
        assert_eq!(event_from_v10(&done)["final"], true);

        let au = json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true,
            "lastChunk": false, "artifact": {"artifactId": "a", "parts": [{"text": "w "}]}}});
        let au03 = event_from_v10(&au);
        assert_eq!(au03["kind"], "artifact-update");
        assert_eq!(
            au03["artifact"]["parts"][0],
            json!({"kind": "text", "text": "w "})
        );
        assert_eq!(event_to_v10(&au03), au);
    }

    #[test]
    fn push_configs() {
        let c03 = json!({"url": "https://h/w", "token": "tk",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"}});
        let c10 = push_config_to_v10(&json!("t-1"), &c03);
        assert_eq!(
            c10,
            json!({"taskId": "t-1", "id": "t-1", "url": "https://h/w", "token": "tk",
                "authentication": {"scheme": "Bearer", "credentials": "s"}})
        );
        let back = task_push_config_from_v10(&c10);
        assert_eq!(back["taskId"], "t-1");
        assert_eq!(
            back["pushNotificationConfig"]["authentication"]["schemes"],
            json!(["Bearer"])
        );
        assert_eq!(back["pushNotificationConfig"]["id"], "t-1");
    }
}
