//! The one operation dispatch of the engine's cores: the task engine
//! ([`TaskService`](super::TaskService)), the delivery queue's team
//! ([`TeamService`](crate::queue::TeamService)) and managed runs
//! ([`ManagedService`](crate::managed::ManagedService)).
//!
//! The cores differ only in how an input becomes a run (admission), how a
//! cancel reaches it, and which extension methods they serve; each says
//! those as an [`EngineCore`]. Everything else (the card's capability and
//! the protocol's parameter checks, GetTask, ListTasks, SubscribeToTask, the
//! four push-config operations, GetExtendedAgentCard) is answered here, the
//! same way for all of them, from the engine's [`Shared`] state over the
//! task log.

use std::future::Future;

use super::layer::Shared;
use super::{ops, push_config};
use crate::protocol::check;
use crate::types::{CancelTaskRequest, SendMessageRequest};
use crate::{
    A2aError, A2aRequest, A2aResponse, CallContext, ErrorKind, ExtensionRequest, Operation,
};

/// What one of the engine's cores does itself; [`dispatch`] answers the
/// rest. A core is a cheap handle (clones share everything), taken by
/// value by the one method a call needs, so it need not be `Sync`.
pub(crate) trait EngineCore: Send + Sized {
    /// The engine state the reads and push-config operations use.
    fn shared(&self) -> &Shared;

    /// SendMessage (`stream`: false) or SendStreamingMessage: admission.
    fn send(
        self,
        req: SendMessageRequest,
        context: CallContext,
        stream: bool,
    ) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send;

    /// CancelTask; by default the engine's (the live writer commits
    /// CANCELED, a task without one is canceled in the log).
    fn cancel(
        self,
        req: CancelTaskRequest,
        context: CallContext,
    ) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send {
        async move { ops::cancel(self.shared(), req, &context).await }
    }

    /// An extension method the bindings decoded; by default none is
    /// served: MethodNotFound, as the bindings answer an unknown method.
    fn extension(
        self,
        req: ExtensionRequest,
        context: CallContext,
    ) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send {
        let _ = (req, context);
        async { Err(A2aError::new(ErrorKind::MethodNotFound)) }
    }
}

/// Answers `req` on `core`. The card decides what exists before anything is
/// looked up; then the protocol's parameter rules, as the bindings apply
/// them, for callers that reach the core without a binding.
pub(crate) async fn dispatch<C: EngineCore>(
    core: C,
    req: A2aRequest,
) -> Result<A2aResponse, A2aError> {
    let A2aRequest { operation, context } = req;
    let shared = core.shared();
    check::before_core(&shared.card.capabilities, &operation)?;
    match operation {
        Operation::SendMessage(r) => core.send(r, context, false).await,
        Operation::SendStreamingMessage(r) => core.send(r, context, true).await,
        Operation::CancelTask(r) => core.cancel(r, context).await,
        Operation::Extension(e) => core.extension(e, context).await,
        Operation::GetTask(r) => ops::get(shared, r, &context).await,
        Operation::ListTasks(r) => ops::list(shared, r, &context).await,
        Operation::SubscribeToTask(r) => ops::subscribe(shared, r, &context).await,
        Operation::GetExtendedAgentCard(_) => ops::extended_card(),
        Operation::CreateTaskPushNotificationConfig(r) => {
            push_config::create(shared, r, &context).await
        }
        Operation::GetTaskPushNotificationConfig(r) => push_config::get(shared, r, &context).await,
        Operation::ListTaskPushNotificationConfigs(r) => {
            push_config::list(shared, r, &context).await
        }
        Operation::DeleteTaskPushNotificationConfig(r) => {
            push_config::delete(shared, r, &context).await
        }
        #[allow(unreachable_patterns)]
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    }
}
