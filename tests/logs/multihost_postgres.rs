//! Multi-host test: two echo servers on loopback share one PostgreSQL schema.
//! A task started on host A is readable and subscribable on host B, which
//! runs no execution of it: B's SubscribeToTask follows the log's cross-host
//! watch (LISTEN/NOTIFY), and its events arrive in order.
//!
//! Needs PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`): the test FAILS when it is
//! unreachable. It works in its own `a2a_test_<uuid>` schema, dropped at
//! the end even when the test fails. Needs the example binary built with
//! `--all-features` (see `support/server.rs`).

use crate::support;

use serde_json::{Value, json};
use support::http::{client, message, rpc, rpc_stream};
use support::postgres::{url, with_schema};
use support::server::Server;

fn state(event: &Value) -> Option<&str> {
    event["task"]["status"]["state"]
        .as_str()
        .or_else(|| event["statusUpdate"]["status"]["state"].as_str())
}

async fn task_started_on_a_streams_on_b(schema: &str) {
    // Fail loudly, not with a server start-up error, when PostgreSQL is down.
    let (probe, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} is required for this test: {e}", url()));
    drop((probe, conn));

    let env = |host: &'static str| {
        [
            ("A2A_POSTGRES_URL", url()),
            ("A2A_POSTGRES_SCHEMA", schema.to_owned()),
            ("A2A_HOST_ID", host.to_owned()),
        ]
    };
    let start = |host| {
        let env = env(host);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Server::start_with("echo", &env)
    };
    let a = start("host-a");
    let b = start("host-b");
    let c = client();

    let params = json!({
        "message": message("m-1", "sleep 1 one two three"),
        "configuration": {"returnImmediately": true},
    });
    let started = rpc(&c, &a.base, "SendMessage", params).await;
    let id = started["task"]["id"].as_str().unwrap().to_owned();
    assert!(matches!(
        state(&started),
        Some("TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING")
    ));

    // B has never seen the task: it reads it from the shared log...
    let on_b = rpc(&c, &b.base, "GetTask", json!({"id": id})).await;
    assert_eq!(on_b["id"], id.as_str());
    // ...and streams A's progress (the echo agent echoes every word) (a2a-spec.md §4.6: the Task first, then
    // updates until a terminal state).
    let events = rpc_stream(&c, &b.base, "SubscribeToTask", json!({"id": id})).await;
    let (first, rest) = events.split_first().expect("at least the task");
    assert_eq!(first["task"]["id"], id.as_str());
    assert!(matches!(
        state(first),
        Some("TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING")
    ));
    let chunks: Vec<(&str, bool)> = rest
        .iter()
        .filter_map(|e| {
            let a = &e["artifactUpdate"];
            let text = a["artifact"]["parts"][0]["text"].as_str()?;
            Some((text, a["append"].as_bool().unwrap_or(false)))
        })
        .collect();
    assert_eq!(
        chunks,
        [
            ("sleep ", false),
            ("1 ", true),
            ("one ", true),
            ("two ", true),
            ("three", true)
        ],
        "{events:?}"
    );
    for e in rest {
        assert!(
            e.get("statusUpdate").is_some() || e.get("artifactUpdate").is_some(),
            "{e}"
        );
        assert_eq!(
            e[if e.get("statusUpdate").is_some() {
                "statusUpdate"
            } else {
                "artifactUpdate"
            }]["taskId"],
            id.as_str()
        );
    }
    // Order: any WORKING update before the artifacts, COMPLETED last.
    let kinds: Vec<&str> = rest
        .iter()
        .map(|e| match state(e) {
            Some("TASK_STATE_WORKING") => "working",
            Some("TASK_STATE_COMPLETED") => "completed",
            Some(other) => panic!("unexpected state {other}"),
            None => "artifact",
        })
        .collect();
    let mut expected = Vec::new();
    if state(first) == Some("TASK_STATE_SUBMITTED") {
        expected.push("working");
    }
    expected.extend(["artifact"; 5]);
    expected.push("completed");
    assert_eq!(kinds, expected, "{events:?}");

    // Both hosts answer the same task.
    let on_a = rpc(&c, &a.base, "GetTask", json!({"id": id})).await;
    let on_b = rpc(&c, &b.base, "GetTask", json!({"id": id})).await;
    assert_eq!(on_a["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(on_a, on_b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_started_on_one_host_is_readable_and_subscribable_on_another() {
    with_schema(|schema| async move { task_started_on_a_streams_on_b(&schema).await }).await;
}
