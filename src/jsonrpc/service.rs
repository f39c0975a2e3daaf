//! [`JsonRpc`]: the HTTP ⇄ [`A2aRequest`] bridge of the JSON-RPC binding.

use std::convert::Infallible;
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, Method as HttpMethod, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use tower_service::Service;
use tracing::Instrument;

use super::codec::{self, Id, Method, Reply};
use super::future::ResponseFuture;
use crate::binding::{Routes, json_response, jsonrpc_error_response};
use crate::sse::{EncodeFrame, SseBody};
use crate::types::{AgentCapabilities, StreamResponse};
use crate::{A2aError, A2aRequest, A2aService, Body, BoxError, CallContext, ErrorKind};

/// Shared configuration of a [`JsonRpc`] service.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) routes: Routes,
    pub(crate) capabilities: AgentCapabilities,
    pub(crate) keep_alive: Option<Duration>,
}

/// The default fallback: `404 Not Found` with an empty body.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotFound;

impl<B> Service<Request<B>> for NotFound {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<B>) -> Self::Future {
        let mut res = Response::new(Body::empty());
        *res.status_mut() = StatusCode::NOT_FOUND;
        std::future::ready(Ok(res))
    }
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
pub struct JsonRpc<S, F = NotFound> {
    core: S,
    fallback: F,
    config: Arc<Config>,
}

impl<S, F> JsonRpc<S, F> {
    pub(crate) fn from_parts(core: S, fallback: F, config: Arc<Config>) -> Self {
        Self {
            core,
            fallback,
            config,
        }
    }

    /// Replaces the service for requests on other paths.
    pub fn fallback<F2>(self, fallback: F2) -> JsonRpc<S, F2> {
        JsonRpc {
            core: self.core,
            fallback,
            config: self.config,
        }
    }

    /// The core service.
    pub fn get_ref(&self) -> &S {
        &self.core
    }
}

impl<S, F, B, FB> Service<Request<B>> for JsonRpc<S, F>
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
            return ResponseFuture::fallback(self.fallback.call(req));
        }
        if req.method() != HttpMethod::POST {
            let err = A2aError::new(ErrorKind::MethodNotAllowed);
            let mut res = jsonrpc_error_response(&serde_json::Value::Null, &err);
            res.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return ResponseFuture::ready(res);
        }
        if !is_json(req.headers()) {
            let err = A2aError::new(ErrorKind::UnsupportedMediaType);
            return ResponseFuture::ready(jsonrpc_error_response(&serde_json::Value::Null, &err));
        }
        let span = tracing::info_span!(
            "a2a.jsonrpc",
            method = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let call = handle(self.core.clone(), self.config.clone(), req);
        ResponseFuture::call(Box::pin(call.instrument(span)))
    }
}

/// `application/json` or `application/a2a+json`, any parameters.
fn is_json(headers: &http::HeaderMap) -> bool {
    let Some(ct) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = ct.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence.eq_ignore_ascii_case("application/a2a+json")
}

/// Records the kind on the call's span (never the error text) and answers.
fn error_response(id: &Id, err: &A2aError) -> Response<Body> {
    tracing::Span::current().record("error", err.kind().reason());
    jsonrpc_error_response(&id.to_value(), err)
}

async fn handle<S, B>(mut core: S, config: Arc<Config>, req: Request<B>) -> Response<Body>
where
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            // A body over the limit (a `LengthLimitError` anywhere in the
            // source chain, e.g. from `A2aBodyLimitLayer`) is 413; any other
            // read failure means the request could not be read:
            // InvalidRequest with id null.
            let kind = if crate::limit::is_length_limit(&e.into()) {
                ErrorKind::PayloadTooLarge
            } else {
                ErrorKind::InvalidRequest
            };
            return error_response(&Id::Null, &A2aError::new(kind));
        }
    };
    let (id, op) = match codec::decode_request(&bytes) {
        Ok(decoded) => decoded,
        Err(e) => return error_response(&e.id, &e.error),
    };
    tracing::Span::current().record("method", op.method());
    if let Err(e) = crate::capability::check(&config.capabilities, &op) {
        return error_response(&id, &e);
    }
    let method = Method::of(&op);
    let mut context = CallContext::from_http_parts(parts);
    context.tenant = op.tenant().to_owned();
    let request = A2aRequest {
        operation: op,
        context,
    };
    if let Err(e) = poll_fn(|cx| core.poll_ready(cx)).await {
        return error_response(&id, &e);
    }
    let response = match core.call(request).await {
        Ok(r) => r,
        Err(e) => return error_response(&id, &e),
    };
    match codec::encode_reply(method, &id, response) {
        Ok(Reply::Json(bytes)) => json_response(StatusCode::OK, bytes),
        Ok(Reply::Stream(mut stream)) => match stream.next().await {
            Some(Ok(first)) => {
                let frames = Frames {
                    id,
                    span: tracing::Span::current(),
                };
                let body = SseBody::new(first, stream, frames, config.keep_alive);
                sse_response(Body::new(body))
            }
            // §6.4 [REC]: an error before the first event is a plain JSON error.
            Some(Err(e)) => error_response(&id, &e),
            // §4.2/§4.6: a stream has at least one event.
            None => error_response(&id, &A2aError::new(ErrorKind::InvalidAgentResponse)),
        },
        Err(e) => error_response(&id, &e),
    }
}

fn sse_response(body: Body) -> Response<Body> {
    let mut res = Response::new(body);
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        let ok = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            is_json(&h)
        };
        assert!(ok("application/json"));
        assert!(ok("Application/JSON; charset=utf-8"));
        assert!(ok("application/a2a+json"));
        assert!(!ok("text/plain"));
        assert!(!ok("application/jsonx"));
        assert!(!is_json(&http::HeaderMap::new()));
    }
}
