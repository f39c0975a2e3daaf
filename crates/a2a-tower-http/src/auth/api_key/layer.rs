//! [`ApiKeyLayer`]: where the key is read and the table of keys.

use std::sync::Arc;

use tower_layer::Layer;

use super::ApiKeyService;
use crate::auth::{Refusals, SecuredLayer, declare};
use crate::types::{AgentCard, ApiKeySecurityScheme, SecurityScheme};

/// Where the key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    Header,
    Query,
    Cookie,
}

impl Location {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Header => "header",
            Self::Query => "query",
            Self::Cookie => "cookie",
        }
    }
}

/// Checks API keys and inserts the principal of the key. See the
/// [module docs](super).
#[must_use]
pub struct ApiKeyLayer<P> {
    pub(super) config: Arc<ApiKeyConfig<P>>,
}

impl<P> Clone for ApiKeyLayer<P> {
    fn clone(&self) -> Self {
        Self {
            config: self.config.clone(),
        }
    }
}

impl<P> std::fmt::Debug for ApiKeyLayer<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The keys are secrets: only their count.
        f.debug_struct("ApiKeyLayer")
            .field("location", &self.config.location)
            .field("name", &self.config.name)
            .field("keys", &self.config.keys.len())
            .finish_non_exhaustive()
    }
}

/// What the service checks.
#[derive(Clone)]
pub(super) struct ApiKeyConfig<P> {
    pub(super) location: Location,
    /// The header, parameter or cookie name (a header's in lower case).
    pub(super) name: String,
    pub(super) keys: Vec<(Vec<u8>, P)>,
    pub(super) scheme_name: String,
    pub(super) refusals: Refusals,
}

impl<P: Clone> ApiKeyLayer<P> {
    fn at(location: Location, name: &str) -> Self {
        let name = match location {
            Location::Header => name.to_ascii_lowercase(),
            _ => name.to_owned(),
        };
        Self {
            config: Arc::new(ApiKeyConfig {
                location,
                name,
                keys: Vec::new(),
                scheme_name: "apiKey".into(),
                refusals: Refusals::default(),
            }),
        }
    }

    /// Keys sent in the header `name` (matched case-insensitively).
    pub fn header(name: &str) -> Self {
        Self::at(Location::Header, name)
    }

    /// Keys sent in the query parameter `name` (percent-decoded).
    pub fn query(name: &str) -> Self {
        Self::at(Location::Query, name)
    }

    /// Keys sent in the cookie `name`.
    pub fn cookie(name: &str) -> Self {
        Self::at(Location::Cookie, name)
    }

    /// Accepts `key`, for `principal`.
    pub fn key(mut self, key: impl Into<String>, principal: P) -> Self {
        let key = key.into().into_bytes();
        Arc::make_mut(&mut self.config).keys.push((key, principal));
        self
    }

    /// The scheme's name in the card's `securitySchemes` (default `apiKey`).
    pub fn scheme_name(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.config).scheme_name = name.into();
        self
    }

    /// The scheme as the card declares it: this placement and name.
    pub fn scheme(&self) -> SecurityScheme {
        SecurityScheme::ApiKey(ApiKeySecurityScheme {
            location: self.config.location.name().into(),
            name: self.config.name.clone(),
            ..Default::default()
        })
    }
}

impl<P: Clone> SecuredLayer for ApiKeyLayer<P> {
    fn secure(&mut self, card: &mut AgentCard) {
        declare(card, &self.config.scheme_name, self.scheme());
        Arc::make_mut(&mut self.config).refusals = Refusals::of(card);
    }
}

impl<S, P> Layer<S> for ApiKeyLayer<P> {
    type Service = ApiKeyService<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        ApiKeyService::new(inner, self.config.clone())
    }
}
