//! Resuming a stream with `Last-Event-ID` through the whole `A2aServer`
//! (`support::assembled`), on both bindings: every SSE event carries an
//! `id:`; a SubscribeToTask that sends the last id a dropped connection
//! received gets exactly the events after it (replayed from the log), then
//! the live tail, with no gap and no duplicate.

use crate::support;

use serde_json::{Value, json};
use support::assembled::{
    ALICE, Harness, message, rest_send, rest_subscribe, rpc_req, server, sse, started, unwrap_rpc,
};

fn chunk_text(v: &Value) -> Option<&str> {
    v["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str()
}

/// Starts a paced task, reads its stream up to chunk-0 and drops the
/// connection; releases chunk-1 while nobody reads. The task id and the id
/// of the last event the dropped stream received.
async fn dropped_after_first_chunk(h: &mut Harness, rpc: bool) -> (String, String) {
    let t = rest_send(h, ALICE, message("paced"), true).await;
    let task = t["id"].as_str().unwrap().to_owned();
    assert_eq!(started(h).await, task);
    let req = if rpc {
        rpc_req(ALICE, "s", "SubscribeToTask", json!({"id": task}))
    } else {
        rest_subscribe("GET", ALICE, &task)
    };
    let mut stream = sse(h, req).await;
    let unwrap = |v: Value| if rpc { unwrap_rpc(v, "s") } else { v };
    let (snap_id, snap) = stream.next_with_id().await.unwrap();
    assert!(unwrap(snap).get("task").is_some());
    h.pace.add_permits(1);
    let (chunk_id, chunk) = stream.next_with_id().await.unwrap();
    assert_eq!(chunk_text(&unwrap(chunk)), Some("chunk-0"));
    let (snap_id, chunk_id) = (snap_id.expect("an id"), chunk_id.expect("an id"));
    assert!(
        chunk_id.parse::<u64>().unwrap() > snap_id.parse::<u64>().unwrap(),
        "ids grow: {snap_id} then {chunk_id}"
    );
    // The connection dies; the agent goes on.
    drop(stream);
    h.pace.add_permits(1);
    (task, chunk_id)
}

/// The events of a resumed stream until its end, releasing the last chunk
/// once the replayed one is in: (ids, StreamResponses).
async fn resumed(
    h: &Harness,
    mut stream: support::sse::Sse<a2a_tower::Body>,
    rpc: bool,
) -> (Vec<u64>, Vec<Value>) {
    let (mut ids, mut events) = (Vec::new(), Vec::new());
    while let Some((id, v)) = stream.next_with_id().await {
        let v = if rpc { unwrap_rpc(v, "r") } else { v };
        if chunk_text(&v) == Some("chunk-1") {
            h.pace.add_permits(1);
        }
        ids.push(id.expect("every event has an id").parse().unwrap());
        events.push(v);
    }
    (ids, events)
}

fn assert_exactly_the_missing_events(last: &str, ids: &[u64], events: &[Value]) {
    let texts: Vec<Option<&str>> = events.iter().map(chunk_text).collect();
    assert_eq!(
        texts,
        [Some("chunk-1"), Some("chunk-2"), None],
        "{events:?}"
    );
    assert_eq!(
        events[2]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "ends with the terminal event: {events:?}"
    );
    let last: u64 = last.parse().unwrap();
    assert_eq!(ids, [last + 1, last + 2, last + 3], "no gap, no duplicate");
}

// A connection dropped mid-stream and resumed with Last-Event-ID over
// JSON-RPC: exactly the events after that id (one replayed from the log,
// then the live tail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_resume_gets_exactly_the_missing_events() {
    let mut h = server();
    let (task, last) = dropped_after_first_chunk(&mut h, true).await;
    let mut req = rpc_req(ALICE, "r", "SubscribeToTask", json!({"id": task}));
    req.headers_mut()
        .insert("last-event-id", last.parse().unwrap());
    let stream = sse(&h, req).await;
    let (ids, events) = resumed(&h, stream, true).await;
    assert_exactly_the_missing_events(&last, &ids, &events);
}

// The same over HTTP+JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_resume_gets_exactly_the_missing_events() {
    let mut h = server();
    let (task, last) = dropped_after_first_chunk(&mut h, false).await;
    let mut req = rest_subscribe("GET", ALICE, &task);
    req.headers_mut()
        .insert("last-event-id", last.parse().unwrap());
    let stream = sse(&h, req).await;
    let (ids, events) = resumed(&h, stream, false).await;
    assert_exactly_the_missing_events(&last, &ids, &events);
}
