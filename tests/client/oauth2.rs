//! OAuth 2.0 client credentials from the card's `clientCredentials` flow,
//! against a token endpoint served here: the token is reused until it
//! expires, fetched again once when the agent answers 401, sent only to the
//! agent's origins; the client secret goes only to the token endpoint.

use crate::support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use a2a_tower::client::{A2aClient, ClientSecret, Credentials};
use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, ClientCredentialsOAuthFlow, GetTaskRequest,
    OAuth2SecurityScheme, OAuthFlows, ScopeList, SecurityRequirement, SecurityScheme,
};
use a2a_tower::{A2aRequest, ErrorKind, Operation};
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use tower::ServiceExt as _;

const CARD_PATH: &str = "/.well-known/agent-card.json";

/// One request a server saw: path and query, headers, body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, String)>>>;

/// Serves `answer(path, headers)` (status, body) and records every request.
async fn serve<F>(answer: F) -> (String, Seen)
where
    F: Fn(&str, &HeaderMap) -> (StatusCode, String) + Send + Sync + 'static,
{
    let (listener, base) = support::loopback::listener().await;
    let seen = Seen::default();
    let (record, answer) = (seen.clone(), Arc::new(answer));
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let (record, answer) = (record.clone(), answer.clone());
        async move {
            let (parts, body) = req.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            let pq = parts.uri.path_and_query().unwrap().to_string();
            let (status, out) = answer(&pq, &parts.headers);
            let text = String::from_utf8_lossy(&body).into_owned();
            record.lock().unwrap().push((pq, parts.headers, text));
            let mut res = Response::builder()
                .status(status)
                .header("content-type", "application/json");
            if status == StatusCode::UNAUTHORIZED {
                res = res.header("www-authenticate", r#"Bearer error="invalid_token""#);
            }
            Ok::<_, Infallible>(res.body(Full::new(Bytes::from(out))).unwrap())
        }
    });
    support::loopback::serve(listener, svc);
    (base, seen)
}

/// A token endpoint issuing `tok-1`, `tok-2`, … valid `expires_in` seconds.
async fn token_endpoint(expires_in: u64) -> (String, Seen) {
    let issued = AtomicUsize::new(0);
    serve(move |_, _| {
        let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
        let body = format!(
            r#"{{"access_token":"tok-{n}","token_type":"Bearer","expires_in":{expires_in}}}"#
        );
        (StatusCode::OK, body)
    })
    .await
}

/// The card: one OAuth 2.0 scheme, flow `clientCredentials` at `token_url`,
/// required with scope `a2a.read`; its JSON-RPC interface at `{rpc}/rpc`.
fn card(rpc: &str, token_url: &str) -> String {
    let flow = ClientCredentialsOAuthFlow {
        token_url: token_url.into(),
        ..Default::default()
    };
    let scheme = SecurityScheme::OAuth2(OAuth2SecurityScheme {
        flows: Some(OAuthFlows::ClientCredentials(flow)),
        ..Default::default()
    });
    let mut c = AgentCard::new("Guarded", "OAuth 2.0", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{rpc}/rpc")))
        .with_skill(AgentSkill::new("s", "S", "S"));
    c.security_schemes.insert("oauth".into(), scheme);
    let mut need = SecurityRequirement::default();
    need.schemes
        .insert("oauth".into(), ScopeList(vec!["a2a.read".into()]));
    c.security_requirements.push(need);
    serde_json::to_string(&c).unwrap()
}

const NO_TASK: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no task"}}"#;

/// An agent serving `card` whose calls 401 the first `refuse` times.
async fn agent(
    card: impl Fn(&str) -> String + Send + Sync + 'static,
    refuse: usize,
) -> (String, Seen) {
    let refused = AtomicUsize::new(0);
    let base = Arc::new(Mutex::new(String::new()));
    let b = base.clone();
    let (url, seen) = serve(move |pq, _| {
        if pq == CARD_PATH {
            return (StatusCode::OK, card(&b.lock().unwrap()));
        }
        if refused.fetch_add(1, Ordering::SeqCst) < refuse {
            return (StatusCode::UNAUTHORIZED, String::new());
        }
        (StatusCode::OK, NO_TASK.into())
    })
    .await;
    *base.lock().unwrap() = url.clone();
    (url, seen)
}

async fn get_task(card_url: &str, allow: &[&str]) -> Result<(), a2a_tower::A2aError> {
    let client = A2aClient::builder(card_url)
        .oauth2_client(ClientSecret::new("agent-7", "s3cret"))
        .allow_origins(allow.iter().copied())
        .build()
        .unwrap()
        .connect()
        .await?;
    let call = |id: &str| {
        let get = GetTaskRequest {
            id: id.into(),
            ..Default::default()
        };
        client
            .clone()
            .oneshot(A2aRequest::new(Operation::GetTask(get)))
    };
    for id in ["t-1", "t-2"] {
        let err = call(id).await.unwrap_err();
        if err.message() != "no task" {
            return Err(err);
        }
    }
    Ok(())
}

/// The `Authorization` of each RPC (not the card fetch, which has none).
fn bearers(seen: &Seen) -> Vec<String> {
    let seen = seen.lock().unwrap();
    for (pq, h, body) in seen.iter() {
        assert!(
            !format!("{h:?}{body}").contains("s3cret"),
            "no secret at {pq}"
        );
        assert!(
            pq != CARD_PATH || h.get("authorization").is_none(),
            "no token on the card fetch"
        );
    }
    seen.iter()
        .filter(|(pq, ..)| pq != CARD_PATH)
        .map(|(_, h, _)| h["authorization"].to_str().unwrap().to_owned())
        .collect()
}

/// Checks each token request: POST, the grant and scope, the client's
/// credentials in `Basic`, no bearer token.
fn token_requests(seen: &Seen) -> usize {
    let seen = seen.lock().unwrap();
    for (pq, h, body) in seen.iter() {
        assert_eq!(pq, "/token");
        assert_eq!(body, "grant_type=client_credentials&scope=a2a.read");
        // base64("agent-7:s3cret")
        assert_eq!(h["authorization"], "Basic YWdlbnQtNzpzM2NyZXQ=");
        assert_eq!(h["content-type"], "application/x-www-form-urlencoded");
    }
    seen.len()
}

#[tokio::test]
async fn a_token_is_reused_until_it_expires() {
    let (tokens, issued) = token_endpoint(3600).await;
    let (base, seen) = agent(move |b| card(b, &format!("{tokens}/token")), 0).await;
    get_task(&format!("{base}{CARD_PATH}"), &[]).await.unwrap();
    assert_eq!(token_requests(&issued), 1);
    assert_eq!(bearers(&seen), ["Bearer tok-1", "Bearer tok-1"]);
}

#[tokio::test]
async fn an_expired_token_is_replaced() {
    // 1 s is within the expiry margin: every call needs a new token.
    let (tokens, issued) = token_endpoint(1).await;
    let (base, seen) = agent(move |b| card(b, &format!("{tokens}/token")), 0).await;
    get_task(&format!("{base}{CARD_PATH}"), &[]).await.unwrap();
    assert_eq!(token_requests(&issued), 2);
    assert_eq!(bearers(&seen), ["Bearer tok-1", "Bearer tok-2"]);
}

#[tokio::test]
async fn one_new_token_on_a_401() {
    let (tokens, issued) = token_endpoint(3600).await;
    let t = tokens.clone();
    let (base, seen) = agent(move |b| card(b, &format!("{t}/token")), 1).await;
    get_task(&format!("{base}{CARD_PATH}"), &[]).await.unwrap();
    assert_eq!(token_requests(&issued), 2);
    assert_eq!(
        bearers(&seen),
        ["Bearer tok-1", "Bearer tok-2", "Bearer tok-2"],
        "refused, tried again with a new token, which the next call reuses"
    );
    // An agent that refuses every token: one new token, then the 401.
    let (tokens, issued) = token_endpoint(3600).await;
    let (base, seen) = agent(move |b| card(b, &format!("{tokens}/token")), usize::MAX).await;
    let err = get_task(&format!("{base}{CARD_PATH}"), &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthenticated);
    assert!(err.message().contains("Bearer"), "{}", err.message());
    assert_eq!(token_requests(&issued), 2);
    assert_eq!(bearers(&seen), ["Bearer tok-1", "Bearer tok-2"]);
}

#[tokio::test]
async fn tokens_only_to_the_agents_origins() {
    // The card on one server, its interface on another (allowed), the token
    // endpoint on a third: the secret goes only to the token endpoint, the
    // token only to the interface.
    let (tokens, issued) = token_endpoint(3600).await;
    let (rpc, rpc_seen) = agent(|_| String::new(), 0).await;
    let r = rpc.clone();
    let (base, seen) = agent(move |_| card(&r, &format!("{tokens}/token")), 0).await;
    let refused = get_task(&format!("{base}{CARD_PATH}"), &[]).await;
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::PermissionDenied);
    assert_eq!(
        token_requests(&issued),
        0,
        "no token for a refused interface"
    );
    get_task(&format!("{base}{CARD_PATH}"), &[&rpc])
        .await
        .unwrap();
    assert_eq!(token_requests(&issued), 1);
    assert_eq!(bearers(&rpc_seen), ["Bearer tok-1", "Bearer tok-1"]);
    assert!(
        bearers(&seen).is_empty(),
        "the card server saw the card fetches only"
    );
    // A static bearer token of the host's comes first: nothing fetched.
    let client = A2aClient::builder(format!("{base}{CARD_PATH}"))
        .credentials(Credentials::new().bearer("mine"))
        .oauth2_client(ClientSecret::new("agent-7", "s3cret"))
        .allow_origins([rpc.as_str()])
        .build()
        .unwrap()
        .connect()
        .await
        .unwrap();
    let get = GetTaskRequest {
        id: "t-3".into(),
        ..Default::default()
    };
    let _ = client
        .oneshot(A2aRequest::new(Operation::GetTask(get)))
        .await;
    assert_eq!(token_requests(&issued), 1);
    assert_eq!(bearers(&rpc_seen).last().unwrap(), "Bearer mine");
}

// `ask --client-id ID --client-secret SECRET`: the token from the card's flow.
#[cfg(all(
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "sqlite",
    feature = "managed"
))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_with_client_credentials() {
    let (tokens, issued) = token_endpoint(3600).await;
    let (base, seen) = agent(move |b| card(b, &format!("{tokens}/token")), 0).await;
    let url = format!("{base}{CARD_PATH}");
    let run = tokio::task::spawn_blocking(move || {
        let args = [
            &*url,
            "--client-id",
            "agent-7",
            "--client-secret",
            "s3cret",
            "hi",
        ];
        crate::ask::ask(&args)
    })
    .await
    .unwrap();
    assert_eq!(run.code, 1, "the agent's error: {}", run.stderr);
    assert_eq!(token_requests(&issued), 1);
    assert_eq!(bearers(&seen), ["Bearer tok-1"]);
}

/// An OpenID Connect provider: discovery at
/// `/.well-known/openid-configuration` naming `token_endpoint(base)`, and
/// tokens at `/token`.
async fn provider(
    token_endpoint: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Seen) {
    let issued = AtomicUsize::new(0);
    let base = Arc::new(Mutex::new(String::new()));
    let b = base.clone();
    let (url, seen) = serve(move |pq, _| {
        if pq == "/.well-known/openid-configuration" {
            let base = b.lock().unwrap().clone();
            let doc = serde_json::json!({
                "issuer": base,
                "token_endpoint": token_endpoint(&base),
            });
            return (StatusCode::OK, doc.to_string());
        }
        let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
        let body = format!(r#"{{"access_token":"oidc-{n}","token_type":"bearer","expires_in":1}}"#);
        (StatusCode::OK, body)
    })
    .await;
    *base.lock().unwrap() = url.clone();
    (url, seen)
}

/// The card: one OpenID Connect scheme discovered at `discovery`.
fn oidc_card(rpc: &str, discovery: &str) -> String {
    let mut c: AgentCard = serde_json::from_str(&card(rpc, "http://unused.example/token")).unwrap();
    c.security_schemes.insert(
        "oauth".into(),
        SecurityScheme::OpenIdConnect(a2a_tower::types::OpenIdConnectSecurityScheme {
            open_id_connect_url: discovery.into(),
            ..Default::default()
        }),
    );
    serde_json::to_string(&c).unwrap()
}

#[tokio::test]
async fn openid_connect_discovery_finds_the_token_endpoint() {
    let (idp, idp_seen) = provider(|base| format!("{base}/token")).await;
    let discovery = format!("{idp}/.well-known/openid-configuration");
    let (base, seen) = agent(move |b| oidc_card(b, &discovery), 0).await;
    get_task(&format!("{base}{CARD_PATH}"), &[]).await.unwrap();
    // Tokens expire at once (1 s): two token requests, one discovery.
    assert_eq!(bearers(&seen), ["Bearer oidc-1", "Bearer oidc-2"]);
    let idp_seen = idp_seen.lock().unwrap();
    let paths: Vec<&str> = idp_seen.iter().map(|(pq, ..)| pq.as_str()).collect();
    assert_eq!(
        paths,
        ["/.well-known/openid-configuration", "/token", "/token"]
    );
    assert!(
        idp_seen[0].1.get("authorization").is_none(),
        "no secret to discovery"
    );
    assert_eq!(idp_seen[1].1["authorization"], "Basic YWdlbnQtNzpzM2NyZXQ=");
}

#[tokio::test]
async fn a_discovered_token_endpoint_on_another_origin_is_refused() {
    let (elsewhere, elsewhere_seen) = token_endpoint(3600).await;
    let (idp, _) = provider(move |_| format!("{elsewhere}/token")).await;
    let discovery = format!("{idp}/.well-known/openid-configuration");
    let (base, seen) = agent(move |b| oidc_card(b, &discovery), 0).await;
    let err = get_task(&format!("{base}{CARD_PATH}"), &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthenticated);
    assert!(
        err.message().contains("another origin"),
        "{}",
        err.message()
    );
    assert_eq!(
        token_requests(&elsewhere_seen),
        0,
        "the secret never went there"
    );
    assert!(bearers(&seen).is_empty(), "no call without the token");
}
