//! The `a2a.client` tracing span (its own test binary: tracing caches
//! callsite interest process-wide, so a thread-local subscriber must not race
//! other tests hitting the same callsite). The client runs over a plain
//! `tower::service_fn` HTTP service: any `Service<http::Request<_>>` serves.

#![cfg(feature = "client")]

mod support;

use a2a_tower::client::A2aClient;
use a2a_tower::types::{AgentCard, AgentInterface, GetTaskRequest};
use a2a_tower::{A2aError, A2aRequest, ErrorKind, Operation};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::trace::Fields;
use tower::ServiceExt;

/// The span names the operation, the transport and the error kind, never
/// the remote message, which still reaches the caller complete; every
/// request (card fetch included) carries `A2A-Version: 1.0`.
#[test]
fn span_records_classification_only() {
    let fields = Fields::default();
    let versions = Arc::new(Mutex::new(Vec::new()));
    let seen = versions.clone();
    let http = tower::service_fn(move |req: Request<Full<Bytes>>| {
        seen.lock()
            .unwrap()
            .push(req.headers().get("a2a-version").cloned());
        let body = if req.uri().path() == "/card" {
            let card = AgentCard::new("A", "d", "1")
                .with_interface(AgentInterface::jsonrpc("http://h/rpc"));
            serde_json::to_vec(&card).unwrap()
        } else {
            let err = A2aError::task_not_found("t-1").with_message("remote says hunter2");
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "error": err.to_jsonrpc_error()}))
                .unwrap()
        };
        async move { Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(body)))) }
    });
    fields.run(async {
        let client = A2aClient::builder("http://h/card")
            .http(http)
            .build()
            .unwrap()
            .connect()
            .await
            .unwrap();
        let get = GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        };
        let e = client
            .oneshot(A2aRequest::new(Operation::GetTask(get)))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TaskNotFound);
        assert_eq!(e.message(), "remote says hunter2");
        assert_eq!(e.metadata()["taskId"], "t-1");
    });
    assert_eq!(fields.of("a2a.client", "operation"), ["GetTask"]);
    assert_eq!(fields.of("a2a.client", "transport"), ["JSONRPC"]);
    assert_eq!(fields.of("a2a.client", "error"), ["TASK_NOT_FOUND"]);
    assert!(fields.never("hunter2"));
    let versions = versions.lock().unwrap();
    assert_eq!(versions.len(), 2);
    assert!(
        versions
            .iter()
            .all(|v| v.as_ref().is_some_and(|v| v == "1.0"))
    );
}
