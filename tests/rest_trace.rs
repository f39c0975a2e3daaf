//! The `a2a.rest` tracing span, and the engine's `a2a.call` span (their own
//! test binary: tracing caches callsite interest process-wide, so a
//! thread-local subscriber must not race other tests hitting the same
//! callsite).

#![cfg(feature = "rest")]

mod support;

use a2a_tower::types::{AgentCard, AgentInterface};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, RestLayer};
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use support::trace::Fields;
use tower::{Layer, ServiceExt};

/// The `a2a.rest` span names the operation and the error kind, never error text.
#[test]
fn span_records_operation_and_error_kind_only() {
    let fields = Fields::default();
    let core = tower::service_fn(|_req: A2aRequest| async {
        Err::<A2aResponse, _>(A2aError::internal("db password hunter2"))
    });
    let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a"));
    let svc = RestLayer::new(&card).unwrap().layer(core);
    let get = |path: &str| Request::get(path).body(Full::new(Bytes::new())).unwrap();
    tracing::subscriber::with_default(fields.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            for (path, status) in [("/a2a/tasks/t-1", 500), ("/a2a/nope", 404)] {
                let res = svc.clone().oneshot(get(path)).await.unwrap();
                assert_eq!(res.status(), status);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                assert!(!String::from_utf8_lossy(&body).contains("hunter2"));
            }
        });
    });
    assert_eq!(fields.of("a2a.rest", "operation"), ["GetTask"]);
    assert_eq!(
        fields.of("a2a.rest", "error"),
        ["INTERNAL_ERROR", "METHOD_NOT_FOUND"]
    );
    assert!(fields.never("hunter2"));
}

/// The engine's `a2a.call` span records a failed call's error kind (here
/// TaskNotFound), never a message.
#[cfg(feature = "engine")]
#[test]
fn call_span_records_the_error_kind() {
    use a2a_tower::Operation;
    use a2a_tower::engine::TaskLayer;
    use a2a_tower::log::MemoryTaskLog;
    use a2a_tower::types::GetTaskRequest;

    let fields = Fields::default();
    let agent = tower::service_fn(|_: a2a_tower::engine::Execution| async {
        Ok::<(), a2a_tower::BoxError>(())
    });
    let svc = TaskLayer::new(AgentCard::default(), MemoryTaskLog::new())
        .unwrap()
        .layer(agent);
    let op = Operation::GetTask(GetTaskRequest {
        id: "no-such-task".into(),
        ..Default::default()
    });
    let out = fields.run(svc.oneshot(A2aRequest::new(op)));
    assert!(out.is_err());
    assert_eq!(fields.of("a2a.call", "method"), ["GetTask"]);
    assert_eq!(fields.of("a2a.call", "error.kind"), ["TASK_NOT_FOUND"]);
}
