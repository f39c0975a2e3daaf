//! [`CredentialPlan`]: the credentials a card's security requirements
//! call for, as the host can satisfy them, and their placement on a request.

use std::sync::Arc;

use base64::Engine as _;
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderName, HeaderValue, Request, Uri};

use super::oauth2::{ClientSecret, TokenCache, Tokens};
use super::source::{Credential, CredentialSource};
use crate::client::request::pct;
use crate::types::{AgentCard, OAuthFlows, SecurityScheme};

/// Where one credential goes.
#[derive(Clone)]
enum Placement {
    Header(HeaderName, HeaderValue),
    Query(String, String),
    Cookie(String),
    OAuth2(Tokens),
}

/// The credentials for one card: those of the first of its
/// `securityRequirements` for which the host satisfies every scheme
/// (a2a-spec.md §2.4: the list is an OR, each entry an AND). A card without
/// requirements needs none, and gets none.
///
/// Placement: an `apiKeySecurityScheme` key in the header, query parameter
/// or cookie its `location` and `name` give; `httpAuthSecurityScheme`
/// `Bearer` and `Basic`, OAuth 2.0 and OpenID Connect bearer tokens in
/// `Authorization`. A credential that does not fit its scheme (a key for a
/// `Bearer` scheme, a token with a character a header cannot carry, a mutual
/// TLS scheme) leaves its requirement unsatisfied.
///
/// ```
/// use a2a_tower::client::{CredentialPlan, Credentials};
/// use a2a_tower::types::{AgentCard, ApiKeySecurityScheme, ScopeList, SecurityRequirement, SecurityScheme};
/// let mut card = AgentCard::new("A", "B", "1.0.0");
/// card.security_schemes.insert("key".into(), SecurityScheme::ApiKey(ApiKeySecurityScheme {
///     location: "query".into(), name: "api_key".into(), ..Default::default()
/// }));
/// let mut req = SecurityRequirement::default();
/// req.schemes.insert("key".into(), ScopeList::default());
/// card.security_requirements.push(req);
/// let plan = CredentialPlan::for_card(&card, &Credentials::new().api_key("k 1"));
/// assert_eq!(plan.schemes(), ["key"]);
/// let mut r = http::Request::new(());
/// *r.uri_mut() = "http://h/rpc?x=1".parse().unwrap();
/// plan.apply(&mut r);
/// assert_eq!(r.uri(), "http://h/rpc?x=1&api_key=k%201");
/// ```
#[derive(Clone, Default)]
pub struct CredentialPlan {
    schemes: Vec<String>,
    placements: Arc<[Placement]>,
}

impl std::fmt::Debug for CredentialPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialPlan")
            .field("schemes", &self.schemes)
            .finish_non_exhaustive()
    }
}

/// Whether `s` can be a cookie value (RFC 6265 cookie-octets).
fn cookie_octets(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'))
}

/// The placement of `cred` for `scheme`, if it fits.
fn place(scheme: &SecurityScheme, cred: Credential) -> Option<Placement> {
    let auth = |v: String| Some(Placement::Header(AUTHORIZATION, v.parse().ok()?));
    match (scheme, cred) {
        (SecurityScheme::ApiKey(k), Credential::ApiKey(key)) => {
            match k.location.to_ascii_lowercase().as_str() {
                "header" => Some(Placement::Header(k.name.parse().ok()?, key.parse().ok()?)),
                "query" if !k.name.is_empty() => Some(Placement::Query(pct(&k.name), pct(&key))),
                "cookie" if cookie_octets(&k.name) && cookie_octets(&key) => {
                    Some(Placement::Cookie(format!("{}={key}", k.name)))
                }
                _ => None,
            }
        }
        (SecurityScheme::HttpAuth(h), Credential::Bearer(t))
            if h.scheme.eq_ignore_ascii_case("bearer") =>
        {
            auth(format!("Bearer {t}"))
        }
        (SecurityScheme::HttpAuth(h), Credential::Basic { user, password })
            if h.scheme.eq_ignore_ascii_case("basic") && !user.contains(':') =>
        {
            let b64 =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            auth(format!("Basic {b64}"))
        }
        (SecurityScheme::OAuth2(_) | SecurityScheme::OpenIdConnect(_), Credential::Bearer(t)) => {
            auth(format!("Bearer {t}"))
        }
        _ => None,
    }
}

impl CredentialPlan {
    /// No credentials.
    pub fn none() -> Self {
        Self::default()
    }

    /// The credentials `source` gives for the first requirement of `card`
    /// it satisfies entirely; none when it satisfies none.
    pub fn for_card(card: &AgentCard, source: &dyn CredentialSource) -> Self {
        Self::for_card_with(card, source, None)
    }

    /// As [`for_card`](Self::for_card); an OAuth 2.0 scheme with a
    /// `clientCredentials` flow the source has no token for is satisfied by
    /// `client`'s tokens from that flow's `tokenUrl`.
    pub(crate) fn for_card_with(
        card: &AgentCard,
        source: &dyn CredentialSource,
        client: Option<&ClientSecret>,
    ) -> Self {
        'req: for req in &card.security_requirements {
            let mut placements = Vec::new();
            for (name, scopes) in &req.schemes {
                let Some(scheme) = card.security_schemes.get(name) else {
                    continue 'req;
                };
                let fetched = || match (client, scheme) {
                    (Some(c), SecurityScheme::OAuth2(o)) => match &o.flows {
                        Some(OAuthFlows::ClientCredentials(f)) => {
                            TokenCache::new(&f.token_url, &scopes.0, c.clone())
                                .map(|t| Placement::OAuth2(Arc::new(t)))
                        }
                        _ => None,
                    },
                    (Some(c), SecurityScheme::OpenIdConnect(o)) => {
                        TokenCache::discover(&o.open_id_connect_url, &scopes.0, c.clone())
                            .map(|t| Placement::OAuth2(Arc::new(t)))
                    }
                    _ => None,
                };
                let Some(p) = source
                    .credential(name, scheme, &scopes.0)
                    .and_then(|c| place(scheme, c))
                    .or_else(fetched)
                else {
                    continue 'req;
                };
                placements.push(p);
            }
            return Self {
                schemes: req.schemes.keys().cloned().collect(),
                placements: placements.into(),
            };
        }
        Self::default()
    }

    /// The names of the card's schemes this plan satisfies (empty when it
    /// sends nothing).
    pub fn schemes(&self) -> &[String] {
        &self.schemes
    }

    /// Places the credentials on `req` (whatever its origin: the
    /// [`CredentialsLayer`](super::CredentialsLayer) checks that). OAuth 2.0
    /// tokens, fetched asynchronously, are placed by the client itself.
    pub fn apply<B>(&self, req: &mut Request<B>) {
        for p in self.placements.iter() {
            match p {
                Placement::Header(name, value) => {
                    req.headers_mut().insert(name.clone(), value.clone());
                }
                Placement::Cookie(pair) => {
                    let joined = match req.headers().get(COOKIE).and_then(|v| v.to_str().ok()) {
                        Some(old) => format!("{old}; {pair}"),
                        None => pair.clone(),
                    };
                    if let Ok(v) = HeaderValue::from_str(&joined) {
                        req.headers_mut().insert(COOKIE, v);
                    }
                }
                Placement::OAuth2(_) => {}
                Placement::Query(name, value) => {
                    let mut parts = req.uri().clone().into_parts();
                    let pq = parts.path_and_query.as_ref().map_or("/", |p| p.as_str());
                    let sep = if pq.contains('?') { '&' } else { '?' };
                    parts.path_and_query = format!("{pq}{sep}{name}={value}").parse().ok();
                    if let Ok(uri) = Uri::from_parts(parts) {
                        *req.uri_mut() = uri;
                    }
                }
            }
        }
    }

    /// The client-credentials tokens of the plan, if it has them.
    pub(crate) fn tokens(&self) -> Option<&Tokens> {
        self.placements.iter().find_map(|p| match p {
            Placement::OAuth2(t) => Some(t),
            _ => None,
        })
    }

    /// The header credentials (header and cookie placements), for
    /// transports that carry headers only (gRPC metadata).
    #[cfg(any(feature = "grpc", test))]
    pub(crate) fn headers(&self) -> http::HeaderMap {
        let mut r = Request::new(());
        self.apply(&mut r);
        r.headers().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Credentials;
    use crate::types::{
        ApiKeySecurityScheme, HttpAuthSecurityScheme, MutualTlsSecurityScheme, ScopeList,
        SecurityRequirement,
    };

    fn key(location: &str, name: &str) -> SecurityScheme {
        SecurityScheme::ApiKey(ApiKeySecurityScheme {
            location: location.into(),
            name: name.into(),
            ..Default::default()
        })
    }

    fn headers_for(scheme: SecurityScheme, creds: &Credentials) -> Option<http::HeaderMap> {
        let mut card = AgentCard::new("A", "B", "1");
        card.security_schemes.insert("s".into(), scheme);
        let mut req = SecurityRequirement::default();
        req.schemes.insert("s".into(), ScopeList::default());
        card.security_requirements.push(req);
        let plan = CredentialPlan::for_card(&card, creds);
        (!plan.schemes().is_empty()).then(|| plan.headers())
    }

    #[test]
    fn credentials_that_do_not_fit_their_scheme() {
        let all = Credentials::new().api_key("k").bearer("t").basic("u", "p");
        for bad in [
            key("header", "not a header"),
            key("query", ""),
            key("cookie", "a;b"),
            key("body", "k"),
            SecurityScheme::Mtls(MutualTlsSecurityScheme::default()),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Digest".into(),
                ..Default::default()
            }),
        ] {
            assert!(headers_for(bad.clone(), &all).is_none(), "{bad:?}");
        }
        let basic = SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
            scheme: "Basic".into(),
            ..Default::default()
        });
        let colon = Credentials::new().basic("u:x", "p");
        assert!(
            headers_for(basic.clone(), &colon).is_none(),
            "':' in a user"
        );
        let h = headers_for(basic, &all).unwrap();
        assert_eq!(h["authorization"], "Basic dTpw");
        let newline = Credentials::new().api_key("k\n");
        assert!(headers_for(key("header", "X-K"), &newline).is_none());
        // A named credential overrides the pick by kind, if it fits.
        let named = all.clone().scheme("s", Credential::ApiKey("other".into()));
        assert_eq!(
            headers_for(key("header", "X-K"), &named).unwrap()["x-k"],
            "other"
        );
    }

    #[test]
    fn cookies_join_and_queries_append() {
        let mut card = AgentCard::new("A", "B", "1");
        card.security_schemes
            .insert("c".into(), key("cookie", "sid"));
        card.security_schemes.insert("q".into(), key("query", "k"));
        let mut req = SecurityRequirement::default();
        req.schemes.insert("c".into(), ScopeList::default());
        req.schemes.insert("q".into(), ScopeList::default());
        card.security_requirements.push(req);
        let plan = CredentialPlan::for_card(&card, &Credentials::new().api_key("v"));
        let mut r = Request::new(());
        *r.uri_mut() = "http://h".parse().unwrap();
        r.headers_mut().insert(COOKIE, "a=1".parse().unwrap());
        plan.apply(&mut r);
        assert_eq!(r.headers()[COOKIE], "a=1; sid=v");
        assert_eq!(r.uri(), "http://h/?k=v");
    }
}
