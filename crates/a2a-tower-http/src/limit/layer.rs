//! [`BodyLimitLayer`]: configuration of the body limit.

use std::sync::Arc;

use tower_layer::Layer;

use super::BodyLimitService;
use crate::ConfigError;
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;

/// The default body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Bounds request bodies, refusing oversized ones with a binding-shaped 413.
/// See the [module docs](crate::limit).
#[derive(Debug, Clone)]
#[must_use]
pub struct BodyLimitLayer {
    routes: Arc<Routes>,
    max: usize,
}

impl BodyLimitLayer {
    /// A layer with the default limit ([`DEFAULT_MAX_BODY_BYTES`]), shaping
    /// refusals for the JSON-RPC and HTTP+JSON interfaces of `card`.
    ///
    /// Fails if an interface URL of the card is not an absolute `http(s)` URL.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        Ok(Self {
            routes: Arc::new(Routes::from_card(card)?),
            max: DEFAULT_MAX_BODY_BYTES,
        })
    }

    /// Sets the limit in bytes. Zero is refused: every JSON-RPC call has a
    /// body, so a zero limit would refuse every call.
    pub fn max_bytes(mut self, max: usize) -> Result<Self, ConfigError> {
        if max == 0 {
            return Err(ConfigError::new("body limit must be at least 1 byte"));
        }
        self.max = max;
        Ok(self)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.max
    }
}

impl<S> Layer<S> for BodyLimitLayer {
    type Service = BodyLimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BodyLimitService::new(inner, Arc::clone(&self.routes), self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn builder() {
        let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/rpc"));
        let layer = BodyLimitLayer::new(&card).unwrap();
        assert_eq!(layer.limit(), DEFAULT_MAX_BODY_BYTES);
        assert_eq!(DEFAULT_MAX_BODY_BYTES, 4_194_304);
        assert_eq!(layer.clone().max_bytes(10).unwrap().limit(), 10);
        assert!(layer.max_bytes(0).is_err());
    }

    #[test]
    fn bad_card_url_is_a_config_error() {
        let card = AgentCard::default().with_interface(AgentInterface::jsonrpc("/relative"));
        assert!(BodyLimitLayer::new(&card).is_err());
    }
}
