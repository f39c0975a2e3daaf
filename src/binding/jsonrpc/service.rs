//! [`JsonRpcService`]: the HTTP ⇄ [`A2aRequest`] bridge of the JSON-RPC binding.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method as HttpMethod, Request, Response, StatusCode, header};
use tower_service::Service;
use tracing::Instrument;

use super::ResponseFuture;
use super::codec::{self, Id};
use crate::binding::exchange::{self, EncodeResult, Expected, MediaType, Reply};
use crate::binding::extension_method::ExtensionMethods;
use crate::binding::sse::EncodeFrame;
use crate::plumbing::future::BindingFuture;
use crate::plumbing::routes::{Routes, json_response, jsonrpc_error_response};
use crate::types::{AgentCapabilities, StreamResponse};
use crate::{A2aError, A2aRequest, A2aService, Body, BoxError, CallContext, ErrorKind, NotFound};

/// Shared configuration of a [`JsonRpcService`] service.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) routes: Routes,
    pub(crate) capabilities: AgentCapabilities,
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) extensions: ExtensionMethods,
}

/// The JSON-RPC binding over a core `S`; other paths go to the fallback `F`.
/// Built by [`JsonRpcLayer`](super::JsonRpcLayer).
///
/// Readiness: `poll_ready` is the fallback's. The core is driven lazily: each
/// JSON-RPC call clones it and waits for its readiness inside the response
/// future (as axum does for routes), so a busy core delays the calls that
/// need it rather than requests that go to the fallback, and no reserved
/// capacity of the core is held between `poll_ready` and `call`.
#[derive(Debug, Clone)]
pub struct JsonRpcService<S, F = NotFound> {
    core: S,
    fallback: F,
    config: Arc<Config>,
}

impl<S, F> JsonRpcService<S, F> {
    pub(crate) fn from_parts(core: S, fallback: F, config: Arc<Config>) -> Self {
        Self {
            core,
            fallback,
            config,
        }
    }

    /// Replaces the service for requests on other paths.
    pub fn fallback<F2>(self, fallback: F2) -> JsonRpcService<S, F2> {
        JsonRpcService {
            core: self.core,
            fallback,
            config: self.config,
        }
    }

    crate::protocol::service::define_inner_service_accessors!(core);
}

impl<S, F, B, FB> Service<Request<B>> for JsonRpcService<S, F>
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
        if !self.config.routes.is_jsonrpc(req.uri().path()) {
            return BindingFuture::inner(self.fallback.call(req)).into();
        }
        if req.method() != HttpMethod::POST {
            let err = A2aError::new(ErrorKind::MethodNotAllowed);
            let mut res = jsonrpc_error_response(&serde_json::Value::Null, &err);
            res.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return BindingFuture::ready(res).into();
        }
        if MediaType::of(req.headers()) != MediaType::Json {
            let err = A2aError::new(ErrorKind::UnsupportedMediaType);
            return BindingFuture::ready(jsonrpc_error_response(&serde_json::Value::Null, &err))
                .into();
        }
        let span = tracing::info_span!(
            "a2a.jsonrpc",
            method = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let call = handle(self.core.clone(), self.config.clone(), req);
        BindingFuture::call(Box::pin(call.instrument(span))).into()
    }
}

/// Records the kind on the call's span (never the error text) and answers.
fn error_response(id: &Id, err: &A2aError) -> Response<Body> {
    tracing::Span::current().record("error", err.kind().reason());
    jsonrpc_error_response(&id.to_value(), err)
}

async fn handle<S, B>(core: S, config: Arc<Config>, req: Request<B>) -> Response<Body>
where
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let bytes = match exchange::read_body(body).await {
        Ok(bytes) => bytes,
        Err(e) => return error_response(&Id::Null, &e),
    };
    let (id, op) = match codec::decode_with(&bytes, &config.extensions) {
        Ok(decoded) => decoded,
        Err(e) => return error_response(&e.id, &e.error),
    };
    tracing::Span::current().record("method", op.method());
    if let Err(e) = crate::protocol::check::capability(&config.capabilities, &op) {
        return error_response(&id, &e);
    }
    let expected = Expected::of(&op);
    let mut context = CallContext::from_http_parts(parts);
    context.tenant = op.tenant().to_owned();
    let request = A2aRequest {
        operation: op,
        context,
    };
    let reply = exchange::call(core, request)
        .await
        .and_then(|response| exchange::encode_reply(expected, response, &Envelope(&id)));
    match reply {
        Ok(Reply::Json(bytes)) => json_response(StatusCode::OK, bytes),
        Ok(Reply::Stream(stream)) => {
            let frames = Frames {
                id: id.clone(),
                span: tracing::Span::current(),
            };
            match exchange::open_stream(stream, frames, config.keep_alive).await {
                Ok(res) => res,
                // §6.4 [REC]: an error before the first event is a plain JSON error.
                Err(e) => error_response(&id, &e),
            }
        }
        Err(e) => error_response(&id, &e),
    }
}

/// Complete answers of the JSON-RPC binding: the result in an envelope.
struct Envelope<'a>(&'a Id);

impl EncodeResult for Envelope<'_> {
    fn encode<T: serde::Serialize + ?Sized>(&self, value: &T) -> Result<Bytes, A2aError> {
        codec::encode_result(self.0, value)
    }
}

/// SSE payloads of the JSON-RPC binding: full responses with the request's id.
struct Frames {
    id: Id,
    span: tracing::Span,
}

impl EncodeFrame for Frames {
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
        codec::encode_result(&self.id, event)
    }

    fn error(&self, error: &A2aError) -> Bytes {
        self.span.record("error", error.kind().reason());
        codec::encode_error(&self.id, error)
    }
}
