//! Run with `cargo run --release --example conformance`: an agent for the
//! public A2A conformance suite (a2a-tck, 1.0) on `http://127.0.0.1:8080`
//! (`A2A_ADDR` overrides the address), JSON-RPC at `/`, HTTP+JSON under
//! `/rest`, streaming declared, and the extended agent card: a caller with
//! `Authorization: Bearer <any token>` (the card's `bearer` scheme; this
//! example accepts every token) gets it, others get Unauthenticated. Push
//! notifications are declared and delivered (through an outbox over the task
//! log) to webhooks on loopback, allowed explicitly since a conformance
//! suite's receiver listens there; `A2A_PUSH_ALLOW` adds networks
//! (comma-separated CIDRs).
//!
//! The suite selects a behaviour by the prefix of the message's `messageId`
//! (its reference agent is `sut/a2a-python/sut_agent.py`). With the `grpc`
//! feature (`--features grpc`) the same listener also serves gRPC (HTTP/2,
//! told apart by content type) and the card advertises a `GRPC` interface at
//! the listener's `host:port`.
//!
//! | prefix | behaviour |
//! |---|---|
//! | `tck-complete-task` | COMPLETED, status message "Hello from TCK" |
//! | `tck-artifact-text` | artifact text "Generated text content", COMPLETED |
//! | `tck-artifact-file` | artifact of raw bytes, `output.txt`, `text/plain` |
//! | `tck-artifact-file-url` | artifact url `https://example.com/output.txt` |
//! | `tck-artifact-data` | artifact data `{"key":"value","count":42}` |
//! | `tck-message-response` | a direct Message "Direct message response" |
//! | `tck-input-required` | INPUT_REQUIRED (also as a follow-up to a task in INPUT_REQUIRED: asks again) |
//! | `tck-reject-task` | REJECTED |
//! | `tck-stream-001` / `-003` | WORKING, artifact "Stream hello from TCK" / "Stream task lifecycle", COMPLETED |
//! | `tck-stream-002` | COMPLETED |
//! | `tck-stream-ordering-001` | WORKING, artifact "Ordered output", COMPLETED |
//! | `tck-stream-artifact-text` | WORKING, artifact "Streamed text content", COMPLETED |
//! | `tck-stream-artifact-file` | WORKING, a file artifact, COMPLETED |
//! | `tck-stream-artifact-chunked` | WORKING, "chunk-1 " then "chunk-2" appended with lastChunk, COMPLETED |
//! | `test-resubscribe-message-id` | WORKING for about 4 s, then COMPLETED |
//! | anything else | COMPLETED with an echo of the text as status message; as a follow-up to a task in INPUT_REQUIRED, COMPLETED with "Input received, task completed" |
//!
//! A follow-up message to a task in INPUT_REQUIRED is routed by its prefix
//! like a first message (multi-turn scenarios): `tck-input-required` leaves
//! the task INPUT_REQUIRED again, `tck-complete-task` completes it.
//!
//! Longer prefixes are matched first (`tck-artifact-file-url` before
//! `tck-artifact-file`).

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use a2a_tower::card::{ExtendedCard, ExtendedCardLayer, StackCapabilities};
use a2a_tower::engine::{Execution, Executor, ExecutorService, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::push::outbox::Outbox;
use a2a_tower::push::{PushSender, WebhookGuard};
use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, Artifact, HttpAuthSecurityScheme, Message, Part,
    SecurityScheme, TaskState,
};
use a2a_tower::{
    AgentCardLayer, BodyLimitLayer, BoxError, ExtensionsLayer, JsonRpcLayer, RestLayer,
    VersionLayer,
};
use tower::{Layer, ServiceBuilder};

/// How long `test-resubscribe-message-id` stays WORKING.
const RESUBSCRIBE_WORK: Duration = Duration::from_secs(4);

/// What the suite asks for, by `messageId` prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    CompleteTask,
    ArtifactText,
    ArtifactFile,
    ArtifactFileUrl,
    ArtifactData,
    MessageResponse,
    InputRequired,
    RejectTask,
    Stream001,
    Stream002,
    Stream003,
    StreamOrdering,
    StreamArtifactText,
    StreamArtifactFile,
    StreamArtifactChunked,
    Resubscribe,
    Echo,
}

/// The prefixes, longest first where one extends another.
const PREFIXES: &[(&str, Scenario)] = &[
    (
        "tck-stream-artifact-chunked",
        Scenario::StreamArtifactChunked,
    ),
    ("tck-stream-artifact-text", Scenario::StreamArtifactText),
    ("tck-stream-artifact-file", Scenario::StreamArtifactFile),
    ("tck-stream-ordering-001", Scenario::StreamOrdering),
    ("tck-stream-001", Scenario::Stream001),
    ("tck-stream-002", Scenario::Stream002),
    ("tck-stream-003", Scenario::Stream003),
    ("test-resubscribe-message-id", Scenario::Resubscribe),
    ("tck-artifact-file-url", Scenario::ArtifactFileUrl),
    ("tck-artifact-file", Scenario::ArtifactFile),
    ("tck-artifact-text", Scenario::ArtifactText),
    ("tck-artifact-data", Scenario::ArtifactData),
    ("tck-message-response", Scenario::MessageResponse),
    ("tck-input-required", Scenario::InputRequired),
    ("tck-complete-task", Scenario::CompleteTask),
    ("tck-reject-task", Scenario::RejectTask),
];

fn scenario(message_id: &str) -> Scenario {
    PREFIXES
        .iter()
        .find(|(prefix, _)| message_id.starts_with(prefix))
        .map_or(Scenario::Echo, |&(_, s)| s)
}

fn file_part() -> Part {
    Part::raw(&b"tck"[..])
        .with_media_type("text/plain")
        .with_filename("output.txt")
}

fn artifact(id: &str, part: Part) -> Artifact {
    Artifact {
        artifact_id: id.to_owned(),
        parts: vec![part],
        ..Artifact::default()
    }
}

/// The conformance executor.
struct Conformance;

impl Conformance {
    /// One artifact (one chunk, the last), then COMPLETED; WORKING first when
    /// `working`.
    async fn produce(ex: &Execution, working: bool, part: Part) -> Result<(), BoxError> {
        if working {
            ex.emit.working().await?;
        }
        ex.emit
            .artifact(artifact("artifact-1", part), false, true)
            .await?;
        ex.emit.complete().await?;
        Ok(())
    }
}

impl Executor for Conformance {
    async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
        let emit = &ex.emit;
        let scenario = scenario(&ex.message.message_id);
        // A follow-up to an interrupted task follows its prefix like a first
        // message (`tck-input-required` asks again, `tck-complete-task`
        // completes); one without a prefix completes it.
        if ex.task.status.state == TaskState::InputRequired && scenario == Scenario::Echo {
            let done = Message::agent("", "Input received, task completed");
            emit.status(TaskState::Completed, Some(done)).await?;
            return Ok(());
        }
        match scenario {
            Scenario::CompleteTask => {
                let hello = Message::agent("", "Hello from TCK");
                emit.status(TaskState::Completed, Some(hello)).await?;
            }
            Scenario::ArtifactText => {
                Self::produce(&ex, false, Part::text("Generated text content")).await?;
            }
            Scenario::ArtifactFile => Self::produce(&ex, false, file_part()).await?,
            Scenario::ArtifactFileUrl => {
                let url = Part::url("https://example.com/output.txt")
                    .with_media_type("text/plain")
                    .with_filename("output.txt");
                Self::produce(&ex, false, url).await?;
            }
            Scenario::ArtifactData => {
                let data = serde_json::json!({"key": "value", "count": 42});
                Self::produce(&ex, false, Part::data(data)).await?;
            }
            Scenario::MessageResponse => {
                emit.reply(Message::agent("", "Direct message response"))
                    .await?;
            }
            Scenario::InputRequired => {
                emit.input_required("Please provide more input").await?;
            }
            Scenario::RejectTask => {
                let why = Message::agent("", "Task rejected");
                emit.status(TaskState::Rejected, Some(why)).await?;
            }
            Scenario::Stream001 => {
                Self::produce(&ex, true, Part::text("Stream hello from TCK")).await?;
            }
            Scenario::Stream002 => emit.complete().await?,
            Scenario::Stream003 => {
                Self::produce(&ex, true, Part::text("Stream task lifecycle")).await?;
            }
            Scenario::StreamOrdering => {
                Self::produce(&ex, true, Part::text("Ordered output")).await?;
            }
            Scenario::StreamArtifactText => {
                Self::produce(&ex, true, Part::text("Streamed text content")).await?;
            }
            Scenario::StreamArtifactFile => Self::produce(&ex, true, file_part()).await?,
            Scenario::StreamArtifactChunked => {
                emit.working().await?;
                let first = artifact("chunked", Part::text("chunk-1 "));
                emit.artifact(first, false, false).await?;
                let second = artifact("chunked", Part::text("chunk-2"));
                emit.artifact(second, true, true).await?;
                emit.complete().await?;
            }
            Scenario::Resubscribe => {
                emit.working().await?;
                tokio::select! {
                    () = tokio::time::sleep(RESUBSCRIBE_WORK) => emit.complete().await?,
                    // Canceled: the engine has recorded CANCELED already.
                    () = emit.cancelled() => {}
                }
            }
            Scenario::Echo => {
                let echo = Message::agent("", ex.message.text());
                emit.status(TaskState::Completed, Some(echo)).await?;
            }
        }
        Ok(())
    }
}

/// The card of the conformance agent served at `base_url`.
fn card(base_url: &str) -> AgentCard {
    let mut card = AgentCard::new(
        "A2A TCK agent",
        "Answers the a2a-tck conformance scenarios by messageId prefix",
        "0.1.0",
    )
    .with_interface(AgentInterface::jsonrpc(format!("{base_url}/")))
    .with_interface(AgentInterface::http_json(format!("{base_url}/rest")))
    .with_skill(AgentSkill::new(
        "tck",
        "TCK conformance",
        "Handles the conformance suite's test messages",
    ))
    .with_streaming(true)
    .with_push_notifications(true);
    card.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    card.capabilities.extended_agent_card = Some(true);
    // gRPC on the same listener, told apart by its content type; the
    // interface's url is `host:port` (a2a-spec.md §8).
    #[cfg(feature = "grpc")]
    card.supported_interfaces
        .push(AgentInterface::grpc(base_url.trim_start_matches("http://")));
    let bearer = HttpAuthSecurityScheme {
        scheme: "Bearer".into(),
        ..Default::default()
    };
    card.security_schemes
        .insert("bearer".into(), SecurityScheme::HttpAuth(bearer));
    card
}

/// Whoever presented a bearer token (every token is accepted here).
#[derive(Clone)]
struct Bearer;

/// Marks a request carrying `Authorization: Bearer …` as authenticated.
fn authenticate<B>(mut req: http::Request<B>) -> http::Request<B> {
    let bearer = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer ") && v.len() > "Bearer ".len());
    if bearer {
        req.extensions_mut().insert(Bearer);
    }
    req
}

/// The extended card: the public one with one more skill.
fn extended(card: &AgentCard) -> ExtendedCard {
    let mut extended = card.clone();
    extended.skills.push(AgentSkill::new(
        "tck-extended",
        "TCK extended",
        "Only listed for authenticated callers",
    ));
    ExtendedCard::authenticated::<Bearer>(extended)
}

/// Webhook delivery, loopback allowed (and `A2A_PUSH_ALLOW`'s networks).
fn push_sender() -> Result<PushSender, BoxError> {
    let extra = std::env::var("A2A_PUSH_ALLOW").unwrap_or_default();
    let nets = ["127.0.0.0/8", "::1/128"]
        .into_iter()
        .chain(extra.split(',').filter(|n| !n.is_empty()));
    let guard = WebhookGuard::new().allow_networks(nets)?;
    Ok(PushSender::builder().guard(guard).build()?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let (listener, addr) = common::bind().await?;
    let card = card(&common::base_url(addr));
    let outbox = Outbox::builder(MemoryTaskLog::new(), push_sender()?).build()?;
    outbox.start_while_used();
    let core = ExtendedCardLayer::new(extended(&card)).layer(
        TaskLayer::new(card.clone(), outbox.store())?.layer(ExecutorService::new(Conformance)),
    );
    let rest = RestLayer::new(&card)?.layer(core.clone());
    #[cfg(feature = "grpc")]
    let rest = a2a_tower::GrpcBindingLayer::new(&card)?
        .fallback(rest)
        .layer(core.clone());
    let app = ServiceBuilder::new()
        .map_request(|req: http::Request<hyper::body::Incoming>| req.map(a2a_tower::Body::new))
        .option_layer(common::v03_layer(&card)?)
        .layer(AgentCardLayer::with_capabilities(
            &card,
            StackCapabilities::new()
                .extended_agent_card(true)
                .push_notifications(true)
                .grpc(cfg!(feature = "grpc")),
        )?)
        .map_request(authenticate)
        .layer(BodyLimitLayer::new(&card)?)
        .layer(VersionLayer::new(&card)?)
        .layer(ExtensionsLayer::new(&card)?)
        .layer(JsonRpcLayer::new(&card)?.fallback(rest))
        .service(core);
    common::serve(listener, app).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(
            scenario("tck-artifact-file-url-1"),
            Scenario::ArtifactFileUrl
        );
        assert_eq!(scenario("tck-artifact-file-1"), Scenario::ArtifactFile);
        assert_eq!(
            scenario("tck-stream-artifact-file-1"),
            Scenario::StreamArtifactFile
        );
        assert_eq!(scenario("tck-stream-001-x"), Scenario::Stream001);
        assert_eq!(scenario("other"), Scenario::Echo);
    }
}
