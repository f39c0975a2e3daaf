//! One exchange with the core, as both HTTP bindings make it: the request's
//! media type, reading the body, calling the core, checking that the answer
//! fits the operation, and opening an SSE response once the first event is in.
//!
//! The bindings differ only in their framing, which they pass in: an
//! [`EncodeResult`] for a complete answer (a JSON-RPC envelope, or the bare
//! value on HTTP+JSON) and an [`EncodeFrame`] for stream events.

use std::future::{Future, poll_fn};

use bytes::Bytes;
use futures_util::FutureExt as _;
use futures_util::future::Either;
use serde::{Serialize, Serializer};

use crate::types::SendMessageResponse;
use crate::{
    A2aError, A2aRequest, A2aResponse, A2aService, ErrorKind, EventStream, Operation, ResponseKind,
};
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
use {
    crate::binding::sse::{EncodeFrame, SseBody},
    crate::{Body, BoxError},
    http::{HeaderMap, HeaderValue, Response, header},
    http_body_util::BodyExt,
    std::time::Duration,
};

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
/// The `Content-Type` of a request, as the bindings judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// No `Content-Type` header.
    Absent,
    /// `application/json` or `application/a2a+json`, any parameters.
    Json,
    /// Anything else (including a header that is not text).
    Other,
}

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
impl MediaType {
    /// The media type of the request headers.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        let Some(value) = headers.get(header::CONTENT_TYPE) else {
            return Self::Absent;
        };
        let Ok(ct) = value.to_str() else {
            return Self::Other;
        };
        let essence = ct.split(';').next().unwrap_or_default().trim();
        if essence.eq_ignore_ascii_case("application/json")
            || essence.eq_ignore_ascii_case("application/a2a+json")
        {
            Self::Json
        } else {
            Self::Other
        }
    }
}

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
/// Reads the whole request body. A body over the limit set by a layer above
/// is PayloadTooLarge (413); any other read failure means the request could
/// not be read: InvalidRequest.
pub(crate) async fn read_body<B>(body: B) -> Result<Bytes, A2aError>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let refused = |e: B::Error| {
        A2aError::new(if crate::limit::is_length_limit(&e.into()) {
            ErrorKind::PayloadTooLarge
        } else {
            ErrorKind::InvalidRequest
        })
    };
    // A body of one frame (hyper's, for a small request) is its bytes as
    // they are, empty frames aside; several are joined. (`collect` would
    // allocate a queue.)
    let mut body = std::pin::pin!(body);
    let mut first = Bytes::new();
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(refused)?.into_data() else {
            continue; // trailers
        };
        match &mut joined {
            _ if data.is_empty() => {}
            Some(all) => all.extend_from_slice(&data),
            None if first.is_empty() => first = data,
            None => joined = Some([&first[..], &data[..]].concat()),
        }
    }
    Ok(joined.map_or(first, Bytes::from))
}

/// Waits for the core's readiness, then calls it.
///
/// A core that is ready at once (the engine always is; a host's limit or
/// buffer usually is) is called here, before the future is built, so the
/// future holds only the core's future: the request (≈ 720 bytes) moves
/// into the core's call instead of into this future and the binding's boxed
/// call around it (1 600 → 1 032 bytes). The probe polls readiness with a
/// no-op waker; a core that is not ready is polled again, with the task's
/// waker, by a boxed future that holds the request until it is.
pub(crate) fn call<S: A2aService>(
    mut core: S,
    request: A2aRequest,
    binding: &'static str,
) -> impl Future<Output = Result<A2aResponse, A2aError>> {
    let operation = request.operation.method();
    let start = std::time::Instant::now();
    let call = match poll_fn(|cx| core.poll_ready(cx)).now_or_never() {
        Some(Ok(())) => Either::Left(core.call(request)),
        Some(Err(e)) => Either::Right(Box::pin(std::future::ready(Err(e))) as Pending),
        None => Either::Right(Box::pin(async move {
            poll_fn(|cx| core.poll_ready(cx)).await?;
            core.call(request).await
        }) as Pending),
    };
    async move {
        let out = call.await;
        crate::telemetry::record_request(
            operation,
            binding,
            crate::telemetry::outcome(&out),
            start.elapsed(),
        );
        out
    }
}

/// A call whose core was not ready at once, or refused: boxed, off the
/// usual path (a refusal's answer inline would make the future as large
/// as a response).
type Pending = std::pin::Pin<Box<dyn Future<Output = Result<A2aResponse, A2aError>> + Send>>;

/// The [`A2aResponse`] variant an operation is answered with, taken before the
/// operation moves into the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    SendMessage,
    Task,
    /// ListTasks; `artifacts`: the request set `includeArtifacts`.
    Tasks {
        artifacts: bool,
    },
    PushConfig,
    PushConfigs,
    Empty,
    AgentCard,
    Stream,
    /// An extension method: any JSON value.
    Extension,
}

impl Expected {
    /// What `op` is answered with: its row's [`ResponseKind`] (a2a-spec.md
    /// §6.2, §7.1), and for ListTasks whether artifacts are included.
    pub(crate) fn of(op: &Operation) -> Self {
        use ResponseKind as K;
        let Some(kind) = op.kind() else {
            return Self::Extension;
        };
        match kind.response() {
            K::SendMessage => Self::SendMessage,
            K::Task => Self::Task,
            K::Tasks => Self::Tasks {
                artifacts: matches!(op, Operation::ListTasks(r) if r.include_artifacts == Some(true)),
            },
            K::PushConfig => Self::PushConfig,
            K::PushConfigs => Self::PushConfigs,
            K::Empty => Self::Empty,
            K::AgentCard => Self::AgentCard,
            K::Stream => Self::Stream,
            // `ResponseKind` is `#[non_exhaustive]` across the crate line:
            // an answer of a kind added later is read as any JSON value.
            _ => Self::Extension,
        }
    }
}

/// How a binding writes a complete answer. Public (unnameable) because a
/// codec's framing implements it; the gRPC binding
/// alone uses it inside the crate.
#[cfg_attr(
    not(any(feature = "jsonrpc", feature = "rest")),
    allow(unreachable_pub)
)]
pub trait EncodeResult {
    /// The response body for `value`.
    fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Bytes, A2aError> {
        self.encode_sized(value, 0)
    }

    /// The response body for `value`, whose JSON is known to take about
    /// `len` bytes (0: unknown), written into a buffer that holds it.
    fn encode_sized<T: Serialize + ?Sized>(&self, value: &T, len: usize)
    -> Result<Bytes, A2aError>;
}

/// Complete answers as the bare ProtoJSON value (HTTP+JSON bodies; the gRPC
/// binding's bridge to the generated messages).
#[cfg(any(feature = "rest", feature = "grpc"))]
pub(crate) struct BareJson;

#[cfg(any(feature = "rest", feature = "grpc"))]
impl EncodeResult for BareJson {
    fn encode_sized<T: Serialize + ?Sized>(
        &self,
        value: &T,
        len: usize,
    ) -> Result<Bytes, A2aError> {
        let mut out = Vec::with_capacity(len.max(128));
        crate::json::to_writer(&mut out, value).map_err(A2aError::internal)?;
        Ok(Bytes::from(out))
    }
}

/// What a core response becomes.
pub(crate) enum Reply {
    /// A complete response body.
    Json(Bytes),
    /// The events of a streaming operation.
    Stream(EventStream),
}

/// SendMessage's answer, its task written from the ProtoJSON it carries
/// when it has it (the memory log's packed form of the task the message
/// completed: see [`Encoded`](crate::types::Encoded)), instead of
/// serialized a second time.
struct SendMessageJson<'a>(&'a SendMessageResponse);

impl SendMessageJson<'_> {
    /// The task's JSON, if the answer carries it.
    fn task_json(&self) -> Option<&Bytes> {
        match self.0 {
            SendMessageResponse::Task(t) => t.json(),
            SendMessageResponse::Message(_) => None,
        }
    }

    /// The JSON's length when it is written from the task's (0: unknown).
    fn len(&self) -> usize {
        self.task_json()
            .map_or(0, |j| j.len() + r#"{"task":}"#.len())
    }
}

impl Serialize for SendMessageJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(json) = self.task_json().and_then(|j| std::str::from_utf8(j).ok()) else {
            return self.0.serialize(s);
        };
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("task", &crate::json::Raw(json))?;
        map.end()
    }
}

/// `{}`: the result of DeleteTaskPushNotificationConfig (`google.protobuf.Empty`).
struct EmptyObject;

impl Serialize for EmptyObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

/// Shapes the core's response. A variant that does not fit the operation is
/// InvalidAgentResponse: the spec's error for an agent answer that does not
/// fit the method.
pub(crate) fn encode_reply<E: EncodeResult>(
    expected: Expected,
    response: A2aResponse,
    enc: &E,
) -> Result<Reply, A2aError> {
    use A2aResponse as R;
    use Expected as X;
    let json = match (expected, response) {
        (X::SendMessage, R::SendMessage(r)) => {
            let answer = SendMessageJson(&r);
            enc.encode_sized(&answer, answer.len())
        }
        (X::Task, R::Task(t)) => enc.encode(&t),
        (X::Tasks { artifacts: false }, R::Tasks(t)) => enc.encode(&t),
        (X::Tasks { artifacts: true }, R::Tasks(t)) => {
            enc.encode(&crate::types::ListTasksWithArtifacts(&t))
        }
        (X::PushConfig, R::PushConfig(c)) => enc.encode(&c),
        (X::PushConfigs, R::PushConfigs(c)) => enc.encode(&c),
        (X::Empty, R::Empty) => enc.encode(&EmptyObject),
        (X::AgentCard, R::AgentCard(c)) => enc.encode(&c),
        (X::Stream, R::Stream(s)) => return Ok(Reply::Stream(s)),
        (X::Extension, R::Extension(v)) => enc.encode(&v),
        _ => return Err(A2aError::new(ErrorKind::InvalidAgentResponse)),
    }?;
    Ok(Reply::Json(json))
}

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
/// Reads the first event, then answers `200 text/event-stream` with an
/// [`SseBody`] over the rest. An error before the first event is returned
/// (a2a-spec.md §6.4, §7.5: the binding answers it as a plain error); a
/// stream without any event is InvalidAgentResponse (§4.2, §4.6).
pub(crate) async fn open_stream<E: EncodeFrame>(
    mut stream: EventStream,
    frames: E,
    keep_alive: Option<Duration>,
) -> Result<Response<Body>, A2aError> {
    match stream.next_with_id().await {
        Some(Ok(first)) => {
            let body = SseBody::new(first, stream, frames, keep_alive);
            Ok(sse_response(Body::new(body)))
        }
        Some(Err(e)) => Err(e),
        None => Err(A2aError::new(ErrorKind::InvalidAgentResponse)),
    }
}

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
fn sse_response(body: Body) -> Response<Body> {
    let mut res = Response::new(body);
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    use crate::CallContext;
    use crate::types::GetTaskRequest;

    /// A core that is ready only once opened (or refuses readiness), and
    /// counts its calls.
    #[derive(Clone, Default)]
    struct Gate {
        open: Arc<AtomicBool>,
        refuse: bool,
        waker: Arc<Mutex<Option<Waker>>>,
        calls: Arc<AtomicUsize>,
    }

    impl tower_service::Service<A2aRequest> for Gate {
        type Response = A2aResponse;
        type Error = A2aError;
        type Future = std::future::Ready<Result<A2aResponse, A2aError>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2aError>> {
            if self.refuse {
                return Poll::Ready(Err(A2aError::new(ErrorKind::Unavailable)));
            }
            if self.open.load(Ordering::SeqCst) {
                return Poll::Ready(Ok(()));
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }

        fn call(&mut self, _: A2aRequest) -> Self::Future {
            self.calls.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok(A2aResponse::Empty))
        }
    }

    fn request() -> A2aRequest {
        A2aRequest {
            operation: Operation::GetTask(GetTaskRequest {
                id: "t".into(),
                ..Default::default()
            }),
            context: CallContext::default(),
        }
    }

    #[tokio::test]
    async fn a_ready_core_is_called_before_the_call_is_awaited() {
        let gate = Gate {
            open: Arc::new(AtomicBool::new(true)),
            ..Gate::default()
        };
        let call = call(gate.clone(), request(), "test");
        assert_eq!(gate.calls.load(Ordering::SeqCst), 1, "called at once");
        assert!(matches!(call.await, Ok(A2aResponse::Empty)));
    }

    // The probe polls readiness with a no-op waker; the call must wait
    // with its task's own, or it would never be woken.
    #[tokio::test]
    async fn a_core_not_ready_at_once_is_called_once_it_is() {
        let gate = Gate::default();
        let task = tokio::spawn(call(gate.clone(), request(), "test"));
        // The probe's no-op waker first, then the task's own.
        let registered = || {
            let noop = futures_util::task::noop_waker();
            gate.waker
                .lock()
                .unwrap()
                .as_ref()
                .is_some_and(|w| !w.will_wake(&noop))
        };
        let wait = async {
            while !registered() {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), wait)
            .await
            .expect("the call waits with its task's waker");
        assert_eq!(
            gate.calls.load(Ordering::SeqCst),
            0,
            "not called before ready"
        );
        gate.open.store(true, Ordering::SeqCst);
        let waker = gate.waker.lock().unwrap().take().unwrap();
        waker.wake();
        let out = tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("woken by the core")
            .unwrap();
        assert!(matches!(out, Ok(A2aResponse::Empty)));
        assert_eq!(gate.calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_core_that_refuses_readiness_is_not_called() {
        let gate = Gate {
            refuse: true,
            ..Gate::default()
        };
        let out = call(gate.clone(), request(), "test").await;
        assert_eq!(out.unwrap_err().kind(), ErrorKind::Unavailable);
        assert_eq!(gate.calls.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn media_types() {
        let of = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            MediaType::of(&h)
        };
        assert_eq!(of("application/json"), MediaType::Json);
        assert_eq!(of("Application/JSON; charset=utf-8"), MediaType::Json);
        assert_eq!(of("application/a2a+json"), MediaType::Json);
        assert_eq!(of("text/plain"), MediaType::Other);
        assert_eq!(of("application/jsonx"), MediaType::Other);
        assert_eq!(MediaType::of(&HeaderMap::new()), MediaType::Absent);
    }

    #[test]
    fn wrong_variant_is_invalid_agent_response() {
        let e = encode_reply(Expected::Task, A2aResponse::Empty, &BareJson)
            .err()
            .unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidAgentResponse);
        let Ok(Reply::Json(b)) = encode_reply(Expected::Empty, A2aResponse::Empty, &BareJson)
        else {
            panic!("Empty is the answer of a delete")
        };
        assert_eq!(&b[..], b"{}");
    }

    /// A task with its JSON is written from it: the same bytes as the task
    /// serialized anew.
    #[test]
    fn a_task_s_json_is_written_as_the_task() {
        use crate::types::{Encoded, Message, Part, Task, TaskState};
        let mut task = Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            history: vec![Message::user("m-1", "héllo \"you\"\n")],
            ..Default::default()
        };
        task.status.state = TaskState::Completed;
        task.history[0].parts.push(Part::text("</script>"));
        let json = Bytes::from(crate::json::to_vec(&task).unwrap());
        let answer = |t: Encoded<Task>| {
            let r = A2aResponse::SendMessage(SendMessageResponse::Task(t));
            match encode_reply(Expected::SendMessage, r, &BareJson) {
                Ok(Reply::Json(b)) => b,
                _ => panic!("a task is SendMessage's answer"),
            }
        };
        let carried = Encoded::with_json(task.clone(), json.clone());
        let written = answer(carried);
        assert_eq!(written, answer(task.clone().into()));
        assert_eq!(
            written,
            crate::json::to_vec(&SendMessageResponse::Task(task.into())).unwrap()
        );
        assert_eq!(written, [&b"{\"task\":"[..], &json, b"}"].concat());
    }

    #[cfg(any(feature = "jsonrpc", feature = "rest"))]
    #[tokio::test]
    async fn a_body_is_read_whole_from_any_number_of_frames() {
        use http_body::Frame;
        use http_body_util::{Full, Limited, StreamBody};
        let frames = |parts: Vec<Frame<Bytes>>| {
            let items = parts.into_iter().map(Ok::<_, std::convert::Infallible>);
            StreamBody::new(futures_util::stream::iter(items))
        };
        let data = |s: &'static str| Frame::data(Bytes::from_static(s.as_bytes()));
        let read = |parts| read_body(frames(parts));
        assert_eq!(read(vec![]).await.unwrap(), "");
        assert_eq!(read(vec![data("{}")]).await.unwrap(), "{}");
        let mut trailers = HeaderMap::new();
        trailers.insert("x-t", HeaderValue::from_static("1"));
        let parts = vec![
            data("{\"a\""),
            data(""),
            data(":1"),
            data("}"),
            Frame::trailers(trailers),
        ];
        assert_eq!(read(parts).await.unwrap(), r#"{"a":1}"#);
        // One frame is passed on as it is, not copied.
        let one = Bytes::from(vec![b'x'; 64]);
        let got = read_body(Full::new(one.clone())).await.unwrap();
        assert_eq!(got.as_ptr(), one.as_ptr());
        // Nor when empty frames come around it.
        let got = read(vec![data(""), Frame::data(one.clone()), data("")]);
        assert_eq!(got.await.unwrap().as_ptr(), one.as_ptr());
        let over = read_body(Limited::new(Full::new(one), 10))
            .await
            .unwrap_err();
        assert_eq!(over.kind(), ErrorKind::PayloadTooLarge);
    }

    #[tokio::test]
    async fn empty_stream_is_invalid_agent_response() {
        struct Frames;
        impl EncodeFrame for Frames {
            fn event(&self, _: &crate::types::StreamResponse) -> Result<Bytes, A2aError> {
                Ok(Bytes::new())
            }
            fn error(&self, _: &A2aError) -> Bytes {
                Bytes::new()
            }
        }
        let e = open_stream(EventStream::from_iter(vec![]), Frames, None)
            .await
            .err()
            .unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidAgentResponse);
    }
}
