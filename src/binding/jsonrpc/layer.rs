//! [`JsonRpcLayer`]: applies the JSON-RPC binding to a core service.

use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::service::{Config, JsonRpcService};
use crate::binding::extension_method::ExtensionMethods;
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;
use crate::{ConfigError, ExtensionMethod, NotFound};

/// Serves the card's JSON-RPC interface over a core [`A2aService`](crate::A2aService);
/// see the [module docs](super).
#[must_use]
#[derive(Debug, Clone)]
pub struct JsonRpcLayer<F = NotFound> {
    config: Config,
    fallback: F,
}

impl JsonRpcLayer {
    /// The binding for the card's first `JSONRPC` interface: its path (with or
    /// without a trailing slash) and its capabilities (§4.8). Fails if the
    /// card has no JSON-RPC interface or its URL is not an absolute http(s) URL.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let routes = Routes::from_card(card)?;
        if routes.jsonrpc_path().is_none() {
            return Err(ConfigError::new("the agent card has no JSONRPC interface"));
        }
        Ok(Self {
            config: Config {
                routes,
                capabilities: card.capabilities.clone(),
                keep_alive: Some(crate::binding::sse::DEFAULT_KEEP_ALIVE),
                extensions: ExtensionMethods::default(),
            },
            fallback: NotFound,
        })
    }
}

impl<F> JsonRpcLayer<F> {
    /// Interval of SSE keep-alive comments on idle streams (15 s by
    /// default); `Duration::ZERO` turns them off.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.config.keep_alive = (!interval.is_zero()).then_some(interval);
        self
    }

    /// Serves `method` as a JSON-RPC method (see [`ExtensionMethod`]); its
    /// routes are checked but not served here. A name that is a core method
    /// or already registered, or a route that clashes, is an error.
    pub fn extension_method(mut self, method: ExtensionMethod) -> Result<Self, ConfigError> {
        self.config.extensions.add(method)?;
        Ok(self)
    }

    /// The HTTP service for requests on other paths (default [`NotFound`]).
    pub fn fallback<F2>(self, fallback: F2) -> JsonRpcLayer<F2> {
        JsonRpcLayer {
            config: self.config,
            fallback,
        }
    }
}

impl<S, F: Clone> Layer<S> for JsonRpcLayer<F> {
    type Service = JsonRpcService<S, F>;

    fn layer(&self, core: S) -> Self::Service {
        JsonRpcService::from_parts(core, self.fallback.clone(), Arc::new(self.config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

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
