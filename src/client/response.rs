//! Decoding the HTTP response of one binding into an [`A2aResponse`]: the
//! inverse of what this crate's bindings encode, with the leniency of
//! a2a-spec.md §13 (JSON-RPC errors under any HTTP status; `{}`, `null` or
//! no `result` for Delete; SSE `id:`, `event:` and comments ignored).
//!
//! Anything that is not a valid answer of the operation is
//! InvalidAgentResponse; a remote protocol error comes back complete through
//! [`A2aError::from_wire`].

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Response, header};
use http_body_util::{BodyExt, Limited};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::sse::{SseError, sse_events};
use super::transport::Transport;
use crate::types::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageResponse,
    StreamResponse, Task, TaskPushNotificationConfig,
};
use crate::{A2aError, A2aResponse, BoxError, ErrorKind, EventStream, Operation};

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
    pub(crate) fn of(op: &Operation) -> Self {
        match op {
            Operation::SendMessage(_) => Self::SendMessage,
            Operation::GetTask(_) | Operation::CancelTask(_) => Self::Task,
            Operation::ListTasks(_) => Self::Tasks,
            Operation::CreateTaskPushNotificationConfig(_)
            | Operation::GetTaskPushNotificationConfig(_) => Self::PushConfig,
            Operation::ListTaskPushNotificationConfigs(_) => Self::PushConfigs,
            Operation::DeleteTaskPushNotificationConfig(_) => Self::Empty,
            Operation::GetExtendedAgentCard(_) => Self::Card,
            Operation::SendStreamingMessage(_) | Operation::SubscribeToTask(_) => Self::Stream,
            Operation::Extension(_) => Self::Extension,
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

fn typed<T: DeserializeOwned>(v: Value) -> Result<T, A2aError> {
    serde_json::from_value(v).map_err(|e| {
        invalid("the agent's result is not a valid answer of the operation").with_source(e)
    })
}

/// A result value as the expected answer.
fn answer(expect: Expect, v: Value) -> Result<A2aResponse, A2aError> {
    Ok(match expect {
        Expect::SendMessage => A2aResponse::SendMessage(typed::<SendMessageResponse>(v)?),
        Expect::Task => A2aResponse::Task(typed::<Task>(v)?),
        Expect::Tasks => A2aResponse::Tasks(typed::<ListTasksResponse>(v)?),
        Expect::PushConfig => A2aResponse::PushConfig(typed::<TaskPushNotificationConfig>(v)?),
        Expect::PushConfigs => {
            A2aResponse::PushConfigs(typed::<ListTaskPushNotificationConfigsResponse>(v)?)
        }
        Expect::Empty => match v {
            Value::Null => A2aResponse::Empty,
            Value::Object(m) if m.is_empty() => A2aResponse::Empty,
            _ => return Err(invalid("Delete answered with something other than {}")),
        },
        Expect::Card => A2aResponse::AgentCard(Box::new(typed::<AgentCard>(v)?)),
        Expect::Stream => return Err(invalid("a streaming operation was not answered with SSE")),
        Expect::Extension => A2aResponse::Extension(v),
    })
}

/// A protocol error from a JSON-RPC error object or a REST error body.
fn remote_error(v: &Value) -> A2aError {
    A2aError::from_wire(v).unwrap_or_else(|| invalid("the agent's error is not an error object"))
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

/// A JSON-RPC envelope: its error, or its `result` (absent means `null`).
fn envelope(v: Value, id: Option<u64>) -> Result<Value, A2aError> {
    let Value::Object(mut m) = v else {
        return Err(invalid("the agent's answer is not a JSON-RPC response"));
    };
    if let Some(e) = m.get("error") {
        return Err(remote_error(e));
    }
    // The id echoed as a number or (by lenient servers) as its text.
    let echoes = |got: &Value, id: u64| match got {
        Value::Null => true,
        Value::String(s) => s.parse() == Ok(id),
        v => v.as_u64() == Some(id),
    };
    if let (Some(id), Some(got)) = (id, m.get("id"))
        && !echoes(got, id)
    {
        return Err(invalid("the agent answered another JSON-RPC request id"));
    }
    Ok(m.remove("result").unwrap_or(Value::Null))
}

/// Decodes the HTTP response of an operation.
pub(crate) async fn decode<B>(
    transport: Transport,
    expect: Expect,
    id: u64,
    limits: Limits,
    res: Response<B>,
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
    if expect == Expect::Stream && is_sse && status.is_success() {
        return Ok(A2aResponse::Stream(stream(
            transport,
            res.into_body(),
            limits,
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
    let json = if bytes.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<Value>(&bytes).ok()
    };
    match transport {
        Transport::JsonRpc => match json {
            Some(v) => answer(expect, envelope(v, Some(id))?),
            None if status.is_success() => Err(invalid("the agent's answer is not JSON")),
            None => Err(status_error(status)),
        },
        Transport::HttpJson if status.is_success() => match json {
            Some(v) => answer(expect, v),
            None if bytes.is_empty() && expect == Expect::Empty => Ok(A2aResponse::Empty),
            None => Err(invalid("the agent's answer is not JSON")),
        },
        Transport::HttpJson => Err(json
            .as_ref()
            .and_then(A2aError::from_wire)
            .unwrap_or_else(|| status_error(status))),
    }
}

/// The events of an SSE body; an `event: error` frame, an error envelope,
/// a frame that is not an event, or an [`SseError`] ends it with an `Err`.
fn stream<B>(transport: Transport, body: B, limits: Limits) -> EventStream
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
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|_| invalid("an event of the agent's stream is not JSON"))?;
        if ev.event.as_deref() == Some("error") {
            return Err(remote_error(&v));
        }
        let v = match transport {
            Transport::JsonRpc => envelope(v, None)?,
            Transport::HttpJson => v,
        };
        serde_json::from_value::<StreamResponse>(v)
            .map_err(|_| invalid("an event of the agent's stream is not a StreamResponse"))
    });
    // Nothing is read after the first error.
    let mut failed = false;
    EventStream::new(events.take_while(move |item| {
        let go = !failed;
        failed |= item.is_err();
        futures_util::future::ready(go)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
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
        decode(t, e, 1, LIMITS, res).await
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
}
