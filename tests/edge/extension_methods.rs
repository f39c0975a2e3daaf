//! Extension methods through the whole `A2aServer` over a raw core that
//! echoes each `ExtensionRequest` back: the JSON-RPC method and the
//! HTTP+JSON routes (with and without a tenant), errors of the core on both
//! bindings, what stays unknown, the edge layers (body limit, version,
//! required extensions) applying as to any call, and the task engine
//! answering MethodNotFound for an extension method it does not serve.

use crate::support;

use std::convert::Infallible;

use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentExtension, AgentInterface, AgentSkill};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, Body, BoxError, ErrorKind, ExtensionMethod};
use a2a_tower::{ConfigError, Operation};
use bytes::Bytes;
use futures_core::Stream;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use serde_json::{Value, json};
use support::http::{Reply, request, rpc_body};
use tower::ServiceExt;
use tower::util::BoxCloneService;

const QUEUE: &str = "urn:a2a-tower:delivery-queue:v1";
const LIMIT: usize = 512;

type App = BoxCloneService<Request<Full<Bytes>>, Response<Body>, Infallible>;

fn card(required: bool) -> AgentCard {
    let mut card = AgentCard::new("Queue", "Keeps a queue per context", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/rest"))
        .with_skill(AgentSkill::new("queue", "Queue", "Orders tasks"));
    card.capabilities.extensions = vec![AgentExtension {
        uri: QUEUE.into(),
        required,
        ..AgentExtension::default()
    }];
    card
}

fn get_queue() -> ExtensionMethod {
    ExtensionMethod::new("GetContextQueue").route(Method::GET, "/contexts/{contextId}/queue")
}

fn reorder_queue() -> ExtensionMethod {
    ExtensionMethod::new("ReorderContextQueue")
        .route(Method::POST, "/contexts/{contextId}/queue:reorder")
}

/// Echoes an extension call: its method, params, tenant and activated
/// extensions. A `revision` of `"stale"` is refused as the queue's core
/// would refuse it; any other operation is unsupported.
async fn echo(req: A2aRequest) -> Result<A2aResponse, A2aError> {
    let Operation::Extension(ext) = req.operation else {
        return Err(A2aError::new(ErrorKind::UnsupportedOperation));
    };
    if ext.params.get("revision") == Some(&json!("stale")) {
        return Err(A2aError::invalid_params(
            "revision",
            "is not the current revision",
        ));
    }
    Ok(A2aResponse::Extension(json!({
        "method": ext.method,
        "params": ext.params,
        "tenant": req.context.tenant,
        "activated": req.context.activated_extensions,
    })))
}

fn app_with(card: AgentCard) -> App {
    let app = A2aServer::builder(card)
        .max_body_bytes(LIMIT)
        .extension_method(get_queue())
        .extension_method(reorder_queue())
        .core(tower::service_fn(echo))
        .expect("the stack builds");
    BoxCloneService::new(app)
}

fn app() -> App {
    app_with(card(false))
}

async fn call(app: &App, req: Request<Full<Bytes>>) -> Reply {
    Reply::read(app.clone().oneshot(req).await.unwrap()).await
}

async fn rpc(app: &App, method: &str, params: Value) -> Reply {
    let body = rpc_body(1, method, params);
    call(app, request(Method::POST, "/rpc", Some(&body))).await
}

/// The JSON-RPC error object of a 200 answer with id 1.
fn rpc_error(reply: &Reply) -> Value {
    assert_eq!(reply.status, StatusCode::OK);
    let v = reply.json();
    assert_eq!(v["id"], 1, "{v}");
    v["error"].clone()
}

#[tokio::test]
async fn jsonrpc_calls_reach_the_core() {
    let app = app();
    let params = json!({"contextId": "c-1", "tenant": "acme"});
    let reply = rpc(&app, "GetContextQueue", params.clone()).await;
    assert_eq!(
        (reply.status, reply.content_type()),
        (StatusCode::OK, "application/json")
    );
    let want =
        json!({"method": "GetContextQueue", "params": params, "tenant": "acme", "activated": []});
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": want})
    );

    // Absent params are {}; params that are not an object are −32602.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ReorderContextQueue"});
    let reply = call(&app, request(Method::POST, "/rpc", Some(&body))).await;
    assert_eq!(reply.json()["result"]["params"], json!({}));
    let reply = rpc(&app, "ReorderContextQueue", json!(["c-1"])).await;
    assert_eq!(rpc_error(&reply)["code"], -32602);
}

#[tokio::test]
async fn rest_get_captures_the_path_with_and_without_a_tenant() {
    let app = app();
    let reply = call(
        &app,
        request(Method::GET, "/rest/contexts/c%2F1%20x/queue", None),
    )
    .await;
    assert_eq!(
        (reply.status, reply.content_type()),
        (StatusCode::OK, "application/json")
    );
    assert_eq!(
        reply.json(),
        json!({"method": "GetContextQueue", "params": {"contextId": "c/1 x"}, "tenant": "", "activated": []})
    );
    let reply = call(
        &app,
        request(Method::GET, "/rest/acme/contexts/c-1/queue/", None),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.json(),
        json!({
            "method": "GetContextQueue",
            "params": {"contextId": "c-1", "tenant": "acme"},
            "tenant": "acme",
            "activated": [],
        })
    );
}

#[tokio::test]
async fn rest_post_merges_the_body_with_the_path() {
    let app = app();
    let body = json!({"revision": "r-7", "taskIds": ["t-2", "t-1"], "contextId": "ignored"});
    for (uri, tenant) in [
        ("/rest/contexts/c-1/queue:reorder", None),
        ("/rest/acme/contexts/c-1/queue:reorder", Some("acme")),
    ] {
        let reply = call(&app, request(Method::POST, uri, Some(&body))).await;
        assert_eq!(reply.status, StatusCode::OK, "{uri}: {}", reply.text());
        let mut params = json!({"revision": "r-7", "taskIds": ["t-2", "t-1"], "contextId": "c-1"});
        if let Some(t) = tenant {
            params["tenant"] = json!(t);
        }
        assert_eq!(
            reply.json(),
            json!({
                "method": "ReorderContextQueue",
                "params": params,
                "tenant": tenant.unwrap_or_default(),
                "activated": [],
            }),
            "{uri}"
        );
    }
    // A body that is not an object is InvalidParams; not JSON, ParseError.
    let not_object = json!(["t-1"]);
    let uri = "/rest/contexts/c-1/queue:reorder";
    let reply = call(&app, request(Method::POST, uri, Some(&not_object))).await;
    reply.rest_error(ErrorKind::InvalidParams);
    let mut req = request(Method::POST, uri, None);
    req.headers_mut()
        .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    *req.body_mut() = Full::new(Bytes::from_static(b"{"));
    call(&app, req).await.rest_error(ErrorKind::ParseError);
}

#[tokio::test]
async fn errors_of_the_core_go_out_as_on_any_method() {
    let app = app();
    let stale = A2aError::invalid_params("revision", "is not the current revision");

    let reply = rpc(
        &app,
        "ReorderContextQueue",
        json!({"contextId": "c", "revision": "stale"}),
    )
    .await;
    assert_eq!(rpc_error(&reply), stale.to_jsonrpc_error());

    let body = json!({"revision": "stale", "taskIds": []});
    let uri = "/rest/acme/contexts/c/queue:reorder";
    let reply = call(&app, request(Method::POST, uri, Some(&body))).await;
    assert_eq!(
        reply.rest_error(ErrorKind::InvalidParams),
        stale.to_rest_error()
    );
}

#[tokio::test]
async fn what_is_not_registered_stays_unknown() {
    let app = app();
    let reply = rpc(&app, "ClearContextQueue", json!({"contextId": "c"})).await;
    assert_eq!(rpc_error(&reply)["code"], -32601);
    for uri in [
        "/rest/contexts/c/queue:clear",
        "/rest/contexts/c",
        "/rest/acme/contexts",
    ] {
        let reply = call(&app, request(Method::GET, uri, None)).await;
        reply.rest_error(ErrorKind::MethodNotFound);
    }
    // A registered path with another HTTP method is 405 with its methods.
    let reply = call(
        &app,
        request(Method::DELETE, "/rest/contexts/c/queue", None),
    )
    .await;
    reply.rest_error(ErrorKind::MethodNotAllowed);
    assert_eq!(reply.header(header::ALLOW), Some("GET"));
    // The core's own operations are still answered by the core.
    let reply = rpc(&app, "GetTask", json!({"id": "t-1"})).await;
    assert_eq!(rpc_error(&reply)["code"], -32004);
}

#[tokio::test]
async fn an_oversized_body_is_refused_as_for_any_call() {
    let app = app();
    let big = "x".repeat(LIMIT);
    let body = json!({"revision": big, "taskIds": []});
    let uri = "/rest/contexts/c/queue:reorder";
    let ext = call(&app, request(Method::POST, uri, Some(&body))).await;
    let core = call(
        &app,
        request(Method::POST, "/rest/message:send", Some(&body)),
    )
    .await;
    ext.rest_error(ErrorKind::PayloadTooLarge);
    assert_eq!((ext.status, ext.json()), (core.status, core.json()));

    let ext = rpc(
        &app,
        "ReorderContextQueue",
        json!({"contextId": "c", "revision": big}),
    )
    .await;
    let core = rpc(&app, "GetTask", json!({"id": big})).await;
    assert_eq!(ext.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!((ext.status, ext.json()), (core.status, core.json()));
}

#[tokio::test]
async fn version_and_required_extensions_apply() {
    // No A2A-Version is 0.3: refused on both bindings before the core.
    let app = app();
    let mut req = request(Method::GET, "/rest/contexts/c/queue", None);
    req.headers_mut().remove("a2a-version");
    call(&app, req)
        .await
        .rest_error(ErrorKind::VersionNotSupported);
    let body = rpc_body(1, "GetContextQueue", json!({"contextId": "c"}));
    let mut req = request(Method::POST, "/rpc", Some(&body));
    req.headers_mut().remove("a2a-version");
    // (The version layer answers before the body is read: id null.)
    let reply = call(&app, req).await;
    assert_eq!(reply.json()["error"]["code"], -32009);

    // A required extension must be activated; once it is, the core sees it.
    let app = app_with(card(true));
    let reply = call(&app, request(Method::GET, "/rest/contexts/c/queue", None)).await;
    reply.rest_error(ErrorKind::ExtensionSupportRequired);
    let mut req = request(Method::GET, "/rest/contexts/c/queue", None);
    req.headers_mut()
        .insert("a2a-extensions", QUEUE.parse().unwrap());
    let reply = call(&app, req).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["activated"], json!([QUEUE]));
}

struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

#[tokio::test]
async fn the_task_engine_does_not_serve_extension_methods() {
    let app = A2aServer::builder(card(false))
        .extension_method(get_queue())
        .agent(Echo)
        .await
        .expect("the stack builds");
    let app = BoxCloneService::new(app);
    let reply = rpc(&app, "GetContextQueue", json!({"contextId": "c"})).await;
    assert_eq!(rpc_error(&reply)["code"], -32601);
    let reply = call(&app, request(Method::GET, "/rest/contexts/c/queue", None)).await;
    reply.rest_error(ErrorKind::MethodNotFound);
}

#[test]
fn clashing_registrations_fail_the_build() {
    let build = |m: ExtensionMethod| -> Result<(), ConfigError> {
        A2aServer::builder(card(false))
            .extension_method(get_queue())
            .extension_method(m)
            .core(tower::service_fn(echo))
            .map(|_| ())
    };
    assert!(build(reorder_queue()).is_ok());
    for m in [
        ExtensionMethod::new("SendMessage"),
        ExtensionMethod::new("GetContextQueue"),
        ExtensionMethod::new("Peek").route(Method::GET, "/tasks/{id}"),
        ExtensionMethod::new("Peek").route(Method::GET, "/contexts/{id}/queue"),
    ] {
        assert!(build(m.clone()).is_err(), "{m:?}");
    }
}
