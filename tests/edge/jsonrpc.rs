//! The JSON-RPC binding assembled over a small deterministic core, driven with
//! `oneshot` (a2a-spec.md §6 and §4.8).

use crate::support;

use std::convert::Infallible;
use std::time::Duration;

use a2a_tower::jsonrpc::ResponseFuture;
use a2a_tower::types::{
    AgentCard, AgentInterface, ListTasksResponse, Message, SendMessageResponse, StreamResponse,
    TaskPushNotificationConfig, TaskState,
};
use a2a_tower::{
    A2aError, A2aRequest, A2aResponse, A2aService, Body, BoxError, ErrorKind, EventStream,
    JsonRpcLayer, JsonRpcService, NotFound, Operation,
};
use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use support::core::{Calls, scripted, status_update, task};
use support::http::Reply;
use tower::{Layer, ServiceExt};

#[derive(Debug, Clone, PartialEq)]
struct Principal(&'static str);

fn card(capable: bool) -> AgentCard {
    let mut card = AgentCard::new("Test", "Test agent", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost:8080/rpc"));
    if capable {
        card.capabilities.streaming = Some(true);
        card.capabilities.push_notifications = Some(true);
        card.capabilities.extended_agent_card = Some(true);
    }
    card
}

/// Answers every operation deterministically; the message text of a
/// streaming send picks the stream shape.
fn answer(op: &Operation) -> Result<A2aResponse, A2aError> {
    use TaskState::*;
    Ok(match op {
        Operation::SendMessage(_) => {
            A2aResponse::SendMessage(SendMessageResponse::Task(task("t-1", Completed).into()))
        }
        Operation::SendStreamingMessage(r) => {
            let first = StreamResponse::Task(task("t-1", Submitted));
            let items = match r.message.text().as_str() {
                "fail-first" => vec![Err(A2aError::task_not_found("t-9"))],
                "fail-mid" => vec![
                    Ok(first),
                    Err(A2aError::internal("secret cause")),
                    Ok(status_update(Completed)),
                ],
                "message" => vec![
                    Ok(StreamResponse::Message(Message::agent("m-2", "hi"))),
                    Ok(status_update(Completed)),
                ],
                "hang" => {
                    let s = futures_util::stream::iter(vec![Ok(first)])
                        .chain(futures_util::stream::pending());
                    return Ok(A2aResponse::Stream(EventStream::new(s)));
                }
                "empty" => vec![],
                _ => vec![
                    Ok(first),
                    Ok(status_update(Working)),
                    Ok(status_update(Completed)),
                ],
            };
            A2aResponse::Stream(EventStream::from_iter(items))
        }
        Operation::GetTask(r) if r.id == "missing" => {
            return Err(A2aError::task_not_found(r.id.clone()));
        }
        Operation::GetTask(r) if r.id == "wrong" => A2aResponse::Empty,
        Operation::GetTask(r) => A2aResponse::Task(task(&r.id, Working)),
        Operation::ListTasks(_) => A2aResponse::Tasks(ListTasksResponse::default()),
        Operation::CancelTask(r) => A2aResponse::Task(task(&r.id, Canceled)),
        Operation::SubscribeToTask(r) => A2aResponse::Stream(EventStream::from_iter(vec![Ok(
            StreamResponse::Task(task(&r.id, Working)),
        )])),
        Operation::CreateTaskPushNotificationConfig(c) => {
            A2aResponse::PushConfig(TaskPushNotificationConfig {
                id: "cfg-1".into(),
                ..c.clone()
            })
        }
        Operation::GetTaskPushNotificationConfig(r) => {
            A2aResponse::PushConfig(TaskPushNotificationConfig {
                id: r.id.clone(),
                task_id: r.task_id.clone(),
                url: "https://hook".into(),
                ..Default::default()
            })
        }
        Operation::ListTaskPushNotificationConfigs(_) => {
            A2aResponse::PushConfigs(Default::default())
        }
        Operation::DeleteTaskPushNotificationConfig(_) => A2aResponse::Empty,
        Operation::GetExtendedAgentCard(_) => {
            A2aResponse::AgentCard(Box::new(AgentCard::new("Ext", "extended", "1")))
        }
        _ => return Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    })
}

use futures_util::StreamExt;

fn core(log: Calls) -> impl A2aService + Sync {
    scripted(log, answer)
}

fn app_with(
    card: &AgentCard,
    keep_alive: Duration,
) -> (JsonRpcService<impl A2aService + Sync + use<>>, Calls) {
    let log = Calls::default();
    let layer = JsonRpcLayer::new(card).unwrap().keep_alive(keep_alive);
    (layer.layer(core(log.clone())), log)
}

fn app() -> (JsonRpcService<impl A2aService + Sync>, Calls) {
    app_with(&card(true), Duration::from_secs(15))
}

fn post(path: &str, content_type: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut b = Request::post(path);
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

fn rpc(method: &str, id: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

async fn send<B>(
    svc: JsonRpcService<impl A2aService + Sync>,
    req: Request<B>,
) -> (StatusCode, HeaderMap, String)
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let r = Reply::read(svc.oneshot(req).await.unwrap()).await;
    let body = r.text().to_owned();
    (r.status, r.headers, body)
}

async fn call(body: &str) -> (StatusCode, HeaderMap, String) {
    send(app().0, post("/rpc", Some("application/json"), body)).await
}

/// The exact error body for a kind with no metadata or violations.
fn error_body(id: &str, code: i64, message: &str, reason: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{message}","data":[{{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"{reason}","domain":"a2a-protocol.org"}}]}}}}"#
    )
}

fn ct(h: &HeaderMap) -> &str {
    h.get("content-type").unwrap().to_str().unwrap()
}

#[tokio::test]
async fn get_task_round_trip() {
    // §6.2: GetTask → Task.
    let (status, headers, body) = call(&rpc("GetTask", r#""r1""#, r#"{"id":"t-7"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct(&headers), "application/json");
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":"r1","result":{"id":"t-7","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}"#
    );
}

#[tokio::test]
async fn path_with_and_without_trailing_slash_others_pass_through() {
    let body = rpc("GetTask", "1", r#"{"id":"t"}"#);
    // The card's path, and `/`: the card's path relative to itself, as a
    // host that nests the stack under `/rpc` passes it on.
    for path in ["/rpc", "/rpc/", "/"] {
        let (status, _, out) = send(app().0, post(path, Some("application/json"), &body)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(out.contains(r#""result""#), "{path}");
    }
    for path in ["/rpcx", "/rpc/x", "/other"] {
        let (status, headers, out) =
            send(app().0, post(path, Some("application/json"), &body)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(out, a2a_tower::NotFound::BODY);
    }
}

#[tokio::test]
async fn fallback_replaces_not_found() {
    let (svc, _) = app();
    let other = tower::service_fn(|_: Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from("other"))))
    });
    let svc = svc.fallback(other);
    let res = svc.oneshot(post("/else", None, "")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        &res.into_body().collect().await.unwrap().to_bytes()[..],
        b"other"
    );
}

#[tokio::test]
async fn only_post() {
    let req = Request::get("/rpc").body(Full::new(Bytes::new())).unwrap();
    let (status, headers, body) = send(app().0, req).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers["allow"], "POST");
    assert_eq!(ct(&headers), "application/json");
    assert_eq!(
        body,
        error_body(
            "null",
            -32600,
            "HTTP method not allowed",
            "METHOD_NOT_ALLOWED"
        )
    );
}

#[tokio::test]
async fn content_type_must_be_json() {
    // §6.1: other media types → −32005 (not a parse error), HTTP 200.
    let body = rpc("GetTask", "1", r#"{"id":"t"}"#);
    for ct_in in [Some("text/plain"), None] {
        let (status, headers, out) = send(app().0, post("/rpc", ct_in, &body)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ct(&headers), "application/json");
        assert_eq!(
            out,
            error_body(
                "null",
                -32005,
                "Unsupported Content-Type; use application/json or application/a2a+json",
                "UNSUPPORTED_MEDIA_TYPE"
            )
        );
    }
    for ok in ["application/a2a+json", "application/json; charset=utf-8"] {
        let (_, _, out) = send(app().0, post("/rpc", Some(ok), &body)).await;
        assert!(out.contains(r#""result""#), "{ok}");
    }
}

#[tokio::test]
async fn envelope_errors() {
    // JSON-RPC 2.0 §5.1 codes; every error is HTTP 200 application/json.
    let cases = [
        (
            "{not json",
            "null",
            -32700,
            "Invalid JSON payload",
            "PARSE_ERROR",
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}]"#,
            "null",
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST",
        ),
        (
            "42",
            "null",
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST",
        ),
        (
            r#"{"jsonrpc":"1.0","id":"a","method":"GetTask","params":{"id":"t"}}"#,
            r#""a""#,
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST",
        ),
        (
            r#"{"jsonrpc":"2.0","id":[1],"method":"GetTask","params":{"id":"t"}}"#,
            "null",
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
            "3",
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"message/send","params":{}}"#,
            "4",
            -32601,
            "Method not found",
            "METHOD_NOT_FOUND",
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":["x"]}}"#,
            "5",
            -32602,
            "Invalid parameters",
            "INVALID_PARAMS",
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"GetTask","params":"t"}"#,
            "6",
            -32602,
            "Invalid parameters",
            "INVALID_PARAMS",
        ),
    ];
    for (input, id, code, message, reason) in cases {
        let (status, headers, body) = call(input).await;
        assert_eq!(status, StatusCode::OK, "{input}");
        assert_eq!(ct(&headers), "application/json", "{input}");
        assert_eq!(body, error_body(id, code, message, reason), "{input}");
    }
}

#[tokio::test]
async fn validation_errors_carry_field_violations() {
    // §3.8: a negative historyLength is −32602.
    let (_, _, body) = call(&rpc("GetTask", "1", r#"{"id":"t","historyLength":-1}"#)).await;
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid parameters","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"historyLength","description":"must not be negative"}]}]}}"#
    );
    let cases = [
        ("SendMessage", r#"{}"#, "message"),
        (
            "SendMessage",
            r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}"#,
            "message.parts",
        ),
        (
            "SendMessage",
            r#"{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}"#,
            "message.messageId",
        ),
        ("ListTasks", r#"{"pageSize":0}"#, "pageSize"),
        ("ListTasks", r#"{"pageSize":101}"#, "pageSize"),
        ("GetTask", r#"{"id":""}"#, "id"),
        ("CancelTask", r#"{}"#, "id"),
        ("SubscribeToTask", r#"{"id":""}"#, "id"),
    ];
    for (method, params, field) in cases {
        let (_, _, body) = call(&rpc(method, "1", params)).await;
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], -32602, "{method} {params}");
        assert_eq!(
            v["error"]["data"][1]["fieldViolations"][0]["field"], field,
            "{method} {params}"
        );
    }
}

#[tokio::test]
async fn task_not_found_from_the_core() {
    // §6.3 error example.
    let (status, _, body) = call(&rpc("GetTask", r#""r2""#, r#"{"id":"missing"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":"r2","error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"missing"}}]}}"#
    );
}

#[tokio::test]
async fn core_answer_of_the_wrong_shape_is_invalid_agent_response() {
    let (_, _, body) = call(&rpc("GetTask", "1", r#"{"id":"wrong"}"#)).await;
    assert_eq!(
        body,
        error_body(
            "1",
            -32006,
            "Invalid agent response",
            "INVALID_AGENT_RESPONSE"
        )
    );
}

#[tokio::test]
async fn ids_are_echoed_as_sent() {
    // §6.1: string, number or null; numbers keep their exact text.
    for id in [
        r#""abc""#,
        "1",
        "1.0",
        "-7",
        "123456789012345678901234567890123",
        "null",
    ] {
        let (_, _, body) = call(&rpc("GetTask", id, r#"{"id":"t"}"#)).await;
        assert!(
            body.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)),
            "{id}: {body}"
        );
    }
    // No id at all is answered with id null.
    let (_, _, body) = call(r#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}"#).await;
    assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":null,"result":"#));
}

#[tokio::test]
async fn missing_params_mean_empty_object() {
    let (_, _, body) = call(r#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#).await;
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"name":"Ext""#),
        "{body}"
    );
}

#[tokio::test]
async fn every_method_decodes_and_answers() {
    // §6.2 method table.
    let msg = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]},"tenant":"acme"}"#;
    let cases: [(&str, &str, &str); 11] = [
        ("SendMessage", msg, r#"{"task":{"id":"t-1""#),
        ("SendStreamingMessage", msg, ""),
        (
            "GetTask",
            r#"{"id":"t-1","historyLength":3}"#,
            r#"{"id":"t-1""#,
        ),
        (
            "ListTasks",
            r#"{"pageSize":10,"status":"TASK_STATE_WORKING"}"#,
            r#"{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}"#,
        ),
        (
            "CancelTask",
            r#"{"id":"t-1"}"#,
            r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_CANCELED"}}"#,
        ),
        ("SubscribeToTask", r#"{"id":"t-1"}"#, ""),
        (
            "CreateTaskPushNotificationConfig",
            r#"{"taskId":"t-1","url":"https://hook"}"#,
            r#"{"id":"cfg-1","taskId":"t-1","url":"https://hook"}"#,
        ),
        (
            "GetTaskPushNotificationConfig",
            r#"{"taskId":"t-1","id":"cfg-1"}"#,
            r#"{"id":"cfg-1","taskId":"t-1","url":"https://hook"}"#,
        ),
        (
            "ListTaskPushNotificationConfigs",
            r#"{"taskId":"t-1"}"#,
            r#"{"configs":[],"nextPageToken":""}"#,
        ),
        (
            "DeleteTaskPushNotificationConfig",
            r#"{"taskId":"t-1","id":"cfg-1"}"#,
            "{}",
        ),
        ("GetExtendedAgentCard", "{}", r#"{"name":"Ext""#),
    ];
    for (method, params, result) in cases {
        let (svc, log) = app();
        let (status, headers, body) = send(
            svc,
            post("/rpc", Some("application/json"), &rpc(method, "9", params)),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{method}");
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{method}");
        assert_eq!(seen[0].operation.method(), method);
        if result.is_empty() {
            assert_eq!(ct(&headers), "text/event-stream", "{method}");
        } else {
            let prefix = format!(r#"{{"jsonrpc":"2.0","id":9,"result":{result}"#);
            assert!(body.starts_with(&prefix), "{method}: {body}");
        }
    }
    // The decoded parameters reach the core, and `tenant` fills the context.
    let (svc, log) = app();
    send(
        svc,
        post(
            "/rpc",
            Some("application/json"),
            &rpc("SendMessage", "1", msg),
        ),
    )
    .await;
    let seen = log.lock().unwrap().clone();
    let Operation::SendMessage(r) = &seen[0].operation else {
        panic!()
    };
    assert_eq!(r.message, Message::user("m-1", "hi"));
    assert_eq!(seen[0].context.tenant, "acme");
    let (svc, log) = app();
    send(
        svc,
        post(
            "/rpc",
            Some("application/json"),
            &rpc("GetTask", "1", r#"{"id":"t","historyLength":3}"#),
        ),
    )
    .await;
    let seen = log.lock().unwrap().clone();
    let Operation::GetTask(r) = &seen[0].operation else {
        panic!()
    };
    assert_eq!((r.id.as_str(), r.history_length), ("t", Some(3)));
}

#[tokio::test]
async fn undeclared_capabilities_fail_before_the_core() {
    // §4.8.
    let cases = [
        (
            "SendStreamingMessage",
            r#"{"message":{"messageId":"m","parts":[{"text":"x"}]}}"#,
            -32004,
        ),
        ("SubscribeToTask", r#"{"id":"t"}"#, -32004),
        (
            "CreateTaskPushNotificationConfig",
            r#"{"taskId":"t","url":"https://h"}"#,
            -32003,
        ),
        (
            "GetTaskPushNotificationConfig",
            r#"{"taskId":"t","id":"c"}"#,
            -32003,
        ),
        (
            "ListTaskPushNotificationConfigs",
            r#"{"taskId":"t"}"#,
            -32003,
        ),
        (
            "DeleteTaskPushNotificationConfig",
            r#"{"taskId":"t","id":"c"}"#,
            -32003,
        ),
        ("GetExtendedAgentCard", "{}", -32004),
    ];
    for (method, params, code) in cases {
        let (svc, log) = app_with(&card(false), Duration::from_secs(15));
        let (status, headers, body) = send(
            svc,
            post("/rpc", Some("application/json"), &rpc(method, "1", params)),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ct(&headers), "application/json");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], code, "{method}");
        assert!(log.lock().unwrap().is_empty(), "{method}");
    }
}

fn stream_call(text: &str) -> String {
    rpc(
        "SendStreamingMessage",
        r#""s1""#,
        &format!(
            r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}"#
        ),
    )
}

#[tokio::test]
async fn sse_framing() {
    // §6.4: one data line per event, a full JSON-RPC response with the request id.
    let (status, headers, body) = call(&stream_call("go")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct(&headers), "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    assert_eq!(
        body,
        "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\n\n\
         data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"statusUpdate\":{\"taskId\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n\
         data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"statusUpdate\":{\"taskId\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n"
    );
}

#[tokio::test]
async fn error_mid_stream_is_an_error_event_that_ends_it() {
    let (status, headers, body) = call(&stream_call("fail-mid")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct(&headers), "text/event-stream");
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert_eq!(events.len(), 2, "{body}");
    assert!(events[0].starts_with("data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"task\""));
    assert_eq!(
        events[1],
        format!(
            "event: error\ndata: {}",
            error_body(r#""s1""#, -32603, "Internal error", "INTERNAL_ERROR")
        )
    );
    assert!(!body.contains("secret cause"));
}

#[tokio::test]
async fn error_before_the_first_event_is_plain_json() {
    // §6.4 [REC]: check everything before the first event.
    let (status, headers, body) = call(&stream_call("fail-first")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct(&headers), "application/json");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["id"], "s1");
    assert_eq!(v["error"]["code"], -32001);
    // An empty stream has no first event: −32006.
    let (_, headers, body) = call(&stream_call("empty")).await;
    assert_eq!(ct(&headers), "application/json");
    assert_eq!(
        body,
        error_body(
            r#""s1""#,
            -32006,
            "Invalid agent response",
            "INVALID_AGENT_RESPONSE"
        )
    );
}

#[tokio::test]
async fn message_stream_closes_after_the_message() {
    // §4.2: a message stream is exactly one message.
    let (_, _, body) = call(&stream_call("message")).await;
    assert_eq!(body.matches("data: ").count(), 1);
    assert!(body.contains(r#""result":{"message":"#));
}

#[tokio::test(start_paused = true)]
async fn keep_alive_comments_on_idle_streams() {
    let (svc, _) = app_with(&card(true), Duration::from_secs(2));
    let res = svc
        .oneshot(post("/rpc", Some("application/json"), &stream_call("hang")))
        .await
        .unwrap();
    let mut body = res.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(first.starts_with(b"data: {\"jsonrpc\""));
    let start = tokio::time::Instant::now();
    let next = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&next[..], b": keep-alive\n\n");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
}

#[tokio::test]
async fn principal_in_request_extensions_reaches_the_core() {
    let (svc, log) = app();
    let mut req = post(
        "/rpc",
        Some("application/json"),
        &rpc("GetTask", "1", r#"{"id":"t"}"#),
    );
    req.extensions_mut().insert(Principal("alice"));
    req.headers_mut().insert("x-trace", "abc".parse().unwrap());
    send(svc, req).await;
    let seen = log.lock().unwrap().clone();
    assert_eq!(
        seen[0].context.extensions.get::<Principal>(),
        Some(&Principal("alice"))
    );
    assert_eq!(seen[0].context.headers["x-trace"], "abc");
}

#[tokio::test]
async fn body_over_the_limit_is_413() {
    let body = rpc("GetTask", "1", r#"{"id":"t"}"#);
    let (svc, log) = app();
    let req =
        post("/rpc", Some("application/json"), &body).map(|b| http_body_util::Limited::new(b, 8));
    let (status, headers, out) = send(svc, req).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(ct(&headers), "application/json");
    assert_eq!(
        out,
        error_body(
            "null",
            -32600,
            "Request payload too large",
            "PAYLOAD_TOO_LARGE"
        )
    );
    assert!(log.lock().unwrap().is_empty());
    // Under the limit, the same wrapper passes.
    let req = post("/rpc", Some("application/json"), &body)
        .map(|b| http_body_util::Limited::new(b, 1024));
    let (status, _, out) = send(app().0, req).await;
    assert_eq!(status, StatusCode::OK);
    assert!(out.contains("result"));
}

#[tokio::test]
async fn other_body_errors_are_invalid_request() {
    let frames = futures_util::stream::iter(vec![
        Ok(http_body::Frame::data(Bytes::from("{"))),
        Err::<_, BoxError>("connection reset".into()),
    ]);
    let req = Request::post("/rpc")
        .header("content-type", "application/json")
        .body(http_body_util::StreamBody::new(frames))
        .unwrap();
    let (status, _, out) = send(app().0, req).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        out,
        error_body(
            "null",
            -32600,
            "Request payload validation error",
            "INVALID_REQUEST"
        )
    );
}

#[test]
fn public_types_are_send_and_sync() {
    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}
    type Core =
        tower::util::ServiceFn<fn(A2aRequest) -> std::future::Ready<Result<A2aResponse, A2aError>>>;
    assert_send::<JsonRpcLayer>();
    assert_sync::<JsonRpcLayer>();
    assert_send::<JsonRpcService<Core>>();
    assert_sync::<JsonRpcService<Core>>();
    assert_send::<ResponseFuture<<NotFound as tower::Service<Request<Body>>>::Future>>();
    assert_send::<Body>();
}

#[tokio::test]
async fn under_the_limit_and_version_layers() {
    // The crate's stack: body limit → version → JSON-RPC. A chunked body that
    // crosses the limit is read as a LengthLimitError by the binding → 413;
    // the negotiated version reaches the core's context (§1.3).
    use a2a_tower::{BodyLimitLayer, ProtocolVersion, VersionLayer};
    let card = card(true);
    let stack = |log: Calls| {
        tower::ServiceBuilder::new()
            .layer(BodyLimitLayer::new(&card).unwrap().max_bytes(64).unwrap())
            .layer(VersionLayer::new(&card).unwrap())
            .layer(JsonRpcLayer::new(&card).unwrap())
            .service(core(log))
    };
    let chunked = |body: String| {
        let frames = futures_util::stream::iter(
            body.into_bytes()
                .chunks(16)
                .map(|c| Ok::<_, Infallible>(http_body::Frame::data(Bytes::copy_from_slice(c))))
                .collect::<Vec<_>>(),
        );
        Request::post("/rpc")
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(http_body_util::StreamBody::new(frames))
            .unwrap()
    };
    let log = Calls::default();
    let big = rpc(
        "GetTask",
        "1",
        &format!(r#"{{"id":"{}"}}"#, "x".repeat(100)),
    );
    let res = stack(log.clone()).oneshot(chunked(big)).await.unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        String::from_utf8(body.to_vec()).unwrap(),
        error_body(
            "null",
            -32600,
            "Request payload too large",
            "PAYLOAD_TOO_LARGE"
        )
    );
    assert!(log.lock().unwrap().is_empty());

    let res = stack(log.clone())
        .oneshot(chunked(rpc("GetTask", "1", r#"{"id":"t"}"#)))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen[0].context.version, Some(ProtocolVersion::V1_0));
}
