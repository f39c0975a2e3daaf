//! Retention in the echo example (`A2A_RETENTION_SECS`) on SQLite: a
//! finished task is deleted once older than the age; and a SIGKILL while
//! deletions run under load leaves every task whole or gone (read back
//! after a restart without retention: each answered task is either not
//! found or exactly as answered, and ListTasks lists only whole tasks).

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};
use support::http::{client, fetch, list_all, message, request, rpc, rpc_body};
use support::server::{Server, TempDir};

/// GetTask's raw JSON-RPC answer.
async fn get(c: &support::http::HttpClient, base: &str, id: &str) -> Value {
    let body = rpc_body(1, "GetTask", json!({"id": id}));
    let r = fetch(c, request(Method::POST, &format!("{base}/"), Some(&body))).await;
    r.json()
}

fn not_found(answer: &Value) -> bool {
    answer["error"]["code"] == -32001
}

#[tokio::test]
async fn echo_deletes_tasks_older_than_the_retention_age() {
    let srv = Server::start_with("echo", &[("A2A_RETENTION_SECS", "1")]);
    let c = client();
    let r = rpc(
        &c,
        &srv.base,
        "SendMessage",
        json!({"message": message("m-1", "hi")}),
    )
    .await;
    let id = r["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = get(&c, &srv.base, &id).await;
        if not_found(&answer) {
            break;
        }
        assert!(Instant::now() < deadline, "still there: {answer}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_deletions_leaves_every_task_whole_or_gone() {
    let data = TempDir::new("retention-crash");
    let dir = data.0.to_str().unwrap().to_owned();
    let srv = Server::start_with(
        "echo",
        &[("A2A_DATA_DIR", &dir), ("A2A_RETENTION_SECS", "1")],
    );
    let c = client();
    let answered: Arc<Mutex<Vec<Value>>> = Arc::default();
    // Load for about 3 s: tasks finish and expire while others are created.
    let started = Instant::now();
    let mut load = Vec::new();
    for w in 0..8 {
        let (c, base, answered) = (c.clone(), srv.base.clone(), answered.clone());
        load.push(tokio::spawn(async move {
            let mut i = 0;
            while started.elapsed() < Duration::from_secs(3) {
                let text = format!("w{w} n{i} some words");
                let params = json!({"message": message(&format!("m-{w}-{i}"), &text)});
                match support::http::try_rpc(&c, &base, "SendMessage", params).await {
                    Ok(r) => answered.lock().unwrap().push(r["task"].clone()),
                    Err(_) => return,
                }
                i += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(2700)).await;
    srv.kill();
    for l in load {
        let _ = l.await;
    }
    let srv = Server::start_with("echo", &[("A2A_DATA_DIR", &dir)]);
    let answered = answered.lock().unwrap().clone();
    assert!(answered.len() > 50, "too little load: {}", answered.len());
    let (mut gone, mut whole) = (0, 0);
    for task in &answered {
        let id = task["id"].as_str().unwrap();
        let answer = get(&c, &srv.base, id).await;
        if not_found(&answer) {
            gone += 1;
            continue;
        }
        let read = &answer["result"];
        assert_eq!(read["status"], task["status"], "{id}");
        assert_eq!(read["artifacts"], task["artifacts"], "{id}");
        assert_eq!(read["history"], task["history"], "{id}");
        whole += 1;
    }
    assert!(gone > 0, "no deletion ran before the kill");
    // Every listed task reads back whole.
    for t in list_all(&c, &srv.base).await {
        let id = t["id"].as_str().unwrap();
        let answer = get(&c, &srv.base, id).await;
        assert_eq!(answer["result"]["status"], t["status"], "{id}");
    }
    eprintln!("{gone} gone, {whole} whole of {}", answered.len());
}
