//! The extended agent card (a2a-spec.md §2.5, §4.8, §10.1) through the
//! one-call assembly: served on both JSON bindings with the card of the
//! authenticated principal, Unauthenticated without one, −32004 when the card
//! does not declare it, and a card declaring it refused unless the stack
//! serves it. The gRPC binding's answers are in `tests/edge/grpc.rs`.

use crate::support;

use std::convert::Infallible;

use a2a_tower::card::ExtendedCard;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::{BoxError, ErrorKind};
use futures_core::Stream;
use http::{Method, Request};
use serde_json::{Value, json};
use support::http::{Reply, request, rpc_body, with_bearer};
use tower::ServiceExt;

/// The caller a host auth layer authenticated.
#[derive(Clone, Debug)]
struct Principal(String);

/// Optional bearer auth at the HTTP level: a token makes a principal; no
/// token passes on unauthenticated (the public operations stay reachable).
fn optional_bearer<B>(mut req: Request<B>) -> Request<B> {
    let who = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    if let Some(who) = who {
        req.extensions_mut().insert(Principal(who));
    }
    req
}

struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

fn card(declared: bool) -> AgentCard {
    let mut card = AgentCard::new("Public", "The public card", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/a2a"))
        .with_interface(AgentInterface::http_json("http://localhost/a2a/rest"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    card.capabilities.extended_agent_card = Some(declared);
    card
}

fn extended() -> ExtendedCard {
    ExtendedCard::for_principal(|p: &Principal| {
        AgentCard::new(format!("Extended for {}", p.0), "More skills", "1.0.0")
            .with_interface(AgentInterface::jsonrpc("http://localhost/a2a"))
            .with_skill(AgentSkill::new("secret", "Secret", "Only for members"))
    })
}

type App = a2a_tower::server::A2aHttpService<
    tower::layer::util::Stack<
        tower::util::MapRequestLayer<
            fn(
                Request<http_body_util::Full<bytes::Bytes>>,
            ) -> Request<http_body_util::Full<bytes::Bytes>>,
        >,
        tower::layer::util::Identity,
    >,
    a2a_tower::card::ExtendedCardService<
        a2a_tower::engine::TaskService<
            a2a_tower::engine::ExecutorService<a2a_tower::engine::AgentExecutor<Echo>>,
        >,
    >,
>;

async fn app(declared: bool) -> App {
    let auth: fn(Request<_>) -> Request<_> = optional_bearer;
    A2aServer::builder(card(declared))
        .http_layer(tower::util::MapRequestLayer::new(auth))
        .extended_card(extended())
        .agent(Echo)
        .await
        .unwrap()
}

async fn call(app: &App, req: Request<http_body_util::Full<bytes::Bytes>>) -> Reply {
    let res: Result<_, Infallible> = app.clone().oneshot(req).await;
    Reply::read(res.unwrap()).await
}

async fn jsonrpc(app: &App, token: Option<&str>) -> Value {
    let body = rpc_body(1, "GetExtendedAgentCard", json!({}));
    let reply = call(
        app,
        with_bearer(request(Method::POST, "/a2a", Some(&body)), token),
    )
    .await;
    let v = reply.json();
    // JSON-RPC errors travel with 200, except the authentication ones (401).
    let status = if v["error"]["code"] == json!(-31401) {
        401
    } else {
        200
    };
    assert_eq!(reply.status, status, "{v}");
    v
}

async fn rest(app: &App, token: Option<&str>) -> Reply {
    let req = request(Method::GET, "/a2a/rest/extendedAgentCard", None);
    call(app, with_bearer(req, token)).await
}

#[tokio::test]
async fn the_principal_gets_its_card_on_both_bindings() {
    let app = app(true).await;
    let v = jsonrpc(&app, Some("alice")).await;
    assert_eq!(v["result"]["name"], "Extended for alice", "{v}");
    assert_eq!(v["result"]["skills"][0]["id"], "secret");

    let r = rest(&app, Some("bob")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["name"], "Extended for bob");

    // The public card stays the public one.
    let req = Request::get("/.well-known/agent-card.json")
        .body(http_body_util::Full::default())
        .unwrap();
    let public = call(&app, req).await.json();
    assert_eq!(public["name"], "Public");
    assert_eq!(public["capabilities"]["extendedAgentCard"], true);
}

#[tokio::test]
async fn an_unauthenticated_caller_gets_unauthenticated() {
    let app = app(true).await;
    let v = jsonrpc(&app, None).await;
    assert_eq!(v["error"]["code"], -31401, "{v}");
    assert!(v.get("result").is_none());

    let r = rest(&app, None).await;
    r.rest_error(ErrorKind::Unauthenticated);
}

#[tokio::test]
async fn an_undeclared_card_is_unsupported_even_when_configured() {
    let app = app(false).await;
    let v = jsonrpc(&app, Some("alice")).await;
    assert_eq!(v["error"]["code"], -32004, "{v}");
    rest(&app, Some("alice"))
        .await
        .rest_error(ErrorKind::UnsupportedOperation);
}

#[tokio::test]
async fn a_declared_card_needs_an_extended_card() {
    let err = A2aServer::builder(card(true))
        .agent(Echo)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("extendedAgentCard"), "{err}");
}

#[cfg(feature = "managed")]
#[tokio::test]
async fn a_managed_program_serves_it_too() {
    let mut card = support::managed::card(&["application/json"])
        .with_interface(AgentInterface::jsonrpc("http://localhost/a2a"))
        .with_skill(AgentSkill::new("ask", "Ask", "Asks a question"));
    card.capabilities.extended_agent_card = Some(true);
    let app = A2aServer::builder(card)
        .a2a_layer(tower::util::MapRequestLayer::new(
            |mut req: a2a_tower::A2aRequest| {
                req.context.extensions.insert(Principal("carol".into()));
                req
            },
        ))
        .extended_card(extended())
        .program(support::managed::echo_question())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let body = rpc_body(1, "GetExtendedAgentCard", json!({}));
    let res = app
        .oneshot(request(Method::POST, "/a2a", Some(&body)))
        .await
        .unwrap();
    let v = Reply::read(res).await.json();
    assert_eq!(v["result"]["name"], "Extended for carol", "{v}");
}

/// The same over gRPC: the card for a caller whose `authorization` metadata
/// (an HTTP/2 header, so the same host layer sees it) names a principal,
/// UNAUTHENTICATED with ErrorInfo otherwise.
#[cfg(feature = "grpc")]
#[tokio::test]
async fn over_grpc_too() {
    use a2a_tower::grpc::proto::GetExtendedAgentCardRequest;
    use a2a_tower::grpc::proto::a2a_service_client::A2aServiceClient;

    let card = card(true).with_interface(AgentInterface::grpc("localhost:50051"));
    let auth: fn(Request<hyper::body::Incoming>) -> Request<hyper::body::Incoming> =
        optional_bearer;
    let app = A2aServer::builder(card)
        .http_layer(tower::util::MapRequestLayer::new(auth))
        .extended_card(extended())
        .agent(Echo)
        .await
        .unwrap();
    let (listener, base) = support::loopback::listener().await;
    support::loopback::serve(listener, app);
    let channel = tonic::transport::Channel::from_shared(base)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = A2aServiceClient::new(channel);
    let call = |token: Option<&str>| {
        let mut r = tonic::Request::new(GetExtendedAgentCardRequest::default());
        r.metadata_mut()
            .insert("a2a-version", "1.0".parse().unwrap());
        if let Some(t) = token {
            let value = format!("Bearer {t}").parse().unwrap();
            r.metadata_mut().insert("authorization", value);
        }
        r
    };
    let got = client
        .get_extended_agent_card(call(Some("dora")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.name, "Extended for dora");

    let status = client
        .get_extended_agent_card(call(None))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    assert!(
        !status.details().is_empty(),
        "google.rpc.Status details with the ErrorInfo"
    );
}
