//! [`RestCodec`]: the HTTP+JSON binding's part of the generic binding
//! service: routes below the card's HTTP+JSON prefix, bodies and answers as
//! bare ProtoJSON, errors as the `google.rpc.Status` body.
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
//! let req = http::Request::get("/a2a/nowhere").body(Empty::<bytes::Bytes>::new()).unwrap();
//! assert_eq!(svc.oneshot(req).await.unwrap().status(), 404);
//! # });
//! ```

use bytes::Bytes;
use http::{HeaderValue, Request, Response, header};

use super::routes::{self, Refusal, Route};
use crate::binding::codec::{Config, Head, sealed::Sealed};
use crate::binding::exchange::{BareJson, EncodeResult, MediaType};
use crate::binding::sse::EncodeFrame;
use crate::plumbing::routes::{Binding, rest_error_response};
use crate::types::StreamResponse;
use crate::{A2aError, Body, ConfigError, ErrorKind, Operation};

/// The HTTP+JSON wire format (a2a-spec.md §7), as the
/// [`Codec`](crate::binding::Codec) of [`RestLayer`](super::RestLayer) and
/// [`RestService`](super::RestService).
#[derive(Debug, Clone, Copy, Default)]
pub struct RestCodec;

impl Sealed for RestCodec {
    type Head = Route;
    type Call = Frames;

    const BINDING: &'static str = crate::types::BINDING_HTTP_JSON;

    fn require(config: &Config) -> Result<(), ConfigError> {
        match config.routes.rest_prefix() {
            Some(_) => Ok(()),
            None => Err(ConfigError::new(
                "the agent card has no HTTP+JSON interface",
            )),
        }
    }

    fn head<B>(config: &Config, req: &Request<B>) -> Head<Route> {
        let routes = &config.routes;
        let path = req.uri().path();
        let suffix = match routes.binding(path) {
            Some(Binding::Rest) => routes.rest_suffix(path).unwrap_or_default(),
            _ => return Head::Fallback,
        };
        let span = tracing::info_span!(
            "a2a.rest",
            otel.kind = "server",
            http.request.method = req.method().as_str(),
            url.path = path,
            http.route = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
            operation = tracing::field::Empty,
            error = tracing::field::Empty,
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
        );
        let route = match routes::route(req.method(), suffix, &config.extensions) {
            Ok(route) => route,
            Err(refusal) => {
                let allow = match &refusal {
                    Refusal::NotAllowed(allow) => HeaderValue::from_str(allow).ok(),
                    _ => None,
                };
                let mut res = refused(&span, &refusal.error());
                if let Some(allow) = allow {
                    res.headers_mut().insert(header::ALLOW, allow);
                }
                return Head::Answer(res);
            }
        };
        span.record("operation", route.endpoint.operation());
        if let Some(template) = route.endpoint.template() {
            span.record("http.route", template);
        }
        // §7.3: a body is JSON (either media type) or comes without a type.
        if route.reads_body() && MediaType::of(req.headers()) == MediaType::Other {
            let err = A2aError::new(ErrorKind::UnsupportedMediaType);
            return Head::Answer(refused(&span, &err));
        }
        Head::Call(route, span)
    }

    /// GET and DELETE bodies are ignored, never read.
    fn reads_body(route: &Route) -> bool {
        route.reads_body()
    }

    fn decode(
        _: &Config,
        route: Route,
        query: Option<&str>,
        body: &Bytes,
        _: &tracing::Span,
    ) -> Result<(Frames, Operation), (Frames, A2aError)> {
        let op = route
            .decode(query, body)
            .and_then(|op| crate::protocol::check::operation(&op).map(|()| op))
            .map_err(|e| (Frames, e))?;
        Ok((Frames, op))
    }

    fn error_response(_: &Frames, error: &A2aError) -> Response<Body> {
        rest_error_response(error)
    }
}

/// A refusal before the call: the kind on the call's span, the REST body.
fn refused(span: &tracing::Span, err: &A2aError) -> Response<Body> {
    span.record("error", err.kind().reason());
    rest_error_response(err)
}

/// The framing of the HTTP+JSON binding (§7.5): the bare ProtoJSON value of
/// an answer and of each event, `{"error": google.rpc.Status}` for the error
/// that ends a stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct Frames;

impl EncodeResult for Frames {
    fn encode_sized<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
        len: usize,
    ) -> Result<Bytes, A2aError> {
        BareJson.encode_sized(value, len)
    }
}

impl EncodeFrame for Frames {
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
        BareJson.encode(event)
    }

    fn error(&self, error: &A2aError) -> Bytes {
        Bytes::from(serde_json::to_vec(&error.to_rest_error()).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::Request;
    use tower_service::Service;

    use super::*;
    use crate::rest::ResponseFuture;
    use crate::types::{AgentCard, AgentInterface};
    use crate::{A2aRequest, ExtensionMethod, NotFound, RestLayer, RestService};

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn frames_are_bare_and_errors_are_rest_shaped() {
        let f = Frames;
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

    #[test]
    fn needs_an_http_json_interface() {
        let rpc_only = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/"));
        assert!(RestLayer::new(&rpc_only).is_err());
        let bad = AgentCard::default().with_interface(AgentInterface::http_json("/rel"));
        assert!(RestLayer::new(&bad).is_err());
        let ok = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a/"));
        let layer = RestLayer::new(&ok).unwrap().keep_alive(Duration::ZERO);
        assert_eq!(layer.config.keep_alive, None);
        // The prefix is the base of the card's paths: `/` below it.
        let routes = &layer.config.routes;
        assert_eq!((routes.base(), routes.rest_prefix()), ("/a2a", Some("/")));
    }

    #[test]
    fn extension_routes_are_checked() {
        let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a"));
        let get = ExtensionMethod::new("GetContextQueue")
            .route(http::Method::GET, "/contexts/{contextId}/queue");
        let layer = RestLayer::new(&card)
            .unwrap()
            .extension_method(get)
            .unwrap();
        let clashes = [
            ExtensionMethod::new("ListContexts").route(http::Method::GET, "/tasks"),
            ExtensionMethod::new("Again").route(http::Method::GET, "/contexts/{id}/queue"),
            ExtensionMethod::new("GetContextQueue"),
            ExtensionMethod::new("Bad").route(http::Method::GET, "/contexts/{tenant}"),
        ];
        for m in clashes {
            assert!(layer.clone().extension_method(m).is_err());
        }
    }
}
