//! `AgentCard` and the parts that describe an agent: interfaces, capabilities,
//! extensions, skills and signatures.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::serde_util::{is_false, null_default};
use super::{Metadata, SecurityRequirement, SecurityScheme};

/// The `protocolBinding` of the JSON-RPC interface.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The `protocolBinding` of the HTTP+JSON interface.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The `protocolBinding` of the gRPC interface.
pub const BINDING_GRPC: &str = "GRPC";

/// A self-describing manifest of an agent, served at `/.well-known/agent-card.json`.
///
/// ```
/// use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
/// let card = AgentCard::new("Echo", "Repeats what it hears", "1.0.0")
///     .with_interface(AgentInterface::jsonrpc("http://127.0.0.1:8080/"))
///     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"));
/// let json = serde_json::to_value(&card).unwrap();
/// assert_eq!(json["supportedInterfaces"][0]["protocolVersion"], "1.0");
/// assert_eq!(json["defaultInputModes"], serde_json::json!(["text/plain"]));
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Human-readable description.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// Interfaces, in order of preference.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "supported_interfaces"
    )]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The provider of the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version (not the protocol version).
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    /// Documentation URL.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "documentation_url"
    )]
    pub documentation_url: Option<String>,
    /// Capabilities.
    #[serde(default, deserialize_with = "null_default")]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_schemes",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Security requirements (any one entry suffices).
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted as input by default.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "default_input_modes"
    )]
    pub default_input_modes: Vec<String>,
    /// Media types produced as output by default.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "default_output_modes"
    )]
    pub default_output_modes: Vec<String>,
    /// Skills.
    #[serde(default, deserialize_with = "null_default")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures of the card.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon URL.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "icon_url")]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// A card with the given name, description and agent version, text in and
    /// text out by default, and no interfaces or skills yet.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            version: version.into(),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            ..Self::default()
        }
    }

    /// Appends an interface.
    #[must_use]
    pub fn with_interface(mut self, interface: AgentInterface) -> Self {
        self.supported_interfaces.push(interface);
        self
    }

    /// Appends a skill.
    #[must_use]
    pub fn with_skill(mut self, skill: AgentSkill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Sets `capabilities.streaming`.
    #[must_use]
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.capabilities.streaming = Some(streaming);
        self
    }

    /// Sets `capabilities.pushNotifications`.
    #[must_use]
    pub fn with_push_notifications(mut self, push: bool) -> Self {
        self.capabilities.push_notifications = Some(push);
        self
    }

    /// The first interface with the given binding.
    pub fn interface(&self, binding: &str) -> Option<&AgentInterface> {
        self.supported_interfaces
            .iter()
            .find(|i| i.protocol_binding == binding)
    }
}

/// One endpoint of the agent: URL, binding, protocol version and optional tenant.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Absolute URL of the endpoint.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC` or a custom binding URI.
    #[serde(default, deserialize_with = "null_default", alias = "protocol_binding")]
    pub protocol_binding: String,
    /// Tenant to echo in every request; empty when unset.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Protocol version, `1.0`.
    #[serde(default, deserialize_with = "null_default", alias = "protocol_version")]
    pub protocol_version: String,
}

impl AgentInterface {
    /// An interface with the given URL and binding, protocol version `1.0`.
    pub fn new(url: impl Into<String>, binding: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            protocol_binding: binding.into(),
            tenant: String::new(),
            protocol_version: "1.0".into(),
        }
    }

    /// A gRPC interface at `url`, which is `host:port` (§8).
    pub fn grpc(url: impl Into<String>) -> Self {
        Self::new(url, BINDING_GRPC)
    }

    /// A JSON-RPC interface at `url`.
    pub fn jsonrpc(url: impl Into<String>) -> Self {
        Self::new(url, BINDING_JSONRPC)
    }

    /// An HTTP+JSON interface at `url`.
    pub fn http_json(url: impl Into<String>) -> Self {
        Self::new(url, BINDING_HTTP_JSON)
    }
}

/// The organisation behind the agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Organisation name.
    #[serde(default, deserialize_with = "null_default")]
    pub organization: String,
    /// Organisation URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
}

/// Optional capabilities; an absent flag means false.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Streaming (SendStreamingMessage, SubscribeToTask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notifications"
    )]
    pub push_notifications: Option<bool>,
    /// Supported protocol extensions.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<AgentExtension>,
    /// An extended card for authenticated callers.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "extended_agent_card"
    )]
    pub extended_agent_card: Option<bool>,
}

impl AgentCapabilities {
    /// `streaming` is declared true.
    pub fn streaming(&self) -> bool {
        self.streaming == Some(true)
    }

    /// `pushNotifications` is declared true.
    pub fn push_notifications(&self) -> bool {
        self.push_notifications == Some(true)
    }

    /// `extendedAgentCard` is declared true.
    pub fn extended_agent_card(&self) -> bool {
        self.extended_agent_card == Some(true)
    }
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI.
    #[serde(default, deserialize_with = "null_default")]
    pub uri: String,
    /// How the agent uses it.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Clients must activate it.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub required: bool,
    /// Extension-specific parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A skill of the agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Human-readable name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Description.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// Keywords.
    #[serde(default, deserialize_with = "null_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub examples: Vec<String>,
    /// Input media types (override the card defaults).
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "input_modes",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub input_modes: Vec<String>,
    /// Output media types (override the card defaults).
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "output_modes",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub output_modes: Vec<String>,
    /// Security requirements for this skill.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl AgentSkill {
    /// A skill with the given id, name and description, tagged with its id.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        let id = id.into();
        Self {
            tags: vec![id.clone()],
            id,
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }
}

/// A JWS signature of the card.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// Base64url JWS protected header.
    #[serde(default, deserialize_with = "null_default")]
    pub protected: String,
    /// Base64url signature.
    #[serde(default, deserialize_with = "null_default")]
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}
