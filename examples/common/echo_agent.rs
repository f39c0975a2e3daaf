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

/// The chunks of a text: each word with the whitespace that follows it,
/// cut as they are taken (a long text is not copied into chunks up front).
pub(crate) fn words(text: String) -> impl Iterator<Item = String> {
    let mut start = 0;
    std::iter::from_fn(move || {
        let rest = &text[start..];
        if rest.is_empty() {
            return None;
        }
        // The chunk ends where a word follows whitespace.
        let mut in_space = false;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                let next_word = in_space && !c.is_whitespace();
                in_space = c.is_whitespace();
                next_word
            })
            .map_or(rest.len(), |(i, _)| i);
        start += end;
        Some(rest[..end].to_owned())
    })
}

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let sleep = requested_sleep(&input.text);
        let chunks = words(input.text);
        // The engine has recorded WORKING before the stream is polled; when
        // the task is canceled it drops this stream, which ends the sleep.
        futures_util::stream::once(async move {
            if let Some(d) = sleep {
                tokio::time::sleep(d).await;
            }
            futures_util::stream::iter(chunks.map(Ok))
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
            assert_eq!(words(text.into()).collect::<String>(), text);
        }
        let chunks = |text: &str| words(text.into()).collect::<Vec<_>>();
        assert_eq!(chunks("one two  three"), ["one ", "two  ", "three"]);
        assert_eq!(chunks(" lead"), [" ", "lead"]);
        assert_eq!(chunks("trail "), ["trail "]);
        assert_eq!(chunks(""), Vec::<String>::new());
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
