//! [`TaskService`]: the engine as a `Service<A2aRequest>`.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::executor::Execution;
use super::future::ResponseFuture;
use super::layer::Shared;
use super::{ops, push_config, send};
use crate::protocol::check;
use crate::{A2aError, A2aRequest, A2aResponse, BoxError, ErrorKind, Operation};

/// A complete A2A core over a task log and an inner executor service.
/// Built by [`TaskLayer`](super::TaskLayer); clones share tasks and executions.
pub struct TaskService<S> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) inner: S,
}

impl<S> TaskService<S> {
    pub(crate) fn new(shared: Arc<Shared>, inner: S) -> Self {
        Self { shared, inner }
    }

    /// The number of executions running on this host.
    pub fn running(&self) -> usize {
        self.shared.registry.len()
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

impl<S: Clone> Clone for TaskService<S> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<S> fmt::Debug for TaskService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskService")
            .field("agent", &self.shared.card.name)
            .finish_non_exhaustive()
    }
}

impl<S> Service<A2aRequest> for TaskService<S>
where
    S: Service<Execution, Response = ()> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = A2aResponse;
    type Error = A2aError;
    type Future = ResponseFuture;

    /// Always ready: executions wait for the inner service's readiness on
    /// their own, detached from the call.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: A2aRequest) -> Self::Future {
        let shared = self.shared.clone();
        let inner = self.inner.clone();
        let method = req.operation.method();
        ResponseFuture::in_call_span(method, dispatch(shared, inner, req))
    }
}

async fn dispatch<S>(
    shared: Arc<Shared>,
    inner: S,
    req: A2aRequest,
) -> Result<A2aResponse, A2aError>
where
    S: Service<Execution, Response = ()> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let A2aRequest { operation, context } = req;
    // The card decides what exists before anything is looked up; then the
    // protocol's parameter rules, as the bindings apply them, for callers
    // that reach the engine without a binding.
    check::before_core(&shared.card.capabilities, &operation)?;
    match operation {
        Operation::GetExtendedAgentCard(_) => ops::extended_card(),
        Operation::SendMessage(r) => send::send(shared, inner, r, context).await,
        Operation::SendStreamingMessage(r) => send::stream(shared, inner, r, context).await,
        Operation::GetTask(r) => ops::get(&shared, r, &context).await,
        Operation::ListTasks(r) => ops::list(&shared, r, &context).await,
        Operation::CancelTask(r) => ops::cancel(&shared, r, &context).await,
        Operation::SubscribeToTask(r) => ops::subscribe(&shared, r, &context).await,
        Operation::CreateTaskPushNotificationConfig(r) => {
            push_config::create(&shared, r, &context).await
        }
        Operation::GetTaskPushNotificationConfig(r) => push_config::get(&shared, r, &context).await,
        Operation::ListTaskPushNotificationConfigs(r) => {
            push_config::list(&shared, r, &context).await
        }
        Operation::DeleteTaskPushNotificationConfig(r) => {
            push_config::delete(&shared, r, &context).await
        }
        // No extension method is served here: unknown, as to the bindings.
        Operation::Extension(_) => Err(A2aError::new(ErrorKind::MethodNotFound)),
        #[allow(unreachable_patterns)]
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    }
}

/// Records the task and context ids on the current call span.
pub(crate) fn record_ids(task_id: &str, context_id: &str) {
    let span = tracing::Span::current();
    span.record("task_id", task_id);
    span.record("context_id", context_id);
}
