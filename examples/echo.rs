//! Run with `cargo run --release --example echo`: an A2A agent on
//! `http://127.0.0.1:8080` (the `A2A_ADDR` environment variable overrides the
//! address; `A2A_ADDR=127.0.0.1:0` picks a free port and prints it).
//!
//! Tasks are kept in SQLite at `$A2A_DATA_DIR/tasks.db` (default
//! `./data/tasks.db`, created if missing), so a restart keeps every task: on
//! start, tasks that were running when the process died are closed as FAILED
//! ("The server restarted while this task was running."), everything else is
//! served as it was. With `A2A_POSTGRES_URL` set (and the `postgres` feature),
//! tasks are kept in PostgreSQL instead (schema `$A2A_POSTGRES_SCHEMA`,
//! default `a2a`), shared by every host pointing at it; give each host its
//! own stable `A2A_HOST_ID` (default `local`). With `A2A_LOG=memory`,
//! tasks are kept in memory only (a bounded `MemoryTaskLog`, lost on exit).
//! `A2A_SUBSCRIBER_BUFFER` sets how many records a stream may fall behind
//! the task before it is cut off (default 1024; see
//! `TaskLayer::subscriber_buffer`).
//!
//! A text [`Agent`] that streams its input back word by word: each artifact
//! chunk is one word with the whitespace after it, so the chunks concatenate
//! to the input exactly. A text that starts with `sleep N` first stays WORKING
//! for N seconds (fractions allowed, at most an hour), so cancellation and
//! resubscription can be tried by hand; a cancel interrupts the sleep at once.
//!
//! The full edge stack serves JSON-RPC at `/` and HTTP+JSON under `/rest`:
//!
//! ```text
//! AgentCardLayer ─ A2aBodyLimitLayer ─ A2aVersionLayer ─ A2aExtensionsLayer
//!   └ JsonRpcLayer (at /), falling back to RestLayer (under /rest)
//!       └ TaskService (TaskLayer over a SqliteTaskLog) ─ AgentExecutor(Echo)
//! ```
//!
//! Try it:
//!
//! ```text
//! curl -s localhost:8080/.well-known/agent-card.json
//! curl -s localhost:8080/ -H 'a2a-version: 1.0' -H 'content-type: application/json' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello there"}]}}}'
//! curl -sN localhost:8080/rest/message:stream -H 'a2a-version: 1.0' -H 'content-type: application/json' -d \
//!   '{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"sleep 20 then answer"}]}}'
//! curl -s -X POST localhost:8080/rest/tasks/TASK_ID:cancel -H 'a2a-version: 1.0'
//! ```

#[path = "common/mod.rs"]
mod common;

use std::convert::Infallible;
use std::time::Duration;

use a2a_tower::engine::{Agent, AgentExecutor, AgentInput, TaskLayer};
use a2a_tower::log::{MemoryTaskLog, SqliteTaskLog};
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::{
    A2aBodyLimitLayer, A2aExtensionsLayer, A2aVersionLayer, AgentCardLayer, Body, BoxError,
    JsonRpcLayer, RestLayer,
};
use futures_core::Stream;
use futures_util::StreamExt as _;
use tower::{Layer, Service, ServiceBuilder};

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

/// The card of the echo agent served at `base_url` (no trailing slash).
pub(crate) fn card(base_url: &str) -> AgentCard {
    AgentCard::new(
        "Echo",
        "Streams its input back word by word; `sleep N` first stays WORKING for N seconds",
        "0.1.0",
    )
    .with_interface(AgentInterface::jsonrpc(format!("{base_url}/")))
    .with_interface(AgentInterface::http_json(format!("{base_url}/rest")))
    .with_skill(AgentSkill::new(
        "echo",
        "Echo",
        "Answers with the input text, one word per artifact chunk",
    ))
    .with_streaming(true)
}

/// The whole HTTP application: the edge layers, both bindings, the engine
/// `tasks` (its log and host id chosen by the caller) and the echo agent
/// (also used by `benches/load.rs`).
pub(crate) fn app_with(
    card: &AgentCard,
    tasks: TaskLayer,
) -> Result<
    impl Service<
        http::Request<hyper::body::Incoming>,
        Response = http::Response<Body>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static,
    BoxError,
> {
    let core = tasks.layer(AgentExecutor::service(Echo));
    let rest = RestLayer::new(card)?.layer(core.clone());
    Ok(ServiceBuilder::new()
        .layer(AgentCardLayer::new(card)?)
        .layer(A2aBodyLimitLayer::new(card)?)
        .layer(A2aVersionLayer::new(card)?)
        .layer(A2aExtensionsLayer::new(card)?)
        .layer(JsonRpcLayer::new(card)?.fallback(rest))
        .service(core))
}

/// The engine over the configured task log: in memory if `A2A_LOG` is
/// `memory`, PostgreSQL if `A2A_POSTGRES_URL` is set, else SQLite under
/// `A2A_DATA_DIR`.
async fn engine(card: &AgentCard) -> Result<TaskLayer, BoxError> {
    let memory = std::env::var("A2A_LOG").is_ok_and(|l| l == "memory");
    let tasks = match std::env::var("A2A_POSTGRES_URL") {
        _ if memory => TaskLayer::new(card.clone(), MemoryTaskLog::new())?,
        Ok(url) if !url.is_empty() => postgres_engine(card, url).await?,
        _ => {
            let dir = std::env::var_os("A2A_DATA_DIR").unwrap_or_else(|| "data".into());
            std::fs::create_dir_all(&dir)?;
            let path = std::path::Path::new(&dir).join("tasks.db");
            TaskLayer::new(card.clone(), SqliteTaskLog::open(path)?)?
        }
    };
    let tasks = match std::env::var("A2A_SUBSCRIBER_BUFFER") {
        Ok(n) if !n.is_empty() => tasks.subscriber_buffer(n.parse()?)?,
        _ => tasks,
    };
    Ok(match std::env::var("A2A_HOST_ID") {
        Ok(id) if !id.is_empty() => tasks.host_id(id)?,
        _ => tasks,
    })
}

#[cfg(feature = "postgres")]
async fn postgres_engine(card: &AgentCard, url: String) -> Result<TaskLayer, BoxError> {
    let mut log = a2a_tower::log::PostgresTaskLog::builder(url);
    if let Ok(schema) = std::env::var("A2A_POSTGRES_SCHEMA") {
        log = log.schema(schema);
    }
    Ok(TaskLayer::new(card.clone(), log.connect().await?)?)
}

#[cfg(not(feature = "postgres"))]
async fn postgres_engine(_: &AgentCard, _: String) -> Result<TaskLayer, BoxError> {
    Err("A2A_POSTGRES_URL needs the `postgres` feature: cargo run --features postgres --example echo".into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let (listener, addr) = common::bind().await?;
    let card = card(&common::base_url(addr));
    let tasks = engine(&card).await?;
    // Close what a previous run of this host left running, before serving.
    let recovered = tasks.recover().await?;
    if recovered.closed > 0 {
        eprintln!("closed {} tasks interrupted by a restart", recovered.closed);
    }
    common::serve(listener, app_with(&card, tasks)?).await?;
    Ok(())
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
