//! The team example as a process, over JSON-RPC: queued inputs (built by
//! [`queue::input`](super::queue::input)), waits for a task's state read with
//! GetTask (within [`GUARD`]), and what the tests read off a task's JSON.

use std::time::{Duration, Instant};

use a2a_tower::queue::{PRIORITY_KEY, Priority, TARGET_KEY};
use serde_json::{Value, json};

use super::http::{HttpClient, rpc};
use super::tasks::GUARD;

/// A new input of `context` saying `text`, for `target` (or none) at
/// `priority`, as JSON.
pub(crate) fn input(context: &str, text: &str, target: Option<&str>, priority: Priority) -> Value {
    let mut meta = vec![(PRIORITY_KEY, priority.as_str())];
    meta.extend(target.map(|t| (TARGET_KEY, t)));
    serde_json::to_value(super::queue::input(context, text, &meta)).expect("a message")
}

/// Queues `message` with `returnImmediately` at `base`: the task as
/// acknowledged (its enqueue committed).
pub(crate) async fn enqueue(c: &HttpClient, base: &str, message: Value) -> Value {
    let params = json!({"message": message, "configuration": {"returnImmediately": true}});
    let task = rpc(c, base, "SendMessage", params).await["task"].clone();
    assert!(task["id"].is_string(), "{task}");
    task
}

/// [`enqueue`]: the task's id.
pub(crate) async fn enqueue_id(c: &HttpClient, base: &str, message: Value) -> String {
    enqueue(c, base, message).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The task's state (`TASK_STATE_…`).
pub(crate) fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// Reads the task at `base` until `done` holds for it; the task then. `what`
/// names the awaited condition in a failure.
pub(crate) async fn until(
    c: &HttpClient,
    base: &str,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + GUARD;
    loop {
        let task = rpc(c, base, "GetTask", json!({"id": id})).await;
        if done(&task) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} is not {what} within {GUARD:?}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the task is WORKING.
pub(crate) async fn until_working(c: &HttpClient, base: &str, id: &str) -> Value {
    until(c, base, id, "WORKING", |t| state(t) == "TASK_STATE_WORKING").await
}

/// Waits until the task is terminal; the task then.
pub(crate) async fn until_terminal(c: &HttpClient, base: &str, id: &str) -> Value {
    until(c, base, id, "terminal", |t| {
        matches!(
            state(t),
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
        )
    })
    .await
}

/// The text of the task's artifacts, concatenated.
pub(crate) fn artifact_text(task: &Value) -> String {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

/// The task's status timestamp (RFC 3339 in UTC with milliseconds: ordered
/// as text).
pub(crate) fn stamp(task: &Value) -> String {
    task["status"]["timestamp"]
        .as_str()
        .unwrap_or_else(|| panic!("no status timestamp: {task}"))
        .to_owned()
}
