//! Re-framing an SSE body event by event: each `data:` payload (JSON) is
//! rewritten by a function; comments (keep-alives) pass as they are.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use futures_core::Stream;
use http_body::{Body as _, Frame};
use serde_json::Value;

use crate::{Body, BoxError};

/// How one event's JSON is rewritten: the event's name (`error` or none)
/// and its data in, the data out.
pub(crate) type Rewrite = Box<dyn Fn(Option<&str>, Value) -> Value + Send + Sync>;

/// An SSE body whose events pass through a [`Rewrite`].
pub(crate) struct SseMap {
    inner: Body,
    buf: BytesMut,
    rewrite: Rewrite,
    done: bool,
}

impl SseMap {
    pub(crate) fn new(inner: Body, rewrite: Rewrite) -> Self {
        Self {
            inner,
            buf: BytesMut::new(),
            rewrite,
            done: false,
        }
    }

    /// The complete events in the buffer, rewritten.
    fn drain(&mut self) -> Bytes {
        let mut out = BytesMut::new();
        while let Some(end) = find_blank_line(&self.buf) {
            let raw = self.buf.split_to(end.0);
            let _ = self.buf.split_to(end.1);
            out.put_slice(&self.event(&raw));
        }
        out.freeze()
    }

    fn event(&self, raw: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(raw);
        let mut name = None;
        let mut data = Vec::new();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            } else if let Some(v) = line.strip_prefix("event:") {
                name = Some(v.trim());
            }
        }
        if data.is_empty() {
            let mut raw = raw.to_vec();
            raw.extend_from_slice(b"\n\n");
            return raw;
        }
        let joined = data.join("\n");
        let json = match serde_json::from_str::<Value>(&joined) {
            Ok(v) => serde_json::to_string(&(self.rewrite)(name, v)).unwrap_or(joined),
            Err(_) => joined,
        };
        let mut out = Vec::with_capacity(json.len() + 24);
        if let Some(n) = name {
            out.extend_from_slice(format!("event: {n}\n").as_bytes());
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(json.as_bytes());
        out.extend_from_slice(b"\n\n");
        out
    }
}

/// Where the first blank line is: (end of the event, length of the
/// separator).
fn find_blank_line(buf: &[u8]) -> Option<(usize, usize)> {
    buf.windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, 2))
        .or_else(|| {
            buf.windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| (i, 4))
        })
}

impl Stream for SseMap {
    type Item = Result<Frame<Bytes>, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.done = true;
                    if self.buf.is_empty() {
                        return Poll::Ready(None);
                    }
                    self.buf.put_slice(b"\n\n");
                    let out = self.drain();
                    return Poll::Ready(Some(Ok(Frame::data(out))));
                }
                Poll::Ready(Some(Err(e))) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.put_slice(&data);
                        let out = self.drain();
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(out))));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn events_are_rewritten_and_comments_pass() {
        let body =
            Body::full(": keep-alive\n\ndata: {\"a\":1}\n\nevent: error\ndata: {\"e\":2}\n\n");
        let map = SseMap::new(
            body,
            Box::new(|name, mut v| {
                v["seen"] = json!(name.unwrap_or("-"));
                v
            }),
        );
        let frames: Vec<_> = map.collect().await;
        let text: String = frames
            .into_iter()
            .map(|f| String::from_utf8(f.unwrap().into_data().unwrap().to_vec()).unwrap())
            .collect();
        assert_eq!(
            text,
            ": keep-alive\n\ndata: {\"a\":1,\"seen\":\"-\"}\n\nevent: error\ndata: {\"e\":2,\"seen\":\"error\"}\n\n"
        );
    }
}
