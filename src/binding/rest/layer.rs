//! [`RestLayer`]: applies the HTTP+JSON binding to a core service.

use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::service::{Config, RestService};
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;
use crate::{ConfigError, NotFound};

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
        assert_eq!(layer.config.routes.rest_prefix(), Some("/a2a"));
    }
}
