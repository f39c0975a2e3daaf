//! [`Jwks`]: the keys a [`JwtLayer`](super::JwtLayer) trusts, shared and
//! replaceable.

use std::sync::{Arc, PoisonError, RwLock};

use crate::signing::{SigningError, VerifyingKey};

/// The keys a [`JwtLayer`](super::JwtLayer) trusts: a handle the host keeps
/// to rotate them. A host that fetches its issuer's JWKS URL calls
/// [`replace`](Self::replace) with each fresh copy; requests in flight keep
/// the set they started with, later ones see the new one.
#[derive(Debug, Clone, Default)]
pub struct Jwks(Arc<RwLock<Arc<[VerifyingKey]>>>);

impl Jwks {
    /// A set of `keys`.
    pub fn new(keys: impl IntoIterator<Item = VerifyingKey>) -> Self {
        Self(Arc::new(RwLock::new(keys.into_iter().collect())))
    }

    /// The keys of a JWKS document (`{"keys": [...]}`), a JWK or a PEM
    /// public key ([`VerifyingKey::parse_all`]).
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        Ok(Self::new(VerifyingKey::parse_all(text, None)?))
    }

    /// Replaces the keys, for every layer and service holding this set.
    pub fn replace(&self, keys: impl IntoIterator<Item = VerifyingKey>) {
        let keys: Arc<[VerifyingKey]> = keys.into_iter().collect();
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = keys;
    }

    /// The keys now.
    pub fn keys(&self) -> Arc<[VerifyingKey]> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_is_seen_by_every_clone() {
        let jwk = r#"{"kty":"OKP","crv":"Ed25519","kid":"k1",
            "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        let jwks = Jwks::parse(jwk).unwrap();
        let held = jwks.clone();
        assert_eq!(held.keys()[0].kid(), Some("k1"));
        jwks.replace([]);
        assert!(held.keys().is_empty());
        assert!(Jwks::parse("{}").is_err());
    }
}
