//! [`ExtensionsLayer`]: the extensions the card declares.

use std::sync::Arc;

use tower_layer::Layer;

use super::ExtensionsService;
use crate::ConfigError;
use crate::plumbing::routes::Routes;
use crate::types::AgentCard;

/// Activates requested extensions and enforces required ones. See the
/// [module docs](crate::extensions).
#[derive(Debug, Clone)]
#[must_use]
pub struct ExtensionsLayer {
    config: Arc<Config>,
}

/// What the service checks against.
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) routes: Routes,
    /// Every URI the card declares, in card order, without duplicates.
    pub(super) declared: Vec<String>,
    /// The declared URIs marked `required`.
    pub(super) required: Vec<String>,
}

impl ExtensionsLayer {
    /// A layer for the extensions `card` declares in `capabilities.extensions`.
    ///
    /// Fails if an interface URL is not an absolute `http(s)` URL, or an
    /// extension URI is empty or not visible ASCII without commas (it could
    /// not be sent or echoed in a header).
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        let mut declared: Vec<String> = Vec::new();
        let mut required: Vec<String> = Vec::new();
        for ext in &card.capabilities.extensions {
            let uri = ext.uri.trim();
            if uri.is_empty() || uri.contains(',') || !uri.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ConfigError::new(format!(
                    "extension uri {:?} must be non-empty visible ASCII without spaces or commas",
                    ext.uri
                )));
            }
            if !declared.iter().any(|d| d == uri) {
                declared.push(uri.to_owned());
            }
            if ext.required && !required.iter().any(|r| r == uri) {
                required.push(uri.to_owned());
            }
        }
        let config = Config {
            routes: Routes::from_card(card)?,
            declared,
            required,
        };
        Ok(Self {
            config: Arc::new(config),
        })
    }
}

impl<S> Layer<S> for ExtensionsLayer {
    type Service = ExtensionsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ExtensionsService::new(inner, Arc::clone(&self.config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentExtension;

    fn ext(uri: &str, required: bool) -> AgentExtension {
        AgentExtension {
            uri: uri.into(),
            required,
            ..AgentExtension::default()
        }
    }

    #[test]
    fn declared_and_required() {
        let mut card = AgentCard::default();
        card.capabilities.extensions =
            vec![ext("urn:a", false), ext("urn:b", true), ext("urn:a", true)];
        let layer = ExtensionsLayer::new(&card).unwrap();
        assert_eq!(layer.config.declared, ["urn:a", "urn:b"]);
        assert_eq!(layer.config.required, ["urn:b", "urn:a"]);
    }

    #[test]
    fn unsendable_uris_are_config_errors() {
        for bad in [
            "",
            " ",
            "urn:a,urn:b",
            "urn:caf\u{e9}",
            "urn:a\nb",
            "urn:a b",
        ] {
            let mut card = AgentCard::default();
            card.capabilities.extensions = vec![ext(bad, false)];
            assert!(ExtensionsLayer::new(&card).is_err(), "{bad:?}");
        }
    }
}
