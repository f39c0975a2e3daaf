//! [`V03Layer`]: serves A2A 0.3 beside 1.0.

use std::sync::Arc;

use tower_layer::Layer;

use super::service::{Config, V03Service};
use crate::ConfigError;
use crate::limit::DEFAULT_MAX_BODY_BYTES;
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;

/// Serves the 0.3 wire of the card's JSON-RPC and HTTP+JSON interfaces
/// through the 1.0 stack inside it; see [the module](super).
#[derive(Debug, Clone)]
pub struct V03Layer {
    config: Arc<Config>,
}

impl V03Layer {
    /// The layer for the interfaces of `card` (the card the stack inside
    /// serves). Fails as the bindings do on an interface URL that is not
    /// HTTP(S).
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        Ok(Self {
            config: Arc::new(Config {
                routes: Routes::from_card(card)?,
                max_body: DEFAULT_MAX_BODY_BYTES,
            }),
        })
    }

    /// The largest 0.3 request body read for conversion (default
    /// [`DEFAULT_MAX_BODY_BYTES`]); a larger one is refused as
    /// PayloadTooLarge.
    pub fn max_body_bytes(self, max: usize) -> Self {
        Self {
            config: Arc::new(Config {
                routes: self.config.routes.clone(),
                max_body: max,
            }),
        }
    }
}

impl<S> Layer<S> for V03Layer {
    type Service = V03Service<S>;

    fn layer(&self, inner: S) -> Self::Service {
        V03Service::new(inner, self.config.clone())
    }
}
