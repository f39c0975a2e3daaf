//! [`Transport`]: the bindings the client speaks, and the choice of one
//! interface from a card (a2a-spec.md §3: card order, first supported).
//!
//! ```
//! use a2a_tower::client::Transport;
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! let card = AgentCard::new("A", "d", "1")
//!     .with_interface(AgentInterface::http_json("http://h/rest"))
//!     .with_interface(AgentInterface::jsonrpc("http://h/rpc"));
//! let (t, i) = Transport::select(&card, None).unwrap();
//! assert_eq!((t, i.url.as_str()), (Transport::HttpJson, "http://h/rest"));
//! let (t, _) = Transport::select(&card, Some(Transport::JsonRpc)).unwrap();
//! assert_eq!(t, Transport::JsonRpc);
//! ```

use crate::ProtocolVersion;
use crate::types::{AgentCard, AgentInterface, BINDING_HTTP_JSON, BINDING_JSONRPC};

/// A binding the client speaks (more may come: match with a wildcard arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transport {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
    /// gRPC over HTTP/2 (feature `grpc`; see the `grpc` module of the client).
    #[cfg(feature = "grpc")]
    Grpc,
}

/// Every transport of this build, in the order `of_binding` tries them.
const ALL: &[Transport] = &[
    Transport::JsonRpc,
    Transport::HttpJson,
    #[cfg(feature = "grpc")]
    Transport::Grpc,
];

impl Transport {
    /// The card's `protocolBinding` of this transport.
    pub const fn binding(self) -> &'static str {
        match self {
            Self::JsonRpc => BINDING_JSONRPC,
            Self::HttpJson => BINDING_HTTP_JSON,
            #[cfg(feature = "grpc")]
            Self::Grpc => crate::types::BINDING_GRPC,
        }
    }

    /// The span's `rpc.system` (OpenTelemetry semantic conventions):
    /// `jsonrpc`, `grpc`, or `None` for HTTP+JSON (not an RPC protocol).
    pub(crate) const fn rpc_system(self) -> Option<&'static str> {
        match self {
            Self::JsonRpc => Some("jsonrpc"),
            Self::HttpJson => None,
            #[cfg(feature = "grpc")]
            Self::Grpc => Some("grpc"),
        }
    }

    /// The transport of a `protocolBinding` (case-insensitive), if supported.
    pub fn of_binding(binding: &str) -> Option<Self> {
        ALL.iter()
            .copied()
            .find(|t| t.binding().eq_ignore_ascii_case(binding.trim()))
    }

    /// The first interface of `card`, in card order, whose binding the client
    /// speaks (only `only`, when given) and whose `protocolVersion` is 1.0
    /// (a patch component is ignored).
    pub fn select(card: &AgentCard, only: Option<Self>) -> Option<(Self, &AgentInterface)> {
        Self::select_version(card, only, Some(ProtocolVersion::V1_0)).map(|(t, i, _)| (t, i))
    }

    /// Whether the client speaks `version` over this transport (0.3 only
    /// over the JSON bindings).
    #[cfg_attr(not(feature = "grpc"), allow(unused_variables))]
    fn speaks(self, version: ProtocolVersion) -> bool {
        match self {
            #[cfg(feature = "grpc")]
            Self::Grpc => version == ProtocolVersion::V1_0,
            _ => true,
        }
    }

    /// The interface a client uses: with `version` given, the first in card
    /// order of that version (a patch component is ignored); else the first
    /// 1.0 one, or when the card has none, the first 0.3 one. Only bindings
    /// the client speaks (only `only`, when given).
    pub fn select_version(
        card: &AgentCard,
        only: Option<Self>,
        version: Option<ProtocolVersion>,
    ) -> Option<(Self, &AgentInterface, ProtocolVersion)> {
        let of = |want: ProtocolVersion| {
            card.supported_interfaces.iter().find_map(|i| {
                let t = Self::of_binding(&i.protocol_binding)?;
                let v: ProtocolVersion = i.protocol_version.parse().ok()?;
                (v == want && t.speaks(v) && only.is_none_or(|o| o == t)).then_some((t, i, v))
            })
        };
        match version {
            Some(v) => of(v),
            None => of(ProtocolVersion::V1_0).or_else(|| of(ProtocolVersion::V0_3)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::BINDING_GRPC;

    fn iface(binding: &str, version: &str, url: &str) -> AgentInterface {
        AgentInterface {
            url: url.into(),
            protocol_binding: binding.into(),
            protocol_version: version.into(),
            ..AgentInterface::default()
        }
    }

    #[test]
    fn card_order_and_support() {
        let mut card = AgentCard::new("A", "d", "1");
        card.supported_interfaces = vec![
            iface(BINDING_GRPC, "1.0", "grpc"),
            iface(BINDING_JSONRPC, "0.3", "old"),
            iface("https://example.com/custom", "1.0", "custom"),
            iface("http+json", "1.0.2", "rest"),
            iface(BINDING_JSONRPC, "1.0", "rpc"),
        ];
        let pick_in =
            |card: &AgentCard, only| Transport::select(card, only).map(|(t, i)| (t, i.url.clone()));
        let pick = |only| pick_in(&card, only);
        #[cfg(feature = "grpc")]
        assert_eq!(pick(None), Some((Transport::Grpc, "grpc".into())));
        #[cfg(not(feature = "grpc"))]
        assert_eq!(pick(None), Some((Transport::HttpJson, "rest".into())));
        assert_eq!(
            pick(Some(Transport::HttpJson)),
            Some((Transport::HttpJson, "rest".into()))
        );
        assert_eq!(
            pick(Some(Transport::JsonRpc)),
            Some((Transport::JsonRpc, "rpc".into()))
        );
        card.supported_interfaces.truncate(3);
        #[cfg(feature = "grpc")]
        card.supported_interfaces.remove(0);
        assert_eq!(
            pick_in(&card, None),
            None,
            "gRPC, 0.3 and custom bindings only"
        );
        card.supported_interfaces.clear();
        assert_eq!(pick_in(&card, None), None);
    }

    #[test]
    fn a_03_interface_only_when_no_10_one_or_when_asked() {
        let mut card = AgentCard::new("A", "d", "1");
        card.supported_interfaces = vec![
            iface(BINDING_JSONRPC, "0.3.0", "old"),
            iface(BINDING_JSONRPC, "1.0", "new"),
        ];
        let pick = |card: &AgentCard, v| {
            Transport::select_version(card, None, v).map(|(_, i, v)| (i.url.clone(), v))
        };
        assert_eq!(
            pick(&card, None),
            Some(("new".into(), ProtocolVersion::V1_0))
        );
        assert_eq!(
            pick(&card, Some(ProtocolVersion::V0_3)),
            Some(("old".into(), ProtocolVersion::V0_3))
        );
        card.supported_interfaces.truncate(1);
        assert_eq!(
            pick(&card, None),
            Some(("old".into(), ProtocolVersion::V0_3))
        );
        assert_eq!(pick(&card, Some(ProtocolVersion::V1_0)), None);
    }
}
