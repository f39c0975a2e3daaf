//! Calling an agent through `A2aClient` in tests: bounded waits, messages
//! with fresh ids, and one line per stream event that does not depend on
//! ids (what transcripts compare).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::types::{Artifact, Message, SendMessageRequest, StreamResponse};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, Operation};
use tower::ServiceExt;

/// Every wait through these helpers is bounded by this.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// `f`, failing the test after [`PATIENCE`].
pub(crate) async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(PATIENCE, f)
        .await
        .expect("bounded wait")
}

/// The agent card URL of the agent at `base`.
pub(crate) fn card_url(base: &str) -> String {
    format!("{base}/.well-known/agent-card.json")
}

/// A client of the agent at `base`, insisting on `t`.
pub(crate) async fn connect(base: &str, t: Transport) -> A2aClient<HttpClient> {
    let c = A2aClient::builder(card_url(base))
        .transport(t)
        .build()
        .unwrap();
    let client = bounded(c.connect()).await.unwrap();
    assert_eq!(client.transport(), t);
    client
}

/// One bounded call.
pub(crate) async fn call(
    c: &A2aClient<HttpClient>,
    op: Operation,
) -> Result<A2aResponse, A2aError> {
    bounded(c.clone().oneshot(A2aRequest::new(op))).await
}

/// A message id unique in this process.
pub(crate) fn uuid() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "m-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A SendMessage of a user message with `text`.
pub(crate) fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user(uuid(), text),
        ..Default::default()
    }
}

/// The error of a call that must fail.
pub(crate) fn err(r: Result<A2aResponse, A2aError>) -> A2aError {
    match r {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => e,
    }
}

/// The text parts of an artifact, concatenated.
pub(crate) fn artifact_text(a: &Artifact) -> String {
    a.parts.iter().filter_map(|p| p.as_text()).collect()
}

/// A stream event as a line without ids.
pub(crate) fn event_line(e: StreamResponse) -> String {
    match e {
        StreamResponse::Task(t) => format!("task {:?}", t.status.state),
        StreamResponse::Message(_) => "message".into(),
        StreamResponse::StatusUpdate(u) => format!("status {:?}", u.status.state),
        StreamResponse::ArtifactUpdate(a) => format!("artifact {}", artifact_text(&a.artifact)),
    }
}
