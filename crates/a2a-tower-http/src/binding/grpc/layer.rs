//! [`GrpcBindingLayer`]: applies the gRPC binding to a core service.

use std::sync::Arc;

use tower_layer::Layer;

use super::GrpcBindingService;
use crate::limit::DEFAULT_MAX_BODY_BYTES;
use crate::types::{AgentCapabilities, AgentCard, BINDING_GRPC};
use crate::{ConfigError, NotFound};

/// Serves the card's `GRPC` interface over a core
/// [`A2aService`](crate::A2aService); see the [module docs](super).
#[must_use]
#[derive(Debug, Clone)]
pub struct GrpcBindingLayer<F = NotFound> {
    capabilities: Arc<AgentCapabilities>,
    max_message_bytes: usize,
    fallback: F,
}

impl GrpcBindingLayer {
    /// The binding for the card's `GRPC` interface, with the card's
    /// capabilities (§4.8). Fails if the card has no GRPC interface.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        if card.interface(BINDING_GRPC).is_none() {
            return Err(ConfigError::new("the agent card has no GRPC interface"));
        }
        Ok(Self {
            capabilities: Arc::new(card.capabilities.clone()),
            max_message_bytes: DEFAULT_MAX_BODY_BYTES,
            fallback: NotFound,
        })
    }
}

impl<F> GrpcBindingLayer<F> {
    /// The largest request message decoded (default 4 MiB, the body
    /// limit's default); a larger one is refused with RESOURCE_EXHAUSTED
    /// (PayloadTooLarge). Set it to the body limit of the stack.
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message_bytes = max;
        self
    }

    /// The HTTP service for requests that are not gRPC (default
    /// [`NotFound`]), for example the JSON-RPC and HTTP+JSON bindings over
    /// the same core.
    pub fn fallback<F2>(self, fallback: F2) -> GrpcBindingLayer<F2> {
        GrpcBindingLayer {
            capabilities: self.capabilities,
            max_message_bytes: self.max_message_bytes,
            fallback,
        }
    }
}

impl<S: Clone, F: Clone> Layer<S> for GrpcBindingLayer<F> {
    type Service = GrpcBindingService<S, F>;

    fn layer(&self, core: S) -> Self::Service {
        GrpcBindingService::new(
            core,
            self.fallback.clone(),
            self.capabilities.clone(),
            self.max_message_bytes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn needs_a_grpc_interface() {
        let rpc_only = AgentCard::default().with_interface(AgentInterface::jsonrpc("http://h/"));
        assert!(GrpcBindingLayer::new(&rpc_only).is_err());
        let card = AgentCard::default().with_interface(AgentInterface::new("h:50051", "GRPC"));
        let layer = GrpcBindingLayer::new(&card).unwrap().max_message_bytes(10);
        assert_eq!(layer.max_message_bytes, 10);
    }

    #[test]
    #[allow(deprecated)]
    fn the_former_names_still_build() {
        let card = AgentCard::default().with_interface(AgentInterface::new("h:50051", "GRPC"));
        let layer: crate::GrpcLayer = crate::GrpcLayer::new(&card).unwrap();
        let core = tower::service_fn(|_: crate::A2aRequest| async {
            Err::<crate::A2aResponse, _>(crate::A2aError::new(
                crate::ErrorKind::UnsupportedOperation,
            ))
        });
        let _: crate::GrpcService<_> = layer.layer(core);
    }
}
