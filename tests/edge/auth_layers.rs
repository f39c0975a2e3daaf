//! The ready authentication layers (`auth::jwt::JwtLayer`,
//! `auth::api_key::ApiKeyLayer`) in an assembled `A2aServer` through
//! `A2aServerBuilder::authenticate`: the principal reaches the core, every
//! refusal is a 401 with `WWW-Authenticate` and an A2A error body, and the
//! served card declares the scheme and requirement the layer enforces
//! (a2a-spec.md §10.1, §4.5 security schemes).

use std::time::{SystemTime, UNIX_EPOCH};

use a2a_tower::auth::api_key::ApiKeyLayer;
use a2a_tower::auth::jwt::{Jwks, JwtClaims, JwtLayer};
use a2a_tower::engine::{AgentInput, Authority, agent_fn};
use a2a_tower::server::A2aServer;
use a2a_tower::signing::VerifyingKey;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};
use tower::ServiceExt;

const ISSUER: &str = "https://issuer.example";
const AUDIENCE: &str = "https://agent.example";

fn card() -> AgentCard {
    AgentCard::new("Guarded", "Says who called", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_skill(AgentSkill::new("who", "Who", "Says who called"))
}

/// An ES256 key made for the test, with its public JWK.
struct Signer {
    pair: EcdsaKeyPair,
    kid: &'static str,
}

impl Signer {
    fn new(kid: &'static str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Self { pair, kid }
    }

    fn jwk(&self) -> Value {
        let p = self.pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": self.kid,
               "x": URL_SAFE_NO_PAD.encode(&p[1..33]), "y": URL_SAFE_NO_PAD.encode(&p[33..65])})
    }

    fn token(&self, claims: Value) -> String {
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }
}

/// A token whose header says HS256, MACed with `secret` (never accepted).
fn hs256(secret: &str, claims: Value) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "kid": "k1"}).to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let tag = ring::hmac::sign(&key, input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(iss: &str, aud: Value, exp: u64) -> Value {
    json!({"iss": iss, "aud": aud, "sub": "alice", "exp": exp, "iat": now()})
}

fn send(path: &str, auth: &[(&str, String)]) -> Request<String> {
    let body = if path == "/" {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
    } else {
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
    };
    let mut req = Request::post(path)
        .header("content-type", "application/json")
        .header("a2a-version", "1.0");
    for (k, v) in auth {
        req = req.header(*k, v);
    }
    req.body(body.to_string()).unwrap()
}

async fn read(res: Response<a2a_tower::Body>) -> (StatusCode, Option<String>, Value) {
    let status = res.status();
    let challenge = res
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, challenge, serde_json::from_slice(&bytes).unwrap())
}

type App = tower::util::BoxCloneService<
    Request<String>,
    Response<a2a_tower::Body>,
    std::convert::Infallible,
>;

async fn jwt_app(keys: Vec<VerifyingKey>) -> App {
    jwks_app(Jwks::new(keys)).await
}

async fn jwks_app(jwks: Jwks) -> App {
    let who = agent_fn(|input: AgentInput| async move {
        let claims = input.call.extensions.get::<JwtClaims>().cloned();
        Ok(claims
            .and_then(|c| c.subject().map(str::to_owned))
            .unwrap_or_default())
    });
    let app = A2aServer::builder(card())
        .authenticate(JwtLayer::with_jwks(jwks, ISSUER, AUDIENCE))
        .authority(Authority::principal(|c: &JwtClaims, t: &str| {
            format!("{}/{t}", c.subject().unwrap_or(""))
        }))
        .agent(who)
        .await
        .unwrap();
    App::new(app)
}

#[tokio::test]
async fn a_valid_jwt_reaches_the_core_as_its_claims() {
    let signer = Signer::new("k1");
    let keys = vec![VerifyingKey::from_jwk(&signer.jwk(), None).unwrap()];
    let app = jwt_app(keys).await;
    let token = signer.token(claims(ISSUER, json!([AUDIENCE, "other"]), now() + 300));
    let auth = [("authorization", format!("Bearer {token}"))];
    let (status, _, v) = read(
        app.clone()
            .oneshot(send("/rest/message:send", &auth))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["task"]["artifacts"][0]["parts"][0]["text"], "alice");
    let (status, _, v) = read(app.oneshot(send("/", &auth)).await.unwrap()).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "alice"
    );
}

// EdDSA (Ed25519) tokens verify like ES256 ones; an ES256 header on an
// Ed25519 signature does not.
#[tokio::test]
async fn an_eddsa_token_verifies() {
    use ring::signature::Ed25519KeyPair;
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
    let jwk = json!({"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": x});
    let app = jwt_app(vec![VerifyingKey::from_jwk(&jwk, None).unwrap()]).await;
    let token = |alg: &str| {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(json!({"alg": alg, "kid": "ed"}).to_string()),
            URL_SAFE_NO_PAD.encode(claims(ISSUER, json!(AUDIENCE), now() + 300).to_string())
        );
        let sig = pair.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    };
    for (alg, want) in [
        ("EdDSA", StatusCode::OK),
        ("ES256", StatusCode::UNAUTHORIZED),
    ] {
        let auth = [("authorization", format!("Bearer {}", token(alg)))];
        let res = app
            .clone()
            .oneshot(send("/rest/message:send", &auth))
            .await
            .unwrap();
        assert_eq!(res.status(), want, "{alg}");
    }
}

// A JWKS of several keys: the token's `kid` picks its key; a token naming
// one key but signed by the other is refused.
#[tokio::test]
async fn the_kid_picks_the_key_of_the_jwks() {
    let (a, b) = (Signer::new("a"), Signer::new("b"));
    let jwks = json!({"keys": [a.jwk(), b.jwk()]}).to_string();
    let app = jwt_app(VerifyingKey::parse_all(&jwks, None).unwrap()).await;
    for signer in [&a, &b] {
        let token = signer.token(claims(ISSUER, json!(AUDIENCE), now() + 300));
        let auth = [("authorization", format!("Bearer {token}"))];
        let res = app
            .clone()
            .oneshot(send("/rest/message:send", &auth))
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "kid {}", signer.kid);
    }
    let forged = Signer {
        pair: b.pair,
        kid: "a",
    };
    let token = forged.token(claims(ISSUER, json!(AUDIENCE), now() + 300));
    let auth = [("authorization", format!("Bearer {token}"))];
    let res = app
        .oneshot(send("/rest/message:send", &auth))
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}

// The host rotates the keys through its `Jwks` handle: a token of the
// retired key is refused from then on, one of the new key accepted.
#[tokio::test]
async fn replacing_the_jwks_rotates_the_keys() {
    let (old, new) = (Signer::new("old"), Signer::new("new"));
    let jwks = Jwks::parse(&json!({"keys": [old.jwk()]}).to_string()).unwrap();
    let app = jwks_app(jwks.clone()).await;
    let status = |signer: &Signer| {
        let token = signer.token(claims(ISSUER, json!(AUDIENCE), now() + 300));
        let auth = [("authorization", format!("Bearer {token}"))];
        let app = app.clone();
        async move {
            app.oneshot(send("/rest/message:send", &auth))
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        (status(&old).await, status(&new).await),
        (StatusCode::OK, StatusCode::UNAUTHORIZED)
    );
    jwks.replace(VerifyingKey::parse_all(&new.jwk().to_string(), None).unwrap());
    assert_eq!(
        (status(&old).await, status(&new).await),
        (StatusCode::UNAUTHORIZED, StatusCode::OK)
    );
}

#[tokio::test]
async fn bad_jwts_are_401_with_a_bearer_challenge() {
    let signer = Signer::new("k1");
    let impostor = Signer::new("k1");
    let keys = vec![VerifyingKey::from_jwk(&signer.jwk(), None).unwrap()];
    let app = jwt_app(keys).await;
    let later = now() + 300;
    let cases = [
        (
            "bad signature",
            impostor.token(claims(ISSUER, json!(AUDIENCE), later)),
            "signature",
        ),
        (
            "wrong audience",
            signer.token(claims(ISSUER, json!("https://other.example"), later)),
            "audience",
        ),
        (
            "wrong issuer",
            signer.token(claims("https://evil.example", json!(AUDIENCE), later)),
            "issuer",
        ),
        // An hour past `exp`: beyond the 60 s clock skew.
        (
            "expired",
            signer.token(claims(ISSUER, json!(AUDIENCE), now() - 3600)),
            "expired",
        ),
        ("not a JWT", "abc.def".to_owned(), "malformed"),
        // `nbf` an hour ahead: beyond the clock skew.
        (
            "not yet valid",
            signer.token(
                json!({"iss": ISSUER, "aud": AUDIENCE, "exp": later + 3600, "nbf": now() + 3600}),
            ),
            "not yet valid",
        ),
        (
            "no exp",
            signer.token(json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice"})),
            "malformed",
        ),
        // An HMAC token (keyed with the public JWK's text, the classic
        // confusion) is refused for its algorithm, whatever its MAC.
        (
            "HS256",
            hs256(
                &signer.jwk().to_string(),
                claims(ISSUER, json!(AUDIENCE), later),
            ),
            "algorithm",
        ),
    ];
    for (what, token, why) in cases {
        for path in ["/rest/message:send", "/"] {
            let auth = [("authorization", format!("Bearer {token}"))];
            let (status, challenge, v) =
                read(app.clone().oneshot(send(path, &auth)).await.unwrap()).await;
            assert_eq!(status, 401, "{what} {path}: {v}");
            let challenge = challenge.unwrap_or_default();
            assert!(
                challenge.starts_with(r#"Bearer error="invalid_token""#),
                "{what}: {challenge}"
            );
            assert!(challenge.contains(why), "{what}: {challenge}");
            if path == "/" {
                assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
                assert_eq!(
                    v["error"]["data"][0]["reason"], "UNAUTHENTICATED",
                    "{what}: {v}"
                );
            } else {
                assert_eq!(v["error"]["status"], "UNAUTHENTICATED", "{what}: {v}");
            }
        }
    }
    // Missing: a bare challenge (RFC 6750 §3.1: no error code).
    let (status, challenge, v) = read(
        app.clone()
            .oneshot(send("/rest/message:send", &[]))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(challenge.as_deref(), Some("Bearer"));
    assert_eq!(v["error"]["code"], 401);
    // Another scheme in Authorization is no bearer token.
    let basic = [("authorization", "Basic YTpi".to_owned())];
    let (status, challenge, _) = read(app.oneshot(send("/", &basic)).await.unwrap()).await;
    assert_eq!(
        (status, challenge.as_deref()),
        (StatusCode::UNAUTHORIZED, Some("Bearer"))
    );
}

#[tokio::test]
async fn the_served_card_declares_the_bearer_scheme() {
    let app = jwt_app(vec![]).await;
    let req = Request::get("/.well-known/agent-card.json")
        .body(String::new())
        .unwrap();
    let (status, _, card) = read(app.oneshot(req).await.unwrap()).await;
    assert_eq!(status, 200, "the card stays public");
    let scheme = &card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"];
    assert_eq!(scheme["scheme"], "Bearer");
    assert_eq!(scheme["bearerFormat"], "JWT");
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );
}

#[derive(Debug, Clone)]
struct Caller(String);

async fn key_app(layer: ApiKeyLayer<Caller>) -> App {
    let who = agent_fn(|input: AgentInput| async move {
        Ok(input
            .call
            .extensions
            .get::<Caller>()
            .map(|c| c.0.clone())
            .unwrap_or_default())
    });
    let app = A2aServer::builder(card())
        .authenticate(
            layer
                .key("k-alice", Caller("alice".into()))
                .key("k-bob", Caller("bob".into())),
        )
        .authority(Authority::principal(|c: &Caller, t: &str| {
            format!("{}/{t}", c.0)
        }))
        .agent(who)
        .await
        .unwrap();
    App::new(app)
}

/// Where a test request carries a key: its path and headers.
type Place = fn(&str) -> (String, Vec<(&'static str, String)>);

#[tokio::test]
async fn api_keys_in_each_placement() {
    let placements: [(ApiKeyLayer<Caller>, &str, &str, Place); 3] = [
        (
            ApiKeyLayer::header("X-API-Key"),
            "header",
            "x-api-key",
            |k| {
                (
                    "/rest/message:send".into(),
                    vec![("x-api-key", k.to_owned())],
                )
            },
        ),
        (ApiKeyLayer::query("api_key"), "query", "api_key", |k| {
            (format!("/rest/message:send?api_key={k}"), vec![])
        }),
        (
            ApiKeyLayer::cookie("session_key"),
            "cookie",
            "session_key",
            |k| {
                (
                    "/rest/message:send".into(),
                    vec![("cookie", format!("theme=dark; session_key={k}"))],
                )
            },
        ),
    ];
    for (layer, location, name, place) in placements {
        let app = key_app(layer).await;
        // Good: the key's principal reaches the agent.
        for (key, who) in [("k-alice", "alice"), ("k-bob", "bob")] {
            let (path, headers) = place(key);
            let (status, _, v) =
                read(app.clone().oneshot(send(&path, &headers)).await.unwrap()).await;
            assert_eq!(status, 200, "{location}: {v}");
            assert_eq!(
                v["task"]["artifacts"][0]["parts"][0]["text"], who,
                "{location}"
            );
        }
        let bare = format!(r#"ApiKey in="{location}", name="{name}""#);
        // Bad: an unknown key, and one a byte longer than a good one.
        for key in ["k-eve", "k-alicee"] {
            let (path, headers) = place(key);
            let (status, challenge, v) =
                read(app.clone().oneshot(send(&path, &headers)).await.unwrap()).await;
            assert_eq!(status, 401, "{location} {key}");
            assert_eq!(
                challenge.unwrap(),
                format!(r#"{bare}, error="invalid_key""#)
            );
            assert_eq!(v["error"]["status"], "UNAUTHENTICATED");
        }
        // Missing.
        let (status, challenge, _) = read(
            app.clone()
                .oneshot(send("/rest/message:send", &[]))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401, "{location}");
        assert_eq!(challenge.unwrap(), bare);
        // The card declares this placement and name, required.
        let req = Request::get("/.well-known/agent-card.json")
            .body(String::new())
            .unwrap();
        let (_, _, card) = read(app.oneshot(req).await.unwrap()).await;
        let scheme = &card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"];
        assert_eq!(scheme["location"], location);
        assert_eq!(scheme["name"], name);
        assert_eq!(
            card["securityRequirements"],
            json!([{"schemes": {"apiKey": {"list": []}}}])
        );
    }
}

// Two layers are both enforced, so the card asks for both schemes in one
// requirement: never a requirement the stack would refuse.
#[tokio::test]
async fn two_layers_are_one_requirement_of_both_schemes() {
    let signer = Signer::new("k1");
    let keys = vec![VerifyingKey::from_jwk(&signer.jwk(), None).unwrap()];
    let app = A2aServer::builder(card())
        .authenticate(JwtLayer::new(keys, ISSUER, AUDIENCE))
        .authenticate(ApiKeyLayer::header("x-api-key").key("k", Caller("c".into())))
        .agent(agent_fn(|input: AgentInput| async move { Ok(input.text) }))
        .await
        .unwrap();
    let req = Request::get("/.well-known/agent-card.json")
        .body(String::new())
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let card: Value =
        serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"apiKey": {"list": []}, "bearer": {"list": []}}}])
    );
    // A token alone is not enough.
    let token = signer.token(claims(ISSUER, json!(AUDIENCE), now() + 300));
    let auth = [("authorization", format!("Bearer {token}"))];
    let res = app
        .clone()
        .oneshot(send("/rest/message:send", &auth))
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let both = [auth[0].clone(), ("x-api-key", "k".to_owned())];
    let res = app
        .oneshot(send("/rest/message:send", &both))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}
