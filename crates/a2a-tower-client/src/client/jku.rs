//! Signing keys fetched from a signature's `jku` (a2a-spec.md §8.4.2), for a
//! [`CardTrust`](super::CardTrust) that asks for them with
//! [`fetch_jku`](super::CardTrust::fetch_jku).
//!
//! A `jku` is fetched only when it is on the card's origin or on an origin
//! the host allowed; under the card fetch's limits (the same timeout, since
//! it runs inside it, and the same size limit); without credentials and
//! without following redirects. The key set is cached per URL for its
//! `Cache-Control: max-age` (five minutes when none is given). A key whose
//! `exp` (seconds since the epoch, as a JWT's) has passed is left out, and
//! so is one that is not ES256, RS256 or EdDSA.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::{Method, Request, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use super::http::HttpService;
use super::origin::Origin;
use crate::signing::{ProtectedHeader, VerifyingKey};
use crate::types::AgentCardSignature;
use crate::{A2aError, ErrorKind};

/// How long a key set without `max-age` is reused.
const DEFAULT_AGE: Duration = Duration::from_secs(300);

/// Key sets fetched so far, by URL, with the instant they go stale.
pub(crate) type JkuCache = Arc<Mutex<HashMap<String, (Vec<VerifyingKey>, Instant)>>>;

fn refused(why: &str) -> A2aError {
    A2aError::new(ErrorKind::InvalidAgentResponse).with_message(format!(
        "the agent card was refused: {why} (signature check)"
    ))
}

/// The `jku`s of `card`'s signatures that may be fetched (on
/// `card_origin` or one of `allowed`), and why another was not: the error
/// to give when no signature verifies.
pub(crate) fn allowed_jkus(
    card: &Value,
    card_origin: &Origin,
    allowed: &[Origin],
) -> (Vec<Uri>, Option<A2aError>) {
    let signatures: Vec<AgentCardSignature> = card
        .get("signatures")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    let (mut out, mut skipped) = (Vec::new(), None);
    for s in &signatures {
        let Some(jku) = ProtectedHeader::of(s).ok().and_then(|h| h.jku) else {
            continue;
        };
        let Some((uri, origin)) = jku
            .parse::<Uri>()
            .ok()
            .and_then(|u| Origin::of(&u).map(|o| (u, o)))
        else {
            skipped = Some(refused("a signature's jku is not a URL"));
            continue;
        };
        if &origin != card_origin && !allowed.contains(&origin) {
            skipped = Some(refused(&format!(
                "a signature's jku is on {origin}, neither the card's origin nor an allowed one"
            )));
        } else if !out.contains(&uri) {
            out.push(uri);
        }
    }
    (out, skipped)
}

/// The keys of a JWKS document: those with an accepted algorithm and no
/// past `exp`.
pub(crate) fn keys_of(set: &Value, now: SystemTime) -> Vec<VerifyingKey> {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    set.get("keys")
        .and_then(Value::as_array)
        .map(|keys| {
            keys.iter()
                .filter(|k| k.get("exp").and_then(Value::as_u64).is_none_or(|e| e > now))
                .filter_map(|k| VerifyingKey::from_jwk(k, None).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The keys at `uri`: cached while fresh, else fetched with `http`.
pub(crate) async fn fetch<S: HttpService>(
    http: &S,
    cache: &JkuCache,
    uri: &Uri,
    max_bytes: usize,
) -> Result<Vec<VerifyingKey>, A2aError> {
    let key = uri.to_string();
    if let Some((keys, until)) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key)
        && Instant::now() < *until
    {
        return Ok(keys.clone());
    }
    let req = Request::builder()
        .method(Method::GET)
        .uri(uri.clone())
        .header(header::ACCEPT, "application/jwk-set+json, application/json")
        .body(Full::default())
        .map_err(A2aError::internal)?;
    let mut http = http.clone();
    futures_util::future::poll_fn(|cx| http.poll_ready(cx))
        .await
        .map_err(|_| refused("its jku key set could not be fetched"))?;
    let res = http
        .call(req)
        .await
        .map_err(|_| refused("its jku key set could not be fetched"))?;
    if !res.status().is_success() {
        return Err(refused(&format!(
            "its jku key set answered {}",
            res.status().as_u16()
        )));
    }
    let age = super::card::max_age(res.headers().get(header::CACHE_CONTROL)).unwrap_or(DEFAULT_AGE);
    let body = Limited::new(res.into_body(), max_bytes)
        .collect()
        .await
        .map_err(|_| refused("its jku key set is over the card size limit or unreadable"))?
        .to_bytes();
    let set: Value =
        serde_json::from_slice(&body).map_err(|_| refused("its jku key set is not a JWKS"))?;
    let keys = keys_of(&set, SystemTime::now());
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, (keys.clone(), Instant::now() + age));
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    #[test]
    fn expired_and_unknown_keys_are_left_out() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let set = json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "live", "exp": 1_001},
            {"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "old", "exp": 1_000},
            {"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "forever"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
        ]});
        let kids: Vec<_> = keys_of(&set, now)
            .iter()
            .map(|k| k.kid().unwrap().to_owned())
            .collect();
        assert_eq!(kids, ["live", "forever"]);
        assert!(keys_of(&json!({"nokeys": []}), now).is_empty());
    }

    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::Bytes;

    use crate::client::{A2aClient, CardTrust};
    use crate::signing::{SigningKey, sign_card};
    use crate::types::AgentCard;

    const JWK: &str = r#"{"kty":"OKP","crv":"Ed25519",
      "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
      "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;

    /// An agent at `http://agent.test` whose card is signed with `jku`,
    /// and the key set `set` at `/jwks.json` on it and on
    /// `http://other.test`; the count of key set fetches.
    fn agent(jku: &str, set: Value) -> (impl crate::client::HttpService, Arc<AtomicUsize>) {
        let key = SigningKey::from_text(JWK, "k1").unwrap().with_jku(jku);
        let card = sign_card(&AgentCard::new("A", "B", "1.0.0"), &key).unwrap();
        let card = Bytes::from(serde_json::to_vec(&card).unwrap());
        let set = Bytes::from(set.to_string());
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let svc = tower::service_fn(move |req: Request<Full<Bytes>>| {
            // The card is refetched each time; the key set has no
            // `Cache-Control`, so it is kept for the default five minutes.
            let (body, cache) = if req.uri().path() == "/jwks.json" {
                counted.fetch_add(1, Ordering::SeqCst);
                (set.clone(), "public")
            } else {
                (card.clone(), "no-store")
            };
            async move {
                Ok::<_, Infallible>(
                    http::Response::builder()
                        .header(header::CACHE_CONTROL, cache)
                        .body(Full::new(body))
                        .unwrap(),
                )
            }
        });
        (svc, hits)
    }

    async fn resolve(
        http: impl crate::client::HttpService,
        trust: CardTrust,
        max: usize,
    ) -> Result<(), A2aError> {
        let c = A2aClient::builder("http://agent.test/.well-known/agent-card.json")
            .http(http)
            .card_trust(trust)
            .max_card_bytes(max)
            .build()
            .unwrap();
        c.resolve().await.map(drop)
    }

    fn public_set() -> Value {
        json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1"}]})
    }

    #[tokio::test]
    async fn jku_keys_verify_the_card_and_are_cached() {
        let (http, hits) = agent("http://agent.test/jwks.json", public_set());
        let c = A2aClient::builder("http://agent.test/.well-known/agent-card.json")
            .http(http.clone())
            .card_trust(CardTrust::require([]).fetch_jku([]))
            .build()
            .unwrap();
        c.resolve().await.unwrap();
        c.resolve().await.unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 1, "the key set is cached");

        // Without `fetch_jku`, no key: refused, nothing fetched.
        let e = resolve(http, CardTrust::require([]), 1 << 20)
            .await
            .unwrap_err();
        assert!(e.message().contains("signature"), "{e}");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_jku_elsewhere_is_fetched_only_from_an_allowed_origin() {
        let (http, hits) = agent("http://other.test/jwks.json", public_set());
        let e = resolve(http.clone(), CardTrust::require([]).fetch_jku([]), 1 << 20)
            .await
            .unwrap_err();
        assert!(
            e.message().contains("jku is on http://other.test:80"),
            "{e}"
        );
        assert_eq!(hits.load(Ordering::SeqCst), 0, "never fetched");
        // A pinned key still verifies it; the `jku` is not fetched.
        let pinned = SigningKey::from_text(JWK, "k1").unwrap().verifying_key();
        resolve(
            http.clone(),
            CardTrust::require([pinned]).fetch_jku([]),
            1 << 20,
        )
        .await
        .unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 0, "never fetched");
        let allowed: Origin = "http://other.test".parse().unwrap();
        resolve(http, CardTrust::require([]).fetch_jku([allowed]), 1 << 20)
            .await
            .unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn expired_and_oversized_key_sets_do_not_verify() {
        let expired =
            json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1", "exp": 1}]});
        let (http, _) = agent("http://agent.test/jwks.json", expired);
        let e = resolve(http, CardTrust::require([]).fetch_jku([]), 1 << 20)
            .await
            .unwrap_err();
        assert!(e.message().contains("signature"), "{e}");

        let mut big = public_set();
        big["padding"] = "x".repeat(4096).into();
        let (http, hits) = agent("http://agent.test/jwks.json", big);
        let e = resolve(http, CardTrust::require([]).fetch_jku([]), 2048)
            .await
            .unwrap_err();
        assert!(e.message().contains("size limit"), "{e}");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
