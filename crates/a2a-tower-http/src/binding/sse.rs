//! A `text/event-stream` response body over an [`EventStream`], shared by the
//! HTTP bindings; each binding supplies the JSON of an event and of an error
//! through [`EncodeFrame`].
//!
//! Framing (a2a-spec.md §6.4, §7.5):
//! - one event per item: `data: <json>\n\n` (the JSON is compact, so it is a
//!   single line), after `id: <id>\n` when the core gave the event a
//!   [`LastEventId`](crate::LastEventId) (its resume cursor);
//! - an `Err` item becomes `event: error\ndata: <json>\n\n` and ends the body;
//! - the body also ends after a first event that is a `message` (§4.2: a
//!   message stream is exactly one message), or when the stream ends;
//! - while the stream is idle, a `: keep-alive\n\n` comment every interval
//!   (the first one an interval after the last frame). Keep-alive needs a
//!   tokio runtime; without one it is silently off.
//!
//! The first item was already read by the binding (so an error before the
//! first event is answered as a plain error response) and is passed in.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http_body::Frame;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::types::StreamResponse;
use crate::{A2aError, EventStream, IdentifiedEvent, LastEventId};

/// The keep-alive comment.
pub(crate) const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The default keep-alive interval.
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The JSON payload of each frame, per binding.
pub trait EncodeFrame: Send + Unpin + 'static {
    /// The JSON of one event.
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError>;
    /// The JSON of the error that ends the stream.
    fn error(&self, error: &A2aError) -> Bytes;
}

enum KeepAlive {
    Off,
    Idle(Duration),
    On(Interval),
}

impl KeepAlive {
    fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Self::Idle(period) = *self {
            *self = if tokio::runtime::Handle::try_current().is_ok() {
                let mut i = tokio::time::interval_at(Instant::now() + period, period);
                i.set_missed_tick_behavior(MissedTickBehavior::Delay);
                Self::On(i)
            } else {
                Self::Off
            };
        }
        match self {
            Self::On(i) => i.poll_tick(cx).map(|_| ()),
            _ => Poll::Pending,
        }
    }

    fn reset(&mut self) {
        if let Self::On(i) = self {
            i.reset();
        }
    }
}

/// The SSE body; see the module docs.
pub(crate) struct SseBody<E> {
    first: Option<IdentifiedEvent>,
    /// `None` once the body has ended (the stream is dropped at once).
    stream: Option<EventStream>,
    encoder: E,
    keep_alive: KeepAlive,
}

impl<E: EncodeFrame> SseBody<E> {
    /// A body that sends `first`, then the items of `rest`. `keep_alive` of
    /// `None` or zero disables keep-alive comments.
    pub(crate) fn new(
        first: IdentifiedEvent,
        rest: EventStream,
        encoder: E,
        keep_alive: Option<Duration>,
    ) -> Self {
        let keep_alive = match keep_alive {
            Some(d) if !d.is_zero() => KeepAlive::Idle(d),
            _ => KeepAlive::Off,
        };
        Self {
            first: Some(first),
            stream: Some(rest),
            encoder,
            keep_alive,
        }
    }

    fn event_frame(&mut self, event: &StreamResponse, id: Option<&LastEventId>) -> Bytes {
        match self.encoder.event(event) {
            Ok(json) => data_frame(None, id, &json),
            Err(e) => self.error_frame(&e),
        }
    }

    fn error_frame(&mut self, error: &A2aError) -> Bytes {
        self.stream = None;
        data_frame(Some("error"), None, &self.encoder.error(error))
    }
}

fn data_frame(event: Option<&str>, id: Option<&LastEventId>, json: &[u8]) -> Bytes {
    let mut buf = BytesMut::with_capacity(json.len() + 40);
    if let Some(id) = id {
        buf.put_slice(b"id: ");
        buf.put_slice(id.as_str().as_bytes());
        buf.put_u8(b'\n');
    }
    if let Some(event) = event {
        buf.put_slice(b"event: ");
        buf.put_slice(event.as_bytes());
        buf.put_u8(b'\n');
    }
    buf.put_slice(b"data: ");
    buf.put_slice(json);
    buf.put_slice(b"\n\n");
    buf.freeze()
}

impl<E: EncodeFrame> http_body::Body for SseBody<E> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let data = |b: Bytes| Poll::Ready(Some(Ok(Frame::data(b))));
        if let Some((first, id)) = this.first.take() {
            let frame = this.event_frame(&first, id.as_ref());
            if matches!(first, StreamResponse::Message(_)) {
                this.stream = None;
            }
            return data(frame);
        }
        let Some(stream) = this.stream.as_mut() else {
            return Poll::Ready(None);
        };
        match stream.poll_next_with_id(cx) {
            Poll::Ready(Some(Ok((event, id)))) => {
                this.keep_alive.reset();
                data(this.event_frame(&event, id.as_ref()))
            }
            Poll::Ready(Some(Err(e))) => data(this.error_frame(&e)),
            Poll::Ready(None) => {
                this.stream = None;
                Poll::Ready(None)
            }
            Poll::Pending => match this.keep_alive.poll_tick(cx) {
                Poll::Ready(()) => data(Bytes::from_static(KEEP_ALIVE)),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.stream.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use crate::types::{Message, Task};
    use http_body_util::BodyExt;

    struct Plain;
    impl EncodeFrame for Plain {
        fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
            Ok(serde_json::to_vec(event).unwrap().into())
        }
        fn error(&self, error: &A2aError) -> Bytes {
            Bytes::from(error.kind().reason())
        }
    }

    fn task(id: &str) -> StreamResponse {
        StreamResponse::Task(Task {
            id: id.into(),
            ..Default::default()
        })
    }

    async fn all(body: SseBody<Plain>) -> String {
        let b = body.collect().await.unwrap().to_bytes();
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn frames_and_error_end() {
        let rest = EventStream::from_iter(vec![
            Ok(task("b")),
            Err(A2aError::new(ErrorKind::TaskNotFound)),
            Ok(task("never")),
        ]);
        let out = all(SseBody::new((task("a"), None), rest, Plain, None)).await;
        assert_eq!(
            out,
            "data: {\"task\":{\"id\":\"a\",\"contextId\":\"\",\"status\":{\"state\":\"TASK_STATE_UNSPECIFIED\"}}}\n\n\
             data: {\"task\":{\"id\":\"b\",\"contextId\":\"\",\"status\":{\"state\":\"TASK_STATE_UNSPECIFIED\"}}}\n\n\
             event: error\ndata: TASK_NOT_FOUND\n\n"
        );
    }

    #[tokio::test]
    async fn ids_precede_the_data() {
        let rest = EventStream::with_ids(futures_util::stream::iter(vec![Ok((
            task("b"),
            LastEventId::from_seq(8),
        ))]));
        let first = (task("a"), Some(LastEventId::from_seq(7)));
        let out = all(SseBody::new(first, rest, Plain, None)).await;
        let ids: Vec<&str> = out.lines().filter(|l| l.starts_with("id: ")).collect();
        assert_eq!(ids, ["id: 7", "id: 8"]);
        assert!(out.starts_with("id: 7\ndata: {\"task\""), "{out}");
    }

    #[tokio::test]
    async fn message_stream_ends_after_the_message() {
        // §4.2: a message stream is exactly one message, then closes.
        let rest = EventStream::from_iter(vec![Ok(task("never"))]);
        let first = StreamResponse::Message(Message::agent("m", "hi"));
        let out = all(SseBody::new((first, None), rest, Plain, None)).await;
        assert_eq!(out.matches("data: ").count(), 1);
        assert!(out.starts_with("data: {\"message\""));
    }

    #[tokio::test(start_paused = true)]
    async fn keep_alive_when_idle() {
        let rest = EventStream::new(futures_util::stream::pending());
        let mut body = SseBody::new((task("a"), None), rest, Plain, Some(Duration::from_secs(5)));
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert!(first.starts_with(b"data: "));
        let start = Instant::now();
        let ka = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&ka[..], KEEP_ALIVE);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let ka = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&ka[..], KEEP_ALIVE);
        assert_eq!(start.elapsed(), Duration::from_secs(10));
    }

    #[test]
    fn no_runtime_no_keep_alive_no_panic() {
        let rest = EventStream::new(futures_util::stream::pending());
        let mut body = SseBody::new((task("a"), None), rest, Plain, Some(Duration::from_secs(1)));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        use http_body::Body as _;
        assert!(Pin::new(&mut body).poll_frame(&mut cx).is_ready());
        assert!(Pin::new(&mut body).poll_frame(&mut cx).is_pending());
        assert!(!body.is_end_stream());
    }
}
