//! The client resumes a dropped stream by itself: a SendStreamingMessage to
//! the echo example on SQLite, the server killed with SIGKILL mid-stream and
//! restarted on the same port and data directory. The caller's stream goes
//! on without an error: the client resubscribes with the last event id it
//! received and gets exactly the events after it (here the FAILED status
//! that restart recovery committed), ids growing without a repeat.
//! Needs the example binary (see `support/server.rs`).

use crate::support;

use std::process::Command;
use std::time::Duration;

use a2a_tower::client::{A2aClient, Transport};
use a2a_tower::types::{Message, SendMessageRequest, StreamResponse, TaskState};
use a2a_tower::{A2aRequest, A2aResponse, Operation};
use support::server::{Server, TempDir, example_binary};
use tower::ServiceExt as _;

fn echo_on(dir: &str, addr: &str) -> Server {
    let mut cmd = Command::new(example_binary("echo"));
    cmd.env("A2A_DATA_DIR", dir).env("A2A_ADDR", addr);
    Server::start_command("echo", cmd)
}

async fn resumes_across_a_restart(transport: Transport) {
    let data = TempDir::new("resume");
    let dir = data.0.to_str().unwrap().to_owned();
    let srv = echo_on(&dir, "127.0.0.1:0");
    let addr = srv.base.trim_start_matches("http://").to_owned();
    let client = A2aClient::builder(format!("http://{addr}/.well-known/agent-card.json"))
        .transport(transport)
        .stream_resume(8, Duration::from_millis(100))
        .build()
        .unwrap()
        .connect()
        .await
        .unwrap();
    let send = SendMessageRequest {
        message: Message::user("m-1", "sleep 30 then answer"),
        ..Default::default()
    };
    let res = client
        .oneshot(A2aRequest::new(Operation::SendStreamingMessage(send)))
        .await
        .unwrap();
    let A2aResponse::Stream(mut events) = res else {
        panic!("a stream")
    };
    let (first, first_id) = events.next_with_id().await.unwrap().unwrap();
    let StreamResponse::Task(task) = first else {
        panic!("starts with the task: {first:?}")
    };
    let first_id = first_id.expect("an id").seq().unwrap();
    // The server dies mid-stream and comes back on the same port.
    srv.kill();
    let restarted = tokio::task::spawn_blocking({
        let (dir, addr) = (dir.clone(), addr.clone());
        move || {
            std::thread::sleep(Duration::from_millis(300));
            echo_on(&dir, &addr)
        }
    });
    let mut rest = Vec::new();
    let read = async {
        while let Some(item) = events.next_with_id().await {
            let (event, id) = item.expect("no error reaches the caller");
            rest.push((id.expect("an id").seq().unwrap(), event));
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the resumed stream ends");
    let srv = restarted.await.unwrap();
    let ids: Vec<u64> = rest.iter().map(|(id, _)| *id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]) && ids.first().is_some_and(|&i| i > first_id),
        "no repeat: {first_id} then {ids:?}"
    );
    let Some((_, StreamResponse::StatusUpdate(last))) = rest.last() else {
        panic!("ends with a status: {rest:?}")
    };
    assert_eq!(last.task_id, task.id);
    assert_eq!(last.status.state, TaskState::Failed, "closed by recovery");
    srv.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_resumes_across_a_server_restart_on_sqlite_jsonrpc() {
    resumes_across_a_restart(Transport::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_resumes_across_a_server_restart_on_sqlite_rest() {
    resumes_across_a_restart(Transport::HttpJson).await;
}
