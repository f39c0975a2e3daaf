//! An A2A echo agent written directly as a core `Service<A2aRequest>`, with no
//! task engine: the full HTTP edge (card, body limit, version check,
//! extensions, JSON-RPC with SSE) around twenty lines of protocol logic.
//!
//! Run with `cargo run --example raw_core` (listens on `A2A_ADDR`, default
//! `127.0.0.1:8080`).
//!
//! SendMessage answers a completed task whose artifact is the input text;
//! SendStreamingMessage streams task → working → artifact → completed. The
//! core keeps no tasks, so GetTask and the other reads answer TaskNotFound:
//! use the task engine (`examples/echo.rs`) for a complete agent.

#[path = "common/mod.rs"]
mod common;

use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, Artifact, Message, Role, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use a2a_tower::{
    A2aError, A2aRequest, A2aResponse, AgentCardLayer, BodyLimitLayer, ErrorKind, EventStream,
    ExtensionsLayer, JsonRpcLayer, Operation, VersionLayer,
};
use tower::ServiceBuilder;

/// The card of the echo agent served at `base_url`.
fn card(base_url: &str) -> AgentCard {
    AgentCard::new(
        "Raw echo",
        "Echoes the text it receives (raw core)",
        "0.1.0",
    )
    .with_interface(AgentInterface::jsonrpc(format!("{base_url}/")))
    .with_skill(AgentSkill::new(
        "echo",
        "Echo",
        "Answers with the input text",
    ))
    .with_streaming(true)
}

/// The task an echo of `req` produces, in `state`, with the echo as artifact
/// once completed.
fn echo_task(req: &SendMessageRequest, id: &str, context_id: &str, state: TaskState) -> Task {
    let mut message = req.message.clone();
    message.task_id = id.to_owned();
    message.context_id = context_id.to_owned();
    Task {
        id: id.to_owned(),
        context_id: context_id.to_owned(),
        status: TaskStatus::new(state),
        artifacts: if state == TaskState::Completed {
            vec![artifact(&req.message)]
        } else {
            Vec::new()
        },
        history: vec![message],
        metadata: None,
    }
}

fn artifact(input: &Message) -> Artifact {
    Artifact {
        artifact_id: "echo".into(),
        parts: input.parts.clone(),
        ..Artifact::default()
    }
}

/// The core: one function from operation to answer.
async fn echo_core(req: A2aRequest) -> Result<A2aResponse, A2aError> {
    let id = uuid::Uuid::new_v4().to_string();
    match req.operation {
        Operation::SendMessage(send) => {
            if !send.message.task_id.is_empty() {
                return Err(A2aError::task_not_found(send.message.task_id));
            }
            let context_id = context_of(&send.message);
            let task = echo_task(&send, &id, &context_id, TaskState::Completed);
            Ok(A2aResponse::SendMessage(SendMessageResponse::Task(
                task.into(),
            )))
        }
        Operation::SendStreamingMessage(send) => {
            if !send.message.task_id.is_empty() {
                return Err(A2aError::task_not_found(send.message.task_id));
            }
            let context_id = context_of(&send.message);
            let status = |state| {
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: id.clone(),
                    context_id: context_id.clone(),
                    status: TaskStatus::new(state),
                    metadata: None,
                })
            };
            let events = vec![
                Ok(StreamResponse::Task(echo_task(
                    &send,
                    &id,
                    &context_id,
                    TaskState::Submitted,
                ))),
                Ok(status(TaskState::Working)),
                Ok(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: id.clone(),
                    context_id: context_id.clone(),
                    artifact: artifact(&send.message),
                    append: false,
                    last_chunk: true,
                    metadata: None,
                })),
                Ok(status(TaskState::Completed)),
            ];
            Ok(A2aResponse::Stream(EventStream::from_iter(events)))
        }
        Operation::GetTask(r) => Err(A2aError::task_not_found(r.id)),
        Operation::CancelTask(r) => Err(A2aError::task_not_found(r.id)),
        Operation::SubscribeToTask(r) => Err(A2aError::task_not_found(r.id)),
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    }
}

fn context_of(m: &Message) -> String {
    debug_assert_eq!(m.role, Role::User);
    if m.context_id.is_empty() {
        uuid::Uuid::new_v4().to_string()
    } else {
        m.context_id.clone()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (listener, addr) = common::bind().await?;
    let card = card(&common::base_url(addr));
    let app = ServiceBuilder::new()
        .layer(AgentCardLayer::new(&card)?)
        .layer(BodyLimitLayer::new(&card)?)
        .layer(VersionLayer::new(&card)?)
        .layer(ExtensionsLayer::new(&card)?)
        .layer(JsonRpcLayer::new(&card)?)
        .service(tower::service_fn(echo_core));
    common::serve(listener, app).await?;
    Ok(())
}
