//! [`BindingService`]: the HTTP ⇄ [`A2aRequest`] bridge every HTTP binding
//! shares, filled with the binding's [`Codec`]: match the request, read the
//! body, decode, check the capability, call the core, check and encode the
//! answer, or open the SSE stream.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, RestLayer};
//! use http_body_util::Empty;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a"));
//! let core = tower::service_fn(|_: A2aRequest| async {
//!     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
//! });
//! let svc = RestLayer::new(&card).unwrap().layer(core);
//! let req = http::Request::delete("/a2a/tasks").body(Empty::<bytes::Bytes>::new()).unwrap();
//! // A known path with another verb: answered by the codec, without the core.
//! assert_eq!(svc.oneshot(req).await.unwrap().status(), 405);
//! # });
//! ```

use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use tower_service::Service;
use tracing::Instrument;

use super::codec::{Codec, Config, Head};
use crate::binding::exchange::{self, Expected, Reply};
use crate::binding::sse::EncodeFrame;
use crate::plumbing::future::BindingFuture;
use crate::plumbing::routes::json_response;
use crate::types::StreamResponse;
use crate::{A2aError, A2aRequest, A2aService, Body, BoxError, CallContext, NotFound};

crate::plumbing::future::opaque_future! {
    /// Response future of a binding's service ([`JsonRpcService`](crate::JsonRpcService),
    /// [`RestService`](crate::RestService)).
    pub type ResponseFuture<F> = crate::plumbing::future::BindingFuture<F>;
}

/// The binding `C` over a core `S`; requests that are not the binding's go
/// to the fallback `F`. Built by [`BindingLayer`](super::layer::BindingLayer);
/// used as [`JsonRpcService`](crate::JsonRpcService) and
/// [`RestService`](crate::RestService).
///
/// Readiness: `poll_ready` is the fallback's. The core is driven lazily: each
/// call clones it and waits for its readiness inside the response future (as
/// axum does for routes), so a busy core delays the calls that need it
/// rather than requests that go to the fallback, and no reserved capacity of
/// the core is held between `poll_ready` and `call`.
#[derive(Debug, Clone)]
pub struct BindingService<C, S, F = NotFound> {
    core: S,
    fallback: F,
    config: Arc<Config>,
    codec: PhantomData<C>,
}

impl<C, S, F> BindingService<C, S, F> {
    pub(crate) fn from_parts(core: S, fallback: F, config: Arc<Config>) -> Self {
        Self {
            core,
            fallback,
            config,
            codec: PhantomData,
        }
    }

    /// Replaces the service for requests that are not the binding's.
    pub fn fallback<F2>(self, fallback: F2) -> BindingService<C, S, F2> {
        BindingService::from_parts(self.core, fallback, self.config)
    }

    crate::protocol::service::define_inner_service_accessors!(core);
}

impl<C, S, F, B, FB> Service<Request<B>> for BindingService<C, S, F>
where
    C: Codec,
    S: A2aService,
    F: Service<Request<B>, Response = Response<FB>>,
    FB: http_body::Body<Data = Bytes> + Send + 'static,
    FB::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = F::Error;
    type Future = ResponseFuture<F::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), F::Error>> {
        self.fallback.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        match C::head(&self.config, &req) {
            Head::Fallback => BindingFuture::inner(self.fallback.call(req)).into(),
            Head::Answer(res) => BindingFuture::ready(res).into(),
            Head::Call(head, span) => {
                crate::telemetry::set_remote_parent(&span, req.headers());
                let call = handle::<C, S, B>(
                    self.core.clone(),
                    self.config.clone(),
                    head,
                    req,
                    span.clone(),
                );
                BindingFuture::call(Box::pin(call.instrument(span.clone())), span).into()
            }
        }
    }
}

/// Records the kind on the call's span (never the error text) and answers
/// in the binding's error shape.
fn answer<C: Codec>(call: &C::Call, span: &tracing::Span, err: &A2aError) -> Response<Body> {
    span.record("error", err.kind().reason());
    C::error_response(call, err)
}

async fn handle<C, S, B>(
    core: S,
    config: Arc<Config>,
    head: C::Head,
    req: Request<B>,
    span: tracing::Span,
) -> Response<Body>
where
    C: Codec,
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let bytes = if C::reads_body(&head) {
        match exchange::read_body(body).await {
            Ok(bytes) => bytes,
            Err(e) => return answer::<C>(&C::Call::default(), &span, &e),
        }
    } else {
        Bytes::new()
    };
    // In a block of its own: the operation, the head's parts and the body's
    // bytes are borrowed here, and a borrowed local stays in the future
    // (moved whole into its box) until its scope ends, across the core's
    // call.
    let (call, expected, request) = {
        let (call, op) = match C::decode(&config, head, parts.uri.query(), &bytes, &span) {
            Ok(decoded) => decoded,
            Err((call, e)) => return answer::<C>(&call, &span, &e),
        };
        if let Err(e) = crate::protocol::check::capability(&config.capabilities, &op) {
            return answer::<C>(&call, &span, &e);
        }
        let expected = Expected::of(&op);
        let mut context = CallContext::from_http_parts(parts);
        context.tenant = op.tenant().to_owned();
        let request = A2aRequest {
            operation: op,
            context,
        };
        (call, expected, request)
    };
    let reply = exchange::call(core, request, C::BINDING)
        .await
        .and_then(|response| exchange::encode_reply(expected, response, &call));
    match reply {
        Ok(Reply::Json(bytes)) => json_response(StatusCode::OK, bytes),
        Ok(Reply::Stream(stream)) => {
            let frames = Traced {
                call: call.clone(),
                span: span.clone(),
            };
            match exchange::open_stream(stream, frames, config.keep_alive).await {
                Ok(res) => res,
                // §6.4, §7.5: an error before the first event is a plain error response.
                Err(e) => answer::<C>(&call, &span, &e),
            }
        }
        Err(e) => answer::<C>(&call, &span, &e),
    }
}

/// The call's stream frames, recording the error that ends the stream on
/// the call's span.
struct Traced<E> {
    call: E,
    span: tracing::Span,
}

impl<E: EncodeFrame> EncodeFrame for Traced<E> {
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
        self.call.event(event)
    }

    fn error(&self, error: &A2aError) -> Bytes {
        self.span.record("error", error.kind().reason());
        self.call.error(error)
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http_body_util::Empty;
    use tower::{Layer, ServiceExt};

    use super::*;
    use crate::types::{AgentCard, AgentInterface};
    use crate::{A2aResponse, ErrorKind, JsonRpcLayer, RestLayer};

    type Core = tower::util::BoxCloneSyncService<A2aRequest, A2aResponse, A2aError>;

    fn core() -> Core {
        Core::new(tower::service_fn(|_: A2aRequest| async {
            Err(A2aError::new(ErrorKind::UnsupportedOperation))
        }))
    }

    #[test]
    fn send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<BindingService<crate::jsonrpc::JsonRpcCodec, Core>>();
        send_sync::<BindingService<crate::rest::RestCodec, Core>>();
    }

    #[tokio::test]
    async fn other_requests_go_to_the_fallback() {
        let card = AgentCard::default()
            .with_interface(AgentInterface::jsonrpc("http://h/rpc"))
            .with_interface(AgentInterface::http_json("http://h/a2a"));
        let teapot = tower::service_fn(|_: Request<Empty<Bytes>>| async {
            let mut res = Response::new(Body::empty());
            *res.status_mut() = StatusCode::IM_A_TEAPOT;
            Ok::<_, Infallible>(res)
        });
        let rest = RestLayer::new(&card)
            .unwrap()
            .fallback(teapot)
            .layer(core());
        let svc = JsonRpcLayer::new(&card)
            .unwrap()
            .fallback(rest)
            .layer(core());
        let status = |path: &'static str| {
            let svc = svc.clone();
            async move {
                let req = Request::get(path).body(Empty::new()).unwrap();
                svc.oneshot(req).await.unwrap().status()
            }
        };
        assert_eq!(status("/elsewhere").await, StatusCode::IM_A_TEAPOT);
        assert_eq!(status("/rpc").await, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(status("/a2a/nowhere").await, StatusCode::NOT_FOUND);
    }
}
