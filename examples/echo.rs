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
//! the task before it is cut off (default: no limit, a slow reader continues
//! from the log; see `TaskLayer::subscriber_buffer`).
//!
//! Push notifications are declared and delivered: a push config (created
//! with CreateTaskPushNotificationConfig or given with SendMessage) gets
//! every event of its task POSTed to its URL, through an outbox over the
//! task log, so a restart resumes what was not delivered yet. Webhooks on
//! non-public addresses (loopback, private networks, …) are refused unless
//! `A2A_PUSH_ALLOW` lists their networks, comma-separated (for example
//! `127.0.0.0/8,::1/128`).
//!
//! `GET /metrics` answers Prometheus text (`a2a_requests_total`,
//! `a2a_request_duration_seconds`, …); `A2A_OTEL=stdout` exports every span
//! through the OpenTelemetry stdout exporter (build with `--features otel` so
//! that a request's `traceparent` parents its spans).
//!
//! `A2A_RETENTION_SECS=N` deletes terminal tasks older than N seconds in
//! the background (`RetentionPolicy`).
//!
//! With `A2A_CARD_KEY` naming a private key file (PEM PKCS#8: EC P-256, RSA
//! or Ed25519; or a private JWK), the served card is signed with it
//! (a2a-spec.md §8.4), its `kid` the file name without its extension. With
//! `A2A_PUSH_SECRET_KEY` (32 bytes, base64), push configs' tokens and
//! credentials are stored sealed with it (`TaskStore::seal_push_secrets`).
//!
//! A text [`Agent`] that streams its input back word by word: each artifact
//! chunk is one word with the whitespace after it, so the chunks concatenate
//! to the input exactly. A text that starts with `sleep N` first stays WORKING
//! for N seconds (fractions allowed, at most an hour), so cancellation and
//! resubscription can be tried by hand; a cancel interrupts the sleep at once.
//!
//! With `A2A_V03=1`, A2A 0.3 is served beside 1.0 (`a2a_tower::v03`): a
//! request without `A2A-Version` is a 0.3 request, HTTP+JSON 0.3 lives
//! under `/rest/v1`, and the card carries the 0.3 fields too.
//!
//! The full edge stack serves JSON-RPC at `/` and HTTP+JSON under `/rest`:
//!
//! ```text
//! AgentCardLayer ─ BodyLimitLayer ─ VersionLayer ─ ExtensionsLayer
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
#[path = "common/echo_agent.rs"]
mod echo_agent;
#[path = "common/telemetry.rs"]
mod telemetry;

use std::convert::Infallible;

use a2a_tower::card::StackCapabilities;
use a2a_tower::engine::{AgentExecutor, TaskLayer};
use a2a_tower::log::{MemoryTaskLog, SqliteTaskLog, TaskStore};
use a2a_tower::push::outbox::Outbox;
use a2a_tower::push::{PushSender, WebhookGuard};
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::{
    AgentCardLayer, Body, BodyLimitLayer, BoxError, ExtensionsLayer, JsonRpcLayer, RestLayer,
    VersionLayer,
};
use tower::{Layer, Service, ServiceBuilder};

pub(crate) use echo_agent::Echo;

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
    .with_push_notifications(true)
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
    let mut card_layer =
        AgentCardLayer::with_capabilities(card, StackCapabilities::new().push_notifications(true))?;
    if let Some(key) = card_key()? {
        card_layer = card_layer.signed(&key)?;
    }
    Ok(ServiceBuilder::new()
        .option_layer(common::v03_layer(card)?)
        .layer(card_layer)
        .layer(BodyLimitLayer::new(card)?)
        .layer(VersionLayer::new(card)?)
        .layer(ExtensionsLayer::new(card)?)
        .layer(JsonRpcLayer::new(card)?.fallback(rest))
        .service(core))
}

/// The card's signing key from the file `A2A_CARD_KEY` names, if set; its
/// `kid` is the file name without its extension.
fn card_key() -> Result<Option<a2a_tower::signing::SigningKey>, BoxError> {
    let Some(path) = std::env::var_os("A2A_CARD_KEY").filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let path = std::path::PathBuf::from(path);
    let kid = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("card")
        .to_owned();
    let text = std::fs::read_to_string(&path)?;
    Ok(Some(a2a_tower::signing::SigningKey::from_text(&text, kid)?))
}

/// The configured task log: in memory if `A2A_LOG` is `memory`, PostgreSQL
/// if `A2A_POSTGRES_URL` is set, else SQLite under `A2A_DATA_DIR`.
async fn log() -> Result<TaskStore, BoxError> {
    let memory = std::env::var("A2A_LOG").is_ok_and(|l| l == "memory");
    let store = match std::env::var("A2A_POSTGRES_URL") {
        _ if memory => {
            let log = MemoryTaskLog::new();
            telemetry::retention(&log);
            TaskStore::from(log)
        }
        Ok(url) if !url.is_empty() => postgres_log(url).await?,
        _ => {
            let dir = std::env::var_os("A2A_DATA_DIR").unwrap_or_else(|| "data".into());
            std::fs::create_dir_all(&dir)?;
            let path = std::path::Path::new(&dir).join("tasks.db");
            let log = SqliteTaskLog::open(path)?;
            telemetry::retention(&log);
            TaskStore::from(log)
        }
    };
    Ok(match std::env::var("A2A_PUSH_SECRET_KEY") {
        Ok(key) if !key.is_empty() => {
            store.seal_push_secrets(a2a_tower::log::PushSecretKey::from_base64(&key)?)
        }
        _ => store,
    })
}

/// The engine over the configured log, through the push outbox (its sweep
/// runs while the engine lives), with the configured host id.
async fn engine(card: &AgentCard) -> Result<TaskLayer, BoxError> {
    let host = std::env::var("A2A_HOST_ID").unwrap_or_default();
    let host = if host.is_empty() {
        "local".into()
    } else {
        host
    };
    let mut guard = WebhookGuard::new();
    if let Ok(nets) = std::env::var("A2A_PUSH_ALLOW") {
        guard = guard.allow_networks(nets.split(',').filter(|n| !n.is_empty()))?;
    }
    let sender = PushSender::builder().guard(guard).build()?;
    let outbox = Outbox::builder(log().await?, sender)
        .host_id(host.clone())
        .build()?;
    outbox.start_while_used();
    let tasks = TaskLayer::new(card.clone(), outbox.store())?;
    let tasks = match std::env::var("A2A_SUBSCRIBER_BUFFER") {
        Ok(n) if !n.is_empty() => tasks.subscriber_buffer(n.parse()?)?,
        _ => tasks,
    };
    Ok(tasks.host_id(host)?)
}

#[cfg(feature = "postgres")]
async fn postgres_log(url: String) -> Result<TaskStore, BoxError> {
    let mut log = a2a_tower::log::PostgresTaskLog::builder(url);
    if let Ok(schema) = std::env::var("A2A_POSTGRES_SCHEMA") {
        log = log.schema(schema);
    }
    let log = log.connect().await?;
    telemetry::retention(&log);
    Ok(TaskStore::from(log))
}

#[cfg(not(feature = "postgres"))]
async fn postgres_log(_: String) -> Result<TaskStore, BoxError> {
    Err("A2A_POSTGRES_URL needs the `postgres` feature: cargo run --features postgres --example echo".into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let _telemetry = telemetry::init();
    let (listener, addr) = common::bind().await?;
    let card = card(&common::base_url(addr));
    let tasks = engine(&card).await?;
    // Close what a previous run of this host left running, before serving.
    let recovered = tasks.recover().await?;
    if recovered.closed > 0 {
        eprintln!("closed {} tasks interrupted by a restart", recovered.closed);
    }
    common::serve(listener, telemetry::WithMetrics(app_with(&card, tasks)?)).await?;
    Ok(())
}
