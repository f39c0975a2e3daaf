//! The `a2a.tool` tracing span (its own test binary: tracing caches callsite
//! interest process-wide). The tool set runs over a plain `tower::service_fn`
//! HTTP service answering the card and one SendMessage with a FAILED task
//! whose status text is secret: the span names the tool, the operation and
//! the outcome's class only; the caller gets the remote text complete.

#![cfg(feature = "tools")]

mod support;

use a2a_tower::tool::{Endpoint, Invocation, Outcome, RemoteAgentError, ToolSet};
use a2a_tower::types::{
    AgentCard, AgentInterface, Message, SendMessageResponse, Task, TaskState, TaskStatus,
};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use serde_json::json;
use support::trace::Fields;

#[test]
fn span_records_classification_only() {
    let fields = Fields::default();
    let http = tower::service_fn(move |req: Request<Full<Bytes>>| {
        let body = if req.uri().path() == "/card" {
            let card = AgentCard::new("Secret Keeper", "d", "1")
                .with_interface(AgentInterface::jsonrpc("http://h/rpc"));
            serde_json::to_vec(&card).unwrap()
        } else {
            let task = Task {
                id: "t-1".into(),
                context_id: "c-1".into(),
                status: TaskStatus {
                    state: TaskState::Failed,
                    message: Some(Message::agent("s", "remote says hunter2")),
                    timestamp: None,
                },
                ..Task::default()
            };
            let result = serde_json::to_value(SendMessageResponse::Task(task.into())).unwrap();
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": result})).unwrap()
        };
        async move { Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(body)))) }
    });
    fields.run(async {
        let set = ToolSet::open([Endpoint::new("http://h/card").http(http)])
            .await
            .unwrap();
        let tool = &set.tools()[0];
        let r = tool
            .call(Invocation::new("1", json!({"message": "tell me"})))
            .await;
        let Ok(Outcome::Failed(f)) = r else {
            panic!("expected a failure, got {r:?}")
        };
        let cause = f.cause().downcast_ref::<RemoteAgentError>().unwrap();
        assert_eq!(cause.status_text(), Some("remote says hunter2"));
    });
    assert_eq!(fields.of("a2a.tool", "tool"), ["secret_keeper"]);
    assert_eq!(fields.of("a2a.tool", "operation"), ["call"]);
    assert_eq!(fields.of("a2a.tool", "outcome"), ["failed"]);
    assert!(fields.never("hunter2"));
    assert!(fields.never("tell me"));
}
