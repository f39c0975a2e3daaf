//! [`GrpcBindingService`]: gRPC requests to the generated `A2AService`, everything
//! else to the fallback.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use tower_service::Service;
use tracing::Instrument;

use super::ResponseFuture;
use super::handler::Handler;
use super::proto::a2a_service_server::A2aServiceServer;
use super::status;
use crate::plumbing::future::BindingFuture;
use crate::types::AgentCapabilities;
use crate::{A2aError, A2aService, Body, BoxError, ErrorKind, NotFound};

/// The gRPC binding over a core `S`: requests with a gRPC content type
/// (`application/grpc`, `application/grpc+proto`, …) are A2A RPCs; any
/// other request goes to the fallback `F`. Built by
/// [`GrpcBindingLayer`](super::GrpcBindingLayer).
///
/// Readiness: `poll_ready` is the fallback's; each call clones the core and
/// waits for its readiness inside the response future.
pub struct GrpcBindingService<S, F = NotFound> {
    core: S,
    server: A2aServiceServer<Handler<S>>,
    fallback: F,
}

impl<S: Clone, F: Clone> Clone for GrpcBindingService<S, F> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            server: self.server.clone(),
            fallback: self.fallback.clone(),
        }
    }
}

impl<S: std::fmt::Debug, F: std::fmt::Debug> std::fmt::Debug for GrpcBindingService<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcBindingService")
            .field("core", &self.core)
            .field("fallback", &self.fallback)
            .finish_non_exhaustive()
    }
}

impl<S: Clone, F> GrpcBindingService<S, F> {
    pub(crate) fn new(
        core: S,
        fallback: F,
        capabilities: Arc<AgentCapabilities>,
        max_message_bytes: usize,
    ) -> Self {
        let server = A2aServiceServer::new(Handler::new(core.clone(), capabilities))
            .max_decoding_message_size(max_message_bytes);
        Self {
            core,
            server,
            fallback,
        }
    }
}

impl<S, F> GrpcBindingService<S, F> {
    /// Replaces the service for requests that are not gRPC.
    pub fn fallback<F2>(self, fallback: F2) -> GrpcBindingService<S, F2> {
        GrpcBindingService {
            core: self.core,
            server: self.server,
            fallback,
        }
    }

    /// The core.
    pub fn get_ref(&self) -> &S {
        &self.core
    }

    /// Consumes `self`, returning the core.
    ///
    /// There is no `get_mut`: the generated service holds a clone of the
    /// core, which a change through `&mut` would not reach.
    pub fn into_inner(self) -> S {
        self.core
    }
}

/// A body error of the length limit (the body-limit layer's `Limited`) as
/// the PayloadTooLarge status, which tonic answers as it is.
fn limit_status<E: Into<BoxError>>(err: E) -> BoxError {
    let err = err.into();
    if crate::limit::is_length_limit(&err) {
        Box::new(status::to_status(&A2aError::new(
            ErrorKind::PayloadTooLarge,
        )))
    } else {
        err
    }
}

/// tonic's own refusals of a request, before the handler runs, carry no
/// details; they are the caller's and are answered with the details every
/// other refusal carries. A message declared larger than the decoding limit
/// (a bare OUT_OF_RANGE) is the body limit: PayloadTooLarge. A bare
/// INTERNAL is a body that is no protobuf message of the RPC's type, a
/// truncated frame, a missing message or a bad compression flag: a
/// ParseError (INVALID_ARGUMENT), never tonic's text. Every status the
/// handler answers has details, so none of its own is taken for these.
fn shape(res: Response<tonic::body::Body>) -> Response<Body> {
    let refused = res
        .extensions()
        .get::<tonic::Status>()
        .filter(|s| s.details().is_empty())
        .and_then(|s| match s.code() {
            tonic::Code::OutOfRange => Some(A2aError::new(ErrorKind::PayloadTooLarge)),
            tonic::Code::Internal => Some(
                A2aError::new(ErrorKind::ParseError)
                    .with_message("The request body is not a protobuf message of the RPC's type"),
            ),
            _ => None,
        });
    if let Some(err) = refused {
        tracing::Span::current().record("error", err.kind().reason());
        return status::error_response(&err);
    }
    res.map(Body::new)
}

impl<S, F, B, FB> Service<Request<B>> for GrpcBindingService<S, F>
where
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
        if !status::is_grpc(req.headers()) {
            return BindingFuture::inner(self.fallback.call(req)).into();
        }
        let span = tracing::info_span!(
            "a2a.grpc",
            otel.kind = "server",
            rpc.system = "grpc",
            rpc.service = "lf.a2a.v1.A2AService",
            rpc.method = tracing::field::Empty,
            http.request.method = "POST",
            url.path = req.uri().path(),
            http.response.status_code = tracing::field::Empty,
            operation = tracing::field::Empty,
            error = tracing::field::Empty,
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
        );
        crate::telemetry::set_remote_parent(&span, req.headers());
        let req = req.map(|b| b.map_err(limit_status::<B::Error>));
        let call = Service::call(&mut self.server, req);
        let call = async move {
            match call.await {
                Ok(res) => shape(res),
                Err(never) => match never {},
            }
        };
        BindingFuture::call(Box::pin(call.instrument(span.clone())), span).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_and_sync() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        type Core =
            tower::util::BoxCloneSyncService<crate::A2aRequest, crate::A2aResponse, A2aError>;
        send::<GrpcBindingService<Core>>();
        sync::<GrpcBindingService<Core>>();
        send::<ResponseFuture<<NotFound as Service<Request<Body>>>::Future>>();
    }

    #[test]
    fn length_limit_errors_become_the_payload_status() {
        let limited =
            http_body_util::Limited::new(http_body_util::Full::new(Bytes::from("abcd")), 1);
        let err = futures_util::FutureExt::now_or_never(limited.collect())
            .unwrap()
            .unwrap_err();
        let mapped = limit_status(err);
        let status = mapped.downcast::<tonic::Status>().unwrap();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        let other = limit_status(std::io::Error::other("x"));
        assert!(other.downcast::<tonic::Status>().is_err());
    }
}
