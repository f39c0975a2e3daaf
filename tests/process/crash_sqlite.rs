//! Crash test: the echo example on SQLite takes 1,200 concurrent blocking
//! SendMessage calls, is killed with SIGKILL once about half have been
//! answered, and restarts on the same data directory. Every task a client got
//! an answer for reads back exactly as answered; no task is left SUBMITTED or
//! WORKING: the ones running at the kill are FAILED with the restart message.
//! Needs the example binary (see `support/server.rs`).

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use support::http::{client, list_all, message, rpc, try_rpc};
use support::server::{Server, TempDir};

const TASKS: usize = 1200;
const IN_FLIGHT: usize = 64;
const RESTARTED: &str = "The server restarted while this task was running.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_load_loses_no_answered_task_and_leaves_none_working() {
    let started = Instant::now();
    let data = TempDir::new("crash");
    let dir = data.0.to_str().unwrap().to_owned();
    let srv = Server::start_with("echo", &[("A2A_DATA_DIR", &dir)]);
    let base = srv.base.clone();
    let c = client();

    let answered: Arc<Mutex<Vec<Value>>> = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let half = Arc::new(tokio::sync::Notify::new());

    let load = {
        let (c, base, answered, count, half) = (
            c.clone(),
            base.clone(),
            answered.clone(),
            count.clone(),
            half.clone(),
        );
        tokio::spawn(async move {
            futures_util::stream::iter(0..TASKS)
                .map(|i| {
                    let (c, base) = (c.clone(), base.clone());
                    async move {
                        let text = format!("sleep 0.2 task {i} of the crash test");
                        let params = json!({"message": message(&format!("m-{i}"), &text)});
                        let res = tokio::time::timeout(
                            Duration::from_secs(30),
                            try_rpc(&c, &base, "SendMessage", params),
                        )
                        .await;
                        (text, res)
                    }
                })
                .buffer_unordered(IN_FLIGHT)
                .for_each(|(text, res)| {
                    if let Ok(Ok(result)) = res {
                        let task = result["task"].clone();
                        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
                        let echoed: String = task["artifacts"][0]["parts"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|p| p["text"].as_str().unwrap())
                            .collect();
                        assert_eq!(echoed, text);
                        answered.lock().unwrap().push(task);
                        if count.fetch_add(1, Ordering::SeqCst) + 1 == TASKS / 2 {
                            half.notify_one();
                        }
                    }
                    std::future::ready(())
                })
                .await;
        })
    };

    // SIGKILL once half the tasks have been answered: no shutdown code runs.
    tokio::time::timeout(Duration::from_secs(40), half.notified())
        .await
        .expect("half the tasks answered within 40 s");
    srv.kill();
    load.await.unwrap();
    let answered = std::mem::take(&mut *answered.lock().unwrap());
    assert!(answered.len() >= TASKS / 2, "{} answered", answered.len());
    assert!(answered.len() < TASKS, "the kill came after every answer");

    // Restart on the same data directory: recovery runs before serving.
    let srv = Server::start_with("echo", &[("A2A_DATA_DIR", &dir)]);
    let base = srv.base.clone();

    // Every answered task reads back exactly as the client got it.
    futures_util::stream::iter(answered.iter())
        .for_each_concurrent(IN_FLIGHT, |task| {
            let (c, base) = (c.clone(), base.clone());
            async move {
                let id = task["id"].as_str().unwrap();
                let got = rpc(&c, &base, "GetTask", json!({"id": id})).await;
                assert_eq!(&got, task, "task {id} changed across the crash");
            }
        })
        .await;

    // No task is left running; those running at the kill failed with the
    // restart message.
    let all = list_all(&c, &base).await;
    assert!(all.len() >= answered.len(), "{} listed", all.len());
    let mut failed = 0;
    for t in &all {
        match t["status"]["state"].as_str().unwrap() {
            "TASK_STATE_COMPLETED" => {}
            "TASK_STATE_FAILED" => {
                assert_eq!(t["status"]["message"]["parts"][0]["text"], RESTARTED, "{t}");
                assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
                failed += 1;
            }
            other => panic!("task left {other} after the restart: {t}"),
        }
    }
    assert!(failed > 0, "no task was running at the kill");
    let completed = all.len() - failed;
    assert!(completed >= answered.len());
    eprintln!(
        "crash test: {} answered before the kill, {} tasks stored, {failed} failed by recovery, {:?}",
        answered.len(),
        all.len(),
        started.elapsed()
    );
}
