//! [`VersionLayer`]: which versions the agent serves, and how a missing
//! header is read.

use std::sync::Arc;

use tower_layer::Layer;

use super::VersionService;
use crate::plumbing::routes::Routes;
use crate::types::{AgentCard, BINDING_HTTP_JSON, BINDING_JSONRPC};
use crate::{ConfigError, ProtocolVersion};

/// Checks `A2A-Version` on A2A paths. See the [module docs](crate::version).
#[derive(Debug, Clone)]
#[must_use]
pub struct VersionLayer {
    config: Arc<Config>,
}

/// What the service checks against.
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) routes: Routes,
    /// Versions of the card's JSON-RPC interfaces, sorted, deduplicated.
    pub(super) jsonrpc: Vec<ProtocolVersion>,
    /// Versions of the card's HTTP+JSON interfaces, sorted, deduplicated.
    pub(super) rest: Vec<ProtocolVersion>,
    /// Versions of the card's gRPC interfaces, sorted, deduplicated.
    #[cfg(feature = "grpc")]
    pub(super) grpc: Vec<ProtocolVersion>,
    /// A missing or empty version means 1.0 instead of 0.3.
    pub(super) lenient: bool,
}

fn versions(card: &AgentCard, binding: &str) -> Result<Vec<ProtocolVersion>, ConfigError> {
    let mut out = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_binding == binding)
        .map(|i| {
            i.protocol_version.parse::<ProtocolVersion>().map_err(|_| {
                ConfigError::new(format!(
                    "interface {:?}: protocolVersion {:?} is not Major.Minor",
                    i.url, i.protocol_version
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

impl VersionLayer {
    /// A layer serving, on each binding's path, the `protocolVersion`s the
    /// card declares for that binding.
    ///
    /// Fails if an interface URL is not an absolute `http(s)` URL or a
    /// JSON-RPC or HTTP+JSON interface has no valid `protocolVersion`.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let config = Config {
            routes: Routes::from_card(card)?,
            jsonrpc: versions(card, BINDING_JSONRPC)?,
            rest: versions(card, BINDING_HTTP_JSON)?,
            #[cfg(feature = "grpc")]
            grpc: versions(card, crate::types::BINDING_GRPC)?,
            lenient: false,
        };
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// Lenient mode (off by default): a missing or empty `A2A-Version` means
    /// `1.0` rather than `0.3`, so `curl` users and clients that never send
    /// the header reach a 1.0 agent. This departs from a2a-spec.md §1.3 ("MUST
    /// interpret an empty or missing value as 0.3"); enable it knowingly.
    pub fn lenient(mut self, lenient: bool) -> Self {
        Arc::make_mut(&mut self.config).lenient = lenient;
        self
    }
}

impl<S> Layer<S> for VersionLayer {
    type Service = VersionService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        VersionService::new(inner, Arc::clone(&self.config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn versions_per_binding() {
        let mut old = AgentInterface::jsonrpc("http://h/rpc");
        old.protocol_version = "0.3.0".into();
        let card = AgentCard::default()
            .with_interface(AgentInterface::jsonrpc("http://h/rpc"))
            .with_interface(old)
            .with_interface(AgentInterface::jsonrpc("http://h/rpc2"))
            .with_interface(AgentInterface::http_json("http://h/rest"));
        let layer = VersionLayer::new(&card).unwrap();
        assert_eq!(
            layer.config.jsonrpc,
            [ProtocolVersion::V0_3, ProtocolVersion::V1_0]
        );
        assert_eq!(layer.config.rest, [ProtocolVersion::V1_0]);
        assert!(!layer.config.lenient);
        assert!(layer.lenient(true).config.lenient);
    }

    #[test]
    fn malformed_card_version_is_a_config_error() {
        let mut bad = AgentInterface::http_json("http://h/rest");
        bad.protocol_version = "one".into();
        let card = AgentCard::default().with_interface(bad);
        assert!(VersionLayer::new(&card).is_err());
        let mut empty = AgentInterface::jsonrpc("http://h/rpc");
        empty.protocol_version = String::new();
        let card = AgentCard::default().with_interface(empty);
        assert!(VersionLayer::new(&card).is_err());
    }

    #[test]
    fn other_bindings_are_not_checked() {
        let mut other = AgentInterface::new("h:9000", "OTHER");
        other.protocol_version = "whatever".into();
        let card = AgentCard::default().with_interface(other);
        assert!(VersionLayer::new(&card).is_ok());
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn grpc_versions_are_read() {
        let card = AgentCard::default().with_interface(AgentInterface::new("h:9000", "GRPC"));
        let layer = VersionLayer::new(&card).unwrap();
        assert_eq!(layer.config.grpc, [ProtocolVersion::V1_0]);
        let mut bad = AgentInterface::new("h:9000", "GRPC");
        bad.protocol_version = "whatever".into();
        let card = AgentCard::default().with_interface(bad);
        assert!(VersionLayer::new(&card).is_err());
    }
}
