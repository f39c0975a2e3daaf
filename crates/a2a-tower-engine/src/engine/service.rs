//! [`TaskService`]: the engine as a `Service<A2aRequest>`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::Either;
use tower_service::Service;

use super::dispatch::{EngineCore, dispatch};
use super::executor::Execution;
use super::future::ResponseFuture;
use super::layer::Shared;
use super::send;
use crate::types::SendMessageRequest;
use crate::{A2aError, A2aRequest, A2aResponse, BoxError, CallContext};

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
        dispatch(self.clone(), req)
    }
}

impl<S> EngineCore for TaskService<S>
where
    S: Service<Execution, Response = ()> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn send(
        self,
        req: SendMessageRequest,
        context: CallContext,
        stream: bool,
    ) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send {
        // Either future as it is, not awaited in a third.
        match stream {
            false => Either::Left(send::send(self.shared, self.inner, req, context)),
            true => Either::Right(send::stream(self.shared, self.inner, req, context)),
        }
    }
}

/// Records the task and context ids on the current call span.
pub(crate) fn record_ids(task_id: &str, context_id: &str) {
    let span = tracing::Span::current();
    span.record("task_id", task_id);
    span.record("context_id", context_id);
}
