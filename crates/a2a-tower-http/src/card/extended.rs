//! [`ExtendedCardLayer`] and [`ExtendedCard`]: the extended agent card
//! (a2a-spec.md §2.5) on every binding, in front of any core.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::types::AgentCard;
use crate::{A2aError, A2aRequest, A2aResponse, CallContext, ErrorKind, Operation};

type CardFn = dyn Fn(&CallContext) -> Result<AgentCard, A2aError> + Send + Sync;

/// The extended agent card of a caller: a function of the call context.
#[derive(Clone)]
pub struct ExtendedCard(Arc<CardFn>);

impl ExtendedCard {
    /// `card` for every caller with a principal `P` in the request
    /// extensions; [`ErrorKind::Unauthenticated`] for the others.
    pub fn authenticated<P>(card: AgentCard) -> Self
    where
        P: Send + Sync + 'static,
    {
        Self::for_principal(move |_: &P| card.clone())
    }

    /// The card `f` makes of the principal `P` in the request extensions;
    /// [`ErrorKind::Unauthenticated`] for a call without one.
    pub fn for_principal<P, F>(f: F) -> Self
    where
        P: Send + Sync + 'static,
        F: Fn(&P) -> AgentCard + Send + Sync + 'static,
    {
        Self::from_fn(move |ctx| {
            ctx.extensions
                .get::<P>()
                .map(&f)
                .ok_or_else(|| A2aError::new(ErrorKind::Unauthenticated))
        })
    }

    /// Any function of the call context; its error is the answer (for
    /// example [`ErrorKind::Unauthenticated`] or
    /// [`ErrorKind::PermissionDenied`]).
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn(&CallContext) -> Result<AgentCard, A2aError> + Send + Sync + 'static,
    {
        Self(Arc::new(f))
    }

    /// The card for a call.
    pub fn resolve(&self, ctx: &CallContext) -> Result<AgentCard, A2aError> {
        (self.0)(ctx)
    }
}

impl fmt::Debug for ExtendedCard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtendedCard").finish_non_exhaustive()
    }
}

/// Answers `GetExtendedAgentCard` (a2a-spec.md §2.5)
/// with the card an [`ExtendedCard`] gives the caller, on every binding, in
/// front of any core.
///
/// The spec requires the call to be authenticated, and lets the card vary
/// with the caller. An [`ExtendedCard`] is a function of the
/// [`CallContext`]: [`ExtendedCard::authenticated`] gives one card to every
/// caller whose principal `P` a host auth layer put into the request
/// extensions, [`ExtendedCard::for_principal`] computes the card from that
/// principal, and both answer a call without a `P` with
/// [`ErrorKind::Unauthenticated`] (JSON-RPC −31401, HTTP 401, gRPC
/// `UNAUTHENTICATED`). [`ExtendedCard::from_fn`] leaves every decision to the
/// host.
///
/// Put the layer inside the host's authentication layers (next to the core),
/// so the principal is there when it runs; [`A2aServer::builder`]'s
/// [`extended_card`](https://docs.rs/a2a-tower/latest/a2a_tower/server/struct.A2aServerBuilder.html#method.extended_card) does so,
/// and declares the capability as served. The capability check
/// (`extendedAgentCard` undeclared → −32004) is the bindings'; a core reached
/// without this layer answers ExtendedAgentCardNotConfigured (−32007).
///
/// [`A2aServer::builder`]: https://docs.rs/a2a-tower/latest/a2a_tower/server/struct.A2aServer.html#method.builder
///
/// ```
/// use a2a_tower::card::{ExtendedCard, ExtendedCardLayer};
/// use a2a_tower::types::{AgentCard, GetExtendedAgentCardRequest};
/// use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, Operation};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// #[derive(Clone)]
/// struct User(String);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let extended = ExtendedCard::for_principal(|u: &User| {
///     AgentCard::new(format!("Agent for {}", u.0), "all skills", "1.0.0")
/// });
/// let core = service_fn(|_req: A2aRequest| async {
///     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
/// });
/// let svc = ExtendedCardLayer::new(extended).layer(core);
/// let op = || Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default());
///
/// let err = svc.clone().oneshot(A2aRequest::new(op())).await.unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Unauthenticated);
///
/// let mut req = A2aRequest::new(op());
/// req.context.extensions.insert(User("alice".into()));
/// let Ok(A2aResponse::AgentCard(card)) = svc.oneshot(req).await else { panic!() };
/// assert_eq!(card.name, "Agent for alice");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ExtendedCardLayer {
    card: ExtendedCard,
}

impl ExtendedCardLayer {
    /// Serves `card`.
    pub fn new(card: ExtendedCard) -> Self {
        Self { card }
    }
}

impl<S> Layer<S> for ExtendedCardLayer {
    type Service = ExtendedCardService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ExtendedCardService {
            inner,
            card: Some(self.card.clone()),
        }
    }
}

/// The service of [`ExtendedCardLayer`].
#[derive(Debug, Clone)]
pub struct ExtendedCardService<S> {
    inner: S,
    /// `None` (the builder without an extended card): everything goes to
    /// the core.
    card: Option<ExtendedCard>,
}

impl<S> ExtendedCardService<S> {
    /// Answers with `card` when there is one; otherwise only passes on
    /// (the facade's `A2aServerBuilder`).
    #[doc(hidden)]
    pub fn optional(inner: S, card: Option<ExtendedCard>) -> Self {
        Self { inner, card }
    }

    crate::protocol::service::define_inner_service_accessors!(inner);
}

impl<S> Service<A2aRequest> for ExtendedCardService<S>
where
    S: Service<A2aRequest, Response = A2aResponse, Error = A2aError>,
{
    type Response = A2aResponse;
    type Error = A2aError;
    type Future = ExtendedCardFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2aError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: A2aRequest) -> Self::Future {
        if let (Operation::GetExtendedAgentCard(_), Some(card)) = (&req.operation, &self.card) {
            let answer = card.resolve(&req.context).map(Box::new);
            return ExtendedCardFuture::Ready {
                answer: Some(answer),
            };
        }
        ExtendedCardFuture::Inner {
            future: self.inner.call(req),
        }
    }
}

pin_project! {
    /// The future of [`ExtendedCardService`]: the card, or the core's answer.
    #[project = Proj]
    pub enum ExtendedCardFuture<F> {
        /// The extended card (or the refusal), ready at once. Boxed, not
        /// an `A2aResponse` (464 bytes, a task's size): this future is
        /// held in every binding's call future, whatever the operation.
        #[doc(hidden)]
        Ready { answer: Option<Result<Box<AgentCard>, A2aError>> },
        /// The wrapped core's answer.
        #[doc(hidden)]
        Inner { #[pin] future: F },
    }
}

impl<F> Future for ExtendedCardFuture<F>
where
    F: Future<Output = Result<A2aResponse, A2aError>>,
{
    type Output = Result<A2aResponse, A2aError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            Proj::Ready { answer } => Poll::Ready(
                answer
                    .take()
                    .expect("future polled after completion")
                    .map(A2aResponse::AgentCard),
            ),
            Proj::Inner { future } => future.poll(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{GetExtendedAgentCardRequest, GetTaskRequest};
    use tower::{ServiceExt, service_fn};

    fn core() -> impl Service<
        A2aRequest,
        Response = A2aResponse,
        Error = A2aError,
        Future = impl Future<Output = Result<A2aResponse, A2aError>>,
    > + Clone {
        service_fn(|_req: A2aRequest| async { Err(A2aError::new(ErrorKind::TaskNotFound)) })
    }

    #[tokio::test]
    async fn answers_the_card_and_passes_the_rest() {
        let card = AgentCard::new("Extended", "more", "1.0.0");
        let svc = ExtendedCardLayer::new(ExtendedCard::authenticated::<u32>(card)).layer(core());
        let op = || Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default());

        let err = svc.clone().oneshot(A2aRequest::new(op())).await;
        assert_eq!(err.unwrap_err().kind(), ErrorKind::Unauthenticated);

        let mut req = A2aRequest::new(op());
        req.context.extensions.insert(7u32);
        let Ok(A2aResponse::AgentCard(c)) = svc.clone().oneshot(req).await else {
            panic!("expected the card")
        };
        assert_eq!(c.name, "Extended");

        let get = Operation::GetTask(GetTaskRequest {
            id: "t".into(),
            ..Default::default()
        });
        let err = svc.oneshot(A2aRequest::new(get)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TaskNotFound, "reached the core");
    }

    #[tokio::test]
    async fn from_fn_decides_everything() {
        let ext = ExtendedCard::from_fn(|ctx| {
            if ctx.tenant == "blocked" {
                Err(A2aError::new(ErrorKind::PermissionDenied))
            } else {
                Ok(AgentCard::new(format!("for {}", ctx.tenant), "d", "1"))
            }
        });
        let mut ctx = CallContext {
            tenant: "acme".into(),
            ..Default::default()
        };
        assert_eq!(ext.resolve(&ctx).unwrap().name, "for acme");
        ctx.tenant = "blocked".into();
        assert_eq!(
            ext.resolve(&ctx).unwrap_err().kind(),
            ErrorKind::PermissionDenied
        );
    }
}
