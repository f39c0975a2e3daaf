//! Helpers for driving `TaskService` with `oneshot`.

use std::sync::Arc;

use a2a_tower::engine::{Execution, TaskLayer, TaskService};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{
    AgentCard, Artifact, GetTaskRequest, Message, Part, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, BoxError, ErrorKind, EventStream, Operation};
use futures_util::StreamExt as _;
use tokio::sync::{Notify, mpsc};
use tower::util::BoxCloneSyncService;
use tower::{Layer, ServiceExt};

pub(crate) type Inner = BoxCloneSyncService<Execution, (), BoxError>;
pub(crate) type Svc = TaskService<Inner>;

pub(crate) fn card() -> AgentCard {
    AgentCard::new("Test", "test agent", "1.0.0").with_streaming(true)
}

pub(crate) fn boxed<F, Fut>(f: F) -> Inner
where
    F: Fn(Execution) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    BoxCloneSyncService::new(tower::service_fn(f))
}

pub(crate) fn engine_with(layer: TaskLayer, inner: Inner) -> Svc {
    layer.layer(inner)
}

pub(crate) fn engine(inner: Inner) -> Svc {
    TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .layer(inner)
}

pub(crate) async fn call(svc: &Svc, op: Operation) -> Result<A2aResponse, A2aError> {
    svc.clone().oneshot(A2aRequest::new(op)).await
}

pub(crate) fn send_req(message: Message) -> SendMessageRequest {
    SendMessageRequest {
        message,
        ..Default::default()
    }
}

pub(crate) fn immediate(message: Message) -> SendMessageRequest {
    SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(crate) fn to_task(id: &str, context: &str, text: &str) -> Message {
    let mut m = Message::user(uuid::Uuid::new_v4().to_string(), text);
    m.task_id = id.into();
    m.context_id = context.into();
    m
}

pub(crate) fn user(text: &str) -> Message {
    Message::user(uuid::Uuid::new_v4().to_string(), text)
}

pub(crate) async fn send(
    svc: &Svc,
    req: SendMessageRequest,
) -> Result<SendMessageResponse, A2aError> {
    match call(svc, Operation::SendMessage(req)).await? {
        A2aResponse::SendMessage(r) => Ok(r),
        other => panic!("unexpected {other:?}"),
    }
}

pub(crate) async fn send_task(svc: &Svc, req: SendMessageRequest) -> Task {
    match send(svc, req).await.expect("send") {
        SendMessageResponse::Task(t) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    }
}

pub(crate) async fn get(svc: &Svc, id: &str) -> Result<Task, A2aError> {
    let op = Operation::GetTask(GetTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    match call(svc, op).await? {
        A2aResponse::Task(t) => Ok(t),
        other => panic!("unexpected {other:?}"),
    }
}

pub(crate) async fn stream(svc: &Svc, op: Operation) -> Result<EventStream, A2aError> {
    match call(svc, op).await? {
        A2aResponse::Stream(s) => Ok(s),
        other => panic!("unexpected {other:?}"),
    }
}

pub(crate) async fn subscribe(svc: &Svc, id: &str) -> Result<EventStream, A2aError> {
    stream(
        svc,
        Operation::SubscribeToTask(SubscribeToTaskRequest {
            id: id.into(),
            ..Default::default()
        }),
    )
    .await
}

/// Reads a stream to its end.
pub(crate) async fn collect(s: EventStream) -> Vec<Result<StreamResponse, A2aError>> {
    s.collect().await
}

pub(crate) fn code(err: &A2aError) -> i64 {
    err.kind().jsonrpc_code()
}

pub(crate) fn assert_kind<T: std::fmt::Debug>(r: Result<T, A2aError>, kind: ErrorKind) {
    match r {
        Err(e) => assert_eq!(e.kind(), kind, "{}", e.message()),
        Ok(v) => panic!("expected {kind:?}, got {v:?}"),
    }
}

/// A gate executors wait on, and a channel they report task ids on.
#[derive(Clone, Default)]
pub(crate) struct Gate(Arc<Notify>);

impl Gate {
    pub(crate) fn open(&self) {
        self.0.notify_one();
    }
    pub(crate) async fn wait(&self) {
        self.0.notified().await;
    }
}

/// WORKING, the message text as one artifact (`a-1`), COMPLETED.
pub(crate) async fn echo_artifact(ex: Execution) -> Result<(), BoxError> {
    ex.emit.working().await?;
    let art = Artifact {
        artifact_id: "a-1".into(),
        parts: vec![Part::text(ex.message.text())],
        ..Artifact::default()
    };
    ex.emit.artifact(art, false, true).await?;
    ex.emit.complete().await?;
    Ok(())
}

/// Records WORKING, waits on the gate, then completes.
pub(crate) fn gated(gate: Gate) -> Inner {
    boxed(move |ex: Execution| {
        let gate = gate.clone();
        async move {
            ex.emit.working().await?;
            gate.wait().await;
            ex.emit.complete().await?;
            Ok(())
        }
    })
}

pub(crate) fn channel<T>() -> (mpsc::UnboundedSender<T>, mpsc::UnboundedReceiver<T>) {
    mpsc::unbounded_channel()
}
