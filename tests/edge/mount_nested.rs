//! Path-free mounting: the assembled stack nested under a prefix with axum's
//! `nest_service` (the host strips the prefix), beside the host's own
//! routes, and called through the crate's client over loopback on both
//! JSON-RPC and HTTP+JSON; a URL that is no A2A endpoint is reported as
//! such, never as TaskNotFound.

use crate::support;

use a2a_tower::client::{A2aClient, Transport};
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, GetTaskRequest, SendMessageResponse, Task, TaskState,
};
use a2a_tower::{A2aResponse, BoxError, ErrorKind, NotFound, Operation};
use futures_core::Stream;
use futures_util::StreamExt;
use support::client::{artifact_text, bounded, call, connect, err, event_line, send};
use support::http::{client, fetch, request};
use support::loopback::{listener, serve};

/// Answers `shout: TEXT` in capitals.
struct Shout;

impl Agent for Shout {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(format!("shout: {}", input.text.to_uppercase()))])
    }
}

/// The card of the agent at `{base}{mount}`: JSON-RPC at the mount,
/// HTTP+JSON below it at `/rest`.
fn card(base: &str, mount: &str) -> AgentCard {
    AgentCard::new("Shout", "Shouts", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{base}{mount}")))
        .with_interface(AgentInterface::http_json(format!("{base}{mount}/rest")))
        .with_skill(AgentSkill::new("shout", "Shout", "Shouts"))
        .with_streaming(true)
}

/// An axum host: the stack nested at `nest` (its card says `card_mount`),
/// and a route of the host's own.
async fn host(card_mount: &str, nest: &str) -> String {
    let (l, base) = listener().await;
    let a2a = A2aServer::builder(card(&base, card_mount))
        .agent(Shout)
        .await
        .unwrap();
    let app = axum::Router::new()
        .nest_service(nest, a2a)
        .route("/health", axum::routing::get(|| async { "ok" }));
    serve(l, app);
    base
}

/// The completed task of a SendMessage answer and its artifact's text.
fn shouted(r: A2aResponse) -> (Task, String) {
    let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = r else {
        panic!("not a task: {r:?}")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    let text = artifact_text(&task.artifacts[0]);
    (task.into_inner(), text)
}

#[tokio::test]
async fn nested_with_axum_serves_every_binding_through_the_client() {
    let base = host("/agents/shout", "/agents/shout").await;
    let agent = format!("{base}/agents/shout");
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let c = connect(&agent, t).await;
        let sent = call(&c, Operation::SendMessage(send("hi"))).await.unwrap();
        let (task, text) = shouted(sent);
        assert_eq!(text, "shout: HI", "{t:?}");
        let got = call(
            &c,
            Operation::GetTask(GetTaskRequest {
                id: task.id.clone(),
                ..Default::default()
            }),
        )
        .await
        .unwrap();
        let A2aResponse::Task(got) = got else {
            panic!("not a task: {got:?}")
        };
        assert_eq!(got.id, task.id, "{t:?}");
        let A2aResponse::Stream(events) = call(&c, Operation::SendStreamingMessage(send("there")))
            .await
            .unwrap()
        else {
            panic!("not a stream")
        };
        let lines: Vec<String> = bounded(events.map(|e| event_line(e.unwrap())).collect()).await;
        assert_eq!(
            lines.last().map(String::as_str),
            Some("status Completed"),
            "{t:?}: {lines:?}"
        );
        assert!(
            lines.iter().any(|l| l == "artifact shout: THERE"),
            "{lines:?}"
        );
        // An unknown task is still TaskNotFound, an A2A answer.
        let missing = call(
            &c,
            Operation::GetTask(GetTaskRequest {
                id: "no-such-task".into(),
                ..Default::default()
            }),
        )
        .await;
        assert_eq!(err(missing).kind(), ErrorKind::TaskNotFound, "{t:?}");
    }
    // The host's own route is untouched.
    let health = fetch(&client(), request("GET", &format!("{base}/health"), None)).await;
    assert_eq!((health.status.as_u16(), health.text()), (200, "ok"));
}

#[tokio::test]
async fn a_path_of_no_binding_says_so() {
    let base = host("/agents/shout", "/agents/shout").await;
    let c = client();
    for path in ["/agents/shout/nope", "/agents/shout/.well-known/other"] {
        let r = fetch(
            &c,
            request(
                "POST",
                &format!("{base}{path}"),
                Some(&serde_json::json!({})),
            ),
        )
        .await;
        assert_eq!(r.status.as_u16(), 404, "{path}");
        assert_eq!(r.text(), NotFound::BODY, "{path}");
    }
}

#[tokio::test]
async fn a_url_that_is_no_a2a_endpoint_is_not_task_not_found() {
    // The card says `/agents/shout`, but the host nests the stack at
    // `/agents/other`: every call the client makes reaches axum's own 404.
    let base = host("/agents/shout", "/agents/other").await;
    let card = format!("{base}/agents/other/.well-known/agent-card.json");
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let c = A2aClient::builder(card.clone())
            .transport(t)
            .build()
            .unwrap();
        let c = bounded(c.connect()).await.unwrap();
        let e = err(call(&c, Operation::SendMessage(send("hi"))).await);
        assert_eq!(e.kind(), ErrorKind::MethodNotFound, "{t:?}");
        assert!(
            e.message()
                .starts_with(&format!("no A2A endpoint at {base}/agents/shout")),
            "{t:?}: {}",
            e.message()
        );
    }
    // The card itself resolves from the nested stack.
    assert!(
        fetch(&client(), request("GET", &card, None))
            .await
            .status
            .is_success()
    );
}
