//! [`BindingsService`]: the JSON-RPC binding, the HTTP+JSON binding, or both chained,
//! as one service type, whichever interfaces the card advertises; with the
//! `grpc` feature, the gRPC binding in front of them when the card has a
//! GRPC interface.

use std::convert::Infallible;
use std::future::{Future, Ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::types::{AgentCard, BINDING_HTTP_JSON, BINDING_JSONRPC};
use crate::{
    A2aService, Body, BoxError, ConfigError, ExtensionMethod, JsonRpcLayer, JsonRpcService,
    RestLayer, RestService,
};

/// The bindings the card advertises over one core: JSON-RPC, HTTP+JSON, or
/// JSON-RPC with HTTP+JSON as its fallback. Paths of neither binding get 404.
/// With the `grpc` feature and a GRPC interface on the card, gRPC requests
/// (by content type) go to the gRPC binding.
#[derive(Debug, Clone)]
pub struct BindingsService<S> {
    kind: Kind<S>,
    #[cfg(feature = "grpc")]
    grpc: Option<crate::GrpcBindingService<S>>,
}

#[derive(Debug, Clone)]
enum Kind<S> {
    JsonRpc(JsonRpcService<S>),
    Rest(RestService<S>),
    Both(JsonRpcService<S, RestService<S>>),
}

/// Builds [`BindingsService`] for a core from the card's interfaces.
#[derive(Debug, Clone)]
#[must_use]
pub struct BindingsLayer {
    jsonrpc: Option<JsonRpcLayer>,
    rest: Option<RestLayer>,
    #[cfg(feature = "grpc")]
    grpc: Option<crate::GrpcBindingLayer>,
}

impl BindingsLayer {
    /// The bindings of the card's `JSONRPC` and `HTTP+JSON` interfaces; an
    /// error when it has neither.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let jsonrpc = card
            .interface(BINDING_JSONRPC)
            .map(|_| JsonRpcLayer::new(card))
            .transpose()?;
        let rest = card
            .interface(BINDING_HTTP_JSON)
            .map(|_| RestLayer::new(card))
            .transpose()?;
        if jsonrpc.is_none() && rest.is_none() {
            return Err(ConfigError::new(
                "the card advertises neither a JSONRPC nor an HTTP+JSON interface",
            ));
        }
        Ok(Self {
            jsonrpc,
            rest,
            #[cfg(feature = "grpc")]
            grpc: card
                .interface(crate::types::BINDING_GRPC)
                .map(|_| crate::GrpcBindingLayer::new(card))
                .transpose()?,
        })
    }

    /// The gRPC binding's largest request message (see
    /// [`GrpcBindingLayer::max_message_bytes`](crate::GrpcBindingLayer::max_message_bytes));
    /// the HTTP bindings are bounded by the body-limit layer alone.
    #[cfg(feature = "grpc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "grpc")))]
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.grpc = self.grpc.map(|l| l.max_message_bytes(max));
        self
    }

    /// Serves `method` on both bindings (see [`ExtensionMethod`]): its name
    /// over JSON-RPC, its routes over HTTP+JSON. A name that is a core
    /// method or already registered, or a route that clashes with a core
    /// route or a registered one, is an error.
    pub fn extension_method(mut self, method: ExtensionMethod) -> Result<Self, ConfigError> {
        self.jsonrpc = self
            .jsonrpc
            .map(|l| l.extension_method(method.clone()))
            .transpose()?;
        self.rest = self.rest.map(|l| l.extension_method(method)).transpose()?;
        Ok(self)
    }

    /// The SSE keep-alive interval of both bindings (15 s by default).
    pub fn keep_alive(mut self, interval: std::time::Duration) -> Self {
        self.jsonrpc = self.jsonrpc.map(|l| l.keep_alive(interval));
        self.rest = self.rest.map(|l| l.keep_alive(interval));
        self
    }
}

impl<S> BindingsService<S> {
    /// The core.
    pub fn get_ref(&self) -> &S {
        match &self.kind {
            Kind::JsonRpc(s) => s.get_ref(),
            Kind::Rest(s) => s.get_ref(),
            Kind::Both(s) => s.get_ref(),
        }
    }

    /// Consumes `self`, returning the core.
    ///
    /// There is no `get_mut`: with both bindings the core is held twice (a
    /// clone per binding), so a change through one would not reach the other.
    pub fn into_inner(self) -> S {
        match self.kind {
            Kind::JsonRpc(s) => s.into_inner(),
            Kind::Rest(s) => s.into_inner(),
            Kind::Both(s) => s.into_inner(),
        }
    }
}

impl<S: Clone> Layer<S> for BindingsLayer {
    type Service = BindingsService<S>;

    fn layer(&self, core: S) -> BindingsService<S> {
        #[cfg(feature = "grpc")]
        let core_for_grpc = core.clone();
        let kind = match (&self.jsonrpc, &self.rest) {
            (Some(j), Some(r)) => Kind::Both(j.clone().fallback(r.layer(core.clone())).layer(core)),
            (Some(j), None) => Kind::JsonRpc(j.layer(core)),
            (None, Some(r)) => Kind::Rest(r.layer(core)),
            (None, None) => unreachable!("BindingsLayer::new requires one binding"),
        };
        BindingsService {
            #[cfg(feature = "grpc")]
            grpc: self.grpc.as_ref().map(|g| g.layer(core_for_grpc)),
            kind,
        }
    }
}

type NotFoundFuture = Ready<Result<Response<Body>, Infallible>>;

#[cfg(feature = "grpc")]
type GrpcFuture = crate::grpc::ResponseFuture<NotFoundFuture>;
/// Without the `grpc` feature the variant is never built.
#[cfg(not(feature = "grpc"))]
type GrpcFuture = NotFoundFuture;

pin_project! {
    /// The response future of [`BindingsService`].
    pub struct ResponseFuture {
        #[pin]
        kind: FutureKind,
    }
}

pin_project! {
    #[project = FutureKindProj]
    enum FutureKind {
        JsonRpc { #[pin] fut: crate::jsonrpc::ResponseFuture<NotFoundFuture> },
        Rest { #[pin] fut: crate::rest::ResponseFuture<NotFoundFuture> },
        Both { #[pin] fut: crate::jsonrpc::ResponseFuture<crate::rest::ResponseFuture<NotFoundFuture>> },
        Grpc { #[pin] fut: GrpcFuture },
    }
}

impl Future for ResponseFuture {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            FutureKindProj::JsonRpc { fut } => fut.poll(cx),
            FutureKindProj::Rest { fut } => fut.poll(cx),
            FutureKindProj::Both { fut } => fut.poll(cx),
            FutureKindProj::Grpc { fut } => fut.poll(cx),
        }
    }
}

impl<S, B> Service<Request<B>> for BindingsService<S>
where
    S: A2aService,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        #[cfg(feature = "grpc")]
        if let Some(g) = &mut self.grpc {
            std::task::ready!(Service::<Request<B>>::poll_ready(g, cx))?;
        }
        match &mut self.kind {
            Kind::JsonRpc(s) => Service::<Request<B>>::poll_ready(s, cx),
            Kind::Rest(s) => Service::<Request<B>>::poll_ready(s, cx),
            Kind::Both(s) => Service::<Request<B>>::poll_ready(s, cx),
        }
    }

    fn call(&mut self, req: Request<B>) -> ResponseFuture {
        #[cfg(feature = "grpc")]
        if let Some(g) = &mut self.grpc
            && crate::binding::grpc::status::is_grpc(req.headers())
        {
            let fut = g.call(req);
            return ResponseFuture {
                kind: FutureKind::Grpc { fut },
            };
        }
        let kind = match &mut self.kind {
            Kind::JsonRpc(s) => FutureKind::JsonRpc { fut: s.call(req) },
            Kind::Rest(s) => FutureKind::Rest { fut: s.call(req) },
            Kind::Both(s) => FutureKind::Both { fut: s.call(req) },
        };
        ResponseFuture { kind }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn needs_one_binding() {
        let card = AgentCard::new("a", "b", "1");
        assert!(BindingsLayer::new(&card).is_err());
        let card = card.with_interface(AgentInterface::http_json("http://h/rest"));
        assert!(BindingsLayer::new(&card).is_ok());
    }

    #[test]
    fn extension_methods_reach_both_bindings() {
        let card = AgentCard::new("a", "b", "1")
            .with_interface(AgentInterface::jsonrpc("http://h/rpc"))
            .with_interface(AgentInterface::http_json("http://h/rest"));
        let get = ExtensionMethod::new("GetContextQueue")
            .route(http::Method::GET, "/contexts/{contextId}/queue");
        let layer = BindingsLayer::new(&card)
            .unwrap()
            .extension_method(get.clone())
            .unwrap();
        assert!(layer.clone().extension_method(get).is_err());
        let clash = ExtensionMethod::new("X").route(http::Method::POST, "/message:send");
        assert!(layer.extension_method(clash).is_err());
        // A JSON-RPC-only card still checks the routes.
        let rpc =
            AgentCard::new("a", "b", "1").with_interface(AgentInterface::jsonrpc("http://h/"));
        let clash = ExtensionMethod::new("X").route(http::Method::GET, "/tasks");
        assert!(
            BindingsLayer::new(&rpc)
                .unwrap()
                .extension_method(clash)
                .is_err()
        );
    }

    #[test]
    fn futures_are_send() {
        fn send<T: Send>() {}
        send::<ResponseFuture>();
        send::<BindingsLayer>();
    }
}
