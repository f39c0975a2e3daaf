//! A2A calls on any core (a `Service<A2aRequest>`: `TeamService`,
//! `ManagedService`, …) with `oneshot`, each answered within [`GUARD`].

use a2a_tower::types::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task,
};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, EventStream, Operation};
use futures_util::StreamExt as _;
use tower::{Service, ServiceExt as _};

use super::tasks::GUARD;

pub(crate) async fn call<S>(svc: &S, op: Operation) -> Result<A2aResponse, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    tokio::time::timeout(GUARD, svc.clone().oneshot(A2aRequest::new(op)))
        .await
        .expect("the call answers in time")
}

/// A SendMessage answered with a task.
pub(crate) async fn send_with<S>(svc: &S, req: SendMessageRequest) -> Result<Task, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    match call(svc, Operation::SendMessage(req)).await? {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => Ok(t.into_inner()),
        other => panic!("expected a task, got {other:?}"),
    }
}

pub(crate) async fn get<S>(svc: &S, id: &str) -> Result<Task, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    let op = Operation::GetTask(GetTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    match call(svc, op).await? {
        A2aResponse::Task(t) => Ok(t),
        other => panic!("expected a task, got {other:?}"),
    }
}

/// ListTasks (one page of up to 100 tasks).
pub(crate) async fn list<S>(svc: &S, req: ListTasksRequest) -> Vec<Task>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    let req = ListTasksRequest {
        page_size: Some(100),
        ..req
    };
    match call(svc, Operation::ListTasks(req)).await.expect("list") {
        A2aResponse::Tasks(page) => {
            assert!(page.next_page_token.is_empty(), "one page");
            page.tasks
        }
        other => panic!("expected a page, got {other:?}"),
    }
}

pub(crate) async fn cancel<S>(svc: &S, id: &str) -> Result<Task, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    let op = Operation::CancelTask(CancelTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    match call(svc, op).await? {
        A2aResponse::Task(t) => Ok(t),
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The stream a streaming call answers with, not read yet.
pub(crate) async fn stream<S>(svc: &S, op: Operation) -> Result<EventStream, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    match call(svc, op).await? {
        A2aResponse::Stream(s) => Ok(s),
        other => panic!("expected a stream, got {other:?}"),
    }
}

/// SubscribeToTask's stream, not read yet.
pub(crate) async fn subscribe<S>(svc: &S, id: &str) -> Result<EventStream, A2aError>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    let op = Operation::SubscribeToTask(SubscribeToTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    stream(svc, op).await
}

/// The events of a streaming call, read to the end of the stream (which must
/// come within [`GUARD`]); an error event fails the test.
pub(crate) async fn events<S>(svc: &S, op: Operation) -> Vec<StreamResponse>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError> + Clone,
{
    read_events(stream(svc, op).await.expect("a stream")).await
}

/// A stream read to its end, within [`GUARD`]; an error event fails the test.
pub(crate) async fn read_events(stream: EventStream) -> Vec<StreamResponse> {
    let all: Vec<_> = tokio::time::timeout(GUARD, stream.collect::<Vec<_>>())
        .await
        .expect("the stream ends in time");
    all.into_iter().map(|e| e.expect("an event")).collect()
}
