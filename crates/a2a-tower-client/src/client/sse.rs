//! Reading `text/event-stream` bodies: [`SseParser`] turns bytes into
//! [`SseEvent`]s with a bound on each event's size, and [`sse_events`] runs
//! it over an HTTP response body.
//!
//! Lines may end in LF, CRLF or CR (also when the CR and LF arrive in
//! different chunks); comments (`: keep-alive`), `id:` and `retry:` lines are
//! skipped; several `data:` lines are joined with `\n`. An event larger than
//! the limit (its field lines counted as received, line endings excluded),
//! bytes that are not UTF-8, and a body that ends in the middle of an event
//! are errors, so a malformed stream ends with an error item, never a hang
//! or a silent truncation.
//!
//! ```
//! use a2a_tower::client::sse::SseParser;
//! let mut p = SseParser::new(1024);
//! let mut events = Vec::new();
//! p.push(b": keep-alive\n\nevent: error\ndata: {\"a\":\ndata: 1}\r\n\r\n", &mut events).unwrap();
//! assert_eq!(events.len(), 1);
//! assert_eq!(events[0].event.as_deref(), Some("error"));
//! assert_eq!(events[0].data, "{\"a\":\n1}");
//! p.finish().unwrap();
//! ```

use std::fmt;

use bytes::Bytes;
use futures_core::Stream;
use http_body_util::BodyExt;

use crate::BoxError;

/// The default bound on one event (4 MiB).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The event's `id:` field, if it had one (the agent's resume cursor,
    /// sent back as `Last-Event-ID`); an id holding NUL is ignored, as the
    /// SSE specification says.
    pub id: Option<String>,
}

/// Why a stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// An event (or one line of it) is larger than the limit.
    Oversized,
    /// A line is not UTF-8.
    NotUtf8,
    /// The body ended in the middle of an event.
    Truncated,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Oversized => "an event of the stream exceeds the size limit",
            Self::NotUtf8 => "the stream is not UTF-8",
            Self::Truncated => "the stream ended in the middle of an event",
        })
    }
}

impl std::error::Error for SseError {}

/// An incremental `text/event-stream` parser; see the module docs.
#[derive(Debug)]
pub struct SseParser {
    max: usize,
    /// The current, unfinished line.
    line: Vec<u8>,
    /// A CR ended the last line: a following LF belongs to it.
    after_cr: bool,
    /// Bytes of the current event's lines so far.
    size: usize,
    /// The current event has at least one field line.
    started: bool,
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
}

impl SseParser {
    /// A parser that refuses events larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max: max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            size: 0,
            started: false,
            event: None,
            data: None,
            id: None,
        }
    }

    /// Feeds a chunk; the events it completes are appended to `out`, also
    /// those completed before an error in the same chunk. After an error the
    /// parser must not be fed again.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        for &b in chunk {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    if let Some(ev) = self.end_line()? {
                        out.push(ev);
                    }
                }
                _ => {
                    self.line.push(b);
                    if self.size + self.line.len() > self.max {
                        return Err(SseError::Oversized);
                    }
                }
            }
        }
        Ok(())
    }

    /// The body ended: an error if an event was left unfinished.
    pub fn finish(&self) -> Result<(), SseError> {
        if self.started || !self.line.is_empty() {
            return Err(SseError::Truncated);
        }
        Ok(())
    }

    fn end_line(&mut self) -> Result<Option<SseEvent>, SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.started = false;
            self.size = 0;
            let (event, id) = (self.event.take(), self.id.take());
            return Ok(self.data.take().map(|data| SseEvent { event, data, id }));
        }
        self.size += line.len();
        let line = String::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.starts_with(':') {
            // A comment; it neither starts nor extends an event.
            self.size -= line.len();
            return Ok(None);
        }
        self.started = true;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry` and unknown fields are ignored.
            _ => {}
        }
        Ok(None)
    }
}

/// The events of an HTTP response body; a body error or an [`SseError`]
/// is the last item.
pub fn sse_events<B>(
    body: B,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<SseEvent, BoxError>> + Send + 'static
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    struct State<B> {
        body: B,
        parser: SseParser,
        ready: std::collections::VecDeque<SseEvent>,
        /// The error to yield once `ready` is drained.
        failed: Option<BoxError>,
        done: bool,
    }
    let state = State {
        body,
        parser: SseParser::new(max_event_bytes),
        ready: Default::default(),
        failed: None,
        done: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.ready.pop_front() {
                return Some((Ok(ev), st));
            }
            if let Some(e) = st.failed.take() {
                return Some((Err(e), st));
            }
            if st.done {
                return None;
            }
            let fail = |st: State<B>, e: BoxError| Some((Err(e), st));
            match st.body.frame().await {
                None => {
                    st.done = true;
                    if let Err(e) = st.parser.finish() {
                        return fail(st, e.into());
                    }
                }
                Some(Err(e)) => {
                    st.done = true;
                    return fail(st, e.into());
                }
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    let mut evs = Vec::new();
                    let pushed = st.parser.push(&data, &mut evs);
                    st.ready.extend(evs);
                    if let Err(e) = pushed {
                        st.done = true;
                        st.failed = Some(e.into());
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(max: usize, chunks: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out)?;
        }
        p.finish()?;
        Ok(out)
    }

    fn data(evs: &[SseEvent]) -> Vec<&str> {
        evs.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn frames_split_anywhere() {
        let whole = b"data: {\"a\":1}\n\nevent: error\ndata: x\n\n";
        for cut in 0..whole.len() {
            let (a, b) = whole.split_at(cut);
            let evs = all(100, &[a, b]).unwrap();
            assert_eq!(data(&evs), ["{\"a\":1}", "x"], "cut at {cut}");
            assert_eq!(evs[1].event.as_deref(), Some("error"));
        }
        // Byte by byte.
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(all(100, &bytes).unwrap().len(), 2);
    }

    #[test]
    fn crlf_and_cr_line_endings() {
        let evs = all(100, &[b"data: a\r\n\r\ndata: b\r\rdata: c\r", b"\n\r\n"]).unwrap();
        assert_eq!(data(&evs), ["a", "b", "c"]);
    }

    #[test]
    fn comments_and_keep_alives_are_skipped_ids_kept() {
        let evs = all(
            100,
            &[b": keep-alive\n\n: hi\nid: 7\nretry: 10\ndata:x\n\n: keep-alive\n\n"],
        )
        .unwrap();
        assert_eq!(data(&evs), ["x"]);
        assert_eq!(evs[0].event, None);
        assert_eq!(evs[0].id.as_deref(), Some("7"));
        // An event with no data is not dispatched.
        assert!(all(100, &[b"event: ping\n\n"]).unwrap().is_empty());
    }

    #[test]
    fn multi_line_data() {
        let evs = all(100, &[b"data: {\ndata:\ndata:  \"k\": 1}\n\n"]).unwrap();
        assert_eq!(data(&evs), ["{\n\n \"k\": 1}"]);
    }

    #[test]
    fn oversized_event() {
        // One long line, never terminated: refused as soon as it passes the bound.
        let mut out = Vec::new();
        let mut p = SseParser::new(16);
        assert_eq!(p.push(&[b'x'; 64], &mut out), Err(SseError::Oversized));
        // Many short lines adding up past the bound; the event completed
        // before it in the same chunk is kept.
        let mut p = SseParser::new(16);
        assert_eq!(
            p.push(b"data: 1\n\ndata: 12345\ndata: 12345\ndata: 1\n", &mut out),
            Err(SseError::Oversized)
        );
        assert_eq!(data(&out), ["1"]);
        // The bound is per event: many small events pass.
        let many = b"data: 12345\n\n".repeat(100);
        assert_eq!(all(16, &[&many]).unwrap().len(), 100);
        // Comments do not count.
        assert_eq!(
            all(16, &[b": 123456789\n: 123456789\ndata: 1\n\n"])
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn truncated_and_malformed() {
        assert_eq!(all(100, &[b"data: {\"a\""]), Err(SseError::Truncated));
        assert_eq!(all(100, &[b"data: x\n"]), Err(SseError::Truncated));
        assert_eq!(all(100, &[b"data: \xff\n\n"]), Err(SseError::NotUtf8));
        assert!(all(100, &[b""]).unwrap().is_empty());
    }

    #[tokio::test]
    async fn over_a_body() {
        use futures_util::StreamExt;
        let body = http_body_util::Full::new(Bytes::from_static(b"data: 1\n\ndata: 2"));
        let items: Vec<_> = sse_events(body, 100).collect().await;
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap().data, "1");
        assert!(items[1].is_err());
        // Events before an oversized one in the same frame come first.
        let body = http_body_util::Full::new(Bytes::from_static(b"data: 1\n\ndata: 22222222"));
        let items: Vec<_> = sse_events(body, 8).collect().await;
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap().data, "1");
        assert!(items[1].is_err());
    }
}
