//! Checks an agent card when the layer is built: the required fields of
//! a2a-spec.md §2.2 and §2.4, interface URLs, the protocol version, and that
//! the stack can serve every capability the card declares.

use std::collections::BTreeSet;

use crate::ConfigError;
use crate::plumbing::routes::{interface_path, trim_slash};
use crate::types::{
    AgentCard, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, OAuthFlows, SecurityRequirement,
    SecurityScheme,
};

use super::WELL_KNOWN_PATH;

/// The only `protocolVersion` an interface of this stack may declare.
const PROTOCOL_VERSION: &str = "1.0";

/// What the assembled stack can fulfil; a card that declares more is rejected.
///
/// The default matches the crate's own stack: streaming (the JSON-RPC binding
/// serves SSE), no push notifications and no extended card. Turn a capability
/// on only when a layer of the stack really serves it.
///
/// ```
/// use a2a_tower::card::StackCapabilities;
/// let stack = StackCapabilities::default().push_notifications(true);
/// assert!(stack.streaming && stack.push_notifications && !stack.extended_agent_card);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StackCapabilities {
    /// `SendStreamingMessage` and `SubscribeToTask` are served.
    pub streaming: bool,
    /// The push-notification config operations and webhook delivery are served.
    pub push_notifications: bool,
    /// `GetExtendedAgentCard` is served.
    pub extended_agent_card: bool,
    /// The gRPC binding is served (a `GRPC` interface may be declared).
    pub grpc: bool,
}

impl StackCapabilities {
    /// Streaming on; push notifications and the extended card off.
    pub const fn new() -> Self {
        Self {
            streaming: true,
            push_notifications: false,
            extended_agent_card: false,
            grpc: false,
        }
    }

    /// Sets whether streaming is served.
    #[must_use]
    pub const fn streaming(mut self, served: bool) -> Self {
        self.streaming = served;
        self
    }

    /// Sets whether push notifications are served.
    #[must_use]
    pub const fn push_notifications(mut self, served: bool) -> Self {
        self.push_notifications = served;
        self
    }

    /// Sets whether the gRPC binding is served.
    #[must_use]
    pub const fn grpc(mut self, served: bool) -> Self {
        self.grpc = served;
        self
    }

    /// Sets whether the extended agent card is served.
    #[must_use]
    pub const fn extended_agent_card(mut self, served: bool) -> Self {
        self.extended_agent_card = served;
        self
    }
}

impl Default for StackCapabilities {
    fn default() -> Self {
        Self::new()
    }
}

/// Every problem found, so one build reports them all.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, problem: impl Into<String>) {
        self.0.push(problem.into());
    }

    fn required(&mut self, field: &str, value: &str) {
        if value.trim().is_empty() {
            self.add(format!("{field} is required"));
        }
    }

    fn non_empty<T>(&mut self, field: &str, list: &[T]) {
        if list.is_empty() {
            self.add(format!("{field} must have at least one element"));
        }
    }
}

/// Checks the card; on success returns the paths of its interfaces (trailing
/// slashes trimmed), so a later path override can be checked against them.
pub(crate) fn validate(
    card: &AgentCard,
    stack: &StackCapabilities,
) -> Result<Vec<String>, ConfigError> {
    let mut p = Problems::default();
    p.required("name", &card.name);
    p.required("description", &card.description);
    p.required("version", &card.version);
    let paths = interfaces(card, stack.grpc, &mut p);
    if let Some(provider) = &card.provider {
        p.required("provider.organization", &provider.organization);
        p.required("provider.url", &provider.url);
    }
    capabilities(card, stack, &mut p);
    for (field, modes) in [
        ("defaultInputModes", &card.default_input_modes),
        ("defaultOutputModes", &card.default_output_modes),
    ] {
        p.non_empty(field, modes);
        for (i, m) in modes.iter().enumerate() {
            p.required(&format!("{field}[{i}]"), m);
        }
    }
    skills(card, &mut p);
    security(card, &mut p);
    for (i, s) in card.signatures.iter().enumerate() {
        p.required(&format!("signatures[{i}].protected"), &s.protected);
        p.required(&format!("signatures[{i}].signature"), &s.signature);
    }
    if p.0.is_empty() {
        Ok(paths)
    } else {
        Err(ConfigError::new(format!(
            "invalid agent card: {}",
            p.0.join("; ")
        )))
    }
}

fn interfaces(card: &AgentCard, grpc: bool, p: &mut Problems) -> Vec<String> {
    p.non_empty("supportedInterfaces", &card.supported_interfaces);
    let mut paths = Vec::new();
    for (i, itf) in card.supported_interfaces.iter().enumerate() {
        let field = format!("supportedInterfaces[{i}]");
        match itf.protocol_binding.as_str() {
            BINDING_JSONRPC | BINDING_HTTP_JSON => {}
            BINDING_GRPC if grpc => {}
            "" => p.add(format!("{field}.protocolBinding is required")),
            BINDING_GRPC => p.add(format!(
                "{field}.protocolBinding: GRPC is not served by this stack (JSONRPC and HTTP+JSON are)"
            )),
            other => p.add(format!(
                "{field}.protocolBinding: {other:?} is not served by this stack (JSONRPC and HTTP+JSON are)"
            )),
        }
        if itf.url.is_empty() {
            p.add(format!("{field}.url is required"));
        } else if itf.protocol_binding == BINDING_GRPC {
            // §8: a gRPC target, `host:port`.
            let target = itf.url.parse::<http::uri::Authority>();
            if !target.is_ok_and(|a| a.port().is_some() && !a.as_str().contains('@')) {
                p.add(format!("{field}.url: a GRPC interface url is host:port"));
            }
        } else {
            match interface_path(&itf.url) {
                Ok(path) if trim_slash(&path) == WELL_KNOWN_PATH => p.add(format!(
                    "{field}.url: the path {path:?} is the well-known card path"
                )),
                Ok(path) => paths.push(trim_slash(&path).to_owned()),
                Err(e) => p.add(format!("{field}.url: {}", e.message())),
            }
        }
        if itf.protocol_version.is_empty() {
            p.add(format!("{field}.protocolVersion is required"));
        } else if itf.protocol_version != PROTOCOL_VERSION {
            p.add(format!(
                "{field}.protocolVersion {:?} is not served; this stack serves \"{PROTOCOL_VERSION}\"",
                itf.protocol_version
            ));
        }
    }
    paths
}

fn capabilities(card: &AgentCard, stack: &StackCapabilities, p: &mut Problems) {
    let caps = &card.capabilities;
    for (declared, served, name) in [
        (caps.streaming(), stack.streaming, "streaming"),
        (
            caps.push_notifications(),
            stack.push_notifications,
            "pushNotifications",
        ),
        (
            caps.extended_agent_card(),
            stack.extended_agent_card,
            "extendedAgentCard",
        ),
    ] {
        if declared && !served {
            p.add(format!(
                "capabilities.{name} is declared but the stack does not serve it \
                 (see StackCapabilities)"
            ));
        }
    }
    for (i, ext) in caps.extensions.iter().enumerate() {
        p.required(&format!("capabilities.extensions[{i}].uri"), &ext.uri);
    }
}

fn skills(card: &AgentCard, p: &mut Problems) {
    p.non_empty("skills", &card.skills);
    let mut ids = BTreeSet::new();
    for (i, s) in card.skills.iter().enumerate() {
        let field = format!("skills[{i}]");
        p.required(&format!("{field}.id"), &s.id);
        p.required(&format!("{field}.name"), &s.name);
        p.required(&format!("{field}.description"), &s.description);
        p.non_empty(&format!("{field}.tags"), &s.tags);
        if !s.id.is_empty() && !ids.insert(s.id.as_str()) {
            p.add(format!("{field}.id {:?} is not unique", s.id));
        }
        requirements(
            card,
            &format!("{field}.securityRequirements"),
            &s.security_requirements,
            p,
        );
    }
}

fn security(card: &AgentCard, p: &mut Problems) {
    for (name, scheme) in &card.security_schemes {
        let field = format!("securitySchemes[{name:?}]");
        if name.trim().is_empty() {
            p.add("securitySchemes: a scheme name is empty");
        }
        match scheme {
            SecurityScheme::ApiKey(k) => {
                if !matches!(k.location.as_str(), "query" | "header" | "cookie") {
                    p.add(format!(
                        "{field}.location must be \"query\", \"header\" or \"cookie\", not {:?}",
                        k.location
                    ));
                }
                p.required(&format!("{field}.name"), &k.name);
            }
            SecurityScheme::HttpAuth(h) => p.required(&format!("{field}.scheme"), &h.scheme),
            SecurityScheme::OAuth2(o) => match &o.flows {
                None => p.add(format!("{field}.flows is required")),
                Some(flows) => oauth_flows(&format!("{field}.flows"), flows, p),
            },
            SecurityScheme::OpenIdConnect(o) => {
                p.required(&format!("{field}.openIdConnectUrl"), &o.open_id_connect_url);
            }
            SecurityScheme::Mtls(_) => {}
        }
    }
    requirements(card, "securityRequirements", &card.security_requirements, p);
}

fn oauth_flows(field: &str, flows: &OAuthFlows, p: &mut Problems) {
    match flows {
        OAuthFlows::AuthorizationCode(f) => {
            p.required(
                &format!("{field}.authorizationCode.authorizationUrl"),
                &f.authorization_url,
            );
            p.required(&format!("{field}.authorizationCode.tokenUrl"), &f.token_url);
        }
        OAuthFlows::ClientCredentials(f) => {
            p.required(&format!("{field}.clientCredentials.tokenUrl"), &f.token_url);
        }
        OAuthFlows::DeviceCode(f) => {
            p.required(
                &format!("{field}.deviceCode.deviceAuthorizationUrl"),
                &f.device_authorization_url,
            );
            p.required(&format!("{field}.deviceCode.tokenUrl"), &f.token_url);
        }
        OAuthFlows::Implicit(_) | OAuthFlows::Password(_) => {}
    }
}

fn requirements(card: &AgentCard, field: &str, reqs: &[SecurityRequirement], p: &mut Problems) {
    for (i, r) in reqs.iter().enumerate() {
        for name in r.schemes.keys() {
            if !card.security_schemes.contains_key(name) {
                p.add(format!(
                    "{field}[{i}] names the scheme {name:?}, which securitySchemes does not define"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        AgentCardSignature, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
        ApiKeySecurityScheme, ClientCredentialsOAuthFlow, HttpAuthSecurityScheme,
        OAuth2SecurityScheme, ScopeList,
    };

    fn card() -> AgentCard {
        AgentCard::new("Echo", "Repeats", "1.0.0")
            .with_interface(AgentInterface::jsonrpc("https://h.example/a2a"))
            .with_interface(AgentInterface::http_json("https://h.example/rest/"))
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
    }

    /// The build fails and the message names `needle`.
    fn rejects(card: &AgentCard, needle: &str) {
        rejects_with(card, &StackCapabilities::default(), needle);
    }

    fn rejects_with(card: &AgentCard, stack: &StackCapabilities, needle: &str) {
        let err = validate(card, stack).expect_err(needle);
        assert!(
            err.message().contains(needle),
            "{:?} does not mention {needle:?}",
            err.message()
        );
    }

    #[test]
    fn a_complete_card_passes_and_reports_interface_paths() {
        assert_eq!(
            validate(&card(), &StackCapabilities::default()).unwrap(),
            ["/a2a", "/rest"]
        );
    }

    // a2a-spec.md §2.2: REQUIRED fields MUST be present.
    #[test]
    fn required_strings() {
        let mut c = card();
        c.name.clear();
        rejects(&c, "name is required");
        let mut c = card();
        c.description = "  ".into();
        rejects(&c, "description is required");
        let mut c = card();
        c.version.clear();
        rejects(&c, "version is required");
    }

    // a2a-spec.md §2.2 (§5.7): required arrays MUST have at least one element.
    #[test]
    fn required_arrays() {
        let mut c = card();
        c.supported_interfaces.clear();
        rejects(&c, "supportedInterfaces must have at least one element");
        let mut c = card();
        c.default_input_modes.clear();
        rejects(&c, "defaultInputModes must have at least one element");
        let mut c = card();
        c.default_output_modes = vec![String::new()];
        rejects(&c, "defaultOutputModes[0] is required");
        let mut c = card();
        c.skills.clear();
        rejects(&c, "skills must have at least one element");
    }

    // a2a-spec.md §2.2 AgentSkill: id, name, description, tags are required; ids unique.
    #[test]
    fn skill_fields() {
        for (field, edit) in [
            (
                "skills[0].id is required",
                (|s: &mut AgentSkill| s.id.clear()) as fn(&mut _),
            ),
            ("skills[0].name is required", |s| s.name.clear()),
            ("skills[0].description is required", |s| {
                s.description.clear()
            }),
            ("skills[0].tags must have at least one element", |s| {
                s.tags.clear()
            }),
        ] {
            let mut c = card();
            edit(&mut c.skills[0]);
            rejects(&c, field);
        }
        let c = card().with_skill(AgentSkill::new("echo", "Again", "Dup"));
        rejects(&c, "skills[1].id \"echo\" is not unique");
    }

    // a2a-spec.md §2.2 AgentInterface: url, protocolBinding, protocolVersion are required.
    #[test]
    fn interface_fields() {
        let mut c = card();
        c.supported_interfaces[0].url.clear();
        rejects(&c, "supportedInterfaces[0].url is required");
        let mut c = card();
        c.supported_interfaces[1].protocol_binding.clear();
        rejects(&c, "supportedInterfaces[1].protocolBinding is required");
        let mut c = card();
        c.supported_interfaces[0].protocol_version.clear();
        rejects(&c, "supportedInterfaces[0].protocolVersion is required");
    }

    #[test]
    fn interface_urls() {
        for (url, why) in [
            ("ftp://h.example/x", "absolute http(s)"),
            ("/relative", "absolute http(s)"),
            ("http://user:pw@h.example/x", "user-info"),
            ("http://h.example/x?tenant=a", "query"),
            ("http://h.example/x#frag", "fragment"),
            (
                "https://h.example/.well-known/agent-card.json",
                "well-known card path",
            ),
            (
                "https://h.example/.well-known/agent-card.json/",
                "well-known card path",
            ),
        ] {
            let mut c = card();
            c.supported_interfaces[0].url = url.into();
            rejects(&c, why);
        }
    }

    // a2a-spec.md §1.1: the wire protocol version is "1.0".
    #[test]
    fn protocol_version_must_be_1_0() {
        for v in ["0.3", "0.3.0", "1.0.0", "2.0"] {
            let mut c = card();
            c.supported_interfaces[1].protocol_version = v.into();
            rejects(&c, "this stack serves \"1.0\"");
        }
    }

    #[test]
    fn bindings_the_stack_does_not_serve() {
        let c = card().with_interface(AgentInterface::new("h.example:443", BINDING_GRPC));
        rejects(&c, "GRPC is not served");
        let stack = StackCapabilities::new().grpc(true);
        assert!(validate(&c, &stack).is_ok());
        for bad in ["h.example", "http://h.example:443", "u@h.example:443"] {
            let c = card().with_interface(AgentInterface::grpc(bad));
            let err = validate(&c, &stack).unwrap_err();
            assert!(err.message().contains("host:port"), "{bad}");
        }
        let c = card().with_interface(AgentInterface::new(
            "https://h.example/x",
            "https://example.com/bindings/custom",
        ));
        rejects(&c, "is not served by this stack");
    }

    #[test]
    fn capabilities_the_stack_cannot_fulfil() {
        let mut c = card();
        c.capabilities.push_notifications = Some(true);
        rejects(&c, "capabilities.pushNotifications is declared");
        let stack = StackCapabilities::default().push_notifications(true);
        assert!(validate(&c, &stack).is_ok());

        let mut c = card();
        c.capabilities.extended_agent_card = Some(true);
        rejects(&c, "capabilities.extendedAgentCard is declared");
        assert!(validate(&c, &StackCapabilities::new().extended_agent_card(true)).is_ok());

        let c = card().with_streaming(true);
        assert!(validate(&c, &StackCapabilities::default()).is_ok());
        rejects_with(
            &c,
            &StackCapabilities::default().streaming(false),
            "capabilities.streaming is declared",
        );
        // Declared false is fine whatever the stack serves.
        let c = card().with_streaming(false);
        assert!(validate(&c, &StackCapabilities::new().streaming(false)).is_ok());

        let mut c = card();
        c.capabilities.extensions.push(AgentExtension::default());
        rejects(&c, "capabilities.extensions[0].uri is required");
    }

    // a2a-spec.md §2.2 AgentProvider: organization and url are required.
    #[test]
    fn provider_fields() {
        let mut c = card();
        c.provider = Some(AgentProvider {
            organization: "Example".into(),
            url: String::new(),
        });
        rejects(&c, "provider.url is required");
        c.provider = Some(AgentProvider::default());
        rejects(&c, "provider.organization is required");
    }

    // a2a-spec.md §2.4: requirements name declared schemes; scheme required fields.
    #[test]
    fn security() {
        let req = |name: &str| SecurityRequirement {
            schemes: [(name.to_owned(), ScopeList::default())].into(),
        };
        let mut c = card();
        c.security_requirements.push(req("bearer"));
        rejects(&c, "securityRequirements[0] names the scheme \"bearer\"");
        c.security_schemes.insert(
            "bearer".into(),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                ..Default::default()
            }),
        );
        assert!(validate(&c, &StackCapabilities::default()).is_ok());

        c.skills[0].security_requirements.push(req("oauth"));
        rejects(
            &c,
            "skills[0].securityRequirements[0] names the scheme \"oauth\"",
        );
        c.security_schemes.insert(
            "oauth".into(),
            SecurityScheme::OAuth2(OAuth2SecurityScheme::default()),
        );
        rejects(&c, "securitySchemes[\"oauth\"].flows is required");
        c.security_schemes.insert(
            "oauth".into(),
            SecurityScheme::OAuth2(OAuth2SecurityScheme {
                flows: Some(OAuthFlows::ClientCredentials(
                    ClientCredentialsOAuthFlow::default(),
                )),
                ..Default::default()
            }),
        );
        rejects(&c, "flows.clientCredentials.tokenUrl is required");

        let mut c = card();
        c.security_schemes.insert(
            "key".into(),
            SecurityScheme::ApiKey(ApiKeySecurityScheme {
                location: "body".into(),
                name: "X-Key".into(),
                ..Default::default()
            }),
        );
        rejects(&c, "securitySchemes[\"key\"].location must be");
    }

    #[test]
    fn signatures_need_both_parts() {
        let mut c = card();
        c.signatures.push(AgentCardSignature {
            protected: "eyJhbGciOiJFUzI1NiJ9".into(),
            ..Default::default()
        });
        rejects(&c, "signatures[0].signature is required");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let err = validate(&AgentCard::default(), &StackCapabilities::default()).unwrap_err();
        for needle in [
            "name is required",
            "skills must",
            "supportedInterfaces must",
        ] {
            assert!(err.message().contains(needle), "{}", err.message());
        }
    }
}
