//! [`CardResolver`]: fetches and caches an agent card with limits of its own,
//! independent of RPC calls.
//!
//! - Time: the whole fetch (redirects, headers and body) is bounded by the
//!   card timeout (30 s default); RPC calls are never bounded by it.
//! - Size: the body is read up to the limit (1 MiB default); one byte more is
//!   an error, even when a valid card precedes it.
//! - Origin: redirects (up to 5) are followed only on the card URL's origin;
//!   a redirect elsewhere is refused before its target is contacted, so
//!   credentials never leave the origin.
//! - Cache: a card is reused while its `Cache-Control: max-age` lasts, then
//!   revalidated with `If-None-Match` when it came with an `ETag` (a 304
//!   keeps it); `no-store` or `no-cache` cards are not reused unvalidated.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_tower::client::A2aClient;
//! let resolver = A2aClient::builder("http://localhost:8080/.well-known/agent-card.json")
//!     .build()?;
//! let card = resolver.resolve().await?;
//! println!("{}", card.name);
//! # Ok(()) }
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, Limited};

use super::http::HttpService;
use super::origin::Origin;
use super::response::{invalid, unavailable};
use crate::types::AgentCard;
use crate::{A2aError, ErrorKind};

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

/// A cached card.
#[derive(Debug, Clone)]
struct Cached {
    card: AgentCard,
    etag: Option<HeaderValue>,
    fresh_until: Option<Instant>,
}

/// Fetches and caches one agent card; see the module docs. Cheap to clone
/// (clones share the cache). Built by [`ClientBuilder::build`](super::ClientBuilder::build).
#[derive(Debug, Clone)]
pub struct CardResolver<S> {
    pub(crate) http: S,
    pub(crate) url: Uri,
    pub(crate) origin: Origin,
    pub(crate) timeout: Duration,
    pub(crate) max_bytes: usize,
    pub(crate) authorization: Option<HeaderValue>,
    #[cfg(feature = "signing")]
    pub(crate) trust: Arc<super::CardTrust>,
    #[cfg(feature = "signing")]
    jku: super::jku::JkuCache,
    cache: Arc<Mutex<Option<Cached>>>,
}

impl<S> CardResolver<S> {
    pub(crate) fn new(
        http: S,
        url: Uri,
        origin: Origin,
        timeout: Duration,
        max_bytes: usize,
        authorization: Option<HeaderValue>,
    ) -> Self {
        Self {
            http,
            url,
            origin,
            timeout,
            max_bytes,
            authorization,
            #[cfg(feature = "signing")]
            trust: Arc::default(),
            #[cfg(feature = "signing")]
            jku: Arc::default(),
            cache: Arc::default(),
        }
    }

    /// The card URL's origin.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }
}

/// `max-age` of a `Cache-Control` value, zero under `no-cache`/`no-store`.
pub(super) fn max_age(value: Option<&HeaderValue>) -> Option<Duration> {
    let v = value?.to_str().ok()?.to_ascii_lowercase();
    let mut age = None;
    for d in v.split(',').map(str::trim) {
        if d == "no-cache" || d == "no-store" {
            return Some(Duration::ZERO);
        }
        if let Some(n) = d.strip_prefix("max-age=") {
            age = n.trim_matches('"').parse().ok().map(Duration::from_secs);
        }
    }
    age
}

impl<S: HttpService> CardResolver<S> {
    /// The card: from the cache while fresh, else fetched (or revalidated)
    /// within the card timeout.
    pub async fn resolve(&self) -> Result<AgentCard, A2aError> {
        let cached = self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(c) = &cached
            && c.fresh_until.is_some_and(|t| Instant::now() < t)
        {
            return Ok(c.card.clone());
        }
        let etag = cached.as_ref().and_then(|c| c.etag.clone());
        let fetched = tokio::time::timeout(self.timeout, self.fetch(etag))
            .await
            .map_err(|_| {
                A2aError::new(ErrorKind::Unavailable).with_message("the agent card fetch timed out")
            })??;
        let entry = match (fetched, cached) {
            (Fetched::NotModified(age), Some(mut c)) => {
                c.fresh_until = age.map(|a| Instant::now() + a);
                c
            }
            (Fetched::NotModified(_), None) => {
                return Err(invalid(
                    "the agent card server answered 304 to a first fetch",
                ));
            }
            (Fetched::Card(card, etag, age), _) => Cached {
                card: *card,
                etag,
                fresh_until: age.map(|a| Instant::now() + a),
            },
        };
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some(entry.clone());
        Ok(entry.card)
    }

    async fn fetch(&self, etag: Option<HeaderValue>) -> Result<Fetched, A2aError> {
        let mut url = self.url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut req = Request::builder()
                .method(Method::GET)
                .uri(url.clone())
                .header(header::ACCEPT, "application/json")
                .header("a2a-version", super::request::VERSION);
            if let Some(e) = &etag {
                req = req.header(header::IF_NONE_MATCH, e.clone());
            }
            if let Some(a) = &self.authorization {
                req = req.header(header::AUTHORIZATION, a.clone());
            }
            let mut req = req.body(Full::default()).map_err(A2aError::internal)?;
            a2a_tower_core::telemetry::inject(req.headers_mut());
            let mut http = self.http.clone();
            futures_util::future::poll_fn(|cx| http.poll_ready(cx))
                .await
                .map_err(|e| unavailable(e.into()))?;
            let res = http.call(req).await.map_err(|e| unavailable(e.into()))?;
            let status = res.status();
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                url = self.redirect(&url, res.headers().get(header::LOCATION))?;
                continue;
            }
            let age = max_age(res.headers().get(header::CACHE_CONTROL));
            if status == StatusCode::NOT_MODIFIED {
                return Ok(Fetched::NotModified(age));
            }
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let challenge = res
                    .headers()
                    .get_all(header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(super::response::refused(status, &challenge));
            }
            if !status.is_success() {
                return Err(A2aError::new(ErrorKind::Unavailable)
                    .with_message("the agent card fetch failed")
                    .with_metadata("httpStatus", status.as_str()));
            }
            let new_etag = res.headers().get(header::ETAG).cloned();
            let body = Limited::new(res.into_body(), self.max_bytes)
                .collect()
                .await
                .map_err(|e| match e.downcast::<http_body_util::LengthLimitError>() {
                    Ok(_) => invalid("the agent card exceeds the card size limit"),
                    Err(e) => unavailable(e),
                })?
                .to_bytes();
            let card: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| invalid("the agent card is not a valid card").with_source(e))?;
            #[cfg(feature = "signing")]
            {
                let (mut fetched, mut skipped) = (Vec::new(), None);
                if let Some(allowed) = self.trust.jku_origins() {
                    let (jkus, why) = super::jku::allowed_jkus(&card, &self.origin, allowed);
                    skipped = why;
                    for jku in jkus {
                        fetched.extend(
                            super::jku::fetch(&self.http, &self.jku, &jku, self.max_bytes).await?,
                        );
                    }
                }
                // A `jku` not fetched explains a failure better than "no key".
                self.trust
                    .check_with(&card, &fetched)
                    .map_err(|e| skipped.unwrap_or(e))?;
            }
            // A 0.3 card (`url`, `preferredTransport`, ...) is read as the
            // 1.0 card it describes, its interfaces at protocol version 0.3.
            let card: AgentCard = serde_json::from_value(crate::v03::card::card_to_v10(&card))
                .map_err(|e| invalid("the agent card is not a valid card").with_source(e))?;
            return Ok(Fetched::Card(Box::new(card), new_etag, age));
        }
        Err(invalid("the agent card fetch redirected too many times"))
    }

    /// The target of a redirect, refused unless on the card's origin.
    fn redirect(&self, from: &Uri, location: Option<&HeaderValue>) -> Result<Uri, A2aError> {
        let loc = location
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| invalid("the agent card redirect has no Location"))?;
        let target: Uri = if loc.starts_with('/') && !loc.starts_with("//") {
            let mut parts = from.clone().into_parts();
            parts.path_and_query = loc.parse().ok();
            Uri::from_parts(parts).map_err(|_| invalid("the agent card redirect is malformed"))?
        } else {
            loc.parse()
                .map_err(|_| invalid("the agent card redirect is malformed"))?
        };
        if Origin::of(&target).as_ref() != Some(&self.origin) {
            return Err(A2aError::new(ErrorKind::PermissionDenied)
                .with_message("the agent card redirects to another origin; refused"));
        }
        Ok(target)
    }
}

/// The outcome of one fetch.
enum Fetched {
    Card(Box<AgentCard>, Option<HeaderValue>, Option<Duration>),
    NotModified(Option<Duration>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control() {
        let age = |s: &str| max_age(Some(&HeaderValue::from_str(s).unwrap()));
        assert_eq!(age("public, max-age=300"), Some(Duration::from_secs(300)));
        assert_eq!(age("max-age=60, no-cache"), Some(Duration::ZERO));
        assert_eq!(age("no-store"), Some(Duration::ZERO));
        assert_eq!(age("public"), None);
        assert_eq!(max_age(None), None);
    }
}
