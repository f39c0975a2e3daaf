//! The one-call assembly: both bindings at the card's paths, host layers at
//! the HTTP and the A2aRequest level, the card public outside host HTTP layers,
//! and a principal from a host auth layer reaching the agent over both bindings.

use crate::support;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::{A2aRequest, Body, BoxError, ErrorKind};
use bytes::Bytes;
use futures_core::Stream;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::assembled;
use support::http::{Reply, request, rpc_body, with_bearer};
use tower::{Service, ServiceExt};

/// The authenticated caller, as a host auth layer records it.
#[derive(Clone, Debug)]
struct Principal(String);

/// Answers with who asked.
struct WhoAmI;

impl Agent for WhoAmI {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let who = input
            .call
            .extensions
            .get::<Principal>()
            .map_or("anonymous".to_owned(), |p| p.0.clone());
        futures_util::stream::iter([Ok(format!("{who}: {}", input.text))])
    }
}

/// An axum-style bearer auth layer: 401 without `Authorization: Bearer <name>`,
/// otherwise the principal goes into the request extensions.
#[derive(Clone)]
struct BearerAuth<S>(S);

impl<S, B> Service<Request<B>> for BearerAuth<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let token = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        match token {
            Some(name) => {
                req.extensions_mut().insert(Principal(name));
                Box::pin(self.0.call(req))
            }
            None => Box::pin(async {
                let mut res = Response::new(Body::empty());
                *res.status_mut() = StatusCode::UNAUTHORIZED;
                res.headers_mut()
                    .insert(http::header::WWW_AUTHENTICATE, "Bearer".parse().unwrap());
                Ok(res)
            }),
        }
    }
}

fn card() -> AgentCard {
    AgentCard::new("WhoAmI", "Says who asked", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/a2a"))
        .with_interface(AgentInterface::http_json("http://localhost/a2a/rest"))
        .with_skill(AgentSkill::new("whoami", "Who am I", "Says who asked"))
        .with_streaming(true)
}

fn post(path: &str, token: Option<&str>, body: Value) -> Request<Full<Bytes>> {
    with_bearer(request(Method::POST, path, Some(&body)), token)
}

async fn json_of(res: Response<Body>) -> Value {
    Reply::read(res).await.json()
}

fn message(text: &str) -> Value {
    support::http::message(&format!("m-{}", text.len()), text)
}

#[tokio::test]
async fn principal_reaches_the_agent_over_both_bindings() {
    let app = A2aServer::builder(card())
        .http_layer(tower::layer::layer_fn(BearerAuth))
        .agent(WhoAmI)
        .await
        .unwrap();

    // JSON-RPC.
    let res = app
        .clone()
        .oneshot(post(
            "/a2a",
            Some("alice"),
            rpc_body(1, "SendMessage", json!({"message": message("hi")})),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let v = json_of(res).await;
    assert_eq!(
        v["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "alice: hi"
    );

    // HTTP+JSON.
    let res = app
        .clone()
        .oneshot(post(
            "/a2a/rest/message:send",
            Some("bob"),
            json!({"message": message("yo")}),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let v = json_of(res).await;
    assert_eq!(v["task"]["artifacts"][0]["parts"][0]["text"], "bob: yo");

    // No token: the host layer refuses before any A2A processing.
    let res = app
        .clone()
        .oneshot(post(
            "/a2a/rest/message:send",
            None,
            json!({"message": message("x")}),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    // The card stays public, outside the host's HTTP layers.
    let res = app
        .oneshot(
            Request::get("/.well-known/agent-card.json")
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(json_of(res).await["name"], "WhoAmI");
}

/// Counts the A2A calls that reach it, by operation.
#[derive(Clone)]
struct Audit<S> {
    inner: S,
    seen: Arc<AtomicUsize>,
}

impl<S: Service<A2aRequest>> Service<A2aRequest> for Audit<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: A2aRequest) -> S::Future {
        self.seen.fetch_add(1, Ordering::SeqCst);
        self.inner.call(req)
    }
}

#[tokio::test]
async fn a2a_layers_see_every_call_and_edge_refusals_never_reach_them() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let app = A2aServer::builder(card())
        .a2a_layer(tower::layer::layer_fn(move |inner| Audit {
            inner,
            seen: counter.clone(),
        }))
        .agent(WhoAmI)
        .await
        .unwrap();

    let res = app
        .clone()
        .oneshot(post(
            "/a2a/rest/message:send",
            None,
            json!({"message": message("a")}),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let task_id = json_of(res).await["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .clone()
        .oneshot(post(
            "/a2a/",
            None,
            rpc_body("g", "GetTask", json!({"id": task_id})),
        ))
        .await
        .unwrap();
    assert_eq!(json_of(res).await["result"]["id"], task_id.as_str());
    assert_eq!(seen.load(Ordering::SeqCst), 2);

    // A version refusal is answered by the edge: the A2A layer never sees it.
    let mut req = post(
        "/a2a/rest/message:send",
        None,
        json!({"message": message("b")}),
    );
    req.headers_mut().remove("a2a-version");
    let res = app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(
        json_of(res).await["error"]["details"][0]["reason"],
        ErrorKind::VersionNotSupported.reason()
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn composes_with_tower_limits_and_timeouts() {
    let app = A2aServer::builder(card())
        .http_layer(tower::limit::ConcurrencyLimitLayer::new(64))
        .http_layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_secs(30),
        ))
        .max_body_bytes(1024)
        .agent(WhoAmI)
        .await
        .unwrap();
    let big = "x".repeat(2048);
    let res = app
        .clone()
        .oneshot(post(
            "/a2a/rest/message:send",
            None,
            json!({"message": message(&big)}),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(json_of(res).await["error"]["code"], 413);
    let res = app
        .oneshot(post(
            "/a2a/rest/message:send",
            None,
            json!({"message": message("ok")}),
        ))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn the_card_must_advertise_a_binding() {
    let card =
        AgentCard::new("None", "No interface", "1.0.0").with_skill(AgentSkill::new("x", "x", "x"));
    assert!(A2aServer::builder(card).agent(WhoAmI).await.is_err());
}

/// Answers with its input, except "quiet", which produces no output.
struct Quiet;

impl Agent for Quiet {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let out: Vec<Result<String, BoxError>> = if input.text == "quiet" {
            Vec::new()
        } else {
            vec![Ok(input.text)]
        };
        futures_util::stream::iter(out)
    }
}

fn get(path: &str) -> Request<Full<Bytes>> {
    request(Method::GET, path, None)
}

/// The `artifacts` of each listed task, by task id order of the page.
fn artifacts_of(tasks: &Value) -> Vec<Option<usize>> {
    let mut tasks = tasks.as_array().unwrap().clone();
    tasks.sort_by_key(|t| t["history"][0]["parts"][0]["text"].to_string());
    tasks
        .iter()
        .map(|t| t.get("artifacts").map(|a| a.as_array().unwrap().len()))
        .collect()
}

// a2a-spec.md §3.8: with `includeArtifacts: true` every listed task has an
// `artifacts` field, `[]` for a task without any; without it no task has
// one. Over both bindings.
#[tokio::test]
async fn list_tasks_include_artifacts_writes_empty_lists_over_both_bindings() {
    let app = A2aServer::builder(card()).agent(Quiet).await.unwrap();
    for text in ["quiet", "said"] {
        let res = app
            .clone()
            .oneshot(post(
                "/a2a",
                None,
                rpc_body(1, "SendMessage", json!({"message": message(text)})),
            ))
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let v = json_of(res).await;
        assert_eq!(
            v["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }

    let rpc = |params: Value| post("/a2a", None, rpc_body(2, "ListTasks", params));
    let v = json_of(
        app.clone()
            .oneshot(rpc(json!({"includeArtifacts": true})))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(artifacts_of(&v["result"]["tasks"]), [Some(0), Some(1)]);
    assert_eq!(v["result"]["totalSize"], 2);
    let v = json_of(app.clone().oneshot(rpc(json!({}))).await.unwrap()).await;
    assert_eq!(artifacts_of(&v["result"]["tasks"]), [None, None]);
    let v = json_of(
        app.clone()
            .oneshot(rpc(json!({"includeArtifacts": false})))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(artifacts_of(&v["result"]["tasks"]), [None, None]);

    let res = app
        .clone()
        .oneshot(get("/a2a/rest/tasks?includeArtifacts=true"))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let v = json_of(res).await;
    assert_eq!(artifacts_of(&v["tasks"]), [Some(0), Some(1)]);
    let v = json_of(app.clone().oneshot(get("/a2a/rest/tasks")).await.unwrap()).await;
    assert_eq!(artifacts_of(&v["tasks"]), [None, None]);
}

/// The builder's recovery step closes the live tasks of its host id, leaves
/// other hosts' tasks alone, and an empty host id fails the build.
#[tokio::test]
async fn builder_recovers_its_host_and_checks_the_host_id() {
    use a2a_tower::engine::RESTARTED_MESSAGE;
    use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
    use a2a_tower::types::{Message, TaskState};

    let log = MemoryTaskLog::new();
    for (task, host) in [("t-mine", "web-1"), ("t-other", "web-2")] {
        let records = vec![
            Record::created(task, "c"),
            Record::MessageAdmitted {
                message: Message::user("m", "hi"),
            },
            Record::ExecutionStarted { host: host.into() },
        ];
        log.append(AppendRequest::create("public", task, records))
            .await
            .unwrap();
    }
    let builder = A2aServer::builder(card())
        .task_log(log.clone())
        .host_id("web-1");
    assert_eq!(builder.recover().await.unwrap().closed, 1);
    let app = builder.agent(WhoAmI).await.expect("builds");
    drop(app);
    let mine = log.snapshot("public", "t-mine").await.unwrap();
    assert_eq!(mine.state(), TaskState::Failed);
    assert_eq!(
        mine.task.status.message.as_ref().unwrap().text(),
        RESTARTED_MESSAGE
    );
    let other = log.snapshot("public", "t-other").await.unwrap();
    assert_eq!(other.state(), TaskState::Submitted);

    let err = A2aServer::builder(card()).host_id("").agent(WhoAmI).await;
    assert!(err.is_err(), "an empty host id is a config error");
    // Without a log there is nothing to recover.
    let fresh = A2aServer::builder(card());
    assert_eq!(fresh.recover().await.unwrap().closed, 0);
}

#[test]
fn the_assembled_app_is_a_service() {
    fn assert_service<S: Service<Request<Full<Bytes>>> + Send>() {}
    assert_service::<assembled::App>();
}
