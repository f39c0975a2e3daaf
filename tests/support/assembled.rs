//! The whole `A2aServer` over a scripted agent, driven with `oneshot`, and
//! the calls that assert its wire answers on both bindings (JSON-RPC at
//! `/rpc`, HTTP+JSON under `/rest`): HTTP status, content type and body.
//! Every caller is scoped by the principal a host layer takes from the
//! `x-user` header (`Authority::principal`).

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::card::StackCapabilities;
use a2a_tower::engine::{Authority, Execution, Executor, ExecutorService, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill, Artifact, Message, Part};
use a2a_tower::{A2aResponse, Body, BoxError};
use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use tower::util::BoxCloneService;
use tower::{Layer, ServiceExt};

use super::engine::echo_artifact;
use super::http::{Reply, rpc_body};
use super::sse::Sse;

/// The agent under test: its behaviour is chosen by the first message's text.
///
/// - `echo` (and any other text): WORKING, the text as one artifact, COMPLETED.
/// - `ask`: INPUT_REQUIRED ("Which currency?"); the continuation completes.
/// - `reply`: a direct Message reply.
/// - `paced`: WORKING, reports the task id on `started`, then one artifact
///   chunk per permit of `pace` (three), then COMPLETED.
#[derive(Clone)]
pub(crate) struct Scripted {
    pace: Arc<Semaphore>,
    started: mpsc::UnboundedSender<String>,
}

impl Executor for Scripted {
    async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
        let first = ex
            .task
            .history
            .first()
            .map(Message::text)
            .unwrap_or_default();
        match first.as_str() {
            "ask" if ex.task.history.len() == 1 => {
                ex.emit.input_required("Which currency?").await?
            }
            "ask" => ex.emit.complete().await?,
            "reply" => ex.emit.reply(Message::agent("", "pong")).await?,
            "paced" => {
                ex.emit.working().await?;
                self.started.send(ex.emit.task_id().to_owned()).ok();
                for i in 0..3 {
                    self.pace.acquire().await?.forget();
                    let chunk = Artifact {
                        artifact_id: "out".into(),
                        parts: vec![Part::text(format!("chunk-{i}"))],
                        ..Artifact::default()
                    };
                    ex.emit.artifact(chunk, i > 0, i == 2).await?;
                }
                ex.emit.complete().await?;
            }
            _ => echo_artifact(ex).await?,
        }
        Ok(())
    }
}

pub(crate) type App =
    BoxCloneService<Request<Full<Bytes>>, Response<Body>, std::convert::Infallible>;

/// The server, and the controls of its `paced` tasks.
pub(crate) struct Harness {
    pub(crate) app: App,
    /// One permit lets a `paced` task emit one chunk.
    pub(crate) pace: Arc<Semaphore>,
    /// The id of each `paced` task once it is WORKING.
    pub(crate) started: mpsc::UnboundedReceiver<String>,
}

pub(crate) fn card() -> AgentCard {
    AgentCard::new("Spec", "Exercises the MUSTs", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_skill(AgentSkill::new("spec", "Spec", "Exercises the MUSTs"))
        .with_streaming(true)
}

/// The authenticated caller, as a host auth layer records it.
#[derive(Clone, Debug)]
struct User(String);

/// A host "auth" layer: the `x-user` header becomes the principal.
fn with_user<B>(mut req: Request<B>) -> Request<B> {
    let user = req
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(u) = user {
        req.extensions_mut().insert(User(u));
    }
    req
}

pub(crate) fn executor() -> (Scripted, Arc<Semaphore>, mpsc::UnboundedReceiver<String>) {
    let pace = Arc::new(Semaphore::new(0));
    let (started, rx) = mpsc::unbounded_channel();
    (
        Scripted {
            pace: pace.clone(),
            started,
        },
        pace,
        rx,
    )
}

/// The server over `card`, every caller scoped by the `x-user` principal.
pub(crate) fn server_with(card: AgentCard) -> Harness {
    server_mapping(card, |answer| answer)
}

/// [`server_with`], the core's answers passed through `map` by a host layer
/// between the bindings and the core.
pub(crate) fn server_mapping<F>(card: AgentCard, map: F) -> Harness
where
    F: Fn(A2aResponse) -> A2aResponse + Clone + Send + Sync + 'static,
{
    let (exec, pace, started) = executor();
    let app = A2aServer::builder(card)
        .http_layer(tower::util::MapRequestLayer::new(with_user::<Full<Bytes>>))
        .a2a_layer(tower::util::MapResponseLayer::new(map))
        .authority(Authority::principal(|u: &User, tenant: &str| {
            format!("{}/{tenant}", u.0)
        }))
        // A fresh log: nothing to recover, so the build is ready at once.
        .recovery(false)
        .executor(exec)
        .now_or_never()
        .expect("builds without waiting")
        .unwrap();
    Harness {
        app: BoxCloneService::new(app),
        pace,
        started,
    }
}

pub(crate) fn server() -> Harness {
    server_with(card())
}

/// The server over the task engine for `card` built here, served as a raw
/// core that fulfils `caps` (what the card check accepts), every caller
/// scoped by the `x-user` principal.
pub(crate) fn engine_core_server(card: AgentCard, caps: StackCapabilities) -> Harness {
    let (exec, pace, started) = executor();
    let core = TaskLayer::new(card.clone(), MemoryTaskLog::new())
        .unwrap()
        .authority(Authority::principal(|u: &User, tenant: &str| {
            format!("{}/{tenant}", u.0)
        }))
        .layer(ExecutorService::new(exec));
    let app = A2aServer::builder(card)
        .http_layer(tower::util::MapRequestLayer::new(with_user::<Full<Bytes>>))
        .stack_capabilities(caps)
        .core(core)
        .unwrap();
    Harness {
        app: BoxCloneService::new(app),
        pace,
        started,
    }
}

pub(crate) const ALICE: &str = "alice";
pub(crate) const BOB: &str = "bob";

/// An A2A request (`A2A-Version: 1.0`) of `user`.
pub(crate) fn request(
    method: &str,
    path: &str,
    user: &str,
    body: Option<Value>,
) -> Request<Full<Bytes>> {
    let mut req = super::http::request(method, path, body.as_ref());
    req.headers_mut().insert("x-user", user.parse().unwrap());
    req
}

/// A JSON-RPC request of `user`.
pub(crate) fn rpc_req(user: &str, id: &str, method: &str, params: Value) -> Request<Full<Bytes>> {
    request("POST", "/rpc", user, Some(rpc_body(id, method, params)))
}

pub(crate) async fn call(h: &Harness, req: Request<Full<Bytes>>) -> Response<Body> {
    h.app.clone().oneshot(req).await.unwrap()
}

/// Status, content type and the raw body text.
pub(crate) async fn raw(res: Response<Body>) -> (StatusCode, String, String) {
    let r = Reply::read(res).await;
    (r.status, r.content_type().to_owned(), r.text().to_owned())
}

/// A JSON-RPC call: HTTP 200, application/json, the envelope echoing `id`;
/// returns the whole response object.
pub(crate) async fn rpc(h: &Harness, user: &str, method: &str, params: Value) -> Value {
    let (status, ct, text) = raw(call(h, rpc_req(user, "r", method, params)).await).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(ct, "application/json");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], "r");
    v
}

/// A JSON-RPC call that must succeed; returns its `result`.
pub(crate) async fn rpc_ok(h: &Harness, user: &str, method: &str, params: Value) -> Value {
    let v = rpc(h, user, method, params).await;
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// A JSON-RPC call that must fail with `code` and `reason`.
pub(crate) async fn rpc_err(
    h: &Harness,
    user: &str,
    method: &str,
    params: Value,
    code: i64,
    reason: &str,
) {
    let v = rpc(h, user, method, params).await;
    assert_eq!(v["error"]["code"], code, "{method}: {v}");
    assert_eq!(v["error"]["data"][0]["reason"], reason, "{method}: {v}");
    assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
}

/// A REST call that must succeed with 200 JSON.
pub(crate) async fn rest_ok(h: &Harness, req: Request<Full<Bytes>>) -> (String, Value) {
    let (status, ct, text) = raw(call(h, req).await).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(ct.starts_with("application/"), "{ct}");
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

/// A REST call that must fail: the google.rpc.Status shape (a2a-spec.md
/// §7.4) with an ErrorInfo in the A2A domain (§5.3), `application/json`.
pub(crate) async fn rest_err(
    h: &Harness,
    req: Request<Full<Bytes>>,
    code: u16,
    status: &str,
    reason: &str,
) {
    let what = format!("{} {}", req.method(), req.uri());
    let (got, ct, text) = raw(call(h, req).await).await;
    assert_eq!(got.as_u16(), code, "{what}: {text}");
    assert_eq!(ct, "application/json", "{what}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], code, "{what}: {v}");
    assert_eq!(v["error"]["status"], status, "{what}: {v}");
    assert!(v["error"]["message"].is_string(), "{what}: {v}");
    let info = v["error"]["details"]
        .as_array()
        .and_then(|d| {
            d.iter()
                .find(|e| e["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
        })
        .unwrap_or_else(|| panic!("{what}: no ErrorInfo in {v}"));
    assert_eq!(info["reason"], reason, "{what}: {v}");
    assert_eq!(info["domain"], "a2a-protocol.org", "{what}: {v}");
}

/// A user message with a fresh id.
pub(crate) fn message(text: &str) -> Value {
    super::http::message(&uuid::Uuid::new_v4().to_string(), text)
}

/// A user message to the task `task_id`.
pub(crate) fn continuation(task_id: &str, text: &str) -> Value {
    let mut m = message(text);
    m["taskId"] = json!(task_id);
    m
}

/// Sends `msg` over REST as `user` and returns the task.
pub(crate) async fn rest_send(h: &Harness, user: &str, msg: Value, immediately: bool) -> Value {
    let body = json!({"message": msg, "configuration": {"returnImmediately": immediately}});
    let (_, v) = rest_ok(h, request("POST", "/rest/message:send", user, Some(body))).await;
    v["task"].clone()
}

/// The SSE answer to `req`, to read event by event.
pub(crate) async fn sse(h: &Harness, req: Request<Full<Bytes>>) -> Sse<Body> {
    Sse::new(call(h, req).await)
}

/// The StreamResponse of a JSON-RPC SSE event (asserting its envelope).
pub(crate) fn unwrap_rpc(v: Value, id: &str) -> Value {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(v["id"], id, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// SubscribeToTask over REST, with the verb `method` (GET or POST).
pub(crate) fn rest_subscribe(method: &str, user: &str, task: &str) -> Request<Full<Bytes>> {
    request(method, &format!("/rest/tasks/{task}:subscribe"), user, None)
}

/// Waits for a `paced` task to have emitted WORKING; its id.
pub(crate) async fn started(h: &mut Harness) -> String {
    tokio::time::timeout(Duration::from_secs(10), h.started.recv())
        .await
        .expect("the paced task starts")
        .unwrap()
}
