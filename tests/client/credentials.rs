//! Card-driven client credentials: each placement an API key scheme names
//! (header, query, cookie), HTTP Basic and Bearer, the first requirement the
//! host satisfies entirely, and no credential to an origin that is neither
//! the card's nor allowed, nor for a card that failed the trust policy.

use crate::support;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use a2a_tower::client::{A2aClient, CredentialPlan, Credentials, CredentialsLayer, Origin};
use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, ApiKeySecurityScheme, GetTaskRequest,
    HttpAuthSecurityScheme, OAuth2SecurityScheme, ScopeList, SecurityRequirement, SecurityScheme,
};
use a2a_tower::{A2aRequest, Operation};
use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body_util::Full;
use tower::{Layer as _, ServiceExt as _};

/// What a server saw: each request's path and query, and its headers.
type Seen = Arc<Mutex<Vec<(String, HeaderMap)>>>;

const CARD_PATH: &str = "/.well-known/agent-card.json";

/// A server recording every request; it serves `card(base)` at the
/// well-known path and a JSON-RPC error to anything else.
async fn server(card: impl Fn(&str) -> AgentCard) -> (String, Seen) {
    let (listener, base) = support::loopback::listener().await;
    let card = Bytes::from(serde_json::to_vec(&card(&base)).unwrap());
    let seen = Seen::default();
    let record = seen.clone();
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let (card, record) = (card.clone(), record.clone());
        async move {
            let pq = req.uri().path_and_query().unwrap().to_string();
            let is_card = req.uri().path() == CARD_PATH;
            record.lock().unwrap().push((pq, req.headers().clone()));
            let body = if is_card {
                card
            } else {
                Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no task"}}"#,
                )
            };
            Ok::<_, Infallible>(
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(body))
                    .unwrap(),
            )
        }
    });
    support::loopback::serve(listener, svc);
    (base, seen)
}

fn api_key(location: &str, name: &str) -> SecurityScheme {
    SecurityScheme::ApiKey(ApiKeySecurityScheme {
        location: location.into(),
        name: name.into(),
        ..Default::default()
    })
}

fn http_auth(scheme: &str) -> SecurityScheme {
    SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
        scheme: scheme.into(),
        ..Default::default()
    })
}

fn need(names: &[&str]) -> SecurityRequirement {
    let mut r = SecurityRequirement::default();
    for n in names {
        r.schemes.insert((*n).into(), ScopeList::default());
    }
    r
}

/// A card whose JSON-RPC interface is at `{rpc_base}/rpc`.
fn card(
    rpc_base: &str,
    schemes: &[(&str, SecurityScheme)],
    reqs: &[SecurityRequirement],
) -> AgentCard {
    let mut c = AgentCard::new("Guarded", "Needs credentials", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{rpc_base}/rpc")))
        .with_skill(AgentSkill::new("s", "S", "S"));
    for (n, s) in schemes {
        c.security_schemes.insert((*n).into(), s.clone());
    }
    c.security_requirements = reqs.to_vec();
    c
}

/// Connects with `creds` (and `allow`ed origins) and makes one call.
async fn call(base: &str, creds: Credentials, allow: &[&str]) -> Result<(), a2a_tower::A2aError> {
    let client = A2aClient::builder(format!("{base}{CARD_PATH}"))
        .credentials(creds)
        .allow_origins(allow.iter().copied())
        .build()
        .unwrap()
        .connect()
        .await?;
    let get = GetTaskRequest {
        id: "t-1".into(),
        ..Default::default()
    };
    let err = client
        .oneshot(A2aRequest::new(Operation::GetTask(get)))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "no task", "the call reached the agent");
    Ok(())
}

/// The RPC requests a server saw (not the card fetch).
fn rpc(seen: &Seen) -> Vec<(String, HeaderMap)> {
    let seen = seen.lock().unwrap();
    for (pq, h) in seen.iter().filter(|(pq, _)| pq == CARD_PATH) {
        assert!(
            h.get("authorization").is_none()
                && h.get("x-api-key").is_none()
                && h.get("cookie").is_none(),
            "no card-driven credential on the card fetch {pq}"
        );
    }
    seen.iter()
        .filter(|(pq, _)| pq != CARD_PATH)
        .cloned()
        .collect()
}

#[tokio::test]
async fn api_key_in_a_header() {
    let (base, seen) = server(|b| {
        card(
            b,
            &[("key", api_key("header", "X-API-Key"))],
            &[need(&["key"])],
        )
    })
    .await;
    call(&base, Credentials::new().api_key("k1"), &[])
        .await
        .unwrap();
    let got = rpc(&seen);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "/rpc");
    assert_eq!(got[0].1["x-api-key"], "k1");
    assert!(got[0].1.get("authorization").is_none());
}

#[tokio::test]
async fn api_key_in_the_query() {
    let (base, seen) = server(|b| {
        card(
            b,
            &[("key", api_key("query", "api_key"))],
            &[need(&["key"])],
        )
    })
    .await;
    call(&base, Credentials::new().api_key("k 1&x=y"), &[])
        .await
        .unwrap();
    let got = rpc(&seen);
    assert_eq!(got[0].0, "/rpc?api_key=k%201%26x%3Dy");
    assert!(got[0].1.get("x-api-key").is_none());
}

#[tokio::test]
async fn api_key_in_a_cookie() {
    let (base, seen) = server(|b| {
        card(
            b,
            &[("key", api_key("cookie", "session"))],
            &[need(&["key"])],
        )
    })
    .await;
    call(&base, Credentials::new().api_key("k1"), &[])
        .await
        .unwrap();
    let got = rpc(&seen);
    assert_eq!(got[0].0, "/rpc");
    assert_eq!(got[0].1["cookie"], "session=k1");
    // A key a cookie cannot carry leaves the requirement unsatisfied.
    seen.lock().unwrap().clear();
    call(&base, Credentials::new().api_key("k;1"), &[])
        .await
        .unwrap();
    assert!(rpc(&seen)[0].1.get("cookie").is_none());
}

#[tokio::test]
async fn http_basic_and_bearer() {
    let (base, seen) =
        server(|b| card(b, &[("basic", http_auth("basic"))], &[need(&["basic"])])).await;
    call(&base, Credentials::new().basic("u", "p:w").bearer("t"), &[])
        .await
        .unwrap();
    // base64("u:p:w")
    assert_eq!(rpc(&seen)[0].1["authorization"], "Basic dTpwOnc=");
    let (base, seen) =
        server(|b| card(b, &[("bearer", http_auth("Bearer"))], &[need(&["bearer"])])).await;
    call(&base, Credentials::new().basic("u", "p").bearer("t0k"), &[])
        .await
        .unwrap();
    assert_eq!(rpc(&seen)[0].1["authorization"], "Bearer t0k");
}

#[tokio::test]
async fn the_first_requirement_satisfied_entirely() {
    let oauth = SecurityScheme::OAuth2(OAuth2SecurityScheme::default());
    let schemes = [
        ("o", oauth),
        ("k", api_key("header", "X-API-Key")),
        ("b", http_auth("Basic")),
    ];
    let reqs = [
        need(&["o", "k"]),
        need(&["missing"]),
        need(&["b"]),
        need(&["k"]),
    ];
    let (base, seen) = server(move |b| card(b, &schemes, &reqs)).await;
    // No token for `o`: {o, k} is skipped though `k` could be sent; the
    // requirement naming an undeclared scheme is skipped; {b} is used.
    call(&base, Credentials::new().api_key("k1").basic("u", "p"), &[])
        .await
        .unwrap();
    let got = rpc(&seen);
    assert_eq!(got[0].1["authorization"], "Basic dTpw");
    assert!(got[0].1.get("x-api-key").is_none());
    // With a token, {o, k}: both schemes at once, nothing of {b}.
    seen.lock().unwrap().clear();
    call(
        &base,
        Credentials::new().api_key("k1").basic("u", "p").bearer("t"),
        &[],
    )
    .await
    .unwrap();
    let got = rpc(&seen);
    assert_eq!(got[0].1["authorization"], "Bearer t");
    assert_eq!(got[0].1["x-api-key"], "k1");
    // Nothing satisfiable: nothing sent.
    seen.lock().unwrap().clear();
    call(&base, Credentials::new().bearer("t"), &[])
        .await
        .unwrap();
    let got = rpc(&seen);
    assert!(got[0].1.get("authorization").is_none() && got[0].1.get("x-api-key").is_none());
}

#[tokio::test]
async fn a_card_without_requirements_gets_nothing() {
    let (base, seen) = server(|b| card(b, &[("key", api_key("header", "X-API-Key"))], &[])).await;
    call(&base, Credentials::new().api_key("k1"), &[])
        .await
        .unwrap();
    assert!(rpc(&seen)[0].1.get("x-api-key").is_none());
}

#[tokio::test]
async fn no_credential_to_another_origin() {
    // The interface is on another server: refused unless allowed, and then
    // the key goes there (an allowed RPC origin).
    let (rpc_base, rpc_seen) = server(|b| card(b, &[], &[])).await;
    let target = rpc_base.clone();
    let (base, seen) = server(move |_| {
        card(
            &target,
            &[("key", api_key("header", "X-API-Key"))],
            &[need(&["key"])],
        )
    })
    .await;
    let refused = call(&base, Credentials::new().api_key("k1"), &[]).await;
    assert_eq!(
        refused.unwrap_err().kind(),
        a2a_tower::ErrorKind::PermissionDenied
    );
    assert!(rpc_seen.lock().unwrap().is_empty(), "nothing sent to it");
    call(&base, Credentials::new().api_key("k1"), &[&rpc_base])
        .await
        .unwrap();
    assert_eq!(rpc(&rpc_seen)[0].1["x-api-key"], "k1");
    assert!(rpc(&seen).is_empty());

    // The layer around a host's HTTP service: requests to other origins
    // (a redirect target, a webhook, anything) carry nothing.
    let c = card(
        "http://agent.example",
        &[("key", api_key("query", "k"))],
        &[need(&["key"])],
    );
    let plan = CredentialPlan::for_card(&c, &Credentials::new().api_key("s3cret"));
    let home: Origin = "http://agent.example".parse().unwrap();
    let layer = CredentialsLayer::new(plan, [home]);
    let uri_of =
        tower::service_fn(
            |req: Request<()>| async move { Ok::<_, Infallible>(req.uri().to_string()) },
        );
    let to = |u: &str| Request::get(u).body(()).unwrap();
    let home = layer
        .layer(uri_of)
        .oneshot(to("http://agent.example/rpc"))
        .await
        .unwrap();
    assert_eq!(home, "http://agent.example/rpc?k=s3cret");
    for away in [
        "http://agent.example:8080/rpc",
        "https://agent.example/rpc",
        "http://evil.example/rpc",
        "http://agent.example.evil.example/rpc",
    ] {
        let got = layer.layer(uri_of).oneshot(to(away)).await.unwrap();
        assert_eq!(got, away, "nothing added for {away}");
    }
}

#[cfg(feature = "signing")]
#[tokio::test]
async fn nothing_for_a_card_that_failed_the_trust_policy() {
    use a2a_tower::client::CardTrust;
    use a2a_tower::signing::SigningKey;
    let jwk = r#"{"kty":"OKP","crv":"Ed25519",
      "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
      "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
    let key = SigningKey::from_text(jwk, "k1").unwrap();
    let (base, seen) = server(|b| {
        card(
            b,
            &[("key", api_key("header", "X-API-Key"))],
            &[need(&["key"])],
        )
    })
    .await;
    let err = A2aClient::builder(format!("{base}{CARD_PATH}"))
        .credentials(Credentials::new().api_key("k1"))
        .card_trust(CardTrust::require([key.verifying_key()]))
        .build()
        .unwrap()
        .connect()
        .await
        .unwrap_err();
    assert!(err.message().contains("signature"), "{}", err.message());
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "the card fetch only");
    assert_eq!(seen[0].0, CARD_PATH);
    assert!(seen[0].1.get("x-api-key").is_none());
}

// `ask --api-key KEY` places the key where the card's apiKey scheme says.
#[cfg(all(
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "sqlite",
    feature = "managed"
))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_api_key_where_the_card_says() {
    let (base, seen) =
        server(|b| card(b, &[("key", api_key("query", "token"))], &[need(&["key"])])).await;
    let url = format!("{base}{CARD_PATH}");
    let run =
        tokio::task::spawn_blocking(move || crate::ask::ask(&[&url, "--api-key", "k1", "hello"]))
            .await
            .unwrap();
    assert_eq!(run.code, 1, "the agent's error: {}", run.stderr);
    let got = rpc(&seen);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "/rpc?token=k1");
}
