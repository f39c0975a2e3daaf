//! [`JwtLayer`]: the keys and claims a bearer JWT is checked against.

use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::{Jwks, JwtService};
use crate::auth::{Refusals, SecuredLayer, declare};
use crate::signing::VerifyingKey;
use crate::types::{AgentCard, HttpAuthSecurityScheme, SecurityScheme};

/// Checks bearer JWTs against the host's keys, issuer and audience. See the
/// [module docs](super).
#[derive(Debug, Clone)]
#[must_use]
pub struct JwtLayer {
    pub(super) config: Arc<JwtConfig>,
}

/// What the service checks.
#[derive(Debug, Clone)]
pub(super) struct JwtConfig {
    pub(super) keys: Jwks,
    pub(super) issuer: String,
    pub(super) audience: String,
    pub(super) leeway: Duration,
    pub(super) scheme_name: String,
    pub(super) refusals: Refusals,
}

impl JwtLayer {
    /// A layer accepting tokens signed by one of `keys` (the host's JWKS,
    /// e.g. from [`VerifyingKey::parse_all`]), whose `iss` is `issuer` and
    /// whose `aud` is or contains `audience`. Clock skew 60 s; the card's
    /// scheme name `bearer`.
    pub fn new(
        keys: impl IntoIterator<Item = VerifyingKey>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        Self::with_jwks(Jwks::new(keys), issuer, audience)
    }

    /// A layer trusting the keys of `jwks`, a set the host may replace
    /// later (see [`Jwks::replace`]); otherwise as [`new`](Self::new).
    pub fn with_jwks(jwks: Jwks, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            config: Arc::new(JwtConfig {
                keys: jwks,
                issuer: issuer.into(),
                audience: audience.into(),
                leeway: Duration::from_secs(60),
                scheme_name: "bearer".into(),
                refusals: Refusals::default(),
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut JwtConfig)) -> Self {
        f(Arc::make_mut(&mut self.config));
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 60 s).
    pub fn leeway(self, leeway: Duration) -> Self {
        self.edit(|c| c.leeway = leeway)
    }

    /// The scheme's name in the card's `securitySchemes` (default `bearer`).
    pub fn scheme_name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|c| c.scheme_name = name)
    }

    /// The scheme as the card declares it: HTTP `Bearer`, format `JWT`.
    pub fn scheme(&self) -> SecurityScheme {
        SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
            scheme: "Bearer".into(),
            bearer_format: "JWT".into(),
            ..Default::default()
        })
    }
}

impl SecuredLayer for JwtLayer {
    fn secure(&mut self, card: &mut AgentCard) {
        declare(card, &self.config.scheme_name, self.scheme());
        let refusals = Refusals::of(card);
        Arc::make_mut(&mut self.config).refusals = refusals;
    }
}

impl<S> Layer<S> for JwtLayer {
    type Service = JwtService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        JwtService::new(inner, self.config.clone())
    }
}
