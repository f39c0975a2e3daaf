//! A scripted A2A core, to test the bindings without the engine: a
//! `Service<A2aRequest>` that records every request it gets and answers
//! each with a script function; and the tasks and events scripts answer with.

use std::future::Ready;
use std::sync::{Arc, Mutex};

use a2a_tower::types::{StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, Operation};
use tower::Service;

/// Every request the core got, in order.
pub(crate) type Calls = Arc<Mutex<Vec<A2aRequest>>>;

/// The core: records each request in `calls`, answers `script(operation)`.
pub(crate) fn scripted<F>(
    calls: Calls,
    script: F,
) -> impl Service<
    A2aRequest,
    Response = A2aResponse,
    Error = A2aError,
    Future = Ready<Result<A2aResponse, A2aError>>,
> + Clone
+ Send
+ Sync
+ 'static
where
    F: Fn(&Operation) -> Result<A2aResponse, A2aError> + Clone + Send + Sync + 'static,
{
    tower::service_fn(move |req: A2aRequest| {
        let answer = script(&req.operation);
        calls.lock().unwrap().push(req);
        std::future::ready(answer)
    })
}

/// A task of the context `c-1`. Its status has no timestamp, so bodies
/// compare byte for byte.
pub(crate) fn task(id: &str, state: TaskState) -> Task {
    Task {
        id: id.into(),
        context_id: "c-1".into(),
        status: TaskStatus {
            state,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A status update (without a timestamp) of the task `t-1` of `c-1`.
pub(crate) fn status_update(state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: TaskStatus {
            state,
            ..Default::default()
        },
        metadata: None,
    })
}
