//! Ready authentication layers over HTTP requests: bearer JWTs checked
//! against the host's JWKS ([`jwt`], feature `auth-jwt`) and API keys in a
//! header, query parameter or cookie ([`api_key`], feature `auth-api-key`).
//!
//! Each layer inserts the caller's principal into the request extensions
//! (where `Authority::principal` and the agent read it), and answers a
//! request it refuses with `401`, a `WWW-Authenticate` challenge and an
//! `Unauthenticated` error shaped for the binding the path belongs to
//! (once [`SecuredLayer::secure`] has shown the layer the card; HTTP+JSON's
//! `google.rpc.Status` shape before).
//!
//! # The card and the enforcement agree
//!
//! Every layer here is a [`SecuredLayer`]: [`SecuredLayer::secure`] writes
//! the scheme it enforces into a card's `securitySchemes` (under the
//! layer's scheme name, replacing what was there) and adds that scheme to
//! **every** `securityRequirements` entry, or adds a requirement of that
//! scheme alone when the card has none. Since the layer refuses every
//! request without its credential, no requirement of the served card then
//! names a way in that the layer would refuse; two layers stacked declare
//! both schemes in one requirement, as both are enforced. The server
//! builder's `authenticate(layer)` calls `secure` on the card it serves and
//! adds the layer as an HTTP layer, so the one call does both.
//!
//! ```
//! # #[cfg(feature = "auth-api-key")] {
//! use a2a_tower::auth::SecuredLayer;
//! use a2a_tower::auth::api_key::ApiKeyLayer;
//! use a2a_tower::types::{AgentCard, SecurityScheme};
//!
//! let mut card = AgentCard::new("Doc", "Keyed", "1.0.0");
//! let mut layer = ApiKeyLayer::header("x-api-key").key("k-1", "alice".to_owned());
//! layer.secure(&mut card);
//! assert!(matches!(card.security_schemes["apiKey"], SecurityScheme::ApiKey(_)));
//! assert!(card.security_requirements[0].schemes.contains_key("apiKey"));
//! # }
//! ```

#[cfg(feature = "auth-api-key")]
pub mod api_key;
#[cfg(feature = "auth-jwt")]
pub mod jwt;

use std::sync::Arc;

use http::{HeaderValue, Request, Response, header};

use crate::plumbing::routes::{Routes, error_response, rest_error_response};
use crate::types::{AgentCard, ScopeList, SecurityRequirement, SecurityScheme};
use crate::{A2aError, Body, ErrorKind};

/// A layer that enforces one security scheme, and declares it in the card
/// it serves (see the [module docs](self)).
pub trait SecuredLayer {
    /// Declares the scheme this layer enforces in `card` (scheme and
    /// requirements) and shapes the layer's refusals for `card`'s bindings.
    fn secure(&mut self, card: &mut AgentCard);
}

/// Writes `scheme` under `name` into `card` and adds `name` to every
/// requirement (or a requirement of `name` alone when there is none).
pub(crate) fn declare(card: &mut AgentCard, name: &str, scheme: SecurityScheme) {
    card.security_schemes.insert(name.to_owned(), scheme);
    if card.security_requirements.is_empty() {
        card.security_requirements
            .push(SecurityRequirement::default());
    }
    for requirement in &mut card.security_requirements {
        requirement
            .schemes
            .entry(name.to_owned())
            .or_insert_with(ScopeList::default);
    }
}

/// How a layer answers a request it refuses: `401`, the challenge, and an
/// `Unauthenticated` error in the shape of the request's binding
/// (HTTP+JSON's when the layer knows no card or the path is no binding's).
#[derive(Debug, Clone, Default)]
pub(crate) struct Refusals {
    routes: Option<Arc<Routes>>,
}

impl Refusals {
    /// Refusals shaped for `card`'s bindings.
    pub(crate) fn of(card: &AgentCard) -> Self {
        Self {
            routes: Routes::from_card(card).ok().map(Arc::new),
        }
    }

    /// The `401` for `req`, with `challenge` as `WWW-Authenticate`.
    pub(crate) fn refuse<B>(&self, req: &Request<B>, challenge: &str) -> Response<Body> {
        let err = A2aError::new(ErrorKind::Unauthenticated);
        let binding = self.routes.as_ref().and_then(|r| r.binding_of(req));
        let mut res = match binding {
            Some(binding) => error_response(binding, &err),
            None => rest_error_response(&err),
        };
        *res.status_mut() = http::StatusCode::UNAUTHORIZED;
        if let Ok(v) = HeaderValue::from_str(challenge) {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentInterface;

    #[test]
    fn declare_adds_the_scheme_to_every_requirement() {
        let mut card = AgentCard::default();
        let scheme = SecurityScheme::ApiKey(Default::default());
        declare(&mut card, "a", scheme.clone());
        assert_eq!(card.security_requirements.len(), 1);
        card.security_requirements
            .push(SecurityRequirement::default());
        declare(&mut card, "b", scheme);
        for r in &card.security_requirements {
            assert!(r.schemes.contains_key("b"));
        }
        assert!(card.security_requirements[0].schemes.contains_key("a"));
        assert_eq!(card.security_schemes.len(), 2);
    }

    #[test]
    fn refusals_follow_the_binding() {
        let card = AgentCard::default()
            .with_interface(AgentInterface::jsonrpc("http://h/rpc"))
            .with_interface(AgentInterface::http_json("http://h/rest"));
        let refusals = Refusals::of(&card);
        let req = Request::post("/rpc").body(()).unwrap();
        let res = refusals.refuse(&req, "Bearer");
        assert_eq!(res.status(), 401);
        assert_eq!(res.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let res = Refusals::default().refuse(&req, "Bearer");
        assert_eq!(res.status(), 401);
    }
}
