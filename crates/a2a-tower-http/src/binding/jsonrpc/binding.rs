//! [`JsonRpcCodec`]: the JSON-RPC binding's part of the generic binding
//! service: `POST` on the card's JSON-RPC path, a JSON body in the envelope,
//! answers and errors under the request's id.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, JsonRpcLayer};
//! use http_body_util::Empty;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
//! let core = tower::service_fn(|_: A2aRequest| async {
//!     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
//! });
//! let svc = JsonRpcLayer::new(&card).unwrap().layer(core);
//! let req = http::Request::get("/rpc").body(Empty::<bytes::Bytes>::new()).unwrap();
//! let res = svc.oneshot(req).await.unwrap();
//! assert_eq!(res.status(), 405);
//! assert_eq!(res.headers()["allow"], "POST");
//! # });
//! ```

use bytes::Bytes;
use http::{HeaderValue, Method as HttpMethod, Request, Response, header};

use super::codec::{self, Id};
use crate::binding::codec::{Config, Head, sealed::Sealed};
use crate::binding::exchange::{EncodeResult, MediaType};
use crate::binding::sse::EncodeFrame;
use crate::plumbing::routes::jsonrpc_error_response;
use crate::types::StreamResponse;
use crate::{A2aError, Body, ConfigError, ErrorKind, Operation};

/// The JSON-RPC 2.0 wire format (a2a-spec.md §6), as the
/// [`Codec`](crate::binding::Codec) of [`JsonRpcLayer`](super::JsonRpcLayer)
/// and [`JsonRpcService`](super::JsonRpcService).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonRpcCodec;

impl Sealed for JsonRpcCodec {
    type Head = ();
    type Call = Envelope;

    const BINDING: &'static str = crate::types::BINDING_JSONRPC;

    fn require(config: &Config) -> Result<(), ConfigError> {
        match config.routes.jsonrpc_path() {
            Some(_) => Ok(()),
            None => Err(ConfigError::new("the agent card has no JSONRPC interface")),
        }
    }

    fn head<B>(config: &Config, req: &Request<B>) -> Head<()> {
        if !config.routes.is_jsonrpc(req.uri().path()) {
            return Head::Fallback;
        }
        if req.method() != HttpMethod::POST {
            let err = A2aError::new(ErrorKind::MethodNotAllowed);
            let mut res = jsonrpc_error_response(&serde_json::Value::Null, &err);
            res.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return Head::Answer(res);
        }
        if MediaType::of(req.headers()) != MediaType::Json {
            let err = A2aError::new(ErrorKind::UnsupportedMediaType);
            return Head::Answer(jsonrpc_error_response(&serde_json::Value::Null, &err));
        }
        let span = tracing::info_span!(
            "a2a.jsonrpc",
            otel.kind = "server",
            rpc.system = "jsonrpc",
            rpc.method = tracing::field::Empty,
            http.request.method = "POST",
            url.path = req.uri().path(),
            http.response.status_code = tracing::field::Empty,
            method = tracing::field::Empty,
            error = tracing::field::Empty,
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
        );
        Head::Call((), span)
    }

    fn reads_body(_: &()) -> bool {
        true
    }

    fn decode(
        config: &Config,
        _: (),
        _: Option<&str>,
        body: &Bytes,
        span: &tracing::Span,
    ) -> Result<(Envelope, Operation), (Envelope, A2aError)> {
        match codec::decode_with(body, &config.extensions) {
            Ok((id, op)) => {
                span.record("method", op.method());
                span.record("rpc.method", op.method());
                Ok((Envelope(id), op))
            }
            Err(e) => Err((Envelope(e.id), e.error)),
        }
    }

    fn error_response(call: &Envelope, error: &A2aError) -> Response<Body> {
        jsonrpc_error_response(&call.0.to_value(), error)
    }
}

/// The framing of one JSON-RPC call: every answer, event and error is a full
/// response with the request's id (`null` until the id is read).
#[derive(Debug, Clone, Default)]
pub struct Envelope(Id);

impl EncodeResult for Envelope {
    fn encode_sized<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
        len: usize,
    ) -> Result<Bytes, A2aError> {
        codec::encode_result_sized(&self.0, value, len)
    }
}

impl EncodeFrame for Envelope {
    fn event(&self, event: &StreamResponse) -> Result<Bytes, A2aError> {
        codec::encode_result(&self.0, event)
    }

    fn error(&self, error: &A2aError) -> Bytes {
        codec::encode_error(&self.0, error)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::types::{AgentCard, AgentInterface};
    use crate::{ExtensionMethod, JsonRpcLayer};

    #[test]
    fn needs_a_jsonrpc_interface() {
        let rest_only = AgentCard::default().with_interface(AgentInterface::http_json("http://h/"));
        assert!(JsonRpcLayer::new(&rest_only).is_err());
        let bad = AgentCard::default().with_interface(AgentInterface::jsonrpc("/rel"));
        assert!(JsonRpcLayer::new(&bad).is_err());
        let ok = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
        let layer = JsonRpcLayer::new(&ok).unwrap().keep_alive(Duration::ZERO);
        assert_eq!(layer.config.keep_alive, None);
        // The path is the base of the card's paths: `/` below it.
        let routes = &layer.config.routes;
        assert_eq!((routes.base(), routes.jsonrpc_path()), ("/rpc", Some("/")));
    }

    #[test]
    fn extension_methods_are_checked() {
        let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
        let layer = JsonRpcLayer::new(&card).unwrap();
        let layer = layer
            .extension_method(ExtensionMethod::new("GetContextQueue"))
            .unwrap();
        assert_eq!(
            layer.config.extensions.method("GetContextQueue"),
            Some("GetContextQueue")
        );
        let clash = ExtensionMethod::new("Other").route(http::Method::GET, "/tasks/{id}");
        for m in [
            ExtensionMethod::new("GetTask"),
            ExtensionMethod::new("GetContextQueue"),
            clash,
        ] {
            assert!(layer.clone().extension_method(m).is_err());
        }
    }
}
