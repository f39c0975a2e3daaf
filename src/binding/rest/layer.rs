//! [`RestLayer`]: applies the HTTP+JSON binding to a core service.

use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::service::{Config, RestService};
use crate::binding::extension_method::ExtensionMethods;
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;
use crate::{ConfigError, ExtensionMethod, NotFound};

/// Serves the card's HTTP+JSON interface over a core
/// [`A2aService`](crate::A2aService); see the [module docs](super).
#[must_use]
#[derive(Debug, Clone)]
pub struct RestLayer<F = NotFound> {
    config: Config,
    fallback: F,
}

impl RestLayer {
    /// The binding for the card's first `HTTP+JSON` interface: its path
    /// prefix and its capabilities (§4.8). Fails if the card has no HTTP+JSON
    /// interface or an interface URL is not an absolute http(s) URL.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let routes = Routes::from_card(card)?;
        if routes.rest_prefix().is_none() {
            return Err(ConfigError::new(
                "the agent card has no HTTP+JSON interface",
            ));
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

impl<F> RestLayer<F> {
    /// Interval of SSE keep-alive comments on idle streams (15 s by
    /// default); `Duration::ZERO` turns them off.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.config.keep_alive = (!interval.is_zero()).then_some(interval);
        self
    }

    /// Serves `method` at its routes (see [`ExtensionMethod`]); a method
    /// without a route is not served here. A name that is a core method or
    /// already registered, or a route that clashes with a core route or a
    /// registered one, is an error.
    pub fn extension_method(mut self, method: ExtensionMethod) -> Result<Self, ConfigError> {
        self.config.extensions.add(method)?;
        Ok(self)
    }

    /// The HTTP service for requests outside the HTTP+JSON prefix and on the
    /// card's JSON-RPC path (default [`NotFound`]), for example a
    /// [`JsonRpcService`](crate::JsonRpcService) service over the same core.
    pub fn fallback<F2>(self, fallback: F2) -> RestLayer<F2> {
        RestLayer {
            config: self.config,
            fallback,
        }
    }
}

impl<S, F: Clone> Layer<S> for RestLayer<F> {
    type Service = RestService<S, F>;

    fn layer(&self, core: S) -> Self::Service {
        RestService::from_parts(core, self.fallback.clone(), Arc::new(self.config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

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
