//! The echo example's agent, shared with the team example: streams its
//! input back word by word; a text starting with `sleep N` first stays
//! WORKING for N seconds.

#![allow(dead_code)]

use std::time::Duration;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use futures_core::Stream;
use futures_util::StreamExt as _;

/// The longest `sleep N` honoured.
const MAX_SLEEP: Duration = Duration::from_secs(3600);

/// The echo agent.
pub(crate) struct Echo;

/// The delay a text asks for: `sleep N` at its start, N in seconds.
pub(crate) fn requested_sleep(text: &str) -> Option<Duration> {
    let mut words = text.split_whitespace();
    if words.next() != Some("sleep") {
        return None;
    }
    let secs: f64 = words.next()?.parse().ok()?;
    Duration::try_from_secs_f64(secs)
        .ok()
        .map(|d| d.min(MAX_SLEEP))
}

/// The chunks of a text: each word with the whitespace that follows it.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space {
            chunks.push(text[start..i].to_owned());
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        chunks.push(text[start..].to_owned());
    }
    chunks
}

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let sleep = requested_sleep(&input.text);
        let chunks = words(&input.text);
        // The engine has recorded WORKING before the stream is polled; when
        // the task is canceled it drops this stream, which ends the sleep.
        futures_util::stream::once(async move {
            if let Some(d) = sleep {
                tokio::time::sleep(d).await;
            }
            futures_util::stream::iter(chunks.into_iter().map(Ok))
        })
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_concatenate_to_the_input() {
        for text in [
            "one two  three",
            " lead",
            "trail ",
            "",
            "a\tb\nc",
            "héllo wörld",
        ] {
            assert_eq!(words(text).concat(), text);
        }
        assert_eq!(words("one two  three"), ["one ", "two  ", "three"]);
        assert_eq!(words(" lead"), [" ", "lead"]);
    }

    #[test]
    fn sleep_prefix() {
        assert_eq!(requested_sleep("sleep 2 x"), Some(Duration::from_secs(2)));
        assert_eq!(
            requested_sleep("sleep 0.5"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(requested_sleep("sleep -1"), None);
        assert_eq!(requested_sleep("sleep forever"), None);
        assert_eq!(requested_sleep("sleepy 2"), None);
        assert_eq!(requested_sleep("sleep 99999"), Some(MAX_SLEEP));
        assert_eq!(requested_sleep("hello"), None);
    }
}
