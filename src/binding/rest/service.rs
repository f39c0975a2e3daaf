//! [`RestService`]: the HTTP ⇄ [`A2aRequest`] bridge of the HTTP+JSON binding.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use tower_service::Service;
use tracing::Instrument;

use super::ResponseFuture;
use super::routes::{self, Refusal, Route};
use crate::binding::exchange::{self, BareJson, EncodeResult, Expected, MediaType, Reply};
use crate::binding::extension_method::ExtensionMethods;
use crate::binding::sse::EncodeFrame;
use crate::plumbing::future::BindingFuture;
use crate::plumbing::routes::{Binding, Routes, json_response, rest_error_response};
use crate::types::{AgentCapabilities, StreamResponse};
use crate::{A2aError, A2aRequest, A2aService, Body, BoxError, CallContext, ErrorKind, NotFound};

/// Shared configuration of a [`RestService`] service.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) routes: Routes,
    pub(crate) capabilities: AgentCapabilities,
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) extensions: ExtensionMethods,
}

/// The HTTP+JSON binding over a core `S`; requests outside the interface
/// prefix (and on the card's JSON-RPC path) go to the fallback `F`. Built by
/// [`RestLayer`](super::RestLayer).
///
/// Readiness: `poll_ready` is the fallback's. The core is driven lazily: each
/// call clones it and waits for its readiness inside the response future, so
/// a busy core delays only the calls that need it.
#[derive(Debug, Clone)]
pub struct RestService<S, F = NotFound> {
    core: S,
    fallback: F,
    config: Arc<Config>,
}

impl<S, F> RestService<S, F> {
    pub(crate) fn from_parts(core: S, fallback: F, config: Arc<Config>) -> Self {
        Self {
            core,
            fallback,
            config,
        }
    }

    /// Replaces the service for requests outside the HTTP+JSON prefix.
    pub fn fallback<F2>(self, fallback: F2) -> RestService<S, F2> {
        RestService {
            core: self.core,
            fallback,
            config: self.config,
        }
    }

    crate::protocol::service::define_inner_service_accessors!(core);
}

impl<S, F, B, FB> Service<Request<B>> for RestService<S, F>
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
        let routes = &self.config.routes;
        let path = req.uri().path();
        let suffix = match routes.binding(path) {
            Some(Binding::Rest) => routes.rest_suffix(path).unwrap_or_default(),
            _ => return BindingFuture::inner(self.fallback.call(req)).into(),
        };
        let span = tracing::info_span!(
            "a2a.rest",
            operation = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let route = match routes::route(req.method(), suffix, &self.config.extensions) {
            Ok(route) => route,
            Err(refusal) => {
                let allow = match &refusal {
                    Refusal::NotAllowed(allow) => HeaderValue::from_str(allow).ok(),
                    _ => None,
                };
                let mut res = error_response(&span, &refusal.error());
                if let Some(allow) = allow {
                    res.headers_mut().insert(header::ALLOW, allow);
                }
                return BindingFuture::ready(res).into();
            }
        };
        span.record("operation", route.endpoint.operation());
        // §7.3: a body is JSON (either media type) or comes without a type.
        if route.reads_body() && MediaType::of(req.headers()) == MediaType::Other {
            let err = A2aError::new(ErrorKind::UnsupportedMediaType);
            return BindingFuture::ready(error_response(&span, &err)).into();
        }
        let call = handle(
            self.core.clone(),
            self.config.clone(),
            route,
            req,
            span.clone(),
        );
        BindingFuture::call(Box::pin(call.instrument(span))).into()
    }
}

/// Records the kind on the call's span (never the error text) and answers
/// with the REST error body.
fn error_response(span: &tracing::Span, err: &A2aError) -> Response<Body> {
    span.record("error", err.kind().reason());
    rest_error_response(err)
}

async fn handle<S, B>(
    core: S,
    config: Arc<Config>,
    route: Route,
    req: Request<B>,
    span: tracing::Span,
) -> Response<Body>
where
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let frames = Frames { span: span.clone() };
    match exchange_once(core, &config, route, req, frames).await {
        Ok(res) => res,
        Err(e) => error_response(&span, &e),
    }
}

async fn exchange_once<S, B>(
    core: S,
    config: &Config,
    route: Route,
    req: Request<B>,
    frames: Frames,
) -> Result<Response<Body>, A2aError>
where
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    // GET and DELETE bodies are ignored, never read.
    let bytes = if route.reads_body() {
        exchange::read_body(body).await?
    } else {
        Bytes::new()
    };
    let op = route.decode(parts.uri.query(), &bytes)?;
    crate::protocol::check::operation(&op)?;
    crate::protocol::check::capability(&config.capabilities, &op)?;
    let expected = Expected::of(&op);
    let mut context = CallContext::from_http_parts(parts);
    context.tenant = op.tenant().to_owned();
    let request = A2aRequest {
        operation: op,
        context,
    };
    let response = exchange::call(core, request).await?;
    match exchange::encode_reply(expected, response, &BareJson)? {
        Reply::Json(bytes) => Ok(json_response(StatusCode::OK, bytes)),
        // §7.5: an error before the first event is an ordinary error response.
        Reply::Stream(stream) => exchange::open_stream(stream, frames, config.keep_alive).await,
    }
}

/// SSE payloads of the HTTP+JSON binding (§7.5): a bare StreamResponse per
/// event, `{"error": google.rpc.Status}` for the error that ends the stream.
struct Frames {
    span: tracing::Span,
}

impl EncodeFrame for Frames {
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
        BareJson.encode(event)
    }

    fn error(&self, error: &A2aError) -> Bytes {
        self.span.record("error", error.kind().reason());
        Bytes::from(serde_json::to_vec(&error.to_rest_error()).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn frames_are_bare_and_errors_are_rest_shaped() {
        let f = Frames {
            span: tracing::Span::none(),
        };
        let ev = StreamResponse::Message(crate::types::Message::agent("m", "hi"));
        assert_eq!(f.event(&ev).unwrap(), serde_json::to_vec(&ev).unwrap());
        let err = A2aError::task_not_found("t");
        assert_eq!(
            f.error(&err),
            serde_json::to_vec(&err.to_rest_error()).unwrap()
        );
    }

    #[test]
    fn send_and_sync() {
        type Core = tower::util::BoxCloneSyncService<A2aRequest, crate::A2aResponse, A2aError>;
        assert_send::<RestService<Core>>();
        assert_sync::<RestService<Core>>();
        assert_send::<ResponseFuture<<NotFound as Service<Request<Body>>>::Future>>();
    }
}
