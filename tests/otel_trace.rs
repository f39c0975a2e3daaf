//! W3C Trace Context across A2A calls (feature `otel`), exported through
//! `tracing-opentelemetry` to an in-memory exporter. Its own test binary:
//! the subscriber is process-wide.
//!
//! - A request with a `traceparent` yields its binding's call span (parented
//!   on the remote span) and the execution's span in that trace, on
//!   JSON-RPC, HTTP+JSON and gRPC.
//! - A client call inside a span sends that span's trace id (the card fetch
//!   included).
//! - A proxy (a binding over an `A2aClient` core) keeps one trace from the
//!   caller to the agent behind it.

#![cfg(all(feature = "otel", feature = "grpc", feature = "client"))]

mod support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use a2a_tower::client::A2aClient;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::grpc::proto::{self, a2a_service_client::A2aServiceClient, part};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill, Message, Role, SendMessageRequest};
use a2a_tower::{A2aRequest, BoxError, JsonRpcLayer, Operation};
use bytes::Bytes;
use futures_core::Stream;
use http::{Request, Response};
use http_body_util::Full;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use support::http::{message, request, rpc_body};
use tower::{Layer, ServiceExt};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

/// The exporter every span of the process goes to (installed once).
fn exporter() -> InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER
        .get_or_init(|| {
            let exporter = InMemorySpanExporter::default();
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(exporter.clone())
                .build();
            let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
                .unwrap();
            exporter
        })
        .clone()
}

/// A fresh trace id and parent span id, as a `traceparent`.
fn traceparent() -> (String, String, String) {
    let trace = uuid::Uuid::new_v4().simple().to_string();
    let parent = uuid::Uuid::new_v4().simple().to_string()[..16].to_owned();
    let tp = format!("00-{trace}-{parent}-01");
    (tp, trace, parent)
}

/// The finished spans of `trace`, once every name of `names` is among them
/// (or after 5 s).
async fn spans_of(exporter: &InMemorySpanExporter, trace: &str, names: &[&str]) -> Vec<SpanData> {
    for _ in 0..100 {
        let spans: Vec<SpanData> = exporter
            .get_finished_spans()
            .unwrap()
            .into_iter()
            .filter(|s| s.span_context.trace_id().to_string() == trace)
            .collect();
        if names.iter().all(|n| spans.iter().any(|s| s.name == *n)) {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no spans {names:?} in trace {trace}");
}

fn card() -> AgentCard {
    AgentCard::new("Echo", "Echoes", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_interface(AgentInterface::grpc("localhost:50051"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"))
}

/// The attribute `key` of `span`, as a string.
fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

/// The span named `name` has these attributes (OpenTelemetry semantic
/// conventions), and no attribute carries the message text `secret`.
fn assert_attrs(spans: &[SpanData], name: &str, want: &[(&str, &str)]) {
    let span = spans.iter().find(|s| s.name == name).unwrap();
    for (key, value) in want {
        assert_eq!(attr(span, key).as_deref(), Some(*value), "{name}.{key}");
    }
    for s in spans {
        for kv in &s.attributes {
            assert!(!kv.value.as_str().contains("secret"), "{}: {kv:?}", s.name);
        }
    }
}

/// The call span of `binding` is parented on the remote span, and the
/// execution's span is in the same trace; the binding's span is the only
/// call span (the engine it serves makes no `a2a.call` of its own) and
/// carries the task's id.
fn assert_parented(spans: &[SpanData], binding: &str, parent: &str) {
    let call = spans.iter().find(|s| s.name == binding).unwrap();
    assert_eq!(call.parent_span_id.to_string(), parent);
    let exec = spans.iter().find(|s| s.name == "a2a.execution").unwrap();
    assert!(!spans.iter().any(|s| s.name == "a2a.call"), "one call span");
    assert!(attr(call, "task_id").is_some());
    assert_eq!(attr(call, "task_id"), attr(exec, "task_id"));
    assert_eq!(attr(call, "context_id"), attr(exec, "context_id"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_and_rest_requests_join_the_callers_trace() {
    let exporter = exporter();
    let server = A2aServer::builder(card()).agent(Echo).await.unwrap();

    let (tp, trace, parent) = traceparent();
    let body = rpc_body(
        1,
        "SendMessage",
        json!({"message": message("m-1", "secret")}),
    );
    let mut req = request("POST", "/", Some(&body));
    req.headers_mut().insert("traceparent", tp.parse().unwrap());
    let res = server.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let spans = spans_of(&exporter, &trace, &["a2a.jsonrpc", "a2a.execution"]).await;
    assert_parented(&spans, "a2a.jsonrpc", &parent);
    let jsonrpc = [
        ("rpc.system", "jsonrpc"),
        ("rpc.method", "SendMessage"),
        ("http.request.method", "POST"),
        ("url.path", "/"),
        ("http.response.status_code", "200"),
    ];
    assert_attrs(&spans, "a2a.jsonrpc", &jsonrpc);
    let execution = [("gen_ai.operation.name", "invoke_agent")];
    assert_attrs(&spans, "a2a.execution", &execution);
    let exec = spans.iter().find(|s| s.name == "a2a.execution").unwrap();
    assert_eq!(
        attr(exec, "gen_ai.conversation.id"),
        attr(exec, "context_id"),
        "the conversation is the context"
    );

    let (tp, trace, parent) = traceparent();
    let body = json!({"message": message("m-2", "hi")});
    let mut req = request("POST", "/rest/message:send", Some(&body));
    req.headers_mut().insert("traceparent", tp.parse().unwrap());
    let res = server.oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let spans = spans_of(&exporter, &trace, &["a2a.rest", "a2a.execution"]).await;
    assert_parented(&spans, "a2a.rest", &parent);
    let rest = [
        ("http.request.method", "POST"),
        ("url.path", "/rest/message:send"),
        ("http.route", "/message:send"),
        ("http.response.status_code", "200"),
    ];
    assert_attrs(&spans, "a2a.rest", &rest);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_metadata_joins_the_callers_trace() {
    let exporter = exporter();
    let server = A2aServer::builder(card()).agent(Echo).await.unwrap();
    let (listener, base) = support::loopback::listener().await;
    support::loopback::serve(listener, server);
    let channel = tonic::transport::Channel::from_shared(base)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = A2aServiceClient::new(channel);

    let (tp, trace, parent) = traceparent();
    let msg = proto::SendMessageRequest {
        message: Some(proto::Message {
            message_id: "m-1".into(),
            role: proto::Role::User as i32,
            parts: vec![proto::Part {
                content: Some(part::Content::Text("hi".into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut req = tonic::Request::new(msg);
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    req.metadata_mut()
        .insert("traceparent", tp.parse().unwrap());
    client.send_message(req).await.unwrap();
    let spans = spans_of(&exporter, &trace, &["a2a.grpc", "a2a.execution"]).await;
    assert_parented(&spans, "a2a.grpc", &parent);
    let grpc = [
        ("rpc.system", "grpc"),
        ("rpc.service", "lf.a2a.v1.A2AService"),
        ("rpc.method", "SendMessage"),
        ("url.path", "/lf.a2a.v1.A2AService/SendMessage"),
        ("http.response.status_code", "200"),
    ];
    assert_attrs(&spans, "a2a.grpc", &grpc);
}

fn send(text: &str) -> A2aRequest {
    A2aRequest::new(Operation::SendMessage(SendMessageRequest {
        message: Message::new(Role::User, uuid::Uuid::new_v4().to_string(), text),
        ..Default::default()
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_call_sends_its_spans_trace_id() {
    let _exporter = exporter();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let http = tower::service_fn(move |req: Request<Full<Bytes>>| {
        record
            .lock()
            .unwrap()
            .push(req.headers().get("traceparent").cloned());
        let body = if req.uri().path() == "/card" {
            serde_json::to_vec(&card()).unwrap()
        } else {
            let task = json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}});
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": {"task": task}}))
                .unwrap()
        };
        async move { Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(body)))) }
    });
    let span = tracing::info_span!("caller");
    let trace = span.context().span().span_context().trace_id().to_string();
    async {
        let client = A2aClient::builder("http://localhost/card")
            .http(http)
            .build()
            .unwrap()
            .connect()
            .await
            .unwrap();
        client.oneshot(send("hi")).await.unwrap();
    }
    .instrument(span)
    .await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "the card fetch and the call");
    for tp in seen.iter() {
        let tp = tp.as_ref().expect("a traceparent on every request");
        assert_eq!(tp.to_str().unwrap().split('-').nth(1), Some(trace.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_keeps_one_trace_end_to_end() {
    let exporter = exporter();
    // The agent behind the proxy, on loopback.
    let (listener, base) = support::loopback::listener().await;
    let agent_card = AgentCard::new("Echo", "Echoes", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{base}/")))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    let agent = A2aServer::builder(agent_card).agent(Echo).await.unwrap();
    support::loopback::serve(listener, agent);
    let client = A2aClient::builder(format!("{base}/.well-known/agent-card.json"))
        .build()
        .unwrap()
        .connect()
        .await
        .unwrap();
    // The proxy: JSON-RPC over the client as its core.
    let proxy_card = AgentCard::new("Proxy", "Forwards", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    let proxy = JsonRpcLayer::new(&proxy_card).unwrap().layer(client);

    let (tp, trace, parent) = traceparent();
    let body = rpc_body(1, "SendMessage", json!({"message": message("m-1", "hi")}));
    let mut req = request("POST", "/", Some(&body));
    req.headers_mut().insert("traceparent", tp.parse().unwrap());
    let res = proxy.oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let names = ["a2a.jsonrpc", "a2a.client", "a2a.execution"];
    let spans = spans_of(&exporter, &trace, &names).await;
    // Two JSON-RPC call spans: the proxy's, on the caller's span, and the
    // agent's, on the client's span.
    let client_span = spans.iter().find(|s| s.name == "a2a.client").unwrap();
    assert_eq!(
        client_span.span_kind,
        opentelemetry::trace::SpanKind::Client
    );
    let host = base.split("://").nth(1).unwrap().split(':').next().unwrap();
    let client = [
        ("rpc.system", "jsonrpc"),
        ("rpc.method", "SendMessage"),
        ("server.address", host),
    ];
    assert_attrs(&spans, "a2a.client", &client);
    let calls: Vec<_> = spans.iter().filter(|s| s.name == "a2a.jsonrpc").collect();
    assert!(
        calls
            .iter()
            .all(|s| s.span_kind == opentelemetry::trace::SpanKind::Server)
    );
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().any(|s| s.parent_span_id.to_string() == parent));
    assert!(
        calls
            .iter()
            .any(|s| s.parent_span_id == client_span.span_context.span_id())
    );
}
