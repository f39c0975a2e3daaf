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

use super::future::ResponseFuture;
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

/// Answers `req` on `core`, inside the call's span (see
/// [`ResponseFuture::in_call_span`]). The card decides what exists before
/// anything is looked up; then the protocol's parameter rules, as the
/// bindings apply them, for callers that reach the core without a binding.
///
/// Not an `async fn` over the operations: its future would be the largest
/// of theirs (SendMessage's) plus the request, moved whole into the box,
/// whatever the operation. Each operation's future is boxed as it is.
pub(crate) fn dispatch<C: EngineCore + 'static>(core: C, req: A2aRequest) -> ResponseFuture {
    use ResponseFuture as F;
    let A2aRequest { operation, context } = req;
    let m = operation.method();
    if let Err(e) = check::before_core(&core.shared().card.capabilities, &operation) {
        return F::in_call_span(m, std::future::ready(Err(e)));
    }
    match operation {
        Operation::SendMessage(r) => F::in_call_span(m, core.send(r, context, false)),
        Operation::SendStreamingMessage(r) => F::in_call_span(m, core.send(r, context, true)),
        Operation::CancelTask(r) => F::in_call_span(m, core.cancel(r, context)),
        Operation::Extension(e) => F::in_call_span(m, core.extension(e, context)),
        Operation::GetTask(r) => {
            F::in_call_span(m, async move { ops::get(core.shared(), r, &context).await })
        }
        Operation::ListTasks(r) => {
            F::in_call_span(
                m,
                async move { ops::list(core.shared(), r, &context).await },
            )
        }
        Operation::SubscribeToTask(r) => F::in_call_span(m, async move {
            ops::subscribe(core.shared(), r, &context).await
        }),
        Operation::GetExtendedAgentCard(_) => {
            F::in_call_span(m, std::future::ready(ops::extended_card()))
        }
        Operation::CreateTaskPushNotificationConfig(r) => F::in_call_span(m, async move {
            push_config::create(core.shared(), r, &context).await
        }),
        Operation::GetTaskPushNotificationConfig(r) => F::in_call_span(m, async move {
            push_config::get(core.shared(), r, &context).await
        }),
        Operation::ListTaskPushNotificationConfigs(r) => F::in_call_span(m, async move {
            push_config::list(core.shared(), r, &context).await
        }),
        Operation::DeleteTaskPushNotificationConfig(r) => F::in_call_span(m, async move {
            push_config::delete(core.shared(), r, &context).await
        }),
        #[allow(unreachable_patterns)]
        _ => F::in_call_span(
            m,
            std::future::ready(Err(A2aError::new(ErrorKind::UnsupportedOperation))),
        ),
    }
}
