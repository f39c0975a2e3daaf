//! The HTTP+JSON routes and query decoder, and JSON-RPC with extension
//! methods, through the assembled `A2aServer` (card, body limit, version,
//! both bindings) over a core that records what reaches it.
//!
//! - Arbitrary method, path, query and body: the answer is one of the
//!   binding's statuses, in the binding's error shape, never a 5xx.
//! - Valid requests built from random ids, tenants and query values,
//!   percent-encoded: the core receives exactly the operation they name.
//! - JSON-RPC bodies (mutated requests, extension methods included): always
//!   HTTP 200 with a JSON-RPC response whose error code is the decoder's or
//!   the core's.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use a2a_tower::card::StackCapabilities;
use a2a_tower::types::{
    AgentCard, AgentInterface, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, TaskPushNotificationConfigId,
    TaskState,
};
use a2a_tower::{
    A2aError, A2aRequest, A2aResponse, Body, ErrorKind, ExtensionMethod, ExtensionRequest,
    Operation,
};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseResult;
use serde_json::{Map, Value, json};
use tower::ServiceExt;
use tower::util::BoxCloneService;

use crate::harness::{Text, bounded_warm, bytes, edited, fuzz, json};
use crate::jsonrpc::{envelope, operations};
use crate::support::http::Reply;

type App = BoxCloneService<Request<Full<Bytes>>, Response<Body>, Infallible>;

const LIMIT: usize = 16 * 1024;

/// The assembled stack and the operations its core received.
fn app() -> (App, Arc<Mutex<Vec<Operation>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let core = tower::service_fn(move |req: A2aRequest| {
        record.lock().unwrap().push(req.operation.clone());
        async move {
            match req.operation {
                Operation::Extension(_) => Ok(A2aResponse::Extension(json!({"ok": true}))),
                _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
            }
        }
    });
    let card = AgentCard::new("Fuzz", "Records requests", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/rest"))
        .with_skill(a2a_tower::types::AgentSkill::new("s", "Skill", "Records"))
        .with_streaming(true)
        .with_push_notifications(true);
    let app = a2a_tower::server::A2aServer::builder(card)
        .max_body_bytes(LIMIT)
        .stack_capabilities(StackCapabilities::new().push_notifications(true))
        .extension_method(
            ExtensionMethod::new("GetContextQueue")
                .route(Method::GET, "/contexts/{contextId}/queue"),
        )
        .extension_method(
            ExtensionMethod::new("ReorderContextQueue")
                .route(Method::POST, "/contexts/{contextId}/queue:reorder"),
        )
        .core(core)
        .expect("the stack builds");
    (BoxCloneService::new(app), seen)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Calls `app` with the request `make` builds, within the allocation bound.
fn call(
    rt: &tokio::runtime::Runtime,
    app: &App,
    make: impl Fn() -> Request<Full<Bytes>>,
    len: usize,
) -> Reply {
    bounded_warm(len, 128, 256 * 1024, || {
        rt.block_on(async { Reply::read(app.clone().oneshot(make()).await.unwrap()).await })
    })
}

/// Every byte but RFC 3986's unreserved ones as `%XX`.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const SEGMENTS: &[&str] = &[
    "tasks",
    "message:send",
    "message:stream",
    "extendedAgentCard",
    "pushNotificationConfigs",
    "contexts",
    "queue",
    "queue:reorder",
    "t-1",
    "t-1:cancel",
    "t-1:subscribe",
    ":cancel",
    "",
    "%2F",
    "%FF",
    "%C3%28",
    "%",
    "%4",
    "a%3Ab",
    "acme",
    ".",
    "..",
];

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(SEGMENTS).prop_map(str::to_owned),
        1 => "[a-zA-Z0-9:%._~!$&'()*+,;=@-]{0,12}",
    ]
}

const QUERY_KEYS: &[&str] = &[
    "historyLength",
    "history_length",
    "contextId",
    "status",
    "pageSize",
    "page_size",
    "pageToken",
    "statusTimestampAfter",
    "lastUpdatedAfter",
    "includeArtifacts",
    "tenant",
    "x",
];

fn query() -> impl Strategy<Value = Option<String>> {
    let value = prop_oneof![
        select(
            &[
                "1",
                "-1",
                "2147483648",
                "true",
                "false",
                "TASK_STATE_WORKING",
                "2",
                "99",
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:00:00.123456789-23:59",
                "%FF",
                "+",
                "%2B",
                ""
            ][..]
        )
        .prop_map(str::to_owned),
        "[a-zA-Z0-9%+._~-]{0,12}",
    ];
    prop::option::of(
        prop::collection::vec((select(QUERY_KEYS), value), 0..5).prop_map(|pairs| {
            pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&")
        }),
    )
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Value> = operations()
        .iter()
        .map(|op| Value::Object(op.to_params().expect("params serialize")))
        .collect();
    prop_oneof![
        1 => Just(Vec::new()),
        1 => bytes(),
        1 => json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        5 => edited(seeds),
    ]
}

#[derive(Debug, Clone)]
struct Raw {
    method: Method,
    path: String,
    query: Option<String>,
    content_type: &'static str,
    body: Text,
}

fn raw() -> impl Strategy<Value = Raw> {
    let method = select(vec![
        Method::GET,
        Method::POST,
        Method::DELETE,
        Method::PUT,
        Method::PATCH,
        Method::HEAD,
        Method::OPTIONS,
    ]);
    (
        method,
        prop::collection::vec(segment(), 0..6),
        query(),
        select(&["application/json", "application/a2a+json", "text/plain", ""][..]),
        body(),
    )
        .prop_map(|(method, segs, query, content_type, body)| Raw {
            method,
            path: format!("/rest/{}", segs.join("/")),
            query,
            content_type,
            body: Text(body),
        })
}

fn build(
    method: Method,
    path: &str,
    query: Option<&str>,
    ct: &str,
    body: Vec<u8>,
) -> Option<Request<Full<Bytes>>> {
    let uri = match query {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    };
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("a2a-version", "1.0");
    if !ct.is_empty() {
        req = req.header("content-type", ct);
    }
    req.body(Full::new(Bytes::from(body))).ok()
}

const STATUSES: &[u16] = &[200, 400, 404, 405, 413, 415];

fn check_raw(rt: &tokio::runtime::Runtime, app: &App, r: Raw) -> TestCaseResult {
    let len = r.path.len() + r.query.as_ref().map_or(0, String::len) + r.body.0.len();
    let make = || {
        let body = r.body.0.clone();
        build(
            r.method.clone(),
            &r.path,
            r.query.as_deref(),
            r.content_type,
            body,
        )
    };
    if make().is_none() {
        return Ok(()); // not a URI `http` accepts: never reaches a service
    }
    let reply = call(rt, app, || make().unwrap(), len);
    prop_assert!(
        STATUSES.contains(&reply.status.as_u16()),
        "status {}",
        reply.status
    );
    if reply.status == StatusCode::METHOD_NOT_ALLOWED {
        prop_assert!(reply.header("allow").is_some_and(|a| !a.is_empty()));
    }
    if reply.status != StatusCode::OK {
        let v: Value = serde_json::from_slice(&reply.body).expect("an error body is JSON");
        let reason = v["error"]["details"][0]["reason"]
            .as_str()
            .unwrap_or_default();
        let kind = ErrorKind::from_reason(reason);
        prop_assert!(kind.is_some(), "unknown reason in {}", v);
        prop_assert_eq!(kind.unwrap().http_status(), reply.status.as_u16());
        prop_assert_eq!(&v["error"]["code"], &json!(reply.status.as_u16()));
    }
    Ok(())
}

/// A valid request, its HTTP form's parts and the operation it names.
#[derive(Debug, Clone)]
struct Valid {
    method: Method,
    path: String,
    query: Option<String>,
    op: Operation,
}

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{1,10}",
        Just("tasks".to_owned()),
        Just("a:cancel".to_owned())
    ]
    .prop_filter("ids are not empty", |s| !s.is_empty())
}

fn valid() -> impl Strategy<Value = Valid> {
    let tenant = prop::option::of(id());
    (
        0u8..6,
        tenant,
        id(),
        id(),
        prop::option::of(0..=i32::MAX),
        0..=100i32,
        id(),
    )
        .prop_map(|(which, tenant, task, config, n, size, token)| {
            let t = tenant.clone().unwrap_or_default();
            let prefix = match &tenant {
                // Every byte escaped: a tenant never reads as a route's name.
                Some(t) => format!(
                    "/rest/{}",
                    t.bytes().map(|b| format!("%{b:02X}")).collect::<String>()
                ),
                None => "/rest".to_owned(),
            };
            let task_enc = encode(&task);
            let q = |pairs: Vec<(&str, String)>| {
                let q: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", encode(v)))
                    .collect();
                Some(q.join("&"))
            };
            let (method, path, query, op) = match which {
                0 => (
                    Method::GET,
                    format!("{prefix}/tasks/{task_enc}"),
                    n.and_then(|n| q(vec![("historyLength", n.to_string())])),
                    Operation::GetTask(GetTaskRequest {
                        tenant: t,
                        id: task,
                        history_length: n,
                    }),
                ),
                1 => (
                    Method::GET,
                    format!("{prefix}/tasks"),
                    q(vec![
                        ("contextId", token.clone()),
                        ("status", "TASK_STATE_WORKING".into()),
                        ("pageSize", size.max(1).to_string()),
                    ]),
                    Operation::ListTasks(ListTasksRequest {
                        tenant: t,
                        context_id: token,
                        status: TaskState::Working,
                        page_size: Some(size.max(1)),
                        ..Default::default()
                    }),
                ),
                2 | 3 => {
                    let r = TaskPushNotificationConfigId {
                        tenant: t,
                        task_id: task,
                        id: config.clone(),
                    };
                    let path = format!(
                        "{prefix}/tasks/{task_enc}/pushNotificationConfigs/{}",
                        encode(&config)
                    );
                    if which == 2 {
                        (
                            Method::GET,
                            path,
                            None,
                            Operation::GetTaskPushNotificationConfig(r),
                        )
                    } else {
                        (
                            Method::DELETE,
                            path,
                            None,
                            Operation::DeleteTaskPushNotificationConfig(r),
                        )
                    }
                }
                4 => (
                    Method::GET,
                    format!("{prefix}/tasks/{task_enc}/pushNotificationConfigs"),
                    q(vec![
                        ("pageSize", size.to_string()),
                        ("pageToken", token.clone()),
                    ]),
                    Operation::ListTaskPushNotificationConfigs(
                        ListTaskPushNotificationConfigsRequest {
                            tenant: t,
                            task_id: task,
                            page_size: size,
                            page_token: token,
                        },
                    ),
                ),
                _ => match tenant {
                    None => (
                        Method::GET,
                        format!("{prefix}/contexts/{task_enc}/queue"),
                        None,
                        Operation::Extension(ExtensionRequest::new(
                            "GetContextQueue",
                            Map::from_iter([("contextId".to_owned(), json!(task))]),
                        )),
                    ),
                    Some(_) => (
                        Method::GET,
                        format!("{prefix}/extendedAgentCard"),
                        None,
                        Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest { tenant: t }),
                    ),
                },
            };
            Valid {
                method,
                path,
                query,
                op,
            }
        })
}

fn check_valid(
    rt: &tokio::runtime::Runtime,
    app: &App,
    seen: &Mutex<Vec<Operation>>,
    v: Valid,
) -> TestCaseResult {
    seen.lock().unwrap().clear();
    let len = v.path.len() + v.query.as_ref().map_or(0, String::len);
    let make = || {
        let q = v.query.as_deref();
        build(v.method.clone(), &v.path, q, "", Vec::new()).expect("a valid URI")
    };
    let reply = call(rt, app, make, len);
    // A warm-up's second call records the operation again.
    seen.lock().unwrap().dedup();
    let got = seen.lock().unwrap().clone();
    match &v.op {
        // Not declared on the card: refused before the core.
        Operation::GetExtendedAgentCard(_) => {
            prop_assert_eq!(reply.status.as_u16(), 400);
            prop_assert!(got.is_empty());
        }
        op => prop_assert_eq!(got, vec![op.clone()], "{} {:?}", reply.status, reply.body),
    }
    Ok(())
}

fn rpc_bodies() -> impl Strategy<Value = Vec<u8>> {
    let mut seeds: Vec<Value> = operations()
        .iter()
        .map(|op| envelope(json!(1), op))
        .collect();
    seeds.push(
        json!({"jsonrpc": "2.0", "id": "q", "method": "GetContextQueue",
        "params": {"contextId": "c-1", "tenant": "t"}}),
    );
    seeds.push(json!({"jsonrpc": "2.0", "id": 2, "method": "ReorderContextQueue"}));
    prop_oneof![1 => bytes(), 6 => edited(seeds)]
}

fn check_rpc(rt: &tokio::runtime::Runtime, app: &App, body: Vec<u8>) -> TestCaseResult {
    let len = body.len();
    let make = || build(Method::POST, "/rpc", None, "application/json", body.clone()).unwrap();
    let reply = call(rt, app, make, len);
    prop_assert_eq!(reply.status.as_u16(), 200);
    let v: Value = serde_json::from_slice(&reply.body).expect("a JSON-RPC response");
    prop_assert_eq!(&v["jsonrpc"], "2.0");
    if let Some(code) = v
        .get("error")
        .map(|e| e["code"].as_i64().unwrap_or_default())
    {
        let allowed = [-32700, -32600, -32601, -32602, -32003, -32004];
        prop_assert!(allowed.contains(&code), "code {}", code);
    } else {
        prop_assert_eq!(&v["result"], &json!({"ok": true}));
    }
    Ok(())
}

#[test]
fn rest_routes_and_queries() {
    let rt = runtime();
    let (app, _) = app();
    fuzz("rest-raw", 1500, raw(), |r| check_raw(&rt, &app, r));
}

#[test]
fn rest_valid_requests_reach_the_core_exactly() {
    let rt = runtime();
    let (app, seen) = app();
    fuzz("rest-valid", 1000, valid(), |v| {
        check_valid(&rt, &app, &seen, v)
    });
}

#[test]
fn jsonrpc_over_http_with_extension_methods() {
    let rt = runtime();
    let (app, _) = app();
    fuzz("jsonrpc-http", 1000, rpc_bodies().prop_map(Text), |b| {
        check_rpc(&rt, &app, b.0)
    });
}
