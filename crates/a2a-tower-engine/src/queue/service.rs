//! [`TeamService`]: a team behind the task engine and its delivery queue,
//! as a `Service<A2aRequest>`.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::core::Core;
use super::send::send;
use crate::engine::dispatch::{EngineCore, dispatch};
use crate::engine::layer::Shared;
use crate::engine::{Recovered, ResponseFuture};
use crate::log::LogError;
use crate::types::{CancelTaskRequest, SendMessageRequest};
use crate::{A2aError, A2aRequest, A2aResponse, CallContext, ErrorKind, ExtensionRequest};

/// A complete A2A core for a [`Team`](super::Team): the engine's reads, the
/// delivery queue for new inputs, and the queue extension's operations.
/// Built by [`Team::service`](super::Team::service); clones share
/// everything.
#[derive(Clone)]
pub struct TeamService {
    pub(crate) core: Arc<Core>,
}

impl fmt::Debug for TeamService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TeamService")
            .field("team", &self.core.team)
            .finish_non_exhaustive()
    }
}

impl TeamService {
    /// The number of executions running on this host.
    pub fn running(&self) -> usize {
        self.core.shared.registry.len()
    }

    /// Start-up recovery: the runs this host id was running when its
    /// process died are closed as interrupted (exactly once, as
    /// [`TaskLayer::recover`](crate::engine::TaskLayer::recover) does);
    /// queued inputs stay queued; then every context with a queue drains
    /// (in the background: this returns once the drains are started).
    pub async fn recover(&self) -> Result<Recovered, LogError> {
        let runs = crate::engine::recovery_of(&self.core.shared).await?;
        let mut contexts = 0;
        let mut after: Option<(String, String)> = None;
        loop {
            let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
            let page = self.core.shared.live.live_tasks(key, 256).await?;
            // A context's queue is a stream of the queue's, under its
            // caller's authority: found in the scan, nothing read.
            for t in page
                .iter()
                .filter(|t| t.stream().is_some_and(|(f, _)| f == super::QUEUE_FEATURE))
            {
                self.core.notify(&t.authority, &t.context_id);
                contexts += 1;
            }
            match page.last() {
                Some(last) if page.len() >= 256 => {
                    after = Some((last.authority.clone(), last.task_id.clone()));
                }
                _ => break,
            }
        }
        Ok(Recovered { contexts, ..runs })
    }
}

impl Service<A2aRequest> for TeamService {
    type Response = A2aResponse;
    type Error = A2aError;
    type Future = ResponseFuture;

    /// Always ready: executions wait for their agents on their own.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: A2aRequest) -> Self::Future {
        dispatch(self.clone(), req)
    }
}

/// The team's own part of the engine's dispatch: new inputs go through the
/// delivery queue, a cancel may remove a queued input, and the queue
/// extension's methods; every other operation is the engine's.
impl EngineCore for TeamService {
    fn shared(&self) -> &Shared {
        &self.core.shared
    }

    async fn send(
        self,
        req: SendMessageRequest,
        context: CallContext,
        stream: bool,
    ) -> Result<A2aResponse, A2aError> {
        // Boxed where it is made: the queue's send future is large (a
        // message admitted at once has its run driven in it), and held
        // inline it was moved whole into the dispatch future and again into
        // the call's box (callgrind: four copies, ≈ 37 KB per message).
        Box::pin(send(&self.core, req, context, stream)).await
    }

    async fn cancel(
        self,
        req: CancelTaskRequest,
        context: CallContext,
    ) -> Result<A2aResponse, A2aError> {
        super::cancel::cancel(&self.core, req, &context).await
    }

    async fn extension(
        self,
        e: ExtensionRequest,
        context: CallContext,
    ) -> Result<A2aResponse, A2aError> {
        match e.method {
            super::GET_QUEUE_METHOD => super::ext::get(&self.core, &e.params, &context).await,
            super::REORDER_QUEUE_METHOD => {
                super::ext::reorder(&self.core, &e.params, &context).await
            }
            _ => return Err(A2aError::new(ErrorKind::MethodNotFound)),
        }
        .map(A2aResponse::Extension)
    }
}
