//! [`CredentialSource`]: what the host can present for a card's security
//! scheme; [`Credentials`], the static picks (bearer, basic, API key).

use std::collections::BTreeMap;
use std::fmt;

use crate::types::SecurityScheme;

/// One credential, placed as its scheme says (see
/// [`CredentialPlan`](super::CredentialPlan)). Its `Debug` never shows the
/// secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credential {
    /// A token sent as `Authorization: Bearer TOKEN` (an `httpAuthSecurityScheme`
    /// with scheme `Bearer`, or an OAuth 2.0 / OpenID Connect scheme).
    Bearer(String),
    /// `Authorization: Basic base64(user:password)` (scheme `Basic`).
    Basic {
        /// The user name.
        user: String,
        /// The password.
        password: String,
    },
    /// A key for an `apiKeySecurityScheme`, in its header, query parameter
    /// or cookie.
    ApiKey(String),
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("Bearer(..)"),
            Self::Basic { user, .. } => write!(f, "Basic({user:?}, ..)"),
            Self::ApiKey(_) => f.write_str("ApiKey(..)"),
        }
    }
}

/// What the host presents for the card's security schemes: the client asks
/// for each scheme of a requirement (its name in the card, the scheme, the
/// scopes the requirement lists) and uses the first requirement for which
/// every answer is `Some` and fits the scheme.
pub trait CredentialSource: Send + Sync + 'static {
    /// The credential for the card's scheme `name`, if the host has one.
    fn credential(
        &self,
        name: &str,
        scheme: &SecurityScheme,
        scopes: &[String],
    ) -> Option<Credential>;
}

/// Static credentials: per scheme name, else by kind (a bearer token for a
/// `Bearer`, OAuth 2.0 or OpenID Connect scheme, a user and password for
/// `Basic`, a key for any API key scheme).
///
/// ```
/// use a2a_tower::client::{Credential, CredentialSource, Credentials};
/// use a2a_tower::types::{ApiKeySecurityScheme, SecurityScheme};
/// let key = SecurityScheme::ApiKey(ApiKeySecurityScheme {
///     location: "header".into(), name: "X-API-Key".into(), ..Default::default()
/// });
/// let c = Credentials::new().api_key("k1");
/// assert_eq!(c.credential("key", &key, &[]), Some(Credential::ApiKey("k1".into())));
/// assert_eq!(format!("{c:?}").contains("k1"), false);
/// ```
#[derive(Clone, Default)]
pub struct Credentials {
    bearer: Option<String>,
    basic: Option<(String, String)>,
    api_key: Option<String>,
    named: BTreeMap<String, Credential>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("bearer", &self.bearer.is_some())
            .field("basic", &self.basic.as_ref().map(|(u, _)| u))
            .field("api_key", &self.api_key.is_some())
            .field("named", &self.named.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Credentials {
    /// No credentials.
    pub fn new() -> Self {
        Self::default()
    }

    /// A bearer token for `Bearer`, OAuth 2.0 and OpenID Connect schemes.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// A user and password for `Basic` schemes.
    pub fn basic(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.basic = Some((user.into(), password.into()));
        self
    }

    /// A key for API key schemes.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// `credential` for the card's scheme named `name` only (before the
    /// picks by kind).
    pub fn scheme(mut self, name: impl Into<String>, credential: Credential) -> Self {
        self.named.insert(name.into(), credential);
        self
    }
}

impl CredentialSource for Credentials {
    fn credential(
        &self,
        name: &str,
        scheme: &SecurityScheme,
        _scopes: &[String],
    ) -> Option<Credential> {
        if let Some(c) = self.named.get(name) {
            return Some(c.clone());
        }
        match scheme {
            SecurityScheme::ApiKey(_) => self.api_key.clone().map(Credential::ApiKey),
            SecurityScheme::HttpAuth(h) if h.scheme.eq_ignore_ascii_case("basic") => self
                .basic
                .clone()
                .map(|(user, password)| Credential::Basic { user, password }),
            SecurityScheme::HttpAuth(h) if h.scheme.eq_ignore_ascii_case("bearer") => {
                self.bearer.clone().map(Credential::Bearer)
            }
            SecurityScheme::OAuth2(_) | SecurityScheme::OpenIdConnect(_) => {
                self.bearer.clone().map(Credential::Bearer)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_secret() {
        let c = Credentials::new()
            .bearer("tok-secret")
            .basic("user", "pw-secret")
            .api_key("key-secret")
            .scheme("n", Credential::Bearer("named-secret".into()));
        let shown = format!(
            "{c:?} {:?} {:?}",
            Credential::Bearer("tok-secret".into()),
            Credential::Basic {
                user: "user".into(),
                password: "pw-secret".into()
            }
        );
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("user"));
    }
}
