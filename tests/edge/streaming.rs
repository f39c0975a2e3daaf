//! SSE streams through the whole `A2aServer` (`support::assembled`), on both
//! bindings: several concurrent streams of one task (a2a-spec.md §4.2) and
//! SubscribeToTask (§4.6).

use crate::support;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::{Value, json};
use support::assembled::{
    ALICE, message, rest_err, rest_send, rest_subscribe, rpc_err, rpc_ok, rpc_req, server, sse,
    started, unwrap_rpc,
};

fn rpc_subscribe(user: &str, id: &str, task: &str) -> Request<Full<Bytes>> {
    rpc_req(user, id, "SubscribeToTask", json!({"id": task}))
}

fn chunk_event(task: &str, ctx: &str, i: usize) -> Value {
    let mut update = json!({
        "taskId": task,
        "contextId": ctx,
        "artifact": {"artifactId": "out", "parts": [{"text": format!("chunk-{i}")}]},
    });
    if i > 0 {
        update["append"] = json!(true);
    }
    if i == 2 {
        update["lastChunk"] = json!(true);
    }
    json!({ "artifactUpdate": update })
}

/// Removes the timestamps (generated) so events compare by content.
fn without_timestamps(mut v: Value) -> Value {
    match &mut v {
        Value::Object(map) => {
            map.remove("timestamp");
            for (_, x) in map.iter_mut() {
                *x = without_timestamps(x.take());
            }
        }
        Value::Array(items) => {
            for x in items.iter_mut() {
                *x = without_timestamps(x.take());
            }
        }
        _ => {}
    }
    v
}

// a2a-spec.md §4.2: several concurrent streams per task (SSE, both bindings)
// MUST each get the same events in the same (generation) order, and closing
// one MUST NOT affect the others; each stream closes at the terminal state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_streams_get_the_same_events_and_closing_one_affects_none() {
    let mut h = server();
    let t = rest_send(&h, ALICE, message("paced"), true).await;
    let id = t["id"].as_str().unwrap().to_owned();
    let ctx = t["contextId"].as_str().unwrap().to_owned();
    assert_eq!(started(&mut h).await, id);

    let mut rpc_a = sse(&h, rpc_subscribe(ALICE, "a", &id)).await;
    let mut rpc_d = sse(&h, rpc_subscribe(ALICE, "d", &id)).await;
    let mut rest_b = sse(&h, rest_subscribe("POST", ALICE, &id)).await;
    let mut rest_c = sse(&h, rest_subscribe("GET", ALICE, &id)).await;

    let mut a = vec![unwrap_rpc(rpc_a.next().await.unwrap(), "a")];
    let d0 = unwrap_rpc(rpc_d.next().await.unwrap(), "d");
    let mut b = vec![rest_b.next().await.unwrap()];
    let c0 = rest_c.next().await.unwrap();
    assert_eq!(
        a[0]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{}",
        a[0]
    );
    for other in [&d0, &b[0], &c0] {
        assert_eq!(other, &a[0]);
    }
    // Close one JSON-RPC stream after the first event.
    drop(rpc_d);

    // One chunk; every open stream sees it; then close a REST stream.
    h.pace.add_permits(1);
    a.push(unwrap_rpc(rpc_a.next().await.unwrap(), "a"));
    b.push(rest_b.next().await.unwrap());
    assert_eq!(rest_c.next().await.unwrap(), a[1]);
    drop(rest_c);

    // The rest: the survivors read to the end of their streams.
    h.pace.add_permits(2);
    a.extend(rpc_a.rest().await.into_iter().map(|v| unwrap_rpc(v, "a")));
    b.extend(rest_b.rest().await);

    let a: Vec<_> = a.into_iter().map(without_timestamps).collect();
    let b: Vec<_> = b.into_iter().map(without_timestamps).collect();
    assert_eq!(a, b, "same events, same order, on both bindings");
    assert_eq!(a.len(), 5, "{a:?}");
    for i in 0..3 {
        assert_eq!(a[i + 1], chunk_event(&id, &ctx, i), "generation order");
    }
    assert_eq!(
        a[4],
        json!({"statusUpdate": {"taskId": id, "contextId": ctx, "status": {"state": "TASK_STATE_COMPLETED"}}})
    );

    // The task itself is unaffected by the closed streams.
    let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_COMPLETED");
    // Its three appended text chunks make one text part.
    assert_eq!(r["artifacts"][0]["parts"].as_array().unwrap().len(), 1);
}

// a2a-spec.md §4.6: the first event of SubscribeToTask MUST be the current
// task, and the stream MUST end when the task becomes terminal; a terminal
// task cannot be subscribed to (UnsupportedOperation). Both bindings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_first_event_is_the_current_task_and_stream_ends_at_terminal() {
    let mut h = server();
    let t = rest_send(&h, ALICE, message("paced"), true).await;
    let id = t["id"].as_str().unwrap().to_owned();
    started(&mut h).await;
    let current = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(current["status"]["state"], "TASK_STATE_WORKING");

    let mut rpc_s = sse(&h, rpc_subscribe(ALICE, "s", &id)).await;
    let mut rest_s = sse(&h, rest_subscribe("POST", ALICE, &id)).await;
    let first = unwrap_rpc(rpc_s.next().await.unwrap(), "s");
    assert_eq!(first, json!({ "task": current }));
    assert_eq!(rest_s.next().await.unwrap(), first);

    h.pace.add_permits(3);
    for events in [
        rpc_s
            .rest()
            .await
            .into_iter()
            .map(|v| unwrap_rpc(v, "s"))
            .collect::<Vec<_>>(),
        rest_s.rest().await,
    ] {
        assert_eq!(events.len(), 4, "{events:?}");
        let last = events.last().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    // rest() returned: both streams ended at the terminal state.

    // Terminal now: subscribing is refused before any event.
    rpc_err(
        &h,
        ALICE,
        "SubscribeToTask",
        json!({"id": id}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        rest_subscribe("POST", ALICE, &id),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;
}
