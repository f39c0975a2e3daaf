//! The HTTP+JSON binding (a2a-spec.md §7) over a deterministic core that
//! records every operation it gets: routes and verbs (bare and under a
//! tenant), query parameters, content types, the error shape of every
//! ErrorKind, SSE framing, 404/405, and the binding inside a full stack
//! chained with JSON-RPC; and the exact error body of the whole `A2aServer`
//! (`support::assembled`).

use crate::support;

use std::time::Duration;

use a2a_tower::card::StackCapabilities;
use a2a_tower::types::{
    AgentCard, AgentExtension, AgentInterface, AgentSkill, CancelTaskRequest,
    GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, Message, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigId, TaskState, Timestamp,
};
use a2a_tower::{
    A2aError, A2aRequest, A2aResponse, AgentCardLayer, Body, BodyLimitLayer, ErrorKind,
    EventStream, ExtensionsLayer, JsonRpcLayer, NotFound, Operation, ProtocolVersion, RestLayer,
    VersionLayer,
};
use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
#[cfg(feature = "engine")]
use support::assembled;
use support::core::{Calls, scripted, status_update, task};
use support::http::Reply;
use tower::{Layer, Service, ServiceExt};

/// A principal a host auth layer would insert into the request extensions.
#[derive(Debug, Clone, PartialEq)]
struct Principal(&'static str);

/// What the core saw of one call.
#[derive(Debug, Clone)]
struct Seen {
    op: Operation,
    tenant: String,
    principal: Option<Principal>,
    version: Option<ProtocolVersion>,
}

fn card() -> AgentCard {
    let mut card = AgentCard::new("Rest", "REST binding tests", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/a2a"))
        .with_streaming(true)
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    card.capabilities.push_notifications = Some(true);
    card.capabilities.extended_agent_card = Some(true);
    card
}

/// Deterministic answers: `fail:<REASON>` task ids fail with that kind;
/// subscribe ids pick a stream shape.
fn answer(op: &Operation) -> Result<A2aResponse, A2aError> {
    let stream = |items: Vec<Result<StreamResponse, A2aError>>| {
        Ok(A2aResponse::Stream(EventStream::from_iter(items)))
    };
    match op {
        Operation::GetTask(r) => match r.id.strip_prefix("fail:") {
            Some(reason) => Err(A2aError::new(
                ErrorKind::from_reason(reason).expect("a reason of the table"),
            )),
            None if r.id == "wrong-variant" => Ok(A2aResponse::Empty),
            None => Ok(A2aResponse::Task(task(&r.id, TaskState::Working))),
        },
        Operation::SendMessage(_) => Ok(A2aResponse::SendMessage(SendMessageResponse::Task(
            task("t-1", TaskState::Completed).into(),
        ))),
        Operation::SendStreamingMessage(_) => stream(vec![
            Ok(StreamResponse::Task(task("t-1", TaskState::Submitted))),
            Ok(status_update(TaskState::Completed)),
        ]),
        Operation::SubscribeToTask(r) => match r.id.as_str() {
            "mid" => stream(vec![
                Ok(StreamResponse::Task(task("mid", TaskState::Working))),
                Err(A2aError::task_not_found("mid")),
                Ok(StreamResponse::Task(task("never", TaskState::Working))),
            ]),
            "pre" => stream(vec![Err(A2aError::task_not_found("pre"))]),
            "empty" => stream(vec![]),
            id => stream(vec![Ok(StreamResponse::Task(task(id, TaskState::Working)))]),
        },
        Operation::ListTasks(_) => Ok(A2aResponse::Tasks(Default::default())),
        Operation::CancelTask(r) => Ok(A2aResponse::Task(task(&r.id, TaskState::Canceled))),
        Operation::CreateTaskPushNotificationConfig(c) => {
            Ok(A2aResponse::PushConfig(TaskPushNotificationConfig {
                id: "cfg-1".into(),
                ..c.clone()
            }))
        }
        Operation::GetTaskPushNotificationConfig(r) => {
            Ok(A2aResponse::PushConfig(TaskPushNotificationConfig {
                id: r.id.clone(),
                task_id: r.task_id.clone(),
                url: "https://hook.example/".into(),
                ..Default::default()
            }))
        }
        Operation::ListTaskPushNotificationConfigs(_) => Ok(A2aResponse::PushConfigs(
            ListTaskPushNotificationConfigsResponse::default(),
        )),
        Operation::DeleteTaskPushNotificationConfig(_) => Ok(A2aResponse::Empty),
        Operation::GetExtendedAgentCard(_) => Ok(A2aResponse::AgentCard(Box::new(card()))),
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    }
}

/// The recording core.
fn core(
    log: Calls,
) -> impl Service<
    A2aRequest,
    Response = A2aResponse,
    Error = A2aError,
    Future = std::future::Ready<Result<A2aResponse, A2aError>>,
> + Clone
+ Send
+ 'static {
    scripted(log, answer)
}

type Svc = tower::util::BoxCloneService<
    Request<Full<Bytes>>,
    http::Response<Body>,
    std::convert::Infallible,
>;

fn rest(log: &Calls) -> Svc {
    let layer = RestLayer::new(&card()).unwrap().keep_alive(Duration::ZERO);
    tower::util::BoxCloneService::new(layer.layer(core(log.clone())))
}

fn req(method: Method, path: &str, ct: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(method).uri(path);
    if let Some(ct) = ct {
        b = b.header(header::CONTENT_TYPE, ct);
    }
    b.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

fn get(path: &str) -> Request<Full<Bytes>> {
    req(Method::GET, path, None, "")
}

fn post(path: &str, body: &str) -> Request<Full<Bytes>> {
    req(Method::POST, path, Some("application/json"), body)
}

async fn call<S>(svc: S, req: Request<Full<Bytes>>) -> Reply
where
    S: Service<Request<Full<Bytes>>, Response = http::Response<Body>>,
    S::Error: std::fmt::Debug,
{
    Reply::read(svc.oneshot(req).await.unwrap()).await
}

/// What the core saw of the last call.
fn last(log: &Calls) -> Seen {
    let req = log
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("the core was called");
    Seen {
        tenant: req.context.tenant.clone(),
        principal: req.context.extensions.get::<Principal>().cloned(),
        version: req.context.version,
        op: req.operation,
    }
}

fn calls(log: &Calls) -> usize {
    log.lock().unwrap().len()
}

fn send_body() -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user("m-1", "hi"),
        ..Default::default()
    }
}

const SEND: &str = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;

/// Every route and verb of §7.1, bare and under a tenant: the operation the
/// core gets, the success status and content type.
#[tokio::test]
async fn every_route_and_verb() {
    for tenant in ["", "acme"] {
        let log = Calls::default();
        let p = |s: &str| {
            if tenant.is_empty() {
                format!("/a2a{s}")
            } else {
                format!("/a2a/{tenant}{s}")
            }
        };
        let t = || tenant.to_owned();
        let cases: Vec<(Request<Full<Bytes>>, Operation)> = vec![
            (
                post(&p("/message:send"), SEND),
                Operation::SendMessage(SendMessageRequest {
                    tenant: t(),
                    ..send_body()
                }),
            ),
            (
                post(&p("/message:stream"), SEND),
                Operation::SendStreamingMessage(SendMessageRequest {
                    tenant: t(),
                    ..send_body()
                }),
            ),
            (
                get(&p("/tasks/t-1")),
                Operation::GetTask(GetTaskRequest {
                    tenant: t(),
                    id: "t-1".into(),
                    history_length: None,
                }),
            ),
            (
                get(&p("/tasks")),
                Operation::ListTasks(ListTasksRequest {
                    tenant: t(),
                    ..Default::default()
                }),
            ),
            (
                post(&p("/tasks/t-1:cancel"), ""),
                Operation::CancelTask(CancelTaskRequest {
                    tenant: t(),
                    id: "t-1".into(),
                    metadata: None,
                }),
            ),
            (
                get(&p("/tasks/t-1:subscribe")),
                Operation::SubscribeToTask(SubscribeToTaskRequest {
                    tenant: t(),
                    id: "t-1".into(),
                }),
            ),
            (
                req(Method::POST, &p("/tasks/t-1:subscribe"), None, ""),
                Operation::SubscribeToTask(SubscribeToTaskRequest {
                    tenant: t(),
                    id: "t-1".into(),
                }),
            ),
            (
                post(
                    &p("/tasks/t-1/pushNotificationConfigs"),
                    r#"{"url":"https://hook.example/","token":"tok"}"#,
                ),
                Operation::CreateTaskPushNotificationConfig(TaskPushNotificationConfig {
                    tenant: t(),
                    task_id: "t-1".into(),
                    url: "https://hook.example/".into(),
                    token: "tok".into(),
                    ..Default::default()
                }),
            ),
            (
                get(&p("/tasks/t-1/pushNotificationConfigs")),
                Operation::ListTaskPushNotificationConfigs(
                    ListTaskPushNotificationConfigsRequest {
                        tenant: t(),
                        task_id: "t-1".into(),
                        ..Default::default()
                    },
                ),
            ),
            (
                get(&p("/tasks/t-1/pushNotificationConfigs/cfg-1")),
                Operation::GetTaskPushNotificationConfig(TaskPushNotificationConfigId {
                    tenant: t(),
                    task_id: "t-1".into(),
                    id: "cfg-1".into(),
                }),
            ),
            (
                req(
                    Method::DELETE,
                    &p("/tasks/t-1/pushNotificationConfigs/cfg-1"),
                    None,
                    "",
                ),
                Operation::DeleteTaskPushNotificationConfig(TaskPushNotificationConfigId {
                    tenant: t(),
                    task_id: "t-1".into(),
                    id: "cfg-1".into(),
                }),
            ),
            (
                get(&p("/extendedAgentCard")),
                Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest { tenant: t() }),
            ),
        ];
        for (request, want) in cases {
            let what = format!("{} {}", request.method(), request.uri());
            let streaming = want.is_streaming();
            let reply = call(rest(&log), request).await;
            assert_eq!(reply.status, StatusCode::OK, "{what}: {:?}", reply.body);
            let ct = if streaming {
                "text/event-stream"
            } else {
                "application/json"
            };
            assert_eq!(reply.content_type(), ct, "{what}");
            let seen = last(&log);
            assert_eq!(seen.op, want, "{what}");
            // The tenant from the path is also the call context's.
            assert_eq!(seen.tenant, tenant, "{what}");
        }
    }
}

#[tokio::test]
async fn success_bodies() {
    let log = Calls::default();
    let r = call(rest(&log), post("/a2a/message:send", SEND)).await;
    assert_eq!(
        &r.body[..],
        br#"{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}"#
    );
    let r = call(rest(&log), get("/a2a/tasks/t-9")).await;
    assert_eq!(
        &r.body[..],
        br#"{"id":"t-9","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#
    );
    let r = call(rest(&log), get("/a2a/tasks")).await;
    assert_eq!(
        &r.body[..],
        br#"{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}"#
    );
    // §7.1: DELETE answers `{}` with 200.
    let r = call(
        rest(&log),
        req(
            Method::DELETE,
            "/a2a/tasks/t/pushNotificationConfigs/c",
            None,
            "",
        ),
    )
    .await;
    assert_eq!((r.status, &r.body[..]), (StatusCode::OK, &b"{}"[..]));
    let r = call(
        rest(&log),
        post(
            "/a2a/tasks/t/pushNotificationConfigs",
            r#"{"url":"https://h/"}"#,
        ),
    )
    .await;
    assert_eq!(
        &r.body[..],
        br#"{"id":"cfg-1","taskId":"t","url":"https://h/"}"#
    );
    let r = call(rest(&log), get("/a2a/extendedAgentCard")).await;
    assert_eq!(r.json()["name"], "Rest");
}

/// §7.1 [REC]: non-tenant routes match first, so `/tasks/tasks` is the task
/// `tasks`; path segments are percent-decoded.
#[tokio::test]
async fn tenant_ambiguity_and_percent_decoding() {
    let log = Calls::default();
    call(rest(&log), get("/a2a/tasks/tasks")).await;
    assert_eq!(
        last(&log).op,
        Operation::GetTask(GetTaskRequest {
            id: "tasks".into(),
            ..Default::default()
        })
    );
    assert_eq!(last(&log).tenant, "");
    call(rest(&log), get("/a2a/tasks/tasks/pushNotificationConfigs")).await;
    assert!(
        matches!(last(&log).op, Operation::ListTaskPushNotificationConfigs(r) if r.task_id == "tasks" && r.tenant.is_empty())
    );
    // A tenant named `tasks` is still reachable where the bare route does not exist.
    call(rest(&log), post("/a2a/tasks/message:send", SEND)).await;
    assert_eq!(last(&log).tenant, "tasks");
    call(rest(&log), post("/a2a/my%20org/tasks/a%2Fb%3Ac:cancel", "")).await;
    let seen = last(&log);
    assert_eq!(seen.tenant, "my org");
    assert!(matches!(seen.op, Operation::CancelTask(r) if r.id == "a/b:c" && r.tenant == "my org"));
    // A path value that is not UTF-8 once decoded.
    let v = call(rest(&log), get("/a2a/tasks/%FF"))
        .await
        .rest_error(ErrorKind::InvalidParams);
    assert_eq!(
        v["error"]["details"][1]["fieldViolations"][0]["field"],
        "id"
    );
}

/// Path values win over body fields (`id`, `taskId`, `tenant`).
#[tokio::test]
async fn path_values_win_over_body_fields() {
    let log = Calls::default();
    // Python's cancel body `{"id": …}` is tolerated.
    call(
        rest(&log),
        post(
            "/a2a/t1/tasks/t-1:cancel",
            r#"{"id":"x","tenant":"y","metadata":{"k":"v"}}"#,
        ),
    )
    .await;
    let seen = last(&log);
    let Operation::CancelTask(c) = seen.op else {
        panic!()
    };
    assert_eq!(
        (c.id.as_str(), c.tenant.as_str(), seen.tenant.as_str()),
        ("t-1", "t1", "t1")
    );
    assert_eq!(c.metadata.unwrap()["k"], "v");
    call(
        rest(&log),
        post(
            "/a2a/tasks/t-1/pushNotificationConfigs",
            r#"{"taskId":"x","url":"https://h/"}"#,
        ),
    )
    .await;
    assert!(
        matches!(last(&log).op, Operation::CreateTaskPushNotificationConfig(c) if c.task_id == "t-1")
    );
    // Without a tenant segment the body's tenant is used.
    call(
        rest(&log),
        post(
            "/a2a/message:send",
            &SEND.replace("{\"message\"", "{\"tenant\":\"b\",\"message\""),
        ),
    )
    .await;
    assert_eq!(last(&log).tenant, "b");
}

/// §7.3: cancel takes an empty, absent or `{metadata}` body; subscribe takes
/// GET or POST with no body; GET and DELETE bodies are ignored.
#[tokio::test]
async fn optional_and_ignored_bodies() {
    let log = Calls::default();
    for r in [
        req(Method::POST, "/a2a/tasks/t:cancel", None, ""),
        req(
            Method::POST,
            "/a2a/tasks/t:cancel",
            Some("application/json"),
            " \n",
        ),
        post("/a2a/tasks/t:cancel", r#"{"metadata":{}}"#),
        req(
            Method::POST,
            "/a2a/tasks/t:subscribe",
            Some("application/json"),
            "",
        ),
        req(
            Method::GET,
            "/a2a/tasks/t",
            Some("text/plain"),
            "not json at all",
        ),
        req(
            Method::DELETE,
            "/a2a/tasks/t/pushNotificationConfigs/c",
            Some("text/plain"),
            "{",
        ),
    ] {
        let what = format!("{} {}", r.method(), r.uri());
        assert_eq!(call(rest(&log), r).await.status, StatusCode::OK, "{what}");
    }
    assert_eq!(calls(&log), 6);
}

/// §7.3: JSON bodies in either media type or without a type; others 415.
#[tokio::test]
async fn content_types() {
    let log = Calls::default();
    for ct in [
        Some("application/json"),
        Some("application/a2a+json"),
        Some("application/json; charset=utf-8"),
        None,
    ] {
        let r = call(rest(&log), req(Method::POST, "/a2a/message:send", ct, SEND)).await;
        assert_eq!(r.status, StatusCode::OK, "{ct:?}");
    }
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let r = call(
            rest(&log),
            req(Method::POST, "/a2a/message:send", Some(ct), SEND),
        )
        .await;
        r.rest_error(ErrorKind::UnsupportedMediaType);
        assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    assert_eq!(calls(&log), 4);
}

#[tokio::test]
async fn bad_bodies() {
    let log = Calls::default();
    call(rest(&log), post("/a2a/message:send", "{"))
        .await
        .rest_error(ErrorKind::ParseError);
    call(rest(&log), post("/a2a/message:send", r#"{"message":5}"#))
        .await
        .rest_error(ErrorKind::InvalidParams);
    call(rest(&log), post("/a2a/message:send", "[]"))
        .await
        .rest_error(ErrorKind::InvalidParams);
    // §3.7: the message is required; validation names the field.
    let v = call(rest(&log), post("/a2a/message:send", ""))
        .await
        .rest_error(ErrorKind::InvalidParams);
    assert_eq!(
        v["error"]["details"][1]["fieldViolations"][0]["field"],
        "message"
    );
    let v = call(
        rest(&log),
        post("/a2a/tasks/t/pushNotificationConfigs", "{}"),
    )
    .await
    .rest_error(ErrorKind::InvalidParams);
    assert_eq!(
        v["error"]["details"][1]["fieldViolations"][0]["field"],
        "url"
    );
    assert_eq!(calls(&log), 0);
}

/// §7.2 for GetTask and ListTasks: every parameter, aliases, decoding.
#[tokio::test]
async fn query_parameters() {
    let log = Calls::default();
    call(
        rest(&log),
        get("/a2a/tasks/t?historyLength=3&A2A-Version=1.0&unknown=x"),
    )
    .await;
    assert_eq!(
        last(&log).op,
        Operation::GetTask(GetTaskRequest {
            id: "t".into(),
            history_length: Some(3),
            ..Default::default()
        })
    );
    call(rest(&log), get("/a2a/tasks/t?history_length=0")).await;
    assert!(matches!(last(&log).op, Operation::GetTask(r) if r.history_length == Some(0)));

    let after: Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
    let full = ListTasksRequest {
        context_id: "c 1,x".into(),
        status: TaskState::Working,
        page_size: Some(10),
        page_token: "p/q".into(),
        history_length: Some(2),
        status_timestamp_after: Some(after),
        include_artifacts: Some(true),
        ..Default::default()
    };
    for q in [
        "contextId=c+1,x&status=TASK_STATE_WORKING&pageSize=10&pageToken=p%2Fq&historyLength=2&statusTimestampAfter=2026-03-01T00:00:00Z&includeArtifacts=true",
        // The a2a-go client's name for the timestamp filter.
        "contextId=c%201%2Cx&status=TASK_STATE_WORKING&pageSize=10&pageToken=p/q&historyLength=2&lastUpdatedAfter=2026-03-01T01:00:00%2B01:00&includeArtifacts=true",
        // Proto (snake_case) names.
        "context_id=c+1,x&status=TASK_STATE_WORKING&page_size=10&page_token=p%2Fq&history_length=2&status_timestamp_after=2026-03-01T00:00:00.000Z&include_artifacts=true",
    ] {
        call(rest(&log), get(&format!("/a2a/tasks?{q}"))).await;
        assert_eq!(last(&log).op, Operation::ListTasks(full.clone()), "{q}");
    }
    call(rest(&log), get("/a2a/tasks?includeArtifacts=false")).await;
    assert!(matches!(last(&log).op, Operation::ListTasks(r) if r.include_artifacts == Some(false)));
    call(
        rest(&log),
        get("/a2a/tasks/t/pushNotificationConfigs?pageSize=5&pageToken=n"),
    )
    .await;
    assert!(
        matches!(last(&log).op, Operation::ListTaskPushNotificationConfigs(r) if r.page_size == 5 && r.page_token == "n")
    );
    let before = calls(&log);

    // Invalid values, repeated singular parameters, ranges: 400 INVALID_ARGUMENT
    // with a field violation, and the core is never called.
    for (q, field) in [
        ("tasks?pageSize=ten", "pageSize"),
        ("tasks?pageSize=99999999999", "pageSize"),
        ("tasks?includeArtifacts=yes", "includeArtifacts"),
        ("tasks?status=TASK_STATE_NOPE", "status"),
        (
            "tasks?status=TASK_STATE_WORKING,TASK_STATE_COMPLETED",
            "status",
        ),
        (
            "tasks?status=TASK_STATE_WORKING&status=TASK_STATE_COMPLETED",
            "status",
        ),
        (
            "tasks?statusTimestampAfter=yesterday",
            "statusTimestampAfter",
        ),
        (
            "tasks?statusTimestampAfter=2026-03-01T00:00:00Z&lastUpdatedAfter=2026-03-01T00:00:00Z",
            "statusTimestampAfter",
        ),
        ("tasks?historyLength=1&historyLength=2", "historyLength"),
        ("tasks?pageSize=0", "pageSize"),
        ("tasks?pageSize=101", "pageSize"),
        ("tasks?historyLength=-1", "historyLength"),
        ("tasks/t?historyLength=-1", "historyLength"),
        ("tasks/t?historyLength=x", "historyLength"),
        // Not UTF-8 once percent-decoded: refused like any bad value, not
        // dropped (which would answer the first page).
        ("tasks?pageToken=%00%ff", "pageToken"),
        ("tasks?contextId=%C3%28", "contextId"),
        ("tasks/t/pushNotificationConfigs?pageToken=%ff", "pageToken"),
    ] {
        let v = call(rest(&log), get(&format!("/a2a/{q}")))
            .await
            .rest_error(ErrorKind::InvalidParams);
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            v["error"]["details"][1]["@type"],
            "type.googleapis.com/google.rpc.BadRequest"
        );
        assert_eq!(
            v["error"]["details"][1]["fieldViolations"][0]["field"], field,
            "{q}"
        );
    }
    assert_eq!(calls(&log), before);
}

/// §5.1, §7.4: every kind the core can return, with its status and reason.
#[tokio::test]
async fn every_error_kind_has_its_status_and_shape() {
    let log = Calls::default();
    for &kind in ErrorKind::ALL {
        let r = call(
            rest(&log),
            get(&format!("/a2a/tasks/fail:{}", kind.reason())),
        )
        .await;
        let v = r.rest_error(kind);
        assert_eq!(v["error"]["message"], kind.default_message());
    }
    // A core answer that does not fit the operation.
    call(rest(&log), get("/a2a/tasks/wrong-variant"))
        .await
        .rest_error(ErrorKind::InvalidAgentResponse);
}

#[tokio::test]
async fn unknown_routes_and_wrong_verbs() {
    let log = Calls::default();
    for path in [
        "/a2a",
        "/a2a/",
        "/a2a/nope",
        "/a2a/v1/tasks/t/x",
        "/a2a/message:send/x/y/z/w",
    ] {
        call(rest(&log), get(path))
            .await
            .rest_error(ErrorKind::MethodNotFound);
    }
    for (method, path, allow) in [
        (Method::GET, "/a2a/message:send", "POST"),
        (Method::PUT, "/a2a/tasks", "GET"),
        (Method::DELETE, "/a2a/tasks/t", "GET"),
        (Method::GET, "/a2a/tasks/t:cancel", "POST"),
        (Method::PATCH, "/a2a/acme/tasks/t:subscribe", "GET, POST"),
        (
            Method::DELETE,
            "/a2a/tasks/t/pushNotificationConfigs",
            "GET, POST",
        ),
        (
            Method::POST,
            "/a2a/tasks/t/pushNotificationConfigs/c",
            "GET, DELETE",
        ),
        (Method::POST, "/a2a/extendedAgentCard", "GET"),
    ] {
        let r = call(rest(&log), req(method, path, None, "")).await;
        r.rest_error(ErrorKind::MethodNotAllowed);
        assert_eq!(r.headers[header::ALLOW], allow, "{path}");
    }
    // Outside the prefix and on the JSON-RPC path: the fallback (a 404
    // that says no A2A endpoint is there).
    for path in ["/other", "/a2ax/tasks", "/rpc"] {
        let r = call(rest(&log), post(path, "{}")).await;
        assert_eq!(
            (r.status, r.text()),
            (StatusCode::NOT_FOUND, NotFound::BODY),
            "{path}"
        );
    }
    assert_eq!(calls(&log), 0);
}

/// §7.5: a bare StreamResponse per `data:` line.
#[tokio::test]
async fn sse_framing_is_byte_exact() {
    let log = Calls::default();
    let r = call(rest(&log), post("/a2a/message:stream", SEND)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.content_type(), "text/event-stream");
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
    assert_eq!(
        std::str::from_utf8(&r.body).unwrap(),
        "data: {\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}\n\n\
         data: {\"statusUpdate\":{\"taskId\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}\n\n"
    );
}

/// §7.5: a mid-stream error is `event: error` with `data: {"error": …}` and ends the stream.
#[tokio::test]
async fn mid_stream_error_event() {
    let log = Calls::default();
    let r = call(rest(&log), get("/a2a/tasks/mid:subscribe")).await;
    assert_eq!(r.status, StatusCode::OK);
    let err = serde_json::to_string(&A2aError::task_not_found("mid").to_rest_error()).unwrap();
    assert_eq!(
        std::str::from_utf8(&r.body).unwrap(),
        format!(
            "data: {{\"task\":{{\"id\":\"mid\",\"contextId\":\"c-1\",\"status\":{{\"state\":\"TASK_STATE_WORKING\"}}}}}}\n\n\
             event: error\ndata: {err}\n\n"
        )
    );
    assert!(err.starts_with(r#"{"error":{"code":404,"status":"NOT_FOUND""#));
}

/// §7.5: a failure before the first event is an ordinary error response.
#[tokio::test]
async fn error_before_the_first_event_is_plain_json() {
    let log = Calls::default();
    let v = call(rest(&log), post("/a2a/tasks/pre:subscribe", ""))
        .await
        .rest_error(ErrorKind::TaskNotFound);
    assert_eq!(v["error"]["details"][0]["metadata"]["taskId"], "pre");
    // §4.2/§4.6: a stream has at least one event.
    call(rest(&log), get("/a2a/tasks/empty:subscribe"))
        .await
        .rest_error(ErrorKind::InvalidAgentResponse);
}

/// §4.8: undeclared capabilities fail before the core is called.
#[tokio::test]
async fn capabilities_are_checked() {
    let log = Calls::default();
    let card = AgentCard::new("Plain", "no capabilities", "1.0.0")
        .with_interface(AgentInterface::http_json("http://agent.example/"));
    let svc = RestLayer::new(&card).unwrap().layer(core(log.clone()));
    call(svc.clone(), post("/message:stream", SEND))
        .await
        .rest_error(ErrorKind::UnsupportedOperation);
    call(svc.clone(), get("/tasks/t:subscribe"))
        .await
        .rest_error(ErrorKind::UnsupportedOperation);
    call(svc.clone(), get("/tasks/t/pushNotificationConfigs"))
        .await
        .rest_error(ErrorKind::PushNotificationNotSupported);
    call(svc.clone(), get("/extendedAgentCard"))
        .await
        .rest_error(ErrorKind::UnsupportedOperation);
    assert_eq!(calls(&log), 0);
    // Mounted at the root, the card path still belongs to no binding.
    let r = call(svc, get("/.well-known/agent-card.json")).await;
    assert_eq!(
        (r.status, r.text()),
        (StatusCode::NOT_FOUND, NotFound::BODY)
    );
}

#[tokio::test]
async fn principal_in_request_extensions_reaches_the_core() {
    let log = Calls::default();
    let mut r = get("/a2a/tasks/t");
    r.extensions_mut().insert(Principal("alice"));
    call(rest(&log), r).await;
    assert_eq!(last(&log).principal, Some(Principal("alice")));
}

#[tokio::test]
async fn body_over_the_limit_is_413_in_the_rest_shape() {
    let log = Calls::default();
    let svc = BodyLimitLayer::new(&card())
        .unwrap()
        .max_bytes(16)
        .unwrap()
        .layer(RestLayer::new(&card()).unwrap().layer(core(log.clone())));
    // A chunked body (no Content-Length, no exact size hint) is cut while read.
    let chunks =
        futures_util::stream::iter([&b"{\"message\":"[..], &b"{\"messageId\":\"m\"}}"[..]].map(
            |c| Ok::<_, std::convert::Infallible>(http_body::Frame::data(Bytes::from_static(c))),
        ));
    let req = Request::post("/a2a/message:send")
        .body(http_body_util::StreamBody::new(chunks))
        .unwrap();
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let v: Value =
        serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    assert_eq!(v["error"]["details"][0]["reason"], "PAYLOAD_TOO_LARGE");
    assert_eq!(calls(&log), 0);
}

const REQUIRED: &str = "https://ext.example/required/v1";

/// The full stack with both bindings chained (each way round): the HTTP-level
/// refusals are REST-shaped under the prefix and JSON-RPC-shaped on its path.
#[tokio::test]
async fn combined_stack_shapes_refusals_per_binding() {
    let mut card = card();
    card.capabilities.extensions.push(AgentExtension {
        uri: REQUIRED.into(),
        required: true,
        ..Default::default()
    });
    let log = Calls::default();
    let core = core(log.clone());
    let rest_first = RestLayer::new(&card)
        .unwrap()
        .fallback(JsonRpcLayer::new(&card).unwrap().layer(core.clone()))
        .layer(core.clone());
    let rpc_first = JsonRpcLayer::new(&card)
        .unwrap()
        .fallback(RestLayer::new(&card).unwrap().layer(core.clone()))
        .layer(core.clone());
    let caps = StackCapabilities::new()
        .push_notifications(true)
        .extended_agent_card(true);
    macro_rules! stack {
        ($bindings:expr) => {
            tower::util::BoxCloneService::new(
                tower::ServiceBuilder::new()
                    .layer(AgentCardLayer::with_capabilities(&card, caps).unwrap())
                    .layer(BodyLimitLayer::new(&card).unwrap().max_bytes(256).unwrap())
                    .layer(VersionLayer::new(&card).unwrap())
                    .layer(ExtensionsLayer::new(&card).unwrap())
                    .service($bindings),
            )
        };
    }
    let rpc_body = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#;
    let with = |mut r: Request<Full<Bytes>>, version: Option<&str>, ext: bool| {
        if let Some(v) = version {
            r.headers_mut().insert("A2A-Version", v.parse().unwrap());
        }
        if ext {
            r.headers_mut()
                .insert("A2A-Extensions", REQUIRED.parse().unwrap());
        }
        r
    };
    for svc in [stack!(rest_first), stack!(rpc_first)] {
        // Served on both paths.
        let r = call(svc.clone(), with(get("/a2a/tasks/t-1"), Some("1.0"), true)).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(last(&log).version, Some(ProtocolVersion::V1_0));
        assert_eq!(r.headers["A2A-Extensions"], REQUIRED);
        let r = call(svc.clone(), with(post("/rpc", rpc_body), Some("1.0"), true)).await;
        assert_eq!(r.json()["result"]["id"], "t-1");
        let r = call(svc.clone(), get("/.well-known/agent-card.json")).await;
        assert_eq!(r.json()["name"], "Rest");

        // Version: REST 400 FAILED_PRECONDITION; JSON-RPC 200 with −32009.
        call(svc.clone(), with(get("/a2a/tasks/t-1"), None, true))
            .await
            .rest_error(ErrorKind::VersionNotSupported);
        let r = call(svc.clone(), with(post("/rpc", rpc_body), None, true)).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (StatusCode::OK, json!(-32009))
        );

        // Required extension not requested.
        call(svc.clone(), with(get("/a2a/tasks/t-1"), Some("1.0"), false))
            .await
            .rest_error(ErrorKind::ExtensionSupportRequired);
        let r = call(
            svc.clone(),
            with(post("/rpc", rpc_body), Some("1.0"), false),
        )
        .await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (StatusCode::OK, json!(-32008))
        );

        // Body over the limit (declared length).
        let big = format!(r#"{{"message":{{"messageId":"{}"}}}}"#, "x".repeat(300));
        call(
            svc.clone(),
            with(post("/a2a/message:send", &big), Some("1.0"), true),
        )
        .await
        .rest_error(ErrorKind::PayloadTooLarge);
        let r = call(svc.clone(), with(post("/rpc", &big), Some("1.0"), true)).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (StatusCode::PAYLOAD_TOO_LARGE, json!(-32600))
        );

        // Unknown REST route under the prefix; unknown path outside both.
        call(svc.clone(), with(get("/a2a/nope"), Some("1.0"), true))
            .await
            .rest_error(ErrorKind::MethodNotFound);
        let r = call(svc.clone(), get("/elsewhere")).await;
        assert_eq!(
            (r.status, r.text()),
            (StatusCode::NOT_FOUND, NotFound::BODY)
        );
    }
}

// a2a-spec.md §5.3 / §7.4: a REST A2A error from the engine MUST include an
// ErrorInfo with its reason and the domain "a2a-protocol.org", in the
// google.rpc.Status shape, with the status of §5.1 (exact body).
#[cfg(feature = "engine")]
#[tokio::test]
async fn rest_errors_include_error_info_with_domain() {
    let h = assembled::server();
    let (status, ct, text) = assembled::raw(
        assembled::call(
            &h,
            assembled::request("GET", "/rest/tasks/missing", assembled::ALICE, None),
        )
        .await,
    )
    .await;
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
    let t = assembled::rest_send(&h, assembled::ALICE, assembled::message("echo"), false).await;
    let id = t["id"].as_str().unwrap();
    assembled::rest_err(
        &h,
        assembled::request(
            "POST",
            &format!("/rest/tasks/{id}:cancel"),
            assembled::ALICE,
            None,
        ),
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    )
    .await;
}
