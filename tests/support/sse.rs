//! Server-sent events: the `data:` JSON of each event, from a whole body
//! (`events`) or event by event from a live answer (`Sse`).

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;

/// The `data:` JSON of one event (its `data:` lines joined), or `None` for
/// an event without data (a keep-alive comment).
fn data(event: &str) -> Option<Value> {
    let lines: Vec<&str> = event
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(serde_json::from_str(&lines.join("\n")).unwrap())
}

/// The `data:` JSON of every event of a whole SSE body.
pub(crate) fn events(body: &[u8]) -> Vec<Value> {
    std::str::from_utf8(body)
        .unwrap()
        .split("\n\n")
        .filter_map(data)
        .collect()
}

/// One SSE answer read event by event.
pub(crate) struct Sse<B> {
    body: Pin<Box<B>>,
    buf: String,
}

impl<B> Sse<B>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    /// Asserts an HTTP 200 `text/event-stream` answer and reads its body.
    pub(crate) fn new(res: Response<B>) -> Self {
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "text/event-stream");
        Self {
            body: Box::pin(res.into_body()),
            buf: String::new(),
        }
    }

    /// The next event's data, or `None` when the stream has ended.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        self.next_with_id().await.map(|(_, v)| v)
    }

    /// The next event's `id:` (if it has one) and data, or `None` when the
    /// stream has ended.
    pub(crate) async fn next_with_id(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                let id = event
                    .lines()
                    .find_map(|l| l.strip_prefix("id: "))
                    .map(str::to_owned);
                match data(&event) {
                    Some(v) => return Some((id, v)),
                    None => continue,
                }
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an SSE event within 10 s")?;
            if let Ok(data) = frame.unwrap().into_data() {
                self.buf.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The remaining events, up to the end of the stream.
    pub(crate) async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next().await {
            out.push(v);
        }
        out
    }
}
