//! [`BindingLayer`]: applies an HTTP binding, filled with its [`Codec`], to a
//! core service.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::{JsonRpcLayer, RestLayer};
//!
//! let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
//! assert!(JsonRpcLayer::new(&card).is_ok());
//! // The card has no HTTP+JSON interface.
//! assert!(RestLayer::new(&card).is_err());
//! ```

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::codec::Codec;
use super::service::BindingService;
use crate::binding::extension_method::ExtensionMethods;
use crate::plumbing::routes::Routes;
use crate::types::{AgentCapabilities, AgentCard};
use crate::{ConfigError, ExtensionMethod, NotFound};

/// Shared configuration of a binding, read from the card.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) routes: Routes,
    pub(crate) capabilities: AgentCapabilities,
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) extensions: ExtensionMethods,
}

/// Serves the card's interface of the binding `C` over a core
/// [`A2aService`](crate::A2aService); other requests go to the fallback `F`.
/// Used as [`JsonRpcLayer`](crate::JsonRpcLayer) and
/// [`RestLayer`](crate::RestLayer), whose module docs say what each serves.
#[must_use]
#[derive(Debug, Clone)]
pub struct BindingLayer<C, F = NotFound> {
    pub(crate) config: Config,
    codec: PhantomData<C>,
    fallback: F,
}

impl<C: Codec> BindingLayer<C> {
    /// The binding for the card's first interface of its kind: its path (the
    /// JSON-RPC path with or without a trailing slash, or the HTTP+JSON
    /// prefix) and the card's capabilities (§4.8). Fails if the card has no
    /// such interface or an interface URL is not an absolute http(s) URL.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let config = Config {
            routes: Routes::from_card(card)?,
            capabilities: card.capabilities.clone(),
            keep_alive: Some(crate::binding::sse::DEFAULT_KEEP_ALIVE),
            extensions: ExtensionMethods::default(),
        };
        C::require(&config)?;
        Ok(Self {
            config,
            codec: PhantomData,
            fallback: NotFound,
        })
    }
}

impl<C, F> BindingLayer<C, F> {
    /// Interval of SSE keep-alive comments on idle streams (15 s by
    /// default); `Duration::ZERO` turns them off.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.config.keep_alive = (!interval.is_zero()).then_some(interval);
        self
    }

    /// Serves `method` (see [`ExtensionMethod`]): over JSON-RPC by its name,
    /// over HTTP+JSON at its routes (a method without a route is not served
    /// there). Both bindings check the name and the routes: a name that is a
    /// core method or already registered, or a route that clashes with a
    /// core route or a registered one, is an error.
    pub fn extension_method(mut self, method: ExtensionMethod) -> Result<Self, ConfigError> {
        self.config.extensions.add(method)?;
        Ok(self)
    }

    /// The HTTP service for requests that are not the binding's (default
    /// [`NotFound`]), for example the other binding over the same core. The
    /// HTTP+JSON binding leaves the card's JSON-RPC path to it.
    pub fn fallback<F2>(self, fallback: F2) -> BindingLayer<C, F2> {
        BindingLayer {
            config: self.config,
            codec: PhantomData,
            fallback,
        }
    }
}

impl<C: Codec, S, F: Clone> Layer<S> for BindingLayer<C, F> {
    type Service = BindingService<C, S, F>;

    fn layer(&self, core: S) -> Self::Service {
        BindingService::from_parts(core, self.fallback.clone(), Arc::new(self.config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::JsonRpcCodec;
    use crate::rest::RestCodec;
    use crate::types::AgentInterface;

    #[test]
    fn each_codec_needs_its_interface() {
        let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
        assert!(BindingLayer::<JsonRpcCodec>::new(&card).is_ok());
        assert!(BindingLayer::<RestCodec>::new(&card).is_err());
    }

    #[test]
    fn the_fallback_keeps_the_config() {
        let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a"));
        let layer = BindingLayer::<RestCodec>::new(&card)
            .unwrap()
            .keep_alive(Duration::from_secs(1))
            .fallback(());
        assert_eq!(layer.config.keep_alive, Some(Duration::from_secs(1)));
        assert_eq!(layer.config.routes.rest_prefix(), Some("/"));
    }
}
