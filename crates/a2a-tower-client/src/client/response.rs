//! Decoding the HTTP response of one binding into an [`A2aResponse`]: the
//! inverse of what this crate's bindings encode, with the leniency of
//! a2a-spec.md §13 (JSON-RPC errors under any HTTP status; `{}`, `null` or
//! no `result` for Delete; SSE `id:`, `event:` and comments ignored).
//!
//! Anything that is not a valid answer of the operation is
//! InvalidAgentResponse; a remote protocol error comes back complete through
//! [`A2aError::from_wire`]. Answers are decoded from their text (a JSON-RPC
//! `result` from its own text), never through a `serde_json::Value`, so the
//! numbers of data parts and metadata keep their exact text.

use std::collections::HashMap;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Response, header};
use http_body_util::{BodyExt, Limited};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;
use serde_json::value::RawValue;

use super::sse::{SseError, sse_events};
use super::transport::Transport;
use crate::types::StreamResponse;
use crate::{
    A2aError, A2aResponse, BoxError, ErrorKind, EventStream, Operation, OperationKind, ResponseKind,
};

/// What answers an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    SendMessage,
    Task,
    Tasks,
    PushConfig,
    PushConfigs,
    Empty,
    Card,
    Stream,
    /// An extension method: any JSON value.
    Extension,
}

impl Expect {
    /// What answers `op`: its row's [`ResponseKind`].
    pub(crate) fn of(op: &Operation) -> Self {
        use ResponseKind as K;
        let Some(kind) = op.kind() else {
            return Self::Extension;
        };
        match kind.response() {
            K::SendMessage => Self::SendMessage,
            K::Task => Self::Task,
            K::Tasks => Self::Tasks,
            K::PushConfig => Self::PushConfig,
            K::PushConfigs => Self::PushConfigs,
            K::Empty => Self::Empty,
            K::AgentCard => Self::Card,
            K::Stream => Self::Stream,
            // `ResponseKind` is `#[non_exhaustive]` across the crate line:
            // an answer of a kind added later is read as any JSON value.
            _ => Self::Extension,
        }
    }
}

/// Limits of the decoding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_response_bytes: usize,
    pub(crate) max_event_bytes: usize,
}

/// InvalidAgentResponse with a fixed message of ours.
pub(crate) fn invalid(message: &'static str) -> A2aError {
    A2aError::new(ErrorKind::InvalidAgentResponse).with_message(message)
}

/// Unavailable (the agent could not be reached or the body not read).
pub(crate) fn unavailable(source: impl Into<BoxError>) -> A2aError {
    A2aError::new(ErrorKind::Unavailable).with_source(source)
}

/// An answer that is not JSON.
const NOT_JSON: &str = "the agent's answer is not JSON";
/// An answer that is JSON but not a JSON-RPC response.
const NOT_RPC: &str = "the agent's answer is not a JSON-RPC response";
/// A result that is not what the operation answers.
const NOT_ANSWER: &str = "the agent's result is not a valid answer of the operation";
/// An event that is not JSON.
const EVENT_NOT_JSON: &str = "an event of the agent's stream is not JSON";

/// `text` as a `T`, decoded from the text itself: a `serde_json::Value` on
/// the way would pass some numbers of data parts and metadata through f64
/// (`0.0000001` would become `1e-7`, `-0` would become `0`). Otherwise
/// InvalidAgentResponse saying `not_json`, or `not_t` when it is JSON.
fn from_text<'a, T: Deserialize<'a>>(
    text: &'a str,
    not_json: &'static str,
    not_t: &'static str,
) -> Result<T, A2aError> {
    serde_json::from_str(text)
        .map_err(|e| invalid(if is_json(text) { not_t } else { not_json }).with_source(e))
}

/// `text` is JSON (of any shape).
fn is_json(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// A result's text as the expected answer.
pub(crate) fn answer(expect: Expect, text: &str) -> Result<A2aResponse, A2aError> {
    fn typed<T: DeserializeOwned>(text: &str) -> Result<T, A2aError> {
        from_text(text, NOT_JSON, NOT_ANSWER)
    }
    Ok(match expect {
        Expect::SendMessage => A2aResponse::SendMessage(typed(text)?),
        Expect::Task => A2aResponse::Task(typed(text)?),
        Expect::Tasks => A2aResponse::Tasks(typed(text)?),
        Expect::PushConfig => A2aResponse::PushConfig(typed(text)?),
        Expect::PushConfigs => A2aResponse::PushConfigs(typed(text)?),
        Expect::Empty => match typed(text)? {
            Value::Null => A2aResponse::Empty,
            Value::Object(m) if m.is_empty() => A2aResponse::Empty,
            _ => return Err(invalid("Delete answered with something other than {}")),
        },
        Expect::Card => A2aResponse::AgentCard(Box::new(typed(text)?)),
        Expect::Stream => return Err(invalid("a streaming operation was not answered with SSE")),
        Expect::Extension => A2aResponse::Extension(typed(text)?),
    })
}

/// One event's text as a StreamResponse.
#[cfg(feature = "grpc")]
pub(crate) fn event(text: &str) -> Result<StreamResponse, A2aError> {
    from_text(
        text,
        EVENT_NOT_JSON,
        "an event of the agent's stream is not a StreamResponse",
    )
}

/// A protocol error from a JSON-RPC error object or a REST error body.
fn remote_error(v: &Value) -> A2aError {
    A2aError::from_wire(v).unwrap_or_else(|| invalid("the agent's error is not an error object"))
}

/// An HTTP 404 whose body is no A2A error (an empty body, a host's page,
/// a `google.rpc.Status` without the A2A `ErrorInfo`): nothing at `url`
/// speaks A2A, which is not the same as an operation's TaskNotFound.
fn no_endpoint(url: &http::Uri) -> A2aError {
    A2aError::new(ErrorKind::MethodNotFound).with_message(format!("no A2A endpoint at {url}"))
}

/// A 401 or 403 from the agent whose body is no A2A error: Unauthenticated
/// or PermissionDenied, naming the schemes its `WWW-Authenticate` asks for
/// (also as the `wwwAuthenticate` metadata), never read as an answer.
pub(crate) fn refused(status: http::StatusCode, challenge: &str) -> A2aError {
    let (kind, what) = if status == http::StatusCode::UNAUTHORIZED {
        (ErrorKind::Unauthenticated, "authentication required")
    } else {
        (ErrorKind::PermissionDenied, "permission denied")
    };
    let schemes: Vec<&str> = challenge
        .split(',')
        .filter_map(|c| {
            let first = c.split_whitespace().next()?;
            (!first.contains('=')).then_some(first)
        })
        .collect();
    let message = if schemes.is_empty() {
        format!(
            "HTTP {} from the agent: {what} (no WWW-Authenticate scheme given; see the card's securitySchemes)",
            status.as_u16()
        )
    } else {
        format!(
            "HTTP {} from the agent: {what}; it asks for the {} scheme",
            status.as_u16(),
            schemes.join(" or ")
        )
    };
    let err = A2aError::new(kind).with_message(message);
    if challenge.is_empty() {
        err
    } else {
        err.with_metadata(
            "wwwAuthenticate",
            challenge.chars().take(512).collect::<String>(),
        )
    }
}

/// The kind of an HTTP status without a readable error body.
fn status_error(status: http::StatusCode) -> A2aError {
    let kind = ErrorKind::ALL
        .iter()
        .copied()
        .find(|k| k.http_status() == status.as_u16())
        .unwrap_or(if status.is_server_error() {
            ErrorKind::Unavailable
        } else {
            ErrorKind::InvalidAgentResponse
        });
    A2aError::new(kind)
}

/// The members of a JSON-RPC response, each as its text (last one wins,
/// as in a `serde_json::Value`).
type Members<'a> = HashMap<String, &'a RawValue>;

/// A JSON-RPC envelope: its error, or the text of its `result` (absent
/// means `null`).
fn envelope<'a>(m: &Members<'a>, id: Option<u64>) -> Result<&'a str, A2aError> {
    let value = |raw: &RawValue| serde_json::from_str::<Value>(raw.get()).unwrap_or_default();
    if let Some(e) = m.get("error") {
        return Err(remote_error(&value(e)));
    }
    // The id echoed as a number or (by lenient servers) as its text.
    let echoes = |got: &Value, id: u64| match got {
        Value::Null => true,
        Value::String(s) => s.parse() == Ok(id),
        v => v.as_u64() == Some(id),
    };
    if let (Some(id), Some(got)) = (id, m.get("id"))
        && !echoes(&value(got), id)
    {
        return Err(invalid("the agent answered another JSON-RPC request id"));
    }
    Ok(m.get("result").map_or("null", |r| r.get()))
}

/// Decodes the HTTP response of an operation.
///
/// `url` is the request's, for the error of a 404 that is no A2A answer.
pub(crate) async fn decode<B>(
    transport: Transport,
    expect: Expect,
    id: u64,
    limits: Limits,
    url: &http::Uri,
    res: Response<B>,
    v03: Option<OperationKind>,
) -> Result<A2aResponse, A2aError>
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let is_sse = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let status = res.status();
    let challenge = res
        .headers()
        .get_all(header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ");
    if expect == Expect::Stream && is_sse && status.is_success() {
        return Ok(A2aResponse::Stream(stream(
            transport,
            res.into_body(),
            limits,
            v03,
        )));
    }
    let bytes = Limited::new(res.into_body(), limits.max_response_bytes)
        .collect()
        .await
        .map_err(|e| match e.downcast::<http_body_util::LengthLimitError>() {
            Ok(_) => invalid("the agent's answer exceeds the response size limit"),
            Err(e) => unavailable(e),
        })?
        .to_bytes();
    // Decoded from the text, never through a `Value` (see `from_text`).
    let text = if bytes.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        std::str::from_utf8(&bytes).ok()
    };
    if status == http::StatusCode::UNAUTHORIZED || status == http::StatusCode::FORBIDDEN {
        // The agent's own A2A error when the body is one (its message and
        // details kept), else a typed refusal; the challenge either way.
        let v = text.and_then(|t| serde_json::from_str::<Value>(t).ok());
        let remote = v.as_ref().and_then(|v| match v.get("error") {
            Some(e) if v.get("jsonrpc").is_some() => A2aError::from_wire(e),
            _ => A2aError::from_wire(v),
        });
        return Err(match remote {
            Some(e) if !challenge.is_empty() => e.with_metadata(
                "wwwAuthenticate",
                challenge.chars().take(512).collect::<String>(),
            ),
            Some(e) => e,
            None => refused(status, &challenge),
        });
    }
    // A 0.3 answer, as the 1.0 one it stands for (through a `Value`).
    let converted = match (v03, text) {
        (Some(kind), Some(t)) => Some(v03_answer(transport, kind, status, t)),
        _ => None,
    };
    let text = converted.as_deref().or(text);
    if status == http::StatusCode::NOT_FOUND
        && !text
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .is_some_and(|v| crate::protocol::is_a2a_error(&v))
    {
        return Err(no_endpoint(url));
    }
    match transport {
        Transport::JsonRpc => match text.map(|t| (t, serde_json::from_str::<Members<'_>>(t))) {
            Some((_, Ok(m))) => answer(expect, envelope(&m, Some(id))?),
            Some((t, Err(_))) if is_json(t) => Err(invalid(NOT_RPC)),
            _ if status.is_success() => Err(invalid(NOT_JSON)),
            _ => Err(status_error(status)),
        },
        Transport::HttpJson if status.is_success() => match text {
            Some(t) => answer(expect, t),
            None if bytes.is_empty() && expect == Expect::Empty => Ok(A2aResponse::Empty),
            None => Err(invalid(NOT_JSON)),
        },
        Transport::HttpJson => Err(text
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .as_ref()
            .and_then(A2aError::from_wire)
            .unwrap_or_else(|| status_error(status))),
        // Answered by the gRPC transport itself, never over HTTP.
        #[cfg(feature = "grpc")]
        Transport::Grpc => Err(invalid(NOT_RPC)),
    }
}

/// The text of a 0.3 answer of `kind` as the 1.0 answer: a JSON-RPC
/// envelope with its result converted, or an HTTP+JSON body (a 0.3 error
/// body `{code, message}` passes as it is: its code is the JSON-RPC one).
fn v03_answer(
    transport: Transport,
    kind: OperationKind,
    status: http::StatusCode,
    text: &str,
) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(text) else {
        return text.to_owned();
    };
    match transport {
        Transport::JsonRpc => {
            if let Some(r) = v.get("result") {
                v["result"] = crate::v03::rpc::result_to_v10(kind.jsonrpc_method(), r);
            }
        }
        Transport::HttpJson if status.is_success() => {
            v = crate::v03::rest::response_to_v10(kind, &v);
        }
        // An error body without a code (the Python 0.3 server's
        // `{"message"}`): a 404 is TaskNotFound, the one 404 of 0.3.
        Transport::HttpJson => {
            if v.get("code").is_none() && status == http::StatusCode::NOT_FOUND {
                let message = v.get("message").cloned().unwrap_or_default();
                v = serde_json::json!({"code": ErrorKind::TaskNotFound.jsonrpc_code(), "message": message});
            }
        }
        // 0.3 is never selected over gRPC (`Transport::select_version`).
        #[cfg(feature = "grpc")]
        Transport::Grpc => {}
    }
    v.to_string()
}

/// The events of an SSE body; an `event: error` frame, an error envelope,
/// a frame that is not an event, or an [`SseError`] ends it with an `Err`.
fn stream<B>(
    transport: Transport,
    body: B,
    limits: Limits,
    v03: Option<OperationKind>,
) -> EventStream
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let events = sse_events(body, limits.max_event_bytes).map(move |item| {
        let ev = item.map_err(|e| match e.downcast::<SseError>() {
            Ok(e) => invalid(match *e {
                SseError::Oversized => "an event of the agent's stream exceeds the size limit",
                SseError::NotUtf8 => "the agent's stream is not UTF-8",
                SseError::Truncated => "the agent's stream ended in the middle of an event",
            }),
            Err(e) => unavailable(e),
        })?;
        if ev.event.as_deref() == Some("error") {
            let v: Value = serde_json::from_str(&ev.data).map_err(|_| invalid(EVENT_NOT_JSON))?;
            return Err(remote_error(&v));
        }
        let not_event = "an event of the agent's stream is not a StreamResponse";
        let converted = v03.map(|kind| v03_answer(transport, kind, http::StatusCode::OK, &ev.data));
        let data = converted.as_deref().unwrap_or(&ev.data);
        let event = match transport {
            Transport::JsonRpc => {
                let m: Members<'_> = from_text(data, EVENT_NOT_JSON, NOT_RPC)?;
                from_text::<StreamResponse>(envelope(&m, None)?, EVENT_NOT_JSON, not_event)
            }
            Transport::HttpJson => from_text::<StreamResponse>(data, EVENT_NOT_JSON, not_event),
            #[cfg(feature = "grpc")]
            Transport::Grpc => Err(invalid(NOT_RPC)),
        }?;
        Ok((event, ev.id.and_then(crate::LastEventId::new)))
    });
    // Nothing is read after the first error.
    let mut failed = false;
    EventStream::from_identified(events.take_while(move |item| {
        let go = !failed;
        failed |= item.is_err();
        futures_util::future::ready(go)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        AgentCard, ListTaskPushNotificationConfigsResponse, SendMessageResponse, Task,
        TaskPushNotificationConfig,
    };
    use http_body_util::Full;
    use serde_json::json;

    const LIMITS: Limits = Limits {
        max_response_bytes: 1 << 20,
        max_event_bytes: 1 << 10,
    };

    async fn run(
        t: Transport,
        e: Expect,
        status: u16,
        ct: &str,
        body: &str,
    ) -> Result<A2aResponse, A2aError> {
        let res = Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, ct)
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        let url = http::Uri::from_static("http://h/a2a");
        decode(t, e, 1, LIMITS, &url, res, None).await
    }

    #[tokio::test]
    async fn every_kind_from_both_bindings() {
        for &k in ErrorKind::ALL {
            let err = A2aError::new(k)
                .with_metadata("taskId", "t")
                .with_message("remote says");
            let rpc = json!({"jsonrpc":"2.0","id":1,"error":err.to_jsonrpc_error()}).to_string();
            // JSON-RPC errors are read under any HTTP status (§13.2).
            for status in [200, 400, 500] {
                let e = run(
                    Transport::JsonRpc,
                    Expect::Task,
                    status,
                    "application/json",
                    &rpc,
                )
                .await
                .unwrap_err();
                assert_eq!((e.kind(), e.message()), (k, "remote says"));
                assert_eq!(e.metadata()["taskId"], "t");
            }
            let rest = err.to_rest_error().to_string();
            let e = run(
                Transport::HttpJson,
                Expect::Task,
                k.http_status(),
                "application/json",
                &rest,
            )
            .await
            .unwrap_err();
            assert_eq!((e.kind(), e.message()), (k, "remote says"));
        }
    }

    #[tokio::test]
    async fn invalid_results_are_invalid_agent_response() {
        let bad = [
            (
                Transport::JsonRpc,
                Expect::SendMessage,
                r#"{"jsonrpc":"2.0","id":1,"result":{"nope":1}}"#,
            ),
            (
                Transport::JsonRpc,
                Expect::Task,
                r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            ),
            (Transport::JsonRpc, Expect::Task, "[1]"),
            (
                Transport::JsonRpc,
                Expect::Empty,
                r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            ),
            (Transport::JsonRpc, Expect::Task, "not json"),
            (Transport::HttpJson, Expect::SendMessage, r#"{"task":3}"#),
            (Transport::HttpJson, Expect::Empty, r#"{"x":1}"#),
            (Transport::HttpJson, Expect::Stream, r#"{"task":{}}"#),
        ];
        for (t, e, body) in bad {
            let err = run(t, e, 200, "application/json", body).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidAgentResponse, "{body}");
        }
        // A non-JSON failure keeps the HTTP status's kind.
        let err = run(Transport::HttpJson, Expect::Task, 503, "text/html", "<p>")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
    }

    #[tokio::test]
    async fn a_404_without_an_a2a_error_is_no_endpoint() {
        let not_a2a = [
            ("text/html", "<h1>Not Found</h1>"),
            ("text/plain", ""),
            ("application/json", a2a_tower::NotFound::BODY),
            (
                "application/json",
                r#"{"error":{"code":404,"message":"Task not found"}}"#,
            ),
            ("application/json", r#"{"detail":"Not Found"}"#),
        ];
        for t in [Transport::JsonRpc, Transport::HttpJson] {
            for (ct, body) in not_a2a {
                let e = run(t, Expect::Task, 404, ct, body).await.unwrap_err();
                assert_eq!(e.kind(), ErrorKind::MethodNotFound, "{t:?} {body}");
                assert_eq!(
                    e.message(),
                    "no A2A endpoint at http://h/a2a",
                    "{t:?} {body}"
                );
            }
        }
        // An A2A error under 404 stays what it is, on both bindings.
        let err = A2aError::new(ErrorKind::TaskNotFound);
        let rpc = json!({"jsonrpc":"2.0","id":1,"error":err.to_jsonrpc_error()}).to_string();
        let rest = err.to_rest_error().to_string();
        // A 0.3-era body: a JSON-RPC code under HTTP+JSON.
        let legacy = r#"{"code":-32001,"message":"Task not found"}"#;
        for (t, body) in [
            (Transport::JsonRpc, rpc.as_str()),
            (Transport::HttpJson, rest.as_str()),
            (Transport::HttpJson, legacy),
        ] {
            let e = run(t, Expect::Task, 404, "application/json", body)
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::TaskNotFound, "{t:?} {body}");
        }
    }

    #[tokio::test]
    async fn delete_accepts_empty_forms() {
        for body in [
            r#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ] {
            let r = run(
                Transport::JsonRpc,
                Expect::Empty,
                200,
                "application/json",
                body,
            )
            .await;
            assert!(matches!(r, Ok(A2aResponse::Empty)), "{body}");
        }
        for body in ["", "{}"] {
            let r = run(
                Transport::HttpJson,
                Expect::Empty,
                200,
                "application/json",
                body,
            )
            .await;
            assert!(matches!(r, Ok(A2aResponse::Empty)), "{body:?}");
        }
    }

    #[tokio::test]
    async fn every_answer_decodes_on_both_bindings() {
        let cfg = TaskPushNotificationConfig {
            id: "c".into(),
            task_id: "t".into(),
            url: "https://hook.example/".into(),
            ..Default::default()
        };
        let configs = ListTaskPushNotificationConfigsResponse {
            configs: vec![cfg.clone()],
            next_page_token: String::new(),
        };
        let card = AgentCard::new("A", "d", "1");
        let task: Task = serde_json::from_value(
            json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}),
        )
        .unwrap();
        let page =
            json!({"tasks": [task.clone()], "nextPageToken": "", "pageSize": 1, "totalSize": 1});
        let cases = [
            (Expect::SendMessage, json!({"task": task.clone()})),
            (Expect::Task, serde_json::to_value(&task).unwrap()),
            (Expect::Tasks, page),
            (Expect::PushConfig, serde_json::to_value(&cfg).unwrap()),
            (Expect::PushConfigs, serde_json::to_value(&configs).unwrap()),
            (Expect::Empty, json!({})),
            (Expect::Card, serde_json::to_value(&card).unwrap()),
            (Expect::Extension, json!({"taskIds": ["t"]})),
        ];
        for (expect, value) in cases {
            let rpc = json!({"jsonrpc": "2.0", "id": 1, "result": value.clone()}).to_string();
            for (t, body) in [
                (Transport::JsonRpc, rpc),
                (Transport::HttpJson, value.to_string()),
            ] {
                let r = run(t, expect, 200, "application/json", &body).await;
                let ok = match (expect, r) {
                    (
                        Expect::SendMessage,
                        Ok(A2aResponse::SendMessage(SendMessageResponse::Task(x))),
                    ) => x == task,
                    (Expect::Task, Ok(A2aResponse::Task(x))) => x == task,
                    (Expect::Tasks, Ok(A2aResponse::Tasks(x))) => x.tasks == [task.clone()],
                    (Expect::PushConfig, Ok(A2aResponse::PushConfig(x))) => x == cfg,
                    (Expect::PushConfigs, Ok(A2aResponse::PushConfigs(x))) => x == configs,
                    (Expect::Empty, Ok(A2aResponse::Empty)) => true,
                    (Expect::Card, Ok(A2aResponse::AgentCard(x))) => *x == card,
                    (Expect::Extension, Ok(A2aResponse::Extension(x))) => x == value,
                    _ => false,
                };
                assert!(ok, "{t:?} {expect:?}");
            }
        }
    }

    async fn events(t: Transport, body: &str) -> Vec<Result<StreamResponse, A2aError>> {
        let Ok(A2aResponse::Stream(s)) =
            run(t, Expect::Stream, 200, "text/event-stream", body).await
        else {
            panic!("not a stream")
        };
        s.collect().await
    }

    #[tokio::test]
    async fn stream_frames() {
        let msg = json!({"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}});
        let rest = format!(": keep-alive\n\ndata: {msg}\n\n");
        let got = events(Transport::HttpJson, &rest).await;
        assert!(matches!(got[..], [Ok(StreamResponse::Message(_))]));
        let rpc = format!("data: {}\n\n", json!({"jsonrpc":"2.0","id":1,"result":msg}));
        assert!(matches!(
            events(Transport::JsonRpc, &rpc).await[..],
            [Ok(_)]
        ));
        // An error frame ends the stream with the complete error.
        let err = A2aError::task_not_found("t");
        let rest = format!(
            "data: {msg}\n\nevent: error\ndata: {}\n\ndata: {msg}\n\n",
            err.to_rest_error()
        );
        let got = events(Transport::HttpJson, &rest).await;
        assert_eq!(got.len(), 2);
        let e = got[1].as_ref().unwrap_err();
        assert_eq!(
            (e.kind(), e.metadata()["taskId"].as_str()),
            (ErrorKind::TaskNotFound, "t")
        );
        let rpc = format!(
            "event: error\ndata: {}\n\n",
            json!({"jsonrpc":"2.0","id":1,"error":err.to_jsonrpc_error()})
        );
        let got = events(Transport::JsonRpc, &rpc).await;
        assert_eq!(got[0].as_ref().unwrap_err().kind(), ErrorKind::TaskNotFound);
        // Malformed: not JSON, not an event, truncated, oversized.
        let big = format!("data: {}\n\n", "x".repeat(2048));
        for body in [
            "data: nope\n\n",
            "data: {\"x\":1}\n\n",
            "data: {\"message\"",
            big.as_str(),
        ] {
            let got = events(Transport::HttpJson, body).await;
            assert_eq!(got.len(), 1, "{body}");
            assert_eq!(
                got[0].as_ref().unwrap_err().kind(),
                ErrorKind::InvalidAgentResponse
            );
        }
    }

    #[tokio::test]
    async fn numbers_keep_their_exact_text() {
        // Through a `Value`, 0.0000001 became 1e-7 and -0 became 0.
        let n = "[0.0000001,-0.000001,1.10,1e+400,-0,123456789012345678901234567890]";
        let meta = format!(r#"{{"n":{n}}}"#);
        let part = format!(r#"{{"data":{n},"metadata":{meta}}}"#);
        let msg = format!(
            r#"{{"messageId":"m","role":"ROLE_AGENT","parts":[{part}],"metadata":{meta}}}"#
        );
        let task = format!(
            r#"{{"id":"t","contextId":"c","status":{{"state":"TASK_STATE_COMPLETED","message":{msg}}}}}"#
        );
        let exact = |r: &A2aResponse| {
            let task = match r {
                A2aResponse::SendMessage(SendMessageResponse::Task(t)) => &**t,
                A2aResponse::Task(t) => t,
                A2aResponse::Tasks(page) => &page.tasks[0],
                A2aResponse::Extension(v) => return serde_json::to_string(v).unwrap() == task,
                _ => return false,
            };
            let m = task.status.message.as_ref().unwrap();
            serde_json::to_string(&m.parts).unwrap() == format!("[{part}]")
                && serde_json::to_string(&m.metadata).unwrap() == meta
        };
        let page = format!(r#"{{"tasks":[{task}],"nextPageToken":"","pageSize":1,"totalSize":1}}"#);
        for (expect, result) in [
            (Expect::SendMessage, format!(r#"{{"task":{task}}}"#)),
            (Expect::Task, task.clone()),
            (Expect::Tasks, page),
            (Expect::Extension, task.clone()),
        ] {
            let rpc = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            for (t, body) in [(Transport::JsonRpc, rpc), (Transport::HttpJson, result)] {
                let r = run(t, expect, 200, "application/json", &body)
                    .await
                    .unwrap();
                assert!(exact(&r), "{t:?} {expect:?}: {r:?}");
            }
        }
        let event = format!(r#"{{"message":{msg}}}"#);
        let rpc = format!("data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{event}}}\n\n");
        let rest = format!("data: {event}\n\n");
        for (t, body) in [(Transport::JsonRpc, rpc), (Transport::HttpJson, rest)] {
            let got = events(t, &body).await;
            let [Ok(StreamResponse::Message(m))] = &got[..] else {
                panic!("{t:?}: {got:?}")
            };
            assert_eq!(serde_json::to_string(m).unwrap(), msg, "{t:?}");
        }
    }
}
