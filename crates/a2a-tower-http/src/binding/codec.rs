//! [`Codec`]: what a binding's wire format tells the one generic binding
//! service ([`BindingService`](crate::binding::BindingService)): whether a
//! request is the binding's, how its body becomes an
//! [`Operation`](crate::Operation), and how an answer, a stream event or an
//! error is written.
//!
//! The JSON-RPC binding fills it with [`JsonRpcCodec`](crate::jsonrpc::JsonRpcCodec),
//! the HTTP+JSON binding with [`RestCodec`](crate::rest::RestCodec); the rest
//! of the exchange (body read, capability check, core call, answer check,
//! SSE) is the service's, shared by both.
//!
//! ```
//! use a2a_tower::jsonrpc::JsonRpcCodec;
//! use a2a_tower::server::BindingLayer;
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::JsonRpcLayer;
//!
//! let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
//! // `JsonRpcLayer` is the generic layer filled with the JSON-RPC codec.
//! let _layer: BindingLayer<JsonRpcCodec> = JsonRpcLayer::new(&card).unwrap();
//! ```

use bytes::Bytes;
use http::{Request, Response};

use crate::binding::exchange::EncodeResult;
use crate::binding::sse::EncodeFrame;
use crate::{A2aError, Body, ConfigError, Operation};

pub(crate) use crate::binding::layer::Config;

/// A binding's wire format over HTTP; implemented by this crate's codecs
/// ([`JsonRpcCodec`](crate::jsonrpc::JsonRpcCodec),
/// [`RestCodec`](crate::rest::RestCodec)) and sealed.
pub trait Codec: sealed::Sealed {}

impl<C: sealed::Sealed> Codec for C {}

/// What the head of a request (method, path, headers) decides.
pub enum Head<H> {
    /// Not the binding's request: the fallback answers it.
    Fallback,
    /// Answered at once, without the core (a refusal).
    Answer(Response<Body>),
    /// A call to the core: what the codec read from the head, and the call's
    /// span (the error kind is recorded on it as `error`).
    Call(H, tracing::Span),
}

pub(crate) mod sealed {
    use super::*;

    /// The codec's part of an exchange; see the [module docs](super).
    pub trait Sealed: Clone + std::fmt::Debug + Send + Sync + 'static {
        /// What the head told the codec, carried into the call (a route).
        type Head: Send + 'static;
        /// The framing of one call (a JSON-RPC id): complete answers, stream
        /// events and errors. `Default` frames an error before anything of
        /// the request was read.
        type Call: EncodeResult + EncodeFrame + Clone + Default + Sync;

        /// The card's `protocolBinding` of this binding (the `binding`
        /// label of the request metrics).
        const BINDING: &'static str;

        /// Fails unless the card (through its routes) has this binding's
        /// interface.
        fn require(config: &Config) -> Result<(), ConfigError>;

        /// Whether `req` is the binding's, refused at once, or a call.
        fn head<B>(config: &Config, req: &Request<B>) -> Head<Self::Head>;

        /// Whether the call reads its body (otherwise the body is ignored).
        fn reads_body(head: &Self::Head) -> bool;

        /// The operation of the call, checked as the binding checks it, and
        /// the call's framing; an error comes with the framing to answer it
        /// in.
        fn decode(
            config: &Config,
            head: Self::Head,
            query: Option<&str>,
            body: &Bytes,
            span: &tracing::Span,
        ) -> Result<(Self::Call, Operation), (Self::Call, A2aError)>;

        /// The HTTP response of an error of the call.
        fn error_response(call: &Self::Call, error: &A2aError) -> Response<Body>;
    }
}
