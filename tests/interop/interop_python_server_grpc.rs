//! `A2aClient` over gRPC against the official Python SDK **server**
//! (`a2a-sdk[grpc]` 1.x: its `GrpcHandler` on a `grpc.aio` server beside the
//! Starlette routes, `tests/interop/python_server.py --grpc`). The card lists
//! the GRPC interface (`127.0.0.1:GPORT`, another origin than the card's,
//! allowed explicitly) first, and the client picks it from the card as it
//! picks the others: send, get, list, a streamed answer in order, the
//! INPUT_REQUIRED continuation, cancel, and TaskNotFound read from the
//! status's `google.rpc.ErrorInfo`.
//!
//! Python comes from `A2A_PYTHON`, else `.venv/bin/python` (`scripts/test.sh`
//! installs `a2a-sdk[http-server,grpc]`). A missing interpreter or package
//! fails these tests; they never skip.

use crate::support;

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::types::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use a2a_tower::{A2aResponse, ErrorKind, Operation};
use futures_util::StreamExt;
use support::client::{artifact_text, bounded, call, card_url, err, send};
use support::python::{python_with, script};
use support::server::Server;

/// The Python SDK server with its gRPC listener.
fn python_server() -> Server {
    let python = python_with("a2a.server.request_handlers.grpc_handler, grpc, uvicorn");
    let mut cmd = std::process::Command::new(python);
    cmd.arg(script("python_server.py")).arg("0").arg("--grpc");
    Server::start_command("python_server.py", cmd)
}

/// A client that picked the card's first interface, allowed to reach the
/// gRPC listener's origin.
async fn grpc_client(server: &Server) -> A2aClient<HttpClient> {
    let probe = A2aClient::builder(card_url(&server.base)).build().unwrap();
    let card = bounded(probe.resolve()).await.unwrap();
    let grpc = &card.supported_interfaces[0];
    assert_eq!(grpc.protocol_binding, "GRPC");
    let client = A2aClient::builder(card_url(&server.base))
        .allow_origins([format!("http://{}", grpc.url)])
        .build()
        .unwrap();
    let client = bounded(client.connect()).await.unwrap();
    assert_eq!(
        client.transport(),
        Transport::Grpc,
        "the card's first interface"
    );
    client
}

fn task_of(res: A2aResponse) -> Task {
    match res {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        A2aResponse::Task(t) => t,
        other => panic!("not a task: {other:?}"),
    }
}

fn text(t: &Task) -> String {
    t.artifacts.iter().map(artifact_text).collect()
}

#[tokio::test]
async fn send_get_list_and_errors_over_grpc() {
    let server = python_server();
    let c = grpc_client(&server).await;
    let task = task_of(
        call(&c, Operation::SendMessage(send("echo over grpc")))
            .await
            .unwrap(),
    );
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert!(text(&task).contains("over grpc"), "{task:?}");
    let got = task_of(
        call(
            &c,
            Operation::GetTask(GetTaskRequest {
                id: task.id.clone(),
                ..Default::default()
            }),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        (got.id.as_str(), got.status.state),
        (task.id.as_str(), TaskState::Completed)
    );
    let listed = call(&c, Operation::ListTasks(ListTasksRequest::default()))
        .await
        .unwrap();
    let A2aResponse::Tasks(page) = listed else {
        panic!("{listed:?}")
    };
    assert!(page.tasks.iter().any(|t| t.id == task.id), "{page:?}");
    let missing = err(call(
        &c,
        Operation::GetTask(GetTaskRequest {
            id: "no-such-task".into(),
            ..Default::default()
        }),
    )
    .await);
    assert_eq!(missing.kind(), ErrorKind::TaskNotFound, "{missing:?}");
}

#[tokio::test]
async fn a_stream_a_question_and_a_cancel_over_grpc() {
    let server = python_server();
    let c = grpc_client(&server).await;
    let res = call(
        &c,
        Operation::SendStreamingMessage(send("stream one two three")),
    )
    .await
    .unwrap();
    let A2aResponse::Stream(s) = res else {
        panic!("{res:?}")
    };
    let events: Vec<_> = bounded(s.collect::<Vec<_>>()).await;
    let mut chunks = String::new();
    let mut last = None;
    for e in events {
        match e.unwrap() {
            StreamResponse::ArtifactUpdate(a) => chunks.push_str(&artifact_text(&a.artifact)),
            StreamResponse::StatusUpdate(u) => last = Some(u.status.state),
            StreamResponse::Task(t) => last = Some(t.status.state),
            StreamResponse::Message(m) => panic!("a message: {m:?}"),
        }
    }
    let words: Vec<&str> = chunks.split_whitespace().collect();
    assert_eq!(words, ["one", "two", "three"], "{chunks:?}");
    assert_eq!(last, Some(TaskState::Completed));

    // The INPUT_REQUIRED continuation.
    let asked = task_of(call(&c, Operation::SendMessage(send("ask"))).await.unwrap());
    assert_eq!(asked.status.state, TaskState::InputRequired, "{asked:?}");
    let mut answer = send("Ada");
    answer.message.task_id = asked.id.clone();
    answer.message.context_id = asked.context_id.clone();
    let done = task_of(call(&c, Operation::SendMessage(answer)).await.unwrap());
    assert_eq!(done.status.state, TaskState::Completed);
    assert!(text(&done).contains("Hello, Ada!"), "{done:?}");

    // A slow task, canceled.
    let slow = SendMessageRequest {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..send("slow 5000")
    };
    let slow = task_of(call(&c, Operation::SendMessage(slow)).await.unwrap());
    let canceled = task_of(
        call(
            &c,
            Operation::CancelTask(CancelTaskRequest {
                id: slow.id.clone(),
                ..Default::default()
            }),
        )
        .await
        .unwrap(),
    );
    assert_eq!(canceled.status.state, TaskState::Canceled, "{canceled:?}");
}
