//! Crash test of the push outbox (issue 17 item 3): the echo example on
//! SQLite completes a task with an inline push config while its webhook
//! hangs on the first event, is killed with SIGKILL, and restarts on the same
//! data directory (same host id). The outbox's start-up sweep then delivers
//! every event of the task, in order: the one in flight at the kill possibly
//! twice, none lost. The receiver lives in the test, so it outlives the
//! first process. Needs the example binary (see `support/server.rs`).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::{client, message, rpc};
use support::server::{Server, TempDir};
use support::webhook::{Receiver, Reply};

const TOKEN: &str = "tok-crash-3e8a";
const TEXT: &str = "alpha bravo charlie delta echo foxtrot";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_delivers_every_event_after_a_sigkill() {
    let rx = Receiver::start().await;
    // Every request hangs until the script is cleared.
    rx.script(std::iter::repeat_n(Reply::Hang, 100));
    let data = TempDir::new("crash-push");
    let dir = data.0.to_str().unwrap().to_owned();
    let envs = [
        ("A2A_DATA_DIR", dir.as_str()),
        ("A2A_PUSH_ALLOW", "127.0.0.0/8"),
    ];
    let srv = Server::start_with("echo", &envs);
    let c = client();

    let params = json!({
        "message": message("m-crash-push", TEXT),
        "configuration": {"taskPushNotificationConfig": {"url": rx.url("/hook"), "token": TOKEN}},
    });
    let answer = tokio::time::timeout(
        Duration::from_secs(30),
        rpc(&c, &srv.base, "SendMessage", params),
    )
    .await
    .expect("SendMessage answered in time");
    let task = answer["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let id = task["id"].as_str().unwrap().to_owned();

    // The first delivery is in flight (the webhook does not answer): kill.
    let deadline = Instant::now() + Duration::from_secs(20);
    while rx.hits().is_empty() {
        assert!(Instant::now() < deadline, "no delivery was attempted");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    srv.kill();
    let before = rx.hits().len();
    assert_eq!(before, 1, "one event in flight, the next wait for it");
    rx.clear_script();

    // Restart on the same data directory: the sweep finds the pending events.
    let srv = Server::start_with("echo", &envs);
    let events = rx.events_until_completed().await;

    // The task on creation, WORKING, one chunk per word, COMPLETED.
    assert_eq!(events[0]["task"]["id"], id.as_str(), "{events:#?}");
    let mut states = Vec::new();
    let mut text = String::new();
    for e in &events[1..] {
        if let Some(u) = e.get("statusUpdate") {
            assert_eq!(u["taskId"], id.as_str());
            states.push(u["status"]["state"].as_str().unwrap().to_owned());
        } else if let Some(u) = e.get("artifactUpdate") {
            assert_eq!(u["taskId"], id.as_str());
            text.push_str(u["artifact"]["parts"][0]["text"].as_str().unwrap());
        } else {
            panic!("not a task event: {e}");
        }
    }
    assert_eq!(states, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    assert_eq!(text, TEXT, "every chunk, in order");
    let chunks = events.len() - 3;
    assert_eq!(chunks, TEXT.split_whitespace().count());

    // The event in flight at the kill came twice (its outcome was never
    // recorded), every other one once; each request carries the token.
    let hits = rx.hits();
    assert_eq!(hits.len(), events.len() + 1);
    let first: Value = serde_json::from_slice(&hits[0].body).unwrap();
    assert_eq!(first, events[0], "the event in flight was the task");
    assert!(
        hits.iter()
            .all(|h| h.headers["a2a-notification-token"] == TOKEN)
    );

    // The task reads back as answered.
    let got = rpc(&c, &srv.base, "GetTask", json!({"id": id})).await;
    assert_eq!(got, task);
}
