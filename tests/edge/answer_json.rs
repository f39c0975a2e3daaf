//! SendMessage's answer written from the JSON the memory log wrote when it
//! packed the task (`types::Encoded`), through the whole `A2aServer`: the
//! same wire as the task serialized anew, on both bindings, and never the
//! stored JSON once a layer has changed the task or the request asked for
//! less of it.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::A2aResponse;
use a2a_tower::types::{Part, SendMessageResponse};
use serde_json::{Value, json};
use support::assembled::{ALICE, card, message, rest_send, rpc_ok, server_mapping};

/// Passes the answers on, counting those that carry their task's JSON.
fn count_carried(
    carried: &Arc<AtomicUsize>,
) -> impl Fn(A2aResponse) -> A2aResponse + Clone + Send + Sync + 'static {
    let carried = carried.clone();
    move |answer| {
        if let A2aResponse::SendMessage(SendMessageResponse::Task(t)) = &answer
            && t.json().is_some()
        {
            carried.fetch_add(1, Ordering::Relaxed);
        }
        answer
    }
}

/// The task's text artifact, as a client reads it.
fn artifact_text(task: &Value) -> &str {
    task["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn the_answer_is_the_packed_json_and_the_task_as_get_task_reads_it() {
    let carried = Arc::new(AtomicUsize::new(0));
    let h = server_mapping(card(), count_carried(&carried));
    let sent = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("hello")}),
    )
    .await;
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(artifact_text(task), "hello");
    // GetTask decodes the packed task and serializes it: the same task.
    let got = rpc_ok(&h, ALICE, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(*task, got);

    let rest = rest_send(&h, ALICE, message("again"), false).await;
    assert_eq!(artifact_text(&rest), "again");
    // Both answers came from the packed JSON (debug builds also check, in
    // `Encoded::with_json`, that it is the task's own).
    assert_eq!(carried.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_layer_that_changes_the_task_in_place_has_its_change_on_the_wire() {
    let h = server_mapping(card(), |mut answer| {
        if let A2aResponse::SendMessage(SendMessageResponse::Task(t)) = &mut answer {
            for a in &mut t.artifacts {
                a.parts = vec![Part::text("[redacted]")];
            }
        }
        answer
    });
    let sent = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("secret")}),
    )
    .await;
    assert_eq!(artifact_text(&sent["task"]), "[redacted]");
    let rest = rest_send(&h, ALICE, message("secret"), false).await;
    assert_eq!(artifact_text(&rest), "[redacted]");
    // The log keeps the task as the agent left it.
    let got = rpc_ok(&h, ALICE, "GetTask", json!({"id": sent["task"]["id"]})).await;
    assert_eq!(artifact_text(&got), "secret");
}

// a2a-spec.md §3.8: historyLength applies to SendMessage's task too; a view
// of less than the whole task is serialized, not taken from the stored JSON.
#[tokio::test]
async fn history_length_is_applied_to_the_answer() {
    let carried = Arc::new(AtomicUsize::new(0));
    let h = server_mapping(card(), count_carried(&carried));
    let params =
        |n: i64| json!({"message": message("hello"), "configuration": {"historyLength": n}});
    let none = rpc_ok(&h, ALICE, "SendMessage", params(0)).await;
    assert_eq!(none["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(none["task"].get("history").is_none(), "{none}");
    assert_eq!(carried.load(Ordering::Relaxed), 0);
    // A length the history fits in: the whole task, from its JSON.
    let all = rpc_ok(&h, ALICE, "SendMessage", params(10)).await;
    assert_eq!(all["task"]["history"].as_array().map(Vec::len), Some(1));
    assert_eq!(carried.load(Ordering::Relaxed), 1);
}
