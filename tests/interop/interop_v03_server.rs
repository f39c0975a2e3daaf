//! `A2aClient` against the official Python SDK 0.3.x **server**
//! (`tests/interop/python03_server.py`: `DefaultRequestHandler` over an
//! `InMemoryTaskStore`, its 0.3 JSON-RPC and HTTP+JSON apps on one uvicorn
//! port, a 0.3 card without `supportedInterfaces`), started per test. The
//! client reads the 0.3 card, picks its 0.3 interfaces by itself, and over
//! both bindings sends, streams, gets, cancels, resubscribes and continues an
//! INPUT_REQUIRED task; an error code outside the A2A table keeps its number
//! and message.
//!
//! Python 0.3 comes from `A2A_PYTHON03`, else `.venv03/bin/python`
//! (`scripts/test.sh` installs it); a missing one fails these tests.

use crate::support;

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::types::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskState,
};
use a2a_tower::{A2aResponse, ErrorKind, Operation, ProtocolVersion};
use futures_util::StreamExt;
use support::client::{artifact_text, bounded, call, card_url, err, send};
use support::python::script;
use support::server::Server;

use super::interop_v03::python03;

const BOTH: [Transport; 2] = [Transport::JsonRpc, Transport::HttpJson];

fn python03_server() -> Server {
    let mut cmd = std::process::Command::new(python03());
    cmd.arg(script("python03_server.py")).arg("0");
    Server::start_command("python03_server.py", cmd)
}

/// A client picking the card's interface by itself (no version given).
async fn connect(base: &str, t: Transport) -> A2aClient<HttpClient> {
    let c = A2aClient::builder(card_url(base))
        .transport(t)
        .build()
        .unwrap();
    let client = bounded(c.connect()).await.unwrap();
    assert_eq!(client.transport(), t);
    client
}

fn task_of(res: A2aResponse) -> Task {
    match res {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        A2aResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn text(t: &Task) -> String {
    t.artifacts.iter().map(artifact_text).collect()
}

async fn events(c: &A2aClient<HttpClient>, op: Operation) -> Vec<StreamResponse> {
    let Ok(A2aResponse::Stream(s)) = call(c, op).await else {
        panic!("expected a stream");
    };
    bounded(s.map(|e| e.unwrap()).collect::<Vec<_>>()).await
}

fn last_state(evs: &[StreamResponse]) -> TaskState {
    evs.iter()
        .rev()
        .find_map(|e| match e {
            StreamResponse::StatusUpdate(u) => Some(u.status.state),
            StreamResponse::Task(t) => Some(t.status.state),
            _ => None,
        })
        .expect("a status in the stream")
}

#[tokio::test]
async fn the_client_reads_a_03_card_and_speaks_03() {
    let server = python03_server();
    for t in BOTH {
        let c = connect(&server.base, t).await;
        assert!(
            c.card()
                .supported_interfaces
                .iter()
                .all(|i| i.protocol_version == "0.3.0")
        );

        // Blocking send, then get.
        let mut req = send("echo hello");
        req.configuration.get_or_insert_default().return_immediately = false;
        let task = task_of(call(&c, Operation::SendMessage(req)).await.unwrap());
        assert_eq!(task.status.state, TaskState::Completed, "{t:?}");
        assert_eq!(text(&task), "echo hello");
        let get = GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        };
        let got = task_of(call(&c, Operation::GetTask(get)).await.unwrap());
        assert_eq!(got.status.state, TaskState::Completed);

        // Streamed chunks in order, then COMPLETED.
        let evs = events(&c, Operation::SendStreamingMessage(send("stream a b c"))).await;
        let chunks: String = evs
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(u) => Some(artifact_text(&u.artifact)),
                _ => None,
            })
            .collect();
        assert_eq!(chunks, "a b c", "{t:?}");
        assert_eq!(last_state(&evs), TaskState::Completed);

        // Unknown task: TaskNotFound on both bindings.
        let get = GetTaskRequest {
            id: "no-such-task".into(),
            ..Default::default()
        };
        assert_eq!(
            err(call(&c, Operation::GetTask(get)).await).kind(),
            ErrorKind::TaskNotFound
        );

        // ListTasks does not exist in 0.3.
        let list = call(&c, Operation::ListTasks(ListTasksRequest::default())).await;
        assert_eq!(err(list).kind(), ErrorKind::UnsupportedOperation);
    }
}

#[tokio::test]
async fn cancel_resubscribe_and_continue_over_03() {
    let server = python03_server();
    for t in BOTH {
        let c = connect(&server.base, t).await;
        // Cancel a slow task.
        let mut req = send("slow 5000");
        req.configuration.get_or_insert_default().return_immediately = true;
        let task = task_of(call(&c, Operation::SendMessage(req)).await.unwrap());
        let cancel = CancelTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        };
        let canceled = task_of(call(&c, Operation::CancelTask(cancel)).await.unwrap());
        assert_eq!(canceled.status.state, TaskState::Canceled, "{t:?}");

        // Resubscribe to a running task: it ends COMPLETED.
        let mut req = send("slow 300");
        req.configuration.get_or_insert_default().return_immediately = true;
        let task = task_of(call(&c, Operation::SendMessage(req)).await.unwrap());
        let sub = SubscribeToTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        };
        let evs = events(&c, Operation::SubscribeToTask(sub)).await;
        assert_eq!(last_state(&evs), TaskState::Completed, "{t:?}");

        // INPUT_REQUIRED, then the answer on the same task.
        let mut req = send("ask");
        req.configuration.get_or_insert_default().return_immediately = false;
        let asked = task_of(call(&c, Operation::SendMessage(req)).await.unwrap());
        assert_eq!(asked.status.state, TaskState::InputRequired, "{t:?}");
        let mut answer: SendMessageRequest = send("Ada");
        answer.message.task_id = asked.id.clone();
        answer.message.context_id = asked.context_id.clone();
        let done = task_of(call(&c, Operation::SendMessage(answer)).await.unwrap());
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(text(&done), "Hello, Ada!");
    }
}

#[tokio::test]
async fn a_foreign_error_code_keeps_its_number_and_message() {
    let server = python03_server();
    let c = A2aClient::builder(card_url(&server.base))
        .protocol_version(ProtocolVersion::V0_3)
        .build()
        .unwrap();
    let c = bounded(c.connect()).await.unwrap();
    let e = err(call(&c, Operation::SendMessage(send("quota now"))).await);
    assert_eq!(e.code(), -32099, "{e:?}");
    assert_eq!(e.message(), "Quota exhausted");
    assert_eq!(e.kind(), ErrorKind::Internal);
}

/// `examples/ask.rs` against the 0.3 agent, unchanged: it reads the 0.3
/// card, speaks 0.3 on both bindings, streamed or not, and prints the
/// answer; INPUT_REQUIRED exits 2 with the agent's question.
#[test]
fn the_ask_example_works_against_a_03_agent() {
    use support::ask::ask;
    let server = python03_server();
    for transport in ["jsonrpc", "http+json"] {
        for stream in [false, true] {
            let mut args = vec![server.base.as_str(), "--transport", transport];
            if stream {
                args.push("--stream");
            }
            args.extend(["hello", "there"]);
            let r = ask(&args);
            assert_eq!(r.code, 0, "{r:?}");
            assert!(r.stdout.contains("hello there"), "{r:?}");
        }
        let r = ask(&[server.base.as_str(), "--transport", transport, "ask"]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stdout.contains("What is your name?"), "{r:?}");
    }
}
