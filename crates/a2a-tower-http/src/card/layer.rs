//! [`AgentCardLayer`]: the validated, frozen card and how it is served.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::HeaderValue;
use tower_layer::Layer;

use super::WELL_KNOWN_PATH;
use super::service::AgentCardService;
use super::validate::{StackCapabilities, validate};
use crate::ConfigError;
use crate::plumbing::routes::trim_slash;
use crate::types::AgentCard;

/// The default `Cache-Control: max-age`.
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(300);

/// Serves a validated, frozen agent card at `GET /.well-known/agent-card.json`
/// and passes every other request to the inner service untouched.
///
/// Built with [`AgentCardLayer::new`] (or [`with_capabilities`]), which checks
/// the card and serializes it once; the caller's card is copied, so changing
/// it afterwards changes nothing. See the [module docs](super) for what is
/// served.
///
/// [`with_capabilities`]: AgentCardLayer::with_capabilities
#[derive(Clone)]
#[must_use]
pub struct AgentCardLayer {
    pub(crate) frozen: Arc<Frozen>,
    pub(crate) path: Arc<str>,
    pub(crate) max_age: Duration,
    pub(crate) cache_control: HeaderValue,
    pub(crate) cors: bool,
}

/// The card as built: never changes after [`AgentCardLayer::new`].
pub(crate) struct Frozen {
    pub(crate) card: Arc<AgentCard>,
    pub(crate) bytes: Bytes,
    pub(crate) etag: HeaderValue,
    pub(crate) last_modified: HeaderValue,
    /// `last_modified` as a time, truncated to whole seconds like the header.
    pub(crate) modified_at: SystemTime,
    /// The card's interface paths, trailing slashes trimmed.
    interface_paths: Vec<String>,
}

impl AgentCardLayer {
    /// Validates the card against the default [`StackCapabilities`] (streaming
    /// yes, push notifications and extended card no) and freezes it.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] listing every problem: a missing required field, an
    /// interface URL that is not an absolute `http(s)` URL or has user-info, a
    /// query or a fragment, an interface at the well-known path, a
    /// `protocolVersion` other than `1.0`, a binding other than JSONRPC or
    /// HTTP+JSON, or a capability the stack does not serve.
    pub fn new(card: &AgentCard) -> Result<Self, ConfigError> {
        Self::with_capabilities(card, StackCapabilities::default())
    }

    /// Like [`new`](Self::new), checking the card's capabilities against what
    /// the assembled stack really serves.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_capabilities(
        card: &AgentCard,
        stack: StackCapabilities,
    ) -> Result<Self, ConfigError> {
        let interface_paths = validate(card, &stack)?;
        let bytes = serde_json::to_vec(card)
            .map(Bytes::from)
            .map_err(|_| ConfigError::new("the agent card does not serialize to JSON"))?;
        let etag = HeaderValue::try_from(format!("\"{:016x}\"", fnv1a(&bytes)))
            .map_err(|_| ConfigError::new("ETag is not a header value"))?;
        let modified_at: SystemTime = httpdate::HttpDate::from(SystemTime::now()).into();
        let last_modified = HeaderValue::try_from(httpdate::fmt_http_date(modified_at))
            .map_err(|_| ConfigError::new("Last-Modified is not a header value"))?;
        let frozen = Frozen {
            card: Arc::new(card.clone()),
            bytes,
            etag,
            last_modified,
            modified_at,
            interface_paths,
        };
        Ok(Self {
            frozen: Arc::new(frozen),
            path: Arc::from(WELL_KNOWN_PATH),
            max_age: DEFAULT_MAX_AGE,
            cache_control: cache_control(DEFAULT_MAX_AGE),
            cors: false,
        })
    }

    /// Sets `Cache-Control: public, max-age=…` (whole seconds; default 300 s).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self.cache_control = cache_control(max_age);
        self
    }

    /// Turns CORS on or off (off by default). When on, every card response
    /// carries `Access-Control-Allow-Origin: *` and `OPTIONS` answers the
    /// preflight for `GET`/`HEAD` with the A2A and conditional request headers.
    pub fn cors(mut self, enabled: bool) -> Self {
        self.cors = enabled;
        self
    }

    /// Serves the card at another path instead of `/.well-known/agent-card.json`
    /// (for a host that mounts the stack under a prefix it does not strip).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] if the path does not start with `/`, is not a valid
    /// URI path, has a query or fragment, or is the path of one of the card's
    /// interfaces.
    pub fn path(mut self, path: impl Into<String>) -> Result<Self, ConfigError> {
        let path = path.into();
        let bad = |why: &str| ConfigError::new(format!("card path {path:?}: {why}"));
        if !path.starts_with('/') {
            return Err(bad("must start with '/'"));
        }
        if path.contains(['?', '#']) {
            return Err(bad("must not have a query or fragment"));
        }
        if path.parse::<http::uri::PathAndQuery>().is_err() {
            return Err(bad("is not a valid URI path"));
        }
        if self
            .frozen
            .interface_paths
            .iter()
            .any(|p| p == trim_slash(&path))
        {
            return Err(bad("is the path of one of the card's interfaces"));
        }
        self.path = Arc::from(path);
        Ok(self)
    }

    /// The layer serving its card signed by `key` (a2a-spec.md §8.4): one
    /// more JWS in `signatures`, computed here, once, so the bytes and the
    /// `ETag` served stay the same for every request.
    ///
    /// ```
    /// use a2a_tower::AgentCardLayer;
    /// use a2a_tower::signing::{SigningKey, verify_card};
    /// use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
    ///
    /// let card = AgentCard::new("Echo", "Echoes", "1.0.0")
    ///     .with_interface(AgentInterface::jsonrpc("http://localhost/"))
    ///     .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    /// let jwk = r#"{"kty":"OKP","crv":"Ed25519",
    ///   "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
    ///   "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
    /// let key = SigningKey::from_text(jwk, "k1").unwrap();
    /// let layer = AgentCardLayer::new(&card).unwrap().signed(&key).unwrap();
    /// let served: serde_json::Value = serde_json::from_slice(&layer.card_bytes()).unwrap();
    /// assert_eq!(verify_card(&served, &[key.verifying_key()]).unwrap(), "k1");
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] if the card cannot be signed.
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn signed(mut self, key: &crate::signing::SigningKey) -> Result<Self, ConfigError> {
        let card = crate::signing::sign_card(&self.frozen.card, key)
            .map_err(|e| ConfigError::new(e.to_string()))?;
        let bytes = serde_json::to_vec(&card)
            .map(Bytes::from)
            .map_err(|_| ConfigError::new("the agent card does not serialize to JSON"))?;
        let etag = HeaderValue::try_from(format!("\"{:016x}\"", fnv1a(&bytes)))
            .map_err(|_| ConfigError::new("ETag is not a header value"))?;
        let f = &self.frozen;
        self.frozen = Arc::new(Frozen {
            card: Arc::new(card),
            bytes,
            etag,
            last_modified: f.last_modified.clone(),
            modified_at: f.modified_at,
            interface_paths: f.interface_paths.clone(),
        });
        Ok(self)
    }

    /// The validated card, shared (for layers that serve it elsewhere, such
    /// as the extended card or routing by interface).
    pub fn card(&self) -> Arc<AgentCard> {
        Arc::clone(&self.frozen.card)
    }

    /// The exact JSON bytes served.
    pub fn card_bytes(&self) -> Bytes {
        self.frozen.bytes.clone()
    }

    /// The `ETag` served, quoted (a strong validator of the bytes).
    pub fn etag(&self) -> &str {
        self.frozen.etag.to_str().unwrap_or_default()
    }

    /// The path the card is served at.
    pub fn served_path(&self) -> &str {
        &self.path
    }
}

impl fmt::Debug for AgentCardLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentCardLayer")
            .field("name", &self.frozen.card.name)
            .field("path", &self.path)
            .field("etag", &self.frozen.etag)
            .field("max_age", &self.max_age)
            .field("cors", &self.cors)
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for AgentCardLayer {
    type Service = AgentCardService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AgentCardService::new(inner, self.clone())
    }
}

fn cache_control(max_age: Duration) -> HeaderValue {
    let value = format!("public, max-age={}", max_age.as_secs());
    HeaderValue::try_from(value).unwrap_or(HeaderValue::from_static("public, max-age=300"))
}

/// 64-bit FNV-1a: a stable content hash, the same on every host and release,
/// so replicas behind a load balancer agree on the ETag.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AgentInterface, AgentSkill};

    fn card() -> AgentCard {
        AgentCard::new("Echo", "Repeats", "1.0.0")
            .with_interface(AgentInterface::jsonrpc("https://h.example/a2a/"))
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
    }

    #[test]
    fn fnv1a_known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn freezes_a_copy() {
        let mut c = card();
        let layer = AgentCardLayer::new(&c).unwrap();
        let before = layer.card_bytes();
        c.name = "Changed".into();
        c.skills.clear();
        assert_eq!(layer.card_bytes(), before);
        assert_eq!(layer.card().name, "Echo");
        let parsed: AgentCard = serde_json::from_slice(&before).unwrap();
        assert_eq!(parsed, card());
    }

    #[test]
    fn etag_is_a_stable_strong_hash_of_the_bytes() {
        let a = AgentCardLayer::new(&card()).unwrap();
        let b = AgentCardLayer::new(&card()).unwrap();
        assert_eq!(a.etag(), b.etag());
        assert!(a.etag().starts_with('"') && a.etag().ends_with('"') && a.etag().len() == 18);
        let c = AgentCardLayer::new(&AgentCard {
            version: "1.0.1".into(),
            ..card()
        })
        .unwrap();
        assert_ne!(a.etag(), c.etag());
    }

    #[test]
    fn setters() {
        let layer = AgentCardLayer::new(&card())
            .unwrap()
            .max_age(Duration::from_secs(60))
            .cors(true);
        assert_eq!(layer.cache_control, "public, max-age=60");
        assert!(layer.cors);
        assert_eq!(layer.served_path(), WELL_KNOWN_PATH);
        let layer = layer.path("/agents/echo/card.json").unwrap();
        assert_eq!(layer.served_path(), "/agents/echo/card.json");
    }

    #[test]
    fn bad_paths() {
        let layer = AgentCardLayer::new(&card()).unwrap();
        for (path, why) in [
            ("card.json", "must start with '/'"),
            ("/card?x=1", "query or fragment"),
            ("/card#x", "query or fragment"),
            ("/a b", "not a valid URI path"),
            ("/a2a", "one of the card's interfaces"),
            ("/a2a/", "one of the card's interfaces"),
        ] {
            let err = layer.clone().path(path).unwrap_err();
            assert!(err.message().contains(why), "{path}: {}", err.message());
        }
    }

    #[test]
    fn invalid_card_is_a_config_error() {
        let err = AgentCardLayer::new(&AgentCard::default()).unwrap_err();
        assert!(err.message().starts_with("invalid agent card: "), "{err}");
    }
}
