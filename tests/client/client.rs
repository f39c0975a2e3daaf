//! `A2aClient` against this crate's own server on loopback, over both
//! bindings: every operation, streaming, complete errors, numbers in data
//! parts and metadata kept exactly; the proxy symmetry
//! (a client as the core of a second server); card limits, caching and the
//! origin policy against small scripted HTTP servers. Every wait is bounded.

use crate::support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::engine::{Agent, AgentInput, Execution, Executor};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, Artifact, CancelTaskRequest,
    GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, Message, Metadata, Part, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigId,
    TaskState,
};
use a2a_tower::{A2aError, A2aResponse, BoxError, ErrorKind, Operation};
use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::client::{
    PATIENCE, artifact_text, bounded, call, card_url, connect, err, event_line, send,
};
use support::loopback::{listener, serve};
use tower::ServiceExt;

struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

fn card(base: &str) -> AgentCard {
    AgentCard::new("Echo", "Echoes text", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{base}/rpc")))
        .with_interface(AgentInterface::http_json(format!("{base}/rest")))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
        .with_streaming(true)
}

/// The echo agent served on loopback; returns its base URL.
async fn backend() -> String {
    let (l, base) = listener().await;
    serve(
        l,
        A2aServer::builder(card(&base)).agent(Echo).await.unwrap(),
    );
    base
}

/// A line per call that does not depend on ids: what a proxy must preserve.
pub(crate) async fn transcript(c: &A2aClient<HttpClient>) -> Vec<String> {
    let mut out = Vec::new();
    let sent = call(c, Operation::SendMessage(send("hello")))
        .await
        .unwrap();
    let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = sent else {
        panic!("not a task: {sent:?}")
    };
    let text: Vec<String> = task.artifacts.iter().map(artifact_text).collect();
    out.push(format!("send {:?} {text:?}", task.status.state));
    let id = task.id.clone();
    let got = call(
        c,
        Operation::GetTask(GetTaskRequest {
            id: id.clone(),
            ..Default::default()
        }),
    )
    .await
    .unwrap();
    let A2aResponse::Task(t) = got else {
        panic!("{got:?}")
    };
    assert_eq!(t.id, id);
    out.push(format!("get {:?}", t.status.state));
    let listed = call(c, Operation::ListTasks(ListTasksRequest::default()))
        .await
        .unwrap();
    let A2aResponse::Tasks(page) = listed else {
        panic!("{listed:?}")
    };
    assert!(page.tasks.iter().any(|t| t.id == id));
    out.push("list contains the task".into());
    let mut ops = vec![
        Operation::CancelTask(CancelTaskRequest {
            id: id.clone(),
            ..Default::default()
        }),
        Operation::GetTask(GetTaskRequest {
            id: "nope".into(),
            ..Default::default()
        }),
        Operation::GetTask(GetTaskRequest {
            id: id.clone(),
            history_length: Some(-1),
            ..Default::default()
        }),
        Operation::CreateTaskPushNotificationConfig(TaskPushNotificationConfig {
            task_id: id.clone(),
            url: "https://hook.example/x".into(),
            ..Default::default()
        }),
        Operation::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
            task_id: id.clone(),
            ..Default::default()
        }),
        Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default()),
    ];
    let cfg = TaskPushNotificationConfigId {
        task_id: id.clone(),
        id: "c".into(),
        ..Default::default()
    };
    ops.push(Operation::GetTaskPushNotificationConfig(cfg.clone()));
    ops.push(Operation::DeleteTaskPushNotificationConfig(cfg));
    for op in ops {
        let method = op.method();
        let e = err(call(c, op).await);
        let line = format!(
            "{method} {} {:?} {:?} {:?}",
            e.kind(),
            e.message(),
            e.metadata(),
            e.violations()
        );
        out.push(line.replace(&id, "<task>"));
    }
    let streamed = call(c, Operation::SendStreamingMessage(send("streamed")))
        .await
        .unwrap();
    let A2aResponse::Stream(s) = streamed else {
        panic!("{streamed:?}")
    };
    let events: Vec<_> = bounded(s.collect::<Vec<_>>()).await;
    let mut kinds = Vec::new();
    for e in events {
        kinds.push(match e.unwrap() {
            StreamResponse::Task(t) => format!("task {:?}", t.status.state),
            StreamResponse::Message(_) => "message".into(),
            StreamResponse::StatusUpdate(u) => format!("status {:?}", u.status.state),
            StreamResponse::ArtifactUpdate(a) => format!("artifact {}", artifact_text(&a.artifact)),
        });
    }
    assert!(
        kinds.first().is_some_and(|k| k.starts_with("task")),
        "{kinds:?}"
    );
    out.push(format!("stream {kinds:?}"));
    // Subscribing to a finished task is refused (the stream never opens).
    let sub = Operation::SubscribeToTask(SubscribeToTaskRequest {
        id,
        ..Default::default()
    });
    let e = err(call(c, sub).await);
    out.push(format!("subscribe {} {:?}", e.kind(), e.message()));
    out
}

#[tokio::test]
async fn every_operation_over_both_bindings() {
    let base = backend().await;
    let rpc = transcript(&connect(&base, Transport::JsonRpc).await).await;
    let rest = transcript(&connect(&base, Transport::HttpJson).await).await;
    assert_eq!(rpc, rest, "both bindings give the same answers");
    let has = |prefix: &str| rpc.iter().find(|l| l.starts_with(prefix)).cloned().unwrap();
    assert!(
        has("send").contains("Completed") && has("send").contains("hello"),
        "{rpc:?}"
    );
    assert!(
        has("CancelTask TASK_NOT_CANCELABLE").contains("taskId"),
        "{rpc:?}"
    );
    assert!(
        has("GetTask TASK_NOT_FOUND").contains("\"nope\""),
        "{rpc:?}"
    );
    assert!(
        has("GetTask INVALID_PARAMS").contains("historyLength"),
        "{rpc:?}"
    );
    for m in ["Create", "Get", "List", "Delete"] {
        assert!(
            rpc.iter()
                .any(|l| l.starts_with(m) && l.contains("PUSH_NOTIFICATION_NOT_SUPPORTED")),
            "{m}: {rpc:?}"
        );
    }
    assert!(has("GetExtendedAgentCard UNSUPPORTED_OPERATION").len() > 10);
    assert!(has("stream").contains("streamed"), "{rpc:?}");
}

/// The proxy: a client to `upstream` mounted as the core of a second server.
async fn proxy(upstream: &str, t: Transport) -> String {
    let client = connect(upstream, t).await;
    let (l, base) = listener().await;
    serve(l, A2aServer::builder(card(&base)).core(client).unwrap());
    base
}

#[tokio::test]
async fn proxy_symmetry() {
    let base = backend().await;
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let direct = transcript(&connect(&base, t).await).await;
        for upstream in [Transport::JsonRpc, Transport::HttpJson] {
            let p = proxy(&base, upstream).await;
            let through = transcript(&connect(&p, t).await).await;
            assert_eq!(direct, through, "{t:?} through a {upstream:?} proxy");
        }
    }
}

/// A scripted HTTP server: `answer` gets each request's path and headers;
/// returns the base URL and the number of requests seen.
async fn scripted<F>(answer: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(&str, &http::HeaderMap) -> Response<Full<Bytes>> + Clone + Send + Sync + 'static,
{
    let (l, base) = listener().await;
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        count.fetch_add(1, Ordering::SeqCst);
        let res = answer(req.uri().path(), req.headers());
        async move { Ok::<_, Infallible>(res) }
    });
    serve(l, svc);
    (base, seen)
}

fn json_response(body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(body.into()))
        .unwrap()
}

fn card_bytes(base: &str) -> Vec<u8> {
    serde_json::to_vec(&card(base)).unwrap()
}

async fn resolve(url: &str, timeout: Duration) -> Result<AgentCard, A2aError> {
    let c = A2aClient::builder(url)
        .card_timeout(timeout)
        .build()
        .unwrap();
    bounded(c.resolve()).await
}

#[tokio::test]
async fn slow_card_server_times_out_without_bounding_calls() {
    // Accepts connections and never answers.
    let (l, base) = listener().await;
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            keep.lock().unwrap().push(s);
        }
    });
    let started = std::time::Instant::now();
    let e = resolve(&card_url(&base), Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(e.message().contains("timed out"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A call slower than the card timeout is not cut by it.
    let slow = backend_with_delay(Duration::from_millis(600)).await;
    let c = A2aClient::builder(card_url(&slow))
        .card_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let client = bounded(c.connect()).await.unwrap();
    call(&client, Operation::SendMessage(send("slow")))
        .await
        .unwrap();
}

struct Slow(Duration);

impl Agent for Slow {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let d = self.0;
        futures_util::stream::once(async move {
            tokio::time::sleep(d).await;
            Ok(input.text)
        })
    }
}

async fn backend_with_delay(d: Duration) -> String {
    let (l, base) = listener().await;
    serve(
        l,
        A2aServer::builder(card(&base))
            .agent(Slow(d))
            .await
            .unwrap(),
    );
    base
}

#[tokio::test]
async fn card_size_limit() {
    const MIB: usize = 1024 * 1024;
    let (base, _) = scripted(|path, _| {
        let mut body = card_bytes("http://127.0.0.1:1");
        match path {
            "/exact" => body.resize(MIB, b' '),
            "/over" => body.resize(MIB + 1, b' '),
            // A valid card, then more bytes past the limit.
            _ => body.extend(std::iter::repeat_n(b'x', 2 * MIB)),
        }
        json_response(body)
    })
    .await;
    let ok = resolve(&format!("{base}/exact"), PATIENCE).await.unwrap();
    assert_eq!(ok.name, "Echo");
    for path in ["/over", "/trailing"] {
        let e = resolve(&format!("{base}{path}"), PATIENCE)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidAgentResponse, "{path}");
        assert!(e.message().contains("size limit"), "{path}: {e}");
    }
}

#[tokio::test]
async fn etag_revalidation_and_max_age() {
    let seen_inm = Arc::new(Mutex::new(Vec::new()));
    let log = seen_inm.clone();
    let (base, hits) = scripted(move |path, headers| {
        let inm = headers
            .get("if-none-match")
            .map(|v| v.to_str().unwrap().to_owned());
        log.lock().unwrap().push(inm.clone());
        let age = if path == "/fresh" {
            "max-age=60"
        } else {
            "max-age=0"
        };
        let res = if inm.as_deref() == Some("\"v1\"") {
            Response::builder()
                .status(StatusCode::NOT_MODIFIED)
                .body(Full::default())
                .unwrap()
        } else {
            json_response(card_bytes("http://127.0.0.1:1"))
        };
        let (mut parts, body) = res.into_parts();
        parts.headers.insert("etag", "\"v1\"".parse().unwrap());
        parts.headers.insert("cache-control", age.parse().unwrap());
        Response::from_parts(parts, body)
    })
    .await;
    let stale = A2aClient::builder(format!("{base}/stale")).build().unwrap();
    let first = bounded(stale.resolve()).await.unwrap();
    let again = bounded(stale.resolve()).await.unwrap();
    assert_eq!(first, again, "the 304 is served from the cache");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert_eq!(*seen_inm.lock().unwrap(), [None, Some("\"v1\"".to_owned())]);
    let fresh = A2aClient::builder(format!("{base}/fresh")).build().unwrap();
    bounded(fresh.resolve()).await.unwrap();
    bounded(fresh.resolve()).await.unwrap();
    assert_eq!(
        hits.load(Ordering::SeqCst),
        3,
        "a fresh card is not fetched again"
    );
}

#[tokio::test]
async fn cross_origin_interface_is_refused_unless_allowed() {
    let backend = backend().await;
    let b2 = backend.clone();
    // The card is on this server; its interfaces are on the backend.
    let (base, _) = scripted(move |_, _| json_response(card_bytes(&b2))).await;
    let e = bounded(
        A2aClient::builder(card_url(&base))
            .build()
            .unwrap()
            .connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
    let client = bounded(
        A2aClient::builder(card_url(&base))
            .allow_origins([backend.clone()])
            .build()
            .unwrap()
            .connect(),
    )
    .await
    .unwrap();
    call(&client, Operation::SendMessage(send("allowed")))
        .await
        .unwrap();
}

#[tokio::test]
async fn credentials_stay_on_the_card_origin() {
    // The backend records the Authorization header of every request.
    let (l, backend) = listener().await;
    let auths = Arc::new(Mutex::new(Vec::new()));
    let log = auths.clone();
    let record = tower::util::MapRequestLayer::new(move |req: Request<hyper::body::Incoming>| {
        log.lock()
            .unwrap()
            .push(req.headers().get("authorization").cloned());
        req
    });
    let app = A2aServer::builder(card(&backend))
        .http_layer(record)
        .agent(Echo)
        .await
        .unwrap();
    serve(l, app);
    // Same origin: the card fetch and the calls carry it.
    let c = A2aClient::builder(card_url(&backend))
        .authorization("Bearer t".parse().unwrap())
        .build()
        .unwrap();
    let client = bounded(c.connect()).await.unwrap();
    call(&client, Operation::SendMessage(send("x")))
        .await
        .unwrap();
    assert!(auths.lock().unwrap().iter().all(Option::is_some));
    auths.lock().unwrap().clear();
    // Another origin (allowed): the card origin sees it, the backend never.
    let b2 = backend.clone();
    let (base, _) = scripted(move |_, _| json_response(card_bytes(&b2))).await;
    let c = A2aClient::builder(card_url(&base))
        .authorization("Bearer t".parse().unwrap())
        .allow_origins([backend])
        .build()
        .unwrap();
    let client = bounded(c.connect()).await.unwrap();
    call(&client, Operation::SendMessage(send("x")))
        .await
        .unwrap();
    let seen = auths.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(Option::is_none),
        "{seen:?}"
    );
}

#[tokio::test]
async fn cross_origin_redirect_is_refused_before_contact() {
    let (other, other_hits) = scripted(|_, _| json_response(card_bytes("http://x"))).await;
    let target = format!("{other}/card");
    let (base, _) = scripted(move |path, _| {
        let to = if path == "/same" {
            "/card".to_owned()
        } else {
            target.clone()
        };
        match path {
            "/card" => json_response(card_bytes("http://127.0.0.1:1")),
            _ => Response::builder()
                .status(StatusCode::FOUND)
                .header("location", to)
                .body(Full::default())
                .unwrap(),
        }
    })
    .await;
    let e = resolve(&format!("{base}/away"), PATIENCE)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert_eq!(
        other_hits.load(Ordering::SeqCst),
        0,
        "the other origin saw a request"
    );
    // A same-origin redirect is followed.
    assert_eq!(
        resolve(&format!("{base}/same"), PATIENCE)
            .await
            .unwrap()
            .name,
        "Echo"
    );
}

#[test]
fn configuration_errors_at_construction() {
    let b = || A2aClient::builder("http://127.0.0.1:1/card");
    assert!(b().build().is_ok());
    assert!(A2aClient::builder("/relative").build().is_err());
    assert!(A2aClient::builder("ftp://h/card").build().is_err());
    assert!(b().card_timeout(Duration::ZERO).build().is_err());
    assert!(b().max_card_bytes(0).build().is_err());
    assert!(b().max_event_bytes(0).build().is_err());
    assert!(
        b().allow_origins(["http://ok", "http://bad/"])
            .build()
            .is_err()
    );
}

/// Emits "before", then waits for a permit, then emits "after".
#[derive(Clone)]
struct Gated(Arc<tokio::sync::Semaphore>);

impl Agent for Gated {
    fn run(&self, _input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let gate = self.0.clone();
        futures_util::stream::iter([Ok("before".to_owned())]).chain(futures_util::stream::once(
            async move {
                gate.acquire().await?.forget();
                Ok("after".to_owned())
            },
        ))
    }
}

#[tokio::test]
async fn subscribe_to_a_live_task_directly_and_through_a_proxy() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (l, base) = listener().await;
    serve(
        l,
        A2aServer::builder(card(&base))
            .agent(Gated(gate.clone()))
            .await
            .unwrap(),
    );
    let mut targets = vec![base.clone()];
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        targets.push(proxy(&base, t).await);
    }
    for target in &targets {
        for t in [Transport::JsonRpc, Transport::HttpJson] {
            let c = connect(target, t).await;
            let res = call(&c, Operation::SendStreamingMessage(send("go")))
                .await
                .unwrap();
            let A2aResponse::Stream(mut sent) = res else {
                panic!("{res:?}")
            };
            let Some(Ok(StreamResponse::Task(task))) = bounded(sent.next()).await else {
                panic!("the first event is the task")
            };
            let sub = SubscribeToTaskRequest {
                id: task.id.clone(),
                ..Default::default()
            };
            let res = call(&c, Operation::SubscribeToTask(sub)).await.unwrap();
            let A2aResponse::Stream(subscribed) = res else {
                panic!("{res:?}")
            };
            gate.add_permits(1);
            let rest: Vec<String> = bounded(sent.map(|e| event_line(e.unwrap())).collect()).await;
            let sub: Vec<String> =
                bounded(subscribed.map(|e| event_line(e.unwrap())).collect()).await;
            let ctx = format!("{target} over {t:?}: {rest:?} / {sub:?}");
            assert_eq!(
                rest.last().map(String::as_str),
                Some("status Completed"),
                "{ctx}"
            );
            assert_eq!(
                sub.last().map(String::as_str),
                Some("status Completed"),
                "{ctx}"
            );
            assert!(sub[0].starts_with("task"), "{ctx}");
            assert!(rest.iter().any(|e| e == "artifact after"), "{ctx}");
        }
    }
}

#[tokio::test]
async fn malformed_streams_end_with_an_error() {
    let task =
        json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}});
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let wrap = |v: Value| match t {
            Transport::JsonRpc => json!({"jsonrpc": "2.0", "id": 1, "result": v}).to_string(),
            _ => v.to_string(),
        };
        let gone = A2aError::task_not_found("t");
        let error_frame = match t {
            Transport::JsonRpc => {
                json!({"jsonrpc": "2.0", "id": 1, "error": gone.to_jsonrpc_error()})
            }
            _ => gone.to_rest_error(),
        };
        let first = format!("data: {}\n\n", wrap(task.clone()));
        let cases = [
            (
                format!("{first}data: {{\"task\":"),
                ErrorKind::InvalidAgentResponse,
            ),
            (
                format!("{first}data: {}\n\n", wrap(json!({"nope": 1}))),
                ErrorKind::InvalidAgentResponse,
            ),
            (
                format!("{first}data: {}\n\n", "x".repeat(4096)),
                ErrorKind::InvalidAgentResponse,
            ),
            (
                format!("{first}event: error\ndata: {error_frame}\n\n{first}"),
                ErrorKind::TaskNotFound,
            ),
        ];
        for (body, kind) in cases {
            let base: Arc<std::sync::OnceLock<String>> = Arc::default();
            let me = base.clone();
            let (url, _) = scripted(move |path, _| {
                if path.ends_with("agent-card.json") {
                    json_response(card_bytes(me.get().unwrap()))
                } else {
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Full::new(Bytes::from(body.clone())))
                        .unwrap()
                }
            })
            .await;
            base.set(url.clone()).unwrap();
            let c = A2aClient::builder(card_url(&url))
                .transport(t)
                .max_event_bytes(1024)
                .build()
                .unwrap();
            let client = bounded(c.connect()).await.unwrap();
            let res = call(&client, Operation::SendStreamingMessage(send("x")))
                .await
                .unwrap();
            let A2aResponse::Stream(s) = res else {
                panic!("{res:?}")
            };
            let items: Vec<_> = bounded(s.collect()).await;
            assert_eq!(items.len(), 2, "{t:?}: {items:?}");
            assert!(items[0].is_ok());
            assert_eq!(
                items[1].as_ref().unwrap_err().kind(),
                kind,
                "{t:?}: {items:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_default_client_speaks_tls_to_https_urls() {
    use tokio::io::AsyncReadExt;
    let (l, base) = listener().await;
    let first_byte = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).await.unwrap();
        b[0]
    });
    let url = format!("{}/card", base.replace("http://", "https://"));
    let e = resolve(&url, Duration::from_secs(5)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    // 0x16: a TLS handshake record (the ClientHello).
    assert_eq!(bounded(first_byte).await.unwrap(), 0x16);
}

/// Answers with the tenant the server decoded, then the text.
struct TenantEcho;

impl Agent for TenantEcho {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(format!("{}:{}", input.call.tenant, input.text))])
    }
}

#[tokio::test]
async fn the_interface_tenant_reaches_the_server_on_both_bindings() {
    let (l, base) = listener().await;
    let mut c = card(&base);
    for i in &mut c.supported_interfaces {
        i.tenant = "acme co".into();
    }
    serve(l, A2aServer::builder(c).agent(TenantEcho).await.unwrap());
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let client = connect(&base, t).await;
        let res = call(&client, Operation::SendMessage(send("x")))
            .await
            .unwrap();
        let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else {
            panic!("{res:?}")
        };
        let text: Vec<String> = task.artifacts.iter().map(artifact_text).collect();
        assert_eq!(text, ["acme co:x"], "{t:?}");
    }
}

#[tokio::test]
async fn this_crate_s_card_endpoint_revalidates_with_304() {
    let (l, base) = listener().await;
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let log = statuses.clone();
    let app = A2aServer::builder(card(&base))
        .card_max_age(Duration::ZERO)
        .agent(Echo)
        .await
        .unwrap();
    // Outside the whole stack: the card endpoint answers above host layers.
    serve(
        l,
        ServiceExt::<Request<hyper::body::Incoming>>::map_response(
            app,
            move |res: Response<a2a_tower::Body>| {
                log.lock().unwrap().push(res.status().as_u16());
                res
            },
        ),
    );
    let c = A2aClient::builder(card_url(&base)).build().unwrap();
    let first = bounded(c.resolve()).await.unwrap();
    let again = bounded(c.resolve()).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(*statuses.lock().unwrap(), [200, 304]);
}

/// Numbers whose exact text a second decoding pass through a
/// `serde_json::Value` loses or may lose (`0.0000001` became `1e-7`, `-0`
/// became `0`): beyond `f64`'s range, beyond `u64`, exponents, signs, zeros.
/// Exponents are in the form serde_json's parser keeps (`1e+400`, not
/// `1E400`).
const NUMBERS: &str = "[0.0000001,-0.000001,1.10,1e+400,2.5e-3,-0,0.0,\
                       123456789012345678901234567890,12345678901234567890.5]";

/// Writes an artifact and a COMPLETED status message, both holding
/// [`NUMBERS`] in a data part, the part's metadata and their own metadata.
struct Numbers;

/// The JSON of [`NUMBERS`] (parsed from text: never through `f64`).
fn numbers() -> Value {
    serde_json::from_str(NUMBERS).unwrap()
}

/// A data part of [`NUMBERS`] with metadata holding them too.
fn number_part() -> Part {
    let mut part = Part::data(numbers());
    part.metadata = Some(number_metadata());
    part
}

fn number_metadata() -> Metadata {
    serde_json::from_str(&format!(r#"{{"n":{NUMBERS},"x":0.0000001}}"#)).unwrap()
}

impl Executor for Numbers {
    async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
        let artifact = Artifact {
            artifact_id: "n".into(),
            parts: vec![number_part()],
            metadata: Some(number_metadata()),
            ..Default::default()
        };
        ex.emit.artifact(artifact, false, true).await?;
        let mut status = Message::agent("s", "");
        status.parts = vec![number_part()];
        status.metadata = Some(number_metadata());
        ex.emit.status(TaskState::Completed, Some(status)).await?;
        Ok(())
    }
}

/// The exact text every number-holding piece must serialize to.
fn assert_exact_parts(parts: &[Part], metadata: Option<&Metadata>, ctx: &str) {
    let part = format!(r#"[{{"data":{NUMBERS},"metadata":{{"n":{NUMBERS},"x":0.0000001}}}}]"#);
    assert_eq!(serde_json::to_string(parts).unwrap(), part, "{ctx}");
    let meta = format!(r#"{{"n":{NUMBERS},"x":0.0000001}}"#);
    assert_eq!(serde_json::to_string(&metadata).unwrap(), meta, "{ctx}");
}

fn assert_exact_task(task: &Task, ctx: &str) {
    let [artifact] = task.artifacts.as_slice() else {
        panic!("{ctx}: one artifact expected: {task:?}")
    };
    let (of_artifact, of_status) = (format!("{ctx}: artifact"), format!("{ctx}: status"));
    assert_exact_parts(&artifact.parts, artifact.metadata.as_ref(), &of_artifact);
    let status = task.status.message.as_ref().expect("a status message");
    assert_exact_parts(&status.parts, status.metadata.as_ref(), &of_status);
}

#[tokio::test]
async fn numbers_keep_their_exact_text_over_both_bindings() {
    let (l, base) = listener().await;
    serve(
        l,
        A2aServer::builder(card(&base))
            .executor(Numbers)
            .await
            .unwrap(),
    );
    for t in [Transport::JsonRpc, Transport::HttpJson] {
        let c = connect(&base, t).await;
        let sent = call(&c, Operation::SendMessage(send("go"))).await.unwrap();
        let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = sent else {
            panic!("{t:?}: not a task: {sent:?}")
        };
        assert_exact_task(&task, &format!("{t:?} SendMessage"));
        let get = GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        };
        let got = call(&c, Operation::GetTask(get)).await.unwrap();
        let A2aResponse::Task(got) = got else {
            panic!("{t:?}: {got:?}")
        };
        assert_exact_task(&got, &format!("{t:?} GetTask"));
        let list = ListTasksRequest {
            include_artifacts: Some(true),
            ..Default::default()
        };
        let listed = call(&c, Operation::ListTasks(list)).await.unwrap();
        let A2aResponse::Tasks(page) = listed else {
            panic!("{t:?}: {listed:?}")
        };
        let listed = page.tasks.iter().find(|x| x.id == task.id).expect("listed");
        assert_exact_task(listed, &format!("{t:?} ListTasks"));

        let res = call(&c, Operation::SendStreamingMessage(send("go")))
            .await
            .unwrap();
        let A2aResponse::Stream(s) = res else {
            panic!("{t:?}: {res:?}")
        };
        let events: Vec<StreamResponse> = bounded(s.map(Result::unwrap).collect()).await;
        let (mut artifacts, mut statuses) = (0, 0);
        for e in &events {
            let ctx = format!("{t:?} stream");
            match e {
                // The first event's snapshot may hold the artifact already.
                StreamResponse::Task(task) => {
                    for a in &task.artifacts {
                        artifacts += 1;
                        assert_exact_parts(&a.parts, a.metadata.as_ref(), &ctx);
                    }
                    if let Some(m) = &task.status.message {
                        statuses += 1;
                        assert_exact_parts(&m.parts, m.metadata.as_ref(), &ctx);
                    }
                }
                StreamResponse::ArtifactUpdate(u) => {
                    artifacts += 1;
                    let a = &u.artifact;
                    assert_exact_parts(&a.parts, a.metadata.as_ref(), &ctx);
                }
                StreamResponse::StatusUpdate(u) => {
                    if let Some(m) = &u.status.message {
                        statuses += 1;
                        assert_exact_parts(&m.parts, m.metadata.as_ref(), &ctx);
                    }
                }
                StreamResponse::Message(m) => panic!("{ctx}: a message: {m:?}"),
            }
        }
        assert_eq!((artifacts, statuses), (1, 1), "{t:?}: {events:?}");
    }
}
