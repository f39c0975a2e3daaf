//! OAuth 2.0 client credentials (RFC 6749 §4.4) from the card's
//! `clientCredentials` flow: [`ClientSecret`] is what the host gives; a
//! token cache per connected client fetches the token from the flow's
//! `tokenUrl` (the client secret goes there and nowhere else), reuses it
//! until `expires_in` (less a margin of [`EXPIRY_MARGIN`]) and fetches a new
//! one when the agent answers 401 to it (once per call). An OpenID Connect
//! scheme's token endpoint is found by discovery: its `openIdConnectUrl` is
//! fetched once, and its `token_endpoint` must be on that URL's origin (the
//! secret never goes to an origin the card does not name).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use serde::Deserialize;

use crate::client::http::HttpService;
use crate::client::request::pct;
use crate::{A2aError, ErrorKind};

/// A token is taken as expired this long before its `expires_in` ends.
pub const EXPIRY_MARGIN: Duration = Duration::from_secs(5);

/// The token endpoint's answer is read up to this size (64 KiB).
const MAX_TOKEN_BYTES: usize = 64 * 1024;

/// An OAuth 2.0 client id and secret, for the card's `clientCredentials`
/// flow. Its `Debug` never shows the secret.
///
/// ```
/// use a2a_tower::client::ClientSecret;
/// let s = ClientSecret::new("agent-7", "s3cret");
/// assert_eq!(s.id(), "agent-7");
/// assert!(!format!("{s:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecret {
    id: String,
    secret: String,
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientSecret({:?}, ..)", self.id)
    }
}

impl ClientSecret {
    /// The client `id` and its `secret`.
    pub fn new(id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            secret: secret.into(),
        }
    }

    /// The client id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// A token and when it stops being used.
#[derive(Clone)]
struct Token {
    value: HeaderValue,
    until: Option<Instant>,
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// Where the token endpoint is.
enum Endpoint {
    /// Named by the card's flow.
    Known(Uri),
    /// Found through OpenID Connect discovery at this URL (once).
    Discover(Uri, tokio::sync::OnceCell<Uri>),
}

/// An absolute http(s) URL, or None.
fn absolute(url: &str) -> Option<Uri> {
    let uri: Uri = url.parse().ok()?;
    crate::client::origin::Origin::of(&uri)?;
    Some(uri)
}

/// The client-credentials tokens of one connected client.
pub(crate) struct TokenCache {
    endpoint: Endpoint,
    scopes: String,
    client: ClientSecret,
    token: tokio::sync::Mutex<Option<Token>>,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCache")
            .field(
                "endpoint",
                match &self.endpoint {
                    Endpoint::Known(u) | Endpoint::Discover(u, _) => u,
                },
            )
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

fn token_error(what: &str) -> A2aError {
    A2aError::new(ErrorKind::Unauthenticated)
        .with_message(format!("the OAuth 2.0 token endpoint {what}"))
}

impl TokenCache {
    /// A cache for `client` at the flow's `token_url` (an absolute http(s)
    /// URL), asking for `scopes`.
    pub(crate) fn new(token_url: &str, scopes: &[String], client: ClientSecret) -> Option<Self> {
        Some(Self {
            endpoint: Endpoint::Known(absolute(token_url)?),
            scopes: scopes.join(" "),
            client,
            token: tokio::sync::Mutex::new(None),
        })
    }

    /// A cache whose token endpoint is found through OpenID Connect
    /// discovery at `discovery_url`.
    pub(crate) fn discover(
        discovery_url: &str,
        scopes: &[String],
        client: ClientSecret,
    ) -> Option<Self> {
        Some(Self {
            endpoint: Endpoint::Discover(absolute(discovery_url)?, tokio::sync::OnceCell::new()),
            scopes: scopes.join(" "),
            client,
            token: tokio::sync::Mutex::new(None),
        })
    }

    /// The `Authorization` value: the cached token while fresh and not
    /// `stale` (the one the agent refused), else a new one.
    pub(crate) async fn authorization<S: HttpService>(
        &self,
        http: S,
        stale: Option<&HeaderValue>,
    ) -> Result<HeaderValue, A2aError> {
        let mut held = self.token.lock().await;
        if let Some(t) = held.as_ref()
            && t.until.is_none_or(|u| Instant::now() < u)
            && stale != Some(&t.value)
        {
            return Ok(t.value.clone());
        }
        let token = self.fetch(http).await?;
        *held = Some(token.clone());
        Ok(token.value)
    }

    /// The token endpoint: the card's, or the discovered one.
    async fn token_url<S: HttpService>(&self, http: S) -> Result<Uri, A2aError> {
        match &self.endpoint {
            Endpoint::Known(u) => Ok(u.clone()),
            Endpoint::Discover(at, found) => {
                found.get_or_try_init(|| discover(http, at)).await.cloned()
            }
        }
    }

    async fn fetch<S: HttpService>(&self, http: S) -> Result<Token, A2aError> {
        let token_url = self.token_url(http.clone()).await?;
        let mut form = String::from("grant_type=client_credentials");
        if !self.scopes.is_empty() {
            form.push_str("&scope=");
            form.push_str(&pct(&self.scopes));
        }
        // client_secret_basic (RFC 6749 §2.3.1): each part form-encoded first.
        let pair = format!("{}:{}", pct(&self.client.id), pct(&self.client.secret));
        let basic = base64::engine::general_purpose::STANDARD.encode(pair);
        let req = Request::builder()
            .method(Method::POST)
            .uri(token_url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .header(header::AUTHORIZATION, format!("Basic {basic}"))
            .body(Full::new(Bytes::from(form)))
            .map_err(A2aError::internal)?;
        let body = read(http, req, "the OAuth 2.0 token request").await?;
        let answer: TokenAnswer = serde_json::from_slice(&body)
            .map_err(|_| token_error("answer is not a token response"))?;
        if !answer.token_type.eq_ignore_ascii_case("bearer") {
            return Err(token_error("answer is not a bearer token"));
        }
        let value = HeaderValue::from_str(&format!("Bearer {}", answer.access_token))
            .map_err(|_| token_error("answer's token cannot be sent in a header"))?;
        let until = answer
            .expires_in
            .map(|s| Instant::now() + Duration::from_secs(s).saturating_sub(EXPIRY_MARGIN));
        Ok(Token { value, until })
    }
}

/// Reads a body up to [`MAX_TOKEN_BYTES`], if the status is a success.
async fn read<S: HttpService>(
    mut http: S,
    req: Request<Full<Bytes>>,
    what: &str,
) -> Result<Bytes, A2aError> {
    futures_util::future::poll_fn(|cx| http.poll_ready(cx))
        .await
        .map_err(|e| super::super::response::unavailable(e.into()))?;
    let res = http
        .call(req)
        .await
        .map_err(|e| super::super::response::unavailable(e.into()))?;
    let status = res.status();
    let body = Limited::new(res.into_body(), MAX_TOKEN_BYTES)
        .collect()
        .await
        .map_err(|_| {
            A2aError::new(ErrorKind::Unauthenticated)
                .with_message(format!("{what} could not be read"))
        })?
        .to_bytes();
    if !status.is_success() {
        return Err(A2aError::new(ErrorKind::Unauthenticated)
            .with_message(format!("{what} failed"))
            .with_metadata("httpStatus", status.as_str()));
    }
    Ok(body)
}

/// The `token_endpoint` of the OpenID Connect discovery document at `at`,
/// which must be on `at`'s origin.
async fn discover<S: HttpService>(http: S, at: &Uri) -> Result<Uri, A2aError> {
    let what = "the OpenID Connect discovery";
    let req = Request::builder()
        .method(Method::GET)
        .uri(at.clone())
        .header(header::ACCEPT, "application/json")
        .body(Full::default())
        .map_err(A2aError::internal)?;
    let body = read(http, req, what).await?;
    let bad =
        |why: &str| A2aError::new(ErrorKind::Unauthenticated).with_message(format!("{what} {why}"));
    let doc: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| bad("document is not JSON"))?;
    let url = doc
        .get("token_endpoint")
        .and_then(|v| v.as_str())
        .and_then(absolute)
        .ok_or_else(|| bad("document names no token endpoint"))?;
    let origin = crate::client::origin::Origin::of;
    if origin(&url) != origin(at) {
        return Err(bad("names a token endpoint on another origin; refused"));
    }
    Ok(url)
}

/// The shared cache.
pub(crate) type Tokens = Arc<TokenCache>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_url_must_be_absolute_http() {
        let c = ClientSecret::new("i", "s");
        assert!(TokenCache::new("https://auth.example/token", &[], c.clone()).is_some());
        for bad in [
            "/token",
            "ftp://auth.example/token",
            "",
            "https://u@auth.example/t",
        ] {
            assert!(TokenCache::new(bad, &[], c.clone()).is_none(), "{bad:?}");
        }
        let t = TokenCache::new("http://a/t", &["x".into(), "y z".into()], c).unwrap();
        assert_eq!(t.scopes, "x y z");
        assert!(!format!("{t:?}").contains("\"s\""));
    }
}
