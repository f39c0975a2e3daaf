//! The server-side MUSTs of a2a-spec.md that had no assembled-stack test yet
//! (see CONFORMANCE.md at the repo root for every MUST and where it is
//! tested). Each test drives the whole `A2aServer` with `oneshot` and asserts
//! the wire: HTTP status, content type and body, on both bindings.

#![cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use a2a_tower::engine::{Authority, Execution, Executor};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{
    AgentCard, AgentExtension, AgentInterface, AgentSkill, Artifact, Message, Part,
};
use a2a_tower::{Body, BoxError};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use tower::util::BoxCloneService;
use tower::{Service, ServiceExt};

// ---------------------------------------------------------------------------
// The agent under test: its behaviour is chosen by the first message's text.
// ---------------------------------------------------------------------------

/// - `echo`: WORKING, one artifact, COMPLETED.
/// - `ask`: INPUT_REQUIRED ("Which currency?"); the continuation completes.
/// - `reply`: a direct Message reply.
/// - `paced`: WORKING, reports the task id on `started`, then one artifact
///   chunk per permit of `pace` (three), then COMPLETED.
#[derive(Clone)]
struct Scripted {
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
            _ => {
                ex.emit.working().await?;
                let art = Artifact {
                    artifact_id: "a-1".into(),
                    parts: vec![Part::text(ex.message.text())],
                    ..Artifact::default()
                };
                ex.emit.artifact(art, false, true).await?;
                ex.emit.complete().await?;
            }
        }
        Ok(())
    }
}

type App = BoxCloneService<Request<Full<Bytes>>, Response<Body>, std::convert::Infallible>;

struct Harness {
    app: App,
    pace: Arc<Semaphore>,
    started: mpsc::UnboundedReceiver<String>,
}

fn card() -> AgentCard {
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

fn executor() -> (Scripted, Arc<Semaphore>, mpsc::UnboundedReceiver<String>) {
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
fn server_with(card: AgentCard) -> Harness {
    let (exec, pace, started) = executor();
    let app = A2aServer::builder(card)
        .http_layer(tower::util::MapRequestLayer::new(with_user::<Full<Bytes>>))
        .authority(Authority::principal(|u: &User, tenant: &str| {
            format!("{}/{tenant}", u.0)
        }))
        .executor(exec)
        .unwrap();
    Harness {
        app: BoxCloneService::new(app),
        pace,
        started,
    }
}

fn server() -> Harness {
    server_with(card())
}

// ---------------------------------------------------------------------------
// Wire helpers.
// ---------------------------------------------------------------------------

const ALICE: &str = "alice";
const BOB: &str = "bob";

fn request(method: &str, path: &str, user: &str, body: Option<Value>) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("a2a-version", "1.0")
        .header("x-user", user);
    let bytes = match body {
        Some(v) => {
            b = b.header("content-type", "application/json");
            Bytes::from(v.to_string())
        }
        None => Bytes::new(),
    };
    b.body(Full::new(bytes)).unwrap()
}

fn rpc_req(user: &str, id: &str, method: &str, params: Value) -> Request<Full<Bytes>> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    request("POST", "/rpc", user, Some(body))
}

async fn call(h: &Harness, req: Request<Full<Bytes>>) -> Response<Body> {
    h.app.clone().oneshot(req).await.unwrap()
}

/// Status, content type and the raw body text.
async fn raw(res: Response<Body>) -> (StatusCode, String, String) {
    let status = res.status();
    let ct = res
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, ct, String::from_utf8(bytes.to_vec()).unwrap())
}

/// A JSON-RPC call: HTTP 200, application/json, the envelope echoing `id`;
/// returns the whole response object.
async fn rpc(h: &Harness, user: &str, method: &str, params: Value) -> Value {
    let (status, ct, text) = raw(call(h, rpc_req(user, "r", method, params)).await).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(ct, "application/json");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], "r");
    v
}

/// A JSON-RPC call that must succeed; returns its `result`.
async fn rpc_ok(h: &Harness, user: &str, method: &str, params: Value) -> Value {
    let v = rpc(h, user, method, params).await;
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// A JSON-RPC call that must fail with `code` and `reason`.
async fn rpc_err(h: &Harness, user: &str, method: &str, params: Value, code: i64, reason: &str) {
    let v = rpc(h, user, method, params).await;
    assert_eq!(v["error"]["code"], code, "{method}: {v}");
    assert_eq!(v["error"]["data"][0]["reason"], reason, "{method}: {v}");
    assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
}

/// A REST call that must succeed with 200 JSON.
async fn rest_ok(h: &Harness, req: Request<Full<Bytes>>) -> (String, Value) {
    let (status, ct, text) = raw(call(h, req).await).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(ct.starts_with("application/"), "{ct}");
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

/// A REST call that must fail: the google.rpc.Status shape (§7.4) with an
/// ErrorInfo in the A2A domain (§5.3), `application/json`.
async fn rest_err(h: &Harness, req: Request<Full<Bytes>>, code: u16, status: &str, reason: &str) {
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

fn message(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

fn continuation(task_id: &str, text: &str) -> Value {
    let mut m = message(text);
    m["taskId"] = json!(task_id);
    m
}

/// Sends `text` over REST as `user` and returns the task.
async fn rest_send(h: &Harness, user: &str, msg: Value, immediately: bool) -> Value {
    let body = json!({"message": msg, "configuration": {"returnImmediately": immediately}});
    let (_, v) = rest_ok(h, request("POST", "/rest/message:send", user, Some(body))).await;
    v["task"].clone()
}

/// One SSE stream read event by event: the `data:` JSON of each event.
struct Sse {
    body: Pin<Box<Body>>,
    buf: String,
}

impl Sse {
    async fn open(h: &Harness, req: Request<Full<Bytes>>) -> Self {
        let res = call(h, req).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(
            res.headers()[http::header::CONTENT_TYPE],
            "text/event-stream"
        );
        Self {
            body: Box::pin(res.into_body()),
            buf: String::new(),
        }
    }

    /// The next event's data, or `None` when the stream has ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an SSE event within 10 s")?;
            if let Ok(data) = frame.unwrap().into_data() {
                self.buf.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The remaining events, up to the end of the stream.
    async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next().await {
            out.push(v);
        }
        out
    }
}

/// The StreamResponse of a JSON-RPC SSE event (asserting its envelope).
fn unwrap_rpc(v: Value, id: &str) -> Value {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(v["id"], id, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

fn rpc_subscribe(user: &str, id: &str, task: &str) -> Request<Full<Bytes>> {
    rpc_req(user, id, "SubscribeToTask", json!({"id": task}))
}

fn rest_subscribe(method: &str, user: &str, task: &str) -> Request<Full<Bytes>> {
    request(method, &format!("/rest/tasks/{task}:subscribe"), user, None)
}

/// Waits for the paced task to have emitted WORKING.
async fn started(h: &mut Harness) -> String {
    tokio::time::timeout(Duration::from_secs(10), h.started.recv())
        .await
        .expect("the paced task starts")
        .unwrap()
}

fn chunk_event(task: &str, ctx: &str, i: usize) -> Value {
    let mut update = json!({
        "taskId": task,
        "contextId": ctx,
        "artifact": {"artifactId": "out", "parts": [{"text": format!("chunk-{i}")}]},
    });
    if i > 0 {
        update["append"] = json!(true);
    }
    if i == 2 {
        update["lastChunk"] = json!(true);
    }
    json!({ "artifactUpdate": update })
}

/// Removes the timestamps (generated) so events compare by content.
fn without_timestamps(mut v: Value) -> Value {
    match &mut v {
        Value::Object(map) => {
            map.remove("timestamp");
            for (_, x) in map.iter_mut() {
                *x = without_timestamps(x.take());
            }
        }
        Value::Array(items) => {
            for x in items.iter_mut() {
                *x = without_timestamps(x.take());
            }
        }
        _ => {}
    }
    v
}

// ---------------------------------------------------------------------------
// §1 Versioning and extensions.
// ---------------------------------------------------------------------------

// a2a-spec.md §1.3: a missing (or empty) A2A-Version MUST be read as 0.3; a
// 1.0-only server MUST answer VersionNotSupported on both bindings, through
// the assembled stack.
#[tokio::test]
async fn missing_version_header_is_0_3_and_refused_on_both_bindings() {
    let h = server();
    for version in [None, Some("")] {
        let mut req = rpc_req(ALICE, "v", "GetTask", json!({"id": "t"}));
        let mut rest = request("GET", "/rest/tasks/t", ALICE, None);
        for r in [&mut req, &mut rest] {
            r.headers_mut().remove("a2a-version");
            if let Some(v) = version {
                r.headers_mut().insert("a2a-version", v.parse().unwrap());
            }
        }
        let (status, ct, text) = raw(call(&h, req).await).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ct, "application/json");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], -32009, "{v}");
        assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
        assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
        rest_err(
            &h,
            rest,
            400,
            "FAILED_PRECONDITION",
            "VERSION_NOT_SUPPORTED",
        )
        .await;
    }
}

// a2a-spec.md §1.5: a required extension the client did not request MUST give
// ExtensionSupportRequired (−32008 / 400), and a server MUST NOT silently fall
// back to another version of an extension (a request for `/v1` does not
// activate the required `/v2`).
#[tokio::test]
async fn required_extension_not_requested_is_refused_without_version_fallback() {
    const V2: &str = "https://ext.example/signed/v2";
    const V1: &str = "https://ext.example/signed/v1";
    let mut card = card();
    card.capabilities.extensions.push(AgentExtension {
        uri: V2.into(),
        required: true,
        ..AgentExtension::default()
    });
    let h = server_with(card);
    for requested in [None, Some(V1)] {
        let mut req = rpc_req(
            ALICE,
            "x",
            "SendMessage",
            json!({"message": message("echo")}),
        );
        let mut rest = request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": message("echo")})),
        );
        if let Some(uri) = requested {
            req.headers_mut()
                .insert("a2a-extensions", uri.parse().unwrap());
            rest.headers_mut()
                .insert("a2a-extensions", uri.parse().unwrap());
        }
        let (status, _, text) = raw(call(&h, req).await).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], -32008, "{v}");
        assert_eq!(
            v["error"]["data"][0]["reason"],
            "EXTENSION_SUPPORT_REQUIRED"
        );
        rest_err(
            &h,
            rest,
            400,
            "FAILED_PRECONDITION",
            "EXTENSION_SUPPORT_REQUIRED",
        )
        .await;
    }
    // Requested: served, and echoed as activated.
    let mut req = request(
        "POST",
        "/rest/message:send",
        ALICE,
        Some(json!({"message": message("echo")})),
    );
    req.headers_mut()
        .insert("a2a-extensions", V2.parse().unwrap());
    let res = call(&h, req).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["a2a-extensions"], V2);
}

// ---------------------------------------------------------------------------
// §2 Agent card.
// ---------------------------------------------------------------------------

// a2a-spec.md §2.1: the assembled server MUST make its card available at the
// well-known path, without a version header or credentials.
#[tokio::test]
async fn agent_card_is_served_at_the_well_known_path() {
    let h = server();
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (status, ct, text) = raw(call(&h, req).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct, "application/json");
    let served: AgentCard = serde_json::from_str(&text).unwrap();
    assert_eq!(served, card());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(v["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(v["supportedInterfaces"][1]["protocolBinding"], "HTTP+JSON");
}

// ---------------------------------------------------------------------------
// §3 Data model.
// ---------------------------------------------------------------------------

// a2a-spec.md §3.2: server messages MUST carry contextId (and taskId only if a
// task exists): a direct Message reply on both bindings, streamed and not, and
// the status message of an INPUT_REQUIRED task.
#[tokio::test]
async fn server_messages_carry_context_id() {
    let h = server();
    let check = |m: &Value, what: &str| {
        assert_eq!(m["role"], "ROLE_AGENT", "{what}: {m}");
        let ctx = m["contextId"].as_str().unwrap_or_default();
        assert!(!ctx.is_empty(), "{what}: no contextId in {m}");
        ctx.to_owned()
    };

    // A direct reply, unary, both bindings.
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("reply")}),
    )
    .await;
    let ctx = check(&r["message"], "JSON-RPC SendMessage");
    // taskId only if a task exists: the reply's task is a real, readable task
    // of the same context.
    if let Some(task_id) = r["message"].get("taskId") {
        let t = rpc_ok(&h, ALICE, "GetTask", json!({"id": task_id})).await;
        assert_eq!(t["contextId"], ctx.as_str());
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let (_, v) = rest_ok(
        &h,
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": message("reply")})),
        ),
    )
    .await;
    check(&v["message"], "REST message:send");

    // A client context is kept on the reply.
    let mut m = message("reply");
    m["contextId"] = json!("ctx-client");
    let r = rpc_ok(&h, ALICE, "SendMessage", json!({"message": m})).await;
    assert_eq!(check(&r["message"], "kept context"), "ctx-client");

    // A direct reply, streamed, both bindings: one message event.
    let mut s = Sse::open(
        &h,
        rpc_req(
            ALICE,
            "s",
            "SendStreamingMessage",
            json!({"message": message("reply")}),
        ),
    )
    .await;
    let events = s.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    check(
        &unwrap_rpc(events[0].clone(), "s")["message"],
        "JSON-RPC stream",
    );
    let mut s = Sse::open(
        &h,
        request(
            "POST",
            "/rest/message:stream",
            ALICE,
            Some(json!({"message": message("reply")})),
        ),
    )
    .await;
    let events = s.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    check(&events[0]["message"], "REST stream");

    // A status message carries the task's context and id.
    let task = rest_send(&h, ALICE, message("ask"), false).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let status_msg = &task["status"]["message"];
    assert_eq!(
        check(status_msg, "status message"),
        task["contextId"].as_str().unwrap()
    );
    assert_eq!(status_msg["taskId"], task["id"]);
    assert_eq!(status_msg["parts"][0]["text"], "Which currency?");
}

// a2a-spec.md §3.8: historyLength 0 omits history, N > 0 returns at most the
// N most recent messages, a negative value is InvalidParams; on GetTask and
// SendMessage, both bindings, asserted on the wire bytes.
#[tokio::test]
async fn history_length_zero_omits_n_keeps_most_recent_negative_is_invalid() {
    let h = server();
    let task = rest_send(&h, ALICE, message("ask"), false).await;
    let id = task["id"].as_str().unwrap().to_owned();
    let done = rest_send(&h, ALICE, continuation(&id, "EUR"), false).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    // user "ask", agent "Which currency?", user "EUR".
    assert_eq!(done["history"].as_array().unwrap().len(), 3);

    // 0: no `history` member at all.
    let v = rpc(&h, ALICE, "GetTask", json!({"id": id, "historyLength": 0})).await;
    assert_eq!(v["result"]["id"], id.as_str());
    assert!(v["result"].get("history").is_none(), "{v}");
    let (text, v) = rest_ok(
        &h,
        request(
            "GET",
            &format!("/rest/tasks/{id}?historyLength=0"),
            ALICE,
            None,
        ),
    )
    .await;
    assert_eq!(v["id"], id.as_str());
    assert!(!text.contains("\"history\""), "{text}");

    // N: the N most recent, oldest first.
    for (n, want) in [(1, vec!["EUR"]), (2, vec!["Which currency?", "EUR"])] {
        let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id, "historyLength": n})).await;
        let texts: Vec<_> = r["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["parts"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, want, "JSON-RPC historyLength={n}");
        let (_, v) = rest_ok(
            &h,
            request(
                "GET",
                &format!("/rest/tasks/{id}?historyLength={n}"),
                ALICE,
                None,
            ),
        )
        .await;
        assert_eq!(v["history"], r["history"], "REST historyLength={n}");
    }

    // Negative: −32602 / 400 INVALID_ARGUMENT.
    rpc_err(
        &h,
        ALICE,
        "GetTask",
        json!({"id": id, "historyLength": -1}),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
    rest_err(
        &h,
        request(
            "GET",
            &format!("/rest/tasks/{id}?historyLength=-1"),
            ALICE,
            None,
        ),
        400,
        "INVALID_ARGUMENT",
        "INVALID_PARAMS",
    )
    .await;

    // On SendMessage's configuration too.
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo"), "configuration": {"historyLength": 0}}),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(r["task"].get("history").is_none(), "{r}");
    rpc_err(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo"), "configuration": {"historyLength": -2}}),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
}

// a2a-spec.md §3.8: ListTasks without includeArtifacts (or false) MUST omit
// `artifacts` entirely; with true it is present. Both bindings, wire bytes.
#[tokio::test]
async fn list_tasks_omits_artifacts_unless_included() {
    let h = server();
    let t = rest_send(&h, ALICE, message("echo"), false).await;
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "echo");

    for params in [json!({}), json!({"includeArtifacts": false})] {
        let v = rpc(&h, ALICE, "ListTasks", params.clone()).await;
        assert_eq!(v["result"]["tasks"].as_array().unwrap().len(), 1);
        assert!(!v.to_string().contains("\"artifacts\""), "{params}: {v}");
    }
    for query in ["", "?includeArtifacts=false"] {
        let (text, v) = rest_ok(
            &h,
            request("GET", &format!("/rest/tasks{query}"), ALICE, None),
        )
        .await;
        assert_eq!(v["tasks"].as_array().unwrap().len(), 1);
        assert!(!text.contains("\"artifacts\""), "{query}: {text}");
    }
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({"includeArtifacts": true})).await;
    assert_eq!(r["tasks"][0]["artifacts"], t["artifacts"]);
    let (_, v) = rest_ok(
        &h,
        request("GET", "/rest/tasks?includeArtifacts=true", ALICE, None),
    )
    .await;
    assert_eq!(v["tasks"][0]["artifacts"], t["artifacts"]);
}

// ---------------------------------------------------------------------------
// §4 Operations.
// ---------------------------------------------------------------------------

// a2a-spec.md §4.1: task ids are server-generated and MUST appear in the
// returned Task; a client-chosen contextId is kept; a taskId the client made
// up MUST be TaskNotFound (clients cannot choose the id of a new task).
#[tokio::test]
async fn task_ids_are_server_generated_and_client_context_is_kept() {
    let h = server();
    let mut m = message("echo");
    m["contextId"] = json!("ctx-mine");
    let msg_id = m["messageId"].clone();
    let t = rest_send(&h, ALICE, m, false).await;
    let id = t["id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "server-generated: {id}");
    assert_ne!(t["id"], msg_id);
    assert_eq!(t["contextId"], "ctx-mine");
    assert_eq!(t["history"][0]["taskId"], id);
    assert_eq!(t["history"][0]["contextId"], "ctx-mine");

    // No context: one is generated and returned (Task and history).
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo")}),
    )
    .await;
    let ctx = r["task"]["contextId"].as_str().unwrap();
    assert!(!ctx.is_empty());
    assert_eq!(r["task"]["history"][0]["contextId"], ctx);
    assert_ne!(r["task"]["id"], t["id"], "unique");

    // A made-up task id.
    rpc_err(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": continuation("client-chosen", "echo")}),
        -32001,
        "TASK_NOT_FOUND",
    )
    .await;
    rest_err(
        &h,
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": continuation("client-chosen", "echo")})),
        ),
        404,
        "NOT_FOUND",
        "TASK_NOT_FOUND",
    )
    .await;
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({})).await;
    assert_eq!(r["totalSize"], 2, "the refused sends created nothing");
}

// a2a-spec.md §4.2: several concurrent streams per task (SSE, both bindings)
// MUST each get the same events in the same (generation) order, and closing
// one MUST NOT affect the others; each stream closes at the terminal state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_streams_get_the_same_events_and_closing_one_affects_none() {
    let mut h = server();
    let t = rest_send(&h, ALICE, message("paced"), true).await;
    let id = t["id"].as_str().unwrap().to_owned();
    let ctx = t["contextId"].as_str().unwrap().to_owned();
    assert_eq!(started(&mut h).await, id);

    let mut rpc_a = Sse::open(&h, rpc_subscribe(ALICE, "a", &id)).await;
    let mut rpc_d = Sse::open(&h, rpc_subscribe(ALICE, "d", &id)).await;
    let mut rest_b = Sse::open(&h, rest_subscribe("POST", ALICE, &id)).await;
    let mut rest_c = Sse::open(&h, rest_subscribe("GET", ALICE, &id)).await;

    let mut a = vec![unwrap_rpc(rpc_a.next().await.unwrap(), "a")];
    let d0 = unwrap_rpc(rpc_d.next().await.unwrap(), "d");
    let mut b = vec![rest_b.next().await.unwrap()];
    let c0 = rest_c.next().await.unwrap();
    assert_eq!(
        a[0]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{}",
        a[0]
    );
    for other in [&d0, &b[0], &c0] {
        assert_eq!(other, &a[0]);
    }
    // Close one JSON-RPC stream after the first event.
    drop(rpc_d);

    // One chunk; every open stream sees it; then close a REST stream.
    h.pace.add_permits(1);
    a.push(unwrap_rpc(rpc_a.next().await.unwrap(), "a"));
    b.push(rest_b.next().await.unwrap());
    assert_eq!(rest_c.next().await.unwrap(), a[1]);
    drop(rest_c);

    // The rest: the survivors read to the end of their streams.
    h.pace.add_permits(2);
    a.extend(rpc_a.rest().await.into_iter().map(|v| unwrap_rpc(v, "a")));
    b.extend(rest_b.rest().await);

    let a: Vec<_> = a.into_iter().map(without_timestamps).collect();
    let b: Vec<_> = b.into_iter().map(without_timestamps).collect();
    assert_eq!(a, b, "same events, same order, on both bindings");
    assert_eq!(a.len(), 5, "{a:?}");
    for i in 0..3 {
        assert_eq!(a[i + 1], chunk_event(&id, &ctx, i), "generation order");
    }
    assert_eq!(
        a[4],
        json!({"statusUpdate": {"taskId": id, "contextId": ctx, "status": {"state": "TASK_STATE_COMPLETED"}}})
    );

    // The task itself is unaffected by the closed streams.
    let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(r["artifacts"][0]["parts"].as_array().unwrap().len(), 3);
}

// a2a-spec.md §4.4: ListTasks MUST return only the caller's tasks even without
// filters, sorted by status timestamp newest first, with cursor pagination
// whose nextPageToken is always present ("" on the last page). Both bindings,
// asserted on the wire bytes.
#[tokio::test]
async fn list_tasks_is_scoped_newest_first_and_always_has_next_page_token() {
    let h = server();
    // Distinct status timestamps (millisecond precision): the pause only
    // separates the clocks of consecutive commits, it awaits no outcome.
    let tick = || tokio::time::sleep(Duration::from_millis(3));
    let a1 = rest_send(&h, ALICE, message("ask"), false).await;
    tick().await;
    let a2 = rest_send(&h, ALICE, message("echo"), false).await;
    tick().await;
    let b1 = rest_send(&h, BOB, message("echo"), false).await;
    tick().await;
    let a3 = rest_send(&h, ALICE, message("echo"), false).await;
    tick().await;
    // Continuing a1 makes its status the newest.
    let a1 = rest_send(
        &h,
        ALICE,
        continuation(a1["id"].as_str().unwrap(), "EUR"),
        false,
    )
    .await;
    assert_eq!(a1["status"]["state"], "TASK_STATE_COMPLETED");
    let want: Vec<Value> = vec![a1["id"].clone(), a3["id"].clone(), a2["id"].clone()];

    let ids = |tasks: &Value| -> Vec<Value> {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].clone())
            .collect()
    };

    // JSON-RPC, no filter at all.
    let v = rpc(&h, ALICE, "ListTasks", json!({})).await;
    let text = v.to_string();
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    let r = &v["result"];
    assert_eq!(ids(&r["tasks"]), want);
    assert_eq!(r["totalSize"], 3);
    assert_eq!(r["pageSize"], 50);
    assert!(
        !text.contains(b1["id"].as_str().unwrap()),
        "bob's task leaked"
    );

    // REST, no filter at all.
    let (text, v) = rest_ok(&h, request("GET", "/rest/tasks", ALICE, None)).await;
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    assert_eq!(ids(&v["tasks"]), want);
    assert_eq!(v["totalSize"], 3);
    assert!(
        !text.contains(b1["id"].as_str().unwrap()),
        "bob's task leaked"
    );

    // Bob sees only his.
    let r = rpc_ok(&h, BOB, "ListTasks", json!({})).await;
    assert_eq!(ids(&r["tasks"]), vec![b1["id"].clone()]);
    assert_eq!(r["totalSize"], 1);

    // Pages of two: a token, then the last page with "".
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({"pageSize": 2})).await;
    assert_eq!(ids(&r["tasks"]), want[..2]);
    let token = r["nextPageToken"].as_str().unwrap();
    assert!(!token.is_empty());
    let (text, v) = rest_ok(
        &h,
        request(
            "GET",
            &format!("/rest/tasks?pageSize=2&pageToken={token}"),
            ALICE,
            None,
        ),
    )
    .await;
    assert_eq!(ids(&v["tasks"]), vec![want[2].clone()]);
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    assert_eq!(v["totalSize"], 3);

    // An empty list still has every field.
    let r = rpc_ok(&h, "carol", "ListTasks", json!({})).await;
    assert_eq!(
        r,
        json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
    );
}

// a2a-spec.md §4.6: the first event of SubscribeToTask MUST be the current
// task, and the stream MUST end when the task becomes terminal; a terminal
// task cannot be subscribed to (UnsupportedOperation). Both bindings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_first_event_is_the_current_task_and_stream_ends_at_terminal() {
    let mut h = server();
    let t = rest_send(&h, ALICE, message("paced"), true).await;
    let id = t["id"].as_str().unwrap().to_owned();
    started(&mut h).await;
    let current = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(current["status"]["state"], "TASK_STATE_WORKING");

    let mut rpc_s = Sse::open(&h, rpc_subscribe(ALICE, "s", &id)).await;
    let mut rest_s = Sse::open(&h, rest_subscribe("POST", ALICE, &id)).await;
    let first = unwrap_rpc(rpc_s.next().await.unwrap(), "s");
    assert_eq!(first, json!({ "task": current }));
    assert_eq!(rest_s.next().await.unwrap(), first);

    h.pace.add_permits(3);
    for events in [
        rpc_s
            .rest()
            .await
            .into_iter()
            .map(|v| unwrap_rpc(v, "s"))
            .collect::<Vec<_>>(),
        rest_s.rest().await,
    ] {
        assert_eq!(events.len(), 4, "{events:?}");
        let last = events.last().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    // rest() returned: both streams ended at the terminal state.

    // Terminal now: subscribing is refused before any event.
    rpc_err(
        &h,
        ALICE,
        "SubscribeToTask",
        json!({"id": id}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        rest_subscribe("POST", ALICE, &id),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;
}

// a2a-spec.md §4.7 / §4.8: without push support every push config operation
// MUST fail with PushNotificationNotSupported (−32003 / 400), and the card
// cannot declare push; streaming undeclared → UnsupportedOperation for
// SendStreamingMessage and SubscribeToTask; extendedAgentCard undeclared →
// UnsupportedOperation. Both bindings, through the assembled stack.
#[tokio::test]
async fn undeclared_capabilities_fail_with_their_errors_on_both_bindings() {
    let h = server();
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();

    // Push: all four operations.
    let cfg = json!({"taskId": id, "url": "https://client.example/hook"});
    for (method, params) in [
        ("CreateTaskPushNotificationConfig", cfg.clone()),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
    ] {
        rpc_err(
            &h,
            ALICE,
            method,
            params,
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        )
        .await;
    }
    let base = format!("/rest/tasks/{id}/pushNotificationConfigs");
    for req in [
        request("POST", &base, ALICE, Some(cfg.clone())),
        request("GET", &format!("{base}/c"), ALICE, None),
        request("GET", &base, ALICE, None),
        request("DELETE", &format!("{base}/c"), ALICE, None),
    ] {
        rest_err(
            &h,
            req,
            400,
            "FAILED_PRECONDITION",
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        )
        .await;
    }
    // The served card does not declare push, and cannot be built to.
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (_, _, text) = raw(call(&h, req).await).await;
    let served: Value = serde_json::from_str(&text).unwrap();
    assert_ne!(served["capabilities"]["pushNotifications"], true);
    let mut pushy = card();
    pushy.capabilities.push_notifications = Some(true);
    let (exec, _, _) = executor();
    assert!(A2aServer::builder(pushy).executor(exec).is_err());

    // Extended card undeclared.
    rpc_err(
        &h,
        ALICE,
        "GetExtendedAgentCard",
        json!({}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        request("GET", "/rest/extendedAgentCard", ALICE, None),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;

    // Streaming undeclared.
    let h = server_with(card().with_streaming(false));
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();
    rpc_err(
        &h,
        ALICE,
        "SendStreamingMessage",
        json!({"message": message("echo")}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rpc_err(
        &h,
        ALICE,
        "SubscribeToTask",
        json!({"id": id}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        request(
            "POST",
            "/rest/message:stream",
            ALICE,
            Some(json!({"message": message("echo")})),
        ),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;
    for verb in ["GET", "POST"] {
        rest_err(
            &h,
            rest_subscribe(verb, ALICE, &id),
            400,
            "FAILED_PRECONDITION",
            "UNSUPPORTED_OPERATION",
        )
        .await;
    }
}

// a2a-spec.md §4.9: Get, Cancel, Subscribe, continuation and the push
// operations MUST check access; another authority's task MUST look exactly
// like a missing one (TaskNotFound, same body), and its owner is unaffected.
// The principal comes from a host `http_layer`, the authority from
// `Authority::principal`. Both bindings.
#[tokio::test]
async fn another_callers_task_is_task_not_found() {
    let h = server();
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    const GHOST: &str = "00000000-0000-4000-8000-000000000000";
    assert_eq!(id.len(), GHOST.len());

    // JSON-RPC: bob on alice's task answers byte for byte like a missing task.
    let ops = |task: &str| {
        vec![
            ("GetTask", json!({"id": task})),
            ("CancelTask", json!({"id": task})),
            ("SubscribeToTask", json!({"id": task})),
            (
                "SendMessage",
                json!({"message": continuation(task, "hijack")}),
            ),
        ]
    };
    for ((method, theirs), (_, missing)) in ops(&id).into_iter().zip(ops(GHOST)) {
        let (_, _, got) = raw(call(&h, rpc_req(BOB, "x", method, theirs)).await).await;
        let (_, _, absent) = raw(call(&h, rpc_req(BOB, "x", method, missing)).await).await;
        let v: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["error"]["code"], -32001, "{method}: {got}");
        assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(got.replace(&id, GHOST), absent, "{method}");
    }
    // REST, the same.
    let reqs = |task: &str| {
        vec![
            request("GET", &format!("/rest/tasks/{task}"), BOB, None),
            request("POST", &format!("/rest/tasks/{task}:cancel"), BOB, None),
            rest_subscribe("POST", BOB, task),
            rest_subscribe("GET", BOB, task),
            request(
                "POST",
                "/rest/message:send",
                BOB,
                Some(json!({"message": continuation(task, "hijack")})),
            ),
        ]
    };
    for (theirs, missing) in reqs(&id).into_iter().zip(reqs(GHOST)) {
        let what = format!("{} {}", theirs.method(), theirs.uri());
        let (status, _, got) = raw(call(&h, theirs).await).await;
        let (_, _, absent) = raw(call(&h, missing).await).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {got}");
        let v: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(
            v["error"]["details"][0]["reason"], "TASK_NOT_FOUND",
            "{what}"
        );
        assert_eq!(got.replace(&id, GHOST), absent, "{what}");
    }
    // Push operations: refused for everyone alike (no push support), so they
    // reveal nothing either.
    rpc_err(
        &h,
        BOB,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c"}),
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    )
    .await;

    // Alice's task is untouched by bob's cancel and continuation.
    let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(r["history"], t["history"], "no hijacked message");
}

// ---------------------------------------------------------------------------
// §5 Errors.
// ---------------------------------------------------------------------------

// a2a-spec.md §5.3 / §7.4: a REST A2A error from the engine MUST include an
// ErrorInfo with its reason and the domain "a2a-protocol.org", in the
// google.rpc.Status shape, with the status of §5.1 (exact body).
#[tokio::test]
async fn rest_errors_include_error_info_with_domain() {
    let h = server();
    let (status, ct, text) =
        raw(call(&h, request("GET", "/rest/tasks/missing", ALICE, None)).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(ct, "application/json");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({"error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task not found",
            "details": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
                "metadata": {"taskId": "missing"}
            }]
        }})
    );
    // And one of each family the engine produces: 400 TaskNotCancelable.
    let t = rest_send(&h, ALICE, message("echo"), false).await;
    let id = t["id"].as_str().unwrap();
    rest_err(
        &h,
        request("POST", &format!("/rest/tasks/{id}:cancel"), ALICE, None),
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    )
    .await;
}

#[test]
fn the_assembled_app_is_a_service() {
    fn assert_service<S: Service<Request<Full<Bytes>>> + Send>() {}
    assert_service::<App>();
}

// ---------------------------------------------------------------------------
// §10 Security.
// ---------------------------------------------------------------------------

// a2a-spec.md §10.1: the server MUST authenticate every request. With
// `Authority::principal`, a call whose host layer recorded no principal is
// refused on both bindings (401, the ErrorInfo reason UNAUTHENTICATED) before
// any task is looked up; the card stays public (§2.1).
#[tokio::test]
async fn calls_without_a_principal_are_unauthenticated_on_both_bindings() {
    let h = server();
    let anonymous = |mut req: Request<Full<Bytes>>| {
        req.headers_mut().remove("x-user");
        req
    };
    let (status, ct, text) =
        raw(call(&h, anonymous(rpc_req(ALICE, "u", "ListTasks", json!({})))).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(ct, "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"jsonrpc": "2.0", "id": "u", "error": {
            "code": -31401,
            "message": "Authentication required",
            "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "UNAUTHENTICATED",
                "domain": "a2a-protocol.org"
            }]
        }})
    );
    for req in [
        request("GET", "/rest/tasks", ALICE, None),
        request("GET", "/rest/tasks/missing", ALICE, None),
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": message("echo")})),
        ),
    ] {
        rest_err(
            &h,
            anonymous(req),
            401,
            "UNAUTHENTICATED",
            "UNAUTHENTICATED",
        )
        .await;
    }
    // Nothing was created by the refused send.
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({})).await;
    assert_eq!(r["totalSize"], 0);
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(call(&h, req).await.status(), StatusCode::OK);
}
