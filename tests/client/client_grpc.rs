//! `A2aClient` over gRPC (`Transport::Grpc`) against the built `grpc`
//! example (the echo agent on JSON-RPC, HTTP+JSON and gRPC): every operation,
//! the stream, and the errors from the statuses' `google.rpc` details give
//! the same transcript as JSON-RPC against the same server; with gRPC on a
//! listener of its own (another origin) the client connects only when that
//! origin is allowed.

use crate::support;

use a2a_tower::client::{A2aClient, Transport};
use a2a_tower::types::{GetTaskRequest, Message, SendMessageRequest, SendMessageResponse};
use a2a_tower::{A2aRequest, A2aResponse, ErrorKind, Operation};
use support::client::{bounded, card_url, connect};
use support::server::Server;
use tower::ServiceExt;

use super::client::transcript;

#[tokio::test]
async fn every_operation_over_grpc_answers_as_over_jsonrpc() {
    let server = Server::start("grpc");
    let rpc = transcript(&connect(&server.base, Transport::JsonRpc).await).await;
    let grpc = transcript(&connect(&server.base, Transport::Grpc).await).await;
    assert_eq!(grpc, rpc, "gRPC gives the answers JSON-RPC gives");
    assert!(
        grpc.iter().any(|l| l.starts_with("GetTask TASK_NOT_FOUND")),
        "{grpc:?}"
    );
    assert!(grpc.iter().any(|l| l.starts_with("stream")), "{grpc:?}");
}

#[tokio::test]
async fn a_grpc_listener_of_its_own_is_another_origin() {
    let server = Server::start_with("grpc", &[("A2A_GRPC_ADDR", "127.0.0.1:0")]);
    let refused = A2aClient::builder(card_url(&server.base))
        .transport(Transport::Grpc)
        .build()
        .unwrap();
    let err = bounded(refused.connect()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);

    let probe = A2aClient::builder(card_url(&server.base)).build().unwrap();
    let card = bounded(probe.resolve()).await.unwrap();
    let grpc_addr = card
        .supported_interfaces
        .iter()
        .find(|i| i.protocol_binding == "GRPC")
        .map(|i| i.url.clone())
        .unwrap();
    let allowed = A2aClient::builder(card_url(&server.base))
        .transport(Transport::Grpc)
        .allow_origins([format!("http://{grpc_addr}")])
        .build()
        .unwrap();
    let client = bounded(allowed.connect()).await.unwrap();
    assert_eq!(client.url(), grpc_addr);
    let send = SendMessageRequest {
        message: Message::user("m-1", "hello grpc"),
        ..Default::default()
    };
    let res = bounded(
        client
            .clone()
            .oneshot(A2aRequest::new(Operation::SendMessage(send))),
    )
    .await
    .unwrap();
    let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else {
        panic!("{res:?}")
    };
    let get = Operation::GetTask(GetTaskRequest {
        id: task.id.clone(),
        ..Default::default()
    });
    let res = bounded(client.oneshot(A2aRequest::new(get))).await.unwrap();
    assert!(matches!(res, A2aResponse::Task(t) if t.id == task.id));
}
