//! Run with `cargo run --release --example team`: two agents behind one A2A
//! endpoint and one per-context delivery queue, on `http://127.0.0.1:8080`
//! (`A2A_ADDR` overrides the address; `127.0.0.1:0` picks a free port and
//! prints it). JSON-RPC is served at `/`, HTTP+JSON under `/rest`.
//!
//! - `echo` (the default) is the echo example's agent: it streams its input
//!   back word by word, and a text starting with `sleep N` first stays
//!   WORKING for N seconds.
//! - `upper` replies with the text upper-cased.
//!
//! Name the agent with message metadata `queue.target`; jump the queue with
//! `queue.priority: "urgent"`. An echo reply containing `@upper` hands off
//! to `upper` (a new task of the same context that refers to echo's).
//! The queue of a context is read with `GetContextQueue` and reordered with
//! `ReorderContextQueue` (JSON-RPC), or `GET /rest/contexts/ID/queue` and
//! `POST /rest/contexts/ID/queue:reorder`.
//!
//! Tasks and queues are kept in SQLite at `$A2A_DATA_DIR/team.db` (default
//! `./data/team.db`); a restart closes the runs that were going as FAILED,
//! keeps the queued inputs and drains every queue. With `A2A_POSTGRES_URL`
//! set (and the `postgres` feature) they are kept in PostgreSQL (schema
//! `$A2A_POSTGRES_SCHEMA`, default `a2a`) shared by every host pointing at
//! it, each with its own stable `A2A_HOST_ID`.
//!
//! ```text
//! curl -s localhost:8080/ -H 'a2a-version: 1.0' -H 'content-type: application/json' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello @upper"}]}}}'
//! ```
//!
//! `GET /metrics` answers Prometheus text (`a2a_requests_total`,
//! `a2a_request_duration_seconds`, …); `A2A_OTEL=stdout` exports every span
//! through the OpenTelemetry stdout exporter (build with `--features otel`
//! so that a request's `traceparent` parents its spans).
//! `A2A_RETENTION_SECS=N` deletes terminal tasks older than N seconds in the
//! background, and compacts the queue of a context with nothing queued and
//! nothing running once it has not changed for N seconds (to one record
//! keeping its last replier).

#[path = "common/mod.rs"]
mod common;
#[path = "common/echo_agent.rs"]
mod echo_agent;
#[path = "common/telemetry.rs"]
mod telemetry;

use std::sync::Arc;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::log::{SqliteTaskLog, TaskBackend};
use a2a_tower::queue::Team;
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use futures_core::Stream;

/// Replies with its input upper-cased.
struct Upper;

impl Agent for Upper {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text.to_uppercase())])
    }
}

/// The team's card at `base_url` (no trailing slash).
fn card(base_url: &str) -> AgentCard {
    AgentCard::new(
        "Team",
        "Two agents behind one endpoint and a per-context delivery queue: echo (default) and upper",
        "0.1.0",
    )
    .with_interface(AgentInterface::jsonrpc(format!("{base_url}/")))
    .with_interface(AgentInterface::http_json(format!("{base_url}/rest")))
    .with_skill(AgentSkill::new(
        "echo",
        "Echo",
        "Streams the input back word by word; `sleep N` first waits N seconds; @upper hands off",
    ))
    .with_skill(AgentSkill::new(
        "upper",
        "Upper",
        "Replies with the input upper-cased",
    ))
    .with_streaming(true)
}

/// The task log: PostgreSQL if `A2A_POSTGRES_URL` is set, else SQLite under
/// `A2A_DATA_DIR`.
async fn log() -> Result<Arc<dyn TaskBackend>, BoxError> {
    match std::env::var("A2A_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => postgres(url).await,
        _ => {
            let dir = std::env::var_os("A2A_DATA_DIR").unwrap_or_else(|| "data".into());
            std::fs::create_dir_all(&dir)?;
            let path = std::path::Path::new(&dir).join("team.db");
            let log = SqliteTaskLog::open(path)?;
            telemetry::retention(&log);
            Ok(Arc::new(log))
        }
    }
}

#[cfg(feature = "postgres")]
async fn postgres(url: String) -> Result<Arc<dyn TaskBackend>, BoxError> {
    let mut log = a2a_tower::log::PostgresTaskLog::builder(url);
    if let Ok(schema) = std::env::var("A2A_POSTGRES_SCHEMA") {
        log = log.schema(schema);
    }
    let log = log.connect().await?;
    telemetry::retention(&log);
    Ok(Arc::new(log))
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_: String) -> Result<Arc<dyn TaskBackend>, BoxError> {
    Err("A2A_POSTGRES_URL needs the `postgres` feature: cargo run --features postgres --example team".into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let _telemetry = telemetry::init();
    let (listener, addr) = common::bind().await?;
    let card = card(&common::base_url(addr));
    let team = Team::builder()
        .agent("echo", echo_agent::Echo)
        .agent("upper", Upper)
        .default_agent("echo")
        .build()?;
    let mut server = A2aServer::builder(card).task_log(log().await?);
    if let Ok(id) = std::env::var("A2A_HOST_ID")
        && !id.is_empty()
    {
        server = server.host_id(id);
    }
    // Recovery runs before serving: interrupted runs closed, queues drained.
    let app = server.team(team).await?;
    common::serve(listener, telemetry::WithMetrics(app)).await?;
    Ok(())
}
