//! The events of a task stream as the subscriber tools see them, and the
//! check that one subscriber received a whole echo task: [`decode`] turns
//! one SSE `data:` payload (a JSON-RPC response whose `result` is a
//! StreamResponse) into an [`Event`]; [`Check`] follows a stream's events
//! and says whether the echo agent's answer arrived complete and in order,
//! ending with COMPLETED.
//!
//! The echo agent answers a text with one artifact chunk per word (each word
//! with the whitespace after it), so the chunks concatenate to the text: a
//! stream is complete when the text of its snapshot's artifacts followed by
//! that of its chunks is the whole text, every chunk continuing where the
//! previous one ended.
//!
//! ```
//! use a2a_tower_load::events::{Check, decode, echo_text};
//! let text = echo_text(0.5, 2);
//! assert_eq!(text, "sleep 0.5 w1 w2");
//! let mut check = Check::new(text.into());
//! for data in [
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}"#,
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"sleep "}]}}}}"#,
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"0.5 w1 "}]},"append":true}}}"#,
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"w2"}]},"append":true,"lastChunk":true}}}"#,
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#,
//! ] {
//!     check.apply(&decode(data));
//! }
//! assert!(check.complete());
//! assert_eq!(check.chunks(), 3);
//! assert!(!check.late());
//! ```

use std::sync::Arc;

use a2a_tower::types::{StreamResponse, TaskState};
use serde::Deserialize;

/// One event of a task stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The task snapshot: its state and the text of its artifacts so far.
    Snapshot {
        /// The task's state.
        state: TaskState,
        /// Every text part of every artifact, concatenated.
        text: String,
    },
    /// An artifact chunk: its text parts, concatenated.
    Chunk(String),
    /// A status update.
    Status(TaskState),
    /// A direct message (the echo agent never sends one).
    Message,
    /// A JSON-RPC error response: its code and message.
    Error(String),
    /// A payload that is not a JSON-RPC response of a StreamResponse.
    Invalid(String),
}

/// The JSON-RPC response envelope of one event.
#[derive(Deserialize)]
struct Envelope {
    result: Option<StreamResponse>,
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct RpcError {
    code: i64,
    #[serde(default)]
    message: String,
}

/// Decodes one `data:` payload.
pub fn decode(data: &str) -> Event {
    let env: Envelope = match serde_json::from_str(data) {
        Ok(env) => env,
        Err(e) => return Event::Invalid(e.to_string()),
    };
    match (env.result, env.error) {
        (_, Some(e)) => Event::Error(format!("{} {}", e.code, e.message)),
        (Some(StreamResponse::Task(task)), None) => Event::Snapshot {
            state: task.status.state,
            text: task
                .artifacts
                .iter()
                .flat_map(|a| &a.parts)
                .filter_map(|p| p.as_text())
                .collect(),
        },
        (Some(StreamResponse::ArtifactUpdate(u)), None) => Event::Chunk(
            u.artifact
                .parts
                .iter()
                .filter_map(|p| p.as_text())
                .collect(),
        ),
        (Some(StreamResponse::StatusUpdate(u)), None) => Event::Status(u.status.state),
        (Some(StreamResponse::Message(_)), None) => Event::Message,
        (None, None) => Event::Invalid("neither result nor error".into()),
    }
}

/// The text the tools send: `sleep S w1 w2 … wN`.
pub fn echo_text(sleep_secs: f64, words: usize) -> String {
    let mut text = format!("sleep {sleep_secs}");
    for i in 1..=words {
        text.push_str(&format!(" w{i}"));
    }
    text
}

/// How many chunks the echo agent answers `text` with (one per word).
pub fn chunk_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Follows one subscriber's stream of an echo task; see the module docs.
#[derive(Debug, Clone)]
pub struct Check {
    expected: Arc<str>,
    /// Bytes of `expected` received so far, in order.
    got: usize,
    chunks: usize,
    events: usize,
    state: Option<TaskState>,
    late: bool,
    failure: Option<String>,
}

impl Check {
    /// A check for a stream answering `expected`.
    pub fn new(expected: Arc<str>) -> Self {
        Self {
            expected,
            got: 0,
            chunks: 0,
            events: 0,
            state: None,
            late: false,
            failure: None,
        }
    }

    /// Applies the stream's next event; the first wrong one is kept as the
    /// failure and later events are ignored.
    pub fn apply(&mut self, event: &Event) {
        if self.failure.is_some() {
            return;
        }
        self.events += 1;
        if let Err(why) = self.step(event) {
            self.failure = Some(why);
        }
    }

    fn step(&mut self, event: &Event) -> Result<(), String> {
        if self.events == 1 && !matches!(event, Event::Snapshot { .. }) {
            return Err("the first event is not the task".into());
        }
        if self.state.is_some_and(TaskState::is_terminal) {
            return Err("an event after the terminal status".into());
        }
        match event {
            Event::Snapshot { .. } if self.events > 1 => Err("a second task snapshot".into()),
            Event::Snapshot { state, text } => {
                self.late = !text.is_empty() || state.is_terminal();
                self.state = Some(*state);
                self.text(text)
            }
            Event::Chunk(text) if text.is_empty() => Err("an empty chunk".into()),
            Event::Chunk(text) => {
                self.chunks += 1;
                self.text(text)
            }
            Event::Status(state) => {
                self.state = Some(*state);
                Ok(())
            }
            Event::Message => Err("a message event".into()),
            Event::Error(e) => Err(format!("error event: {e}")),
            Event::Invalid(e) => Err(format!("undecodable event: {e}")),
        }
    }

    /// Accepts `text` if the expected text continues with it.
    fn text(&mut self, text: &str) -> Result<(), String> {
        if self.expected[self.got..].starts_with(text) {
            self.got += text.len();
            Ok(())
        } else {
            Err(format!(
                "text out of order at byte {}: got {:?}",
                self.got,
                text.chars().take(40).collect::<String>()
            ))
        }
    }

    /// The whole text arrived in order, the last status is COMPLETED and
    /// nothing was wrong.
    pub fn complete(&self) -> bool {
        self.failure.is_none()
            && self.got == self.expected.len()
            && self.state == Some(TaskState::Completed)
    }

    /// The snapshot already held some of the answer, or the task had ended:
    /// the subscription came after the agent's first chunk.
    pub fn late(&self) -> bool {
        self.late
    }

    /// Artifact chunk events received (the snapshot's text not counted).
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// The expected text received so far, in order (the snapshot's
    /// artifacts and the chunks after it).
    pub fn received(&self) -> &str {
        &self.expected[..self.got]
    }

    /// Events received.
    pub fn events(&self) -> usize {
        self.events
    }

    /// The first wrong event, if any.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// What is missing from a stream that is not [`complete`](Self::complete)
    /// (`None` when complete).
    pub fn missing(&self) -> Option<String> {
        if self.complete() {
            return None;
        }
        if let Some(f) = &self.failure {
            return Some(f.clone());
        }
        Some(format!(
            "{} of {} bytes of text, last state {:?}",
            self.got,
            self.expected.len(),
            self.state
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(state: TaskState, text: &str) -> Event {
        Event::Snapshot {
            state,
            text: text.into(),
        }
    }

    fn chunk(t: &str) -> Event {
        Event::Chunk(t.into())
    }

    fn run(expected: &str, events: &[Event]) -> Check {
        let mut c = Check::new(expected.into());
        for e in events {
            c.apply(e);
        }
        c
    }

    #[test]
    fn echo_text_and_chunks() {
        assert_eq!(echo_text(5.0, 3), "sleep 5 w1 w2 w3");
        assert_eq!(echo_text(0.3, 0), "sleep 0.3");
        assert_eq!(chunk_count(&echo_text(0.3, 20)), 22);
    }

    #[test]
    fn decodes_each_kind() {
        let ev = |r: &str| decode(&format!(r#"{{"jsonrpc":"2.0","id":"x","result":{r}}}"#));
        assert_eq!(
            ev(
                r#"{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"a "},{"text":"b"}]}]}}"#
            ),
            snapshot(TaskState::Working, "a b")
        );
        assert_eq!(
            ev(
                r#"{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"w1 "}]},"append":true}}"#
            ),
            chunk("w1 ")
        );
        assert_eq!(
            ev(
                r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}"#
            ),
            Event::Status(TaskState::Completed)
        );
        assert_eq!(
            decode(
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#
            ),
            Event::Error("-32001 Task not found".into())
        );
        assert!(matches!(decode("{not json"), Event::Invalid(_)));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","id":1}"#),
            Event::Invalid(_)
        ));
    }

    #[test]
    fn a_whole_stream_is_complete() {
        let c = run(
            "sleep 1 w1 w2",
            &[
                snapshot(TaskState::Working, ""),
                Event::Status(TaskState::Working),
                chunk("sleep "),
                chunk("1 "),
                chunk("w1 "),
                chunk("w2"),
                Event::Status(TaskState::Completed),
            ],
        );
        assert!(c.complete(), "{:?}", c.missing());
        assert_eq!((c.chunks(), c.events(), c.late()), (4, 7, false));
        assert_eq!(c.missing(), None);
    }

    #[test]
    fn a_late_snapshot_counts_its_text() {
        let c = run(
            "sleep 1 w1",
            &[
                snapshot(TaskState::Working, "sleep 1 "),
                chunk("w1"),
                Event::Status(TaskState::Completed),
            ],
        );
        assert!(c.complete());
        assert!(c.late());
        assert_eq!(c.chunks(), 1);
        let done = run("w1", &[snapshot(TaskState::Completed, "w1")]);
        assert!(done.complete() && done.late());
    }

    #[test]
    fn a_missing_chunk_is_caught() {
        let c = run(
            "sleep 1 w1 w2",
            &[
                snapshot(TaskState::Working, ""),
                chunk("sleep "),
                chunk("1 "),
                chunk("w2"),
                Event::Status(TaskState::Completed),
            ],
        );
        assert!(!c.complete());
        assert!(
            c.failure().unwrap().contains("at byte 8"),
            "{:?}",
            c.failure()
        );
    }

    #[test]
    fn a_stream_cut_short_is_incomplete() {
        let c = run(
            "sleep 1 w1",
            &[snapshot(TaskState::Working, ""), chunk("sleep ")],
        );
        assert!(!c.complete());
        assert_eq!(c.failure(), None);
        assert!(c.missing().unwrap().starts_with("6 of 10 bytes"));
        let no_status = run("w1", &[snapshot(TaskState::Working, ""), chunk("w1")]);
        assert!(!no_status.complete());
        let failed = run(
            "w1",
            &[
                snapshot(TaskState::Working, ""),
                chunk("w1"),
                Event::Status(TaskState::Failed),
            ],
        );
        assert!(!failed.complete());
    }

    #[test]
    fn wrong_shapes_fail() {
        let first = run("w1", &[chunk("w1")]);
        assert_eq!(first.failure(), Some("the first event is not the task"));
        let twice = run(
            "w1",
            &[
                snapshot(TaskState::Working, ""),
                snapshot(TaskState::Working, ""),
            ],
        );
        assert_eq!(twice.failure(), Some("a second task snapshot"));
        let after = run(
            "w1",
            &[
                snapshot(TaskState::Working, ""),
                chunk("w1"),
                Event::Status(TaskState::Completed),
                chunk("w1"),
            ],
        );
        assert!(!after.complete());
        assert_eq!(after.failure(), Some("an event after the terminal status"));
        let error = run(
            "w1",
            &[
                snapshot(TaskState::Working, ""),
                Event::Error("-32603 x".into()),
            ],
        );
        assert_eq!(error.failure(), Some("error event: -32603 x"));
        let empty = run("w1", &[snapshot(TaskState::Working, ""), chunk("")]);
        assert_eq!(empty.failure(), Some("an empty chunk"));
    }
}
