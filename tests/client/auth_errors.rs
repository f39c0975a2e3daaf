//! A 401 or 403 from the agent is reported as such by the client, naming the
//! scheme its `WWW-Authenticate` asks for, whatever the body (an A2A error,
//! a host's page, nothing), on the calls and on the card fetch.

use crate::support;

use std::convert::Infallible;

use a2a_tower::client::A2aClient;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill, GetTaskRequest};
use a2a_tower::{A2aRequest, ErrorKind, Operation};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use tower::ServiceExt as _;

/// An agent whose card is public and whose calls need `Bearer good`
/// (`Bearer weak` is known but not allowed); `body` is what a refusal
/// carries. With `guard_card`, the card needs the token too.
async fn agent(body: &'static str, guard_card: bool) -> String {
    let (listener, base) = support::loopback::listener().await;
    let card = AgentCard::new("Guarded", "Needs a token", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{base}/")))
        .with_skill(AgentSkill::new("s", "S", "S"));
    let card = serde_json::to_vec(&card).unwrap();
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let card = card.clone();
        async move {
            let auth = req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let is_card = req.uri().path() == "/.well-known/agent-card.json";
            let res = if is_card && (!guard_card || auth == "Bearer good") {
                Response::new(Full::new(Bytes::from(card)))
            } else if auth == "Bearer weak" {
                Response::builder()
                    .status(StatusCode::FORBIDDEN)
                    .body(Full::new(Bytes::from(body)))
                    .unwrap()
            } else {
                Response::builder()
                    .status(StatusCode::UNAUTHORIZED)
                    .header(
                        "www-authenticate",
                        r#"Bearer realm="agents", error="invalid_token""#,
                    )
                    .body(Full::new(Bytes::from(body)))
                    .unwrap()
            };
            Ok::<_, Infallible>(res)
        }
    });
    support::loopback::serve(listener, svc);
    base
}

async fn get_task(base: &str, token: Option<&str>) -> a2a_tower::A2aError {
    let mut b = A2aClient::builder(format!("{base}/.well-known/agent-card.json"));
    if let Some(t) = token {
        b = b.authorization(format!("Bearer {t}").parse().unwrap());
    }
    let connected = b.build().unwrap().connect().await;
    let client = match connected {
        Ok(c) => c,
        Err(e) => return e,
    };
    let op = Operation::GetTask(GetTaskRequest {
        id: "t-1".into(),
        ..Default::default()
    });
    client.oneshot(A2aRequest::new(op)).await.unwrap_err()
}

#[tokio::test]
async fn a_401_names_the_scheme_and_a_403_is_permission_denied() {
    let rpc_error =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"Authentication required"}}"#;
    for body in ["", "<html>login</html>", rpc_error] {
        let base = agent(body, false).await;
        let err = get_task(&base, None).await;
        assert_eq!(err.kind(), ErrorKind::Unauthenticated, "{body:?}: {err}");
        // The agent's own A2A error keeps its message; the challenge is
        // its metadata either way.
        if body == rpc_error {
            assert_eq!(err.message(), "Authentication required");
        } else {
            assert!(err.message().contains("the Bearer scheme"), "{err}");
        }
        assert!(
            err.metadata()["wwwAuthenticate"].starts_with("Bearer realm"),
            "{err}"
        );
        if body != rpc_error {
            let err = get_task(&base, Some("weak")).await;
            assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{body:?}: {err}");
            assert!(err.message().contains("HTTP 403"), "{err}");
        }
    }
}

#[tokio::test]
async fn a_401_on_the_card_fetch_names_the_scheme_too() {
    let base = agent("", true).await;
    let err = get_task(&base, None).await;
    assert_eq!(err.kind(), ErrorKind::Unauthenticated, "{err}");
    assert!(err.message().contains("Bearer"), "{err}");
}

/// `examples/ask.rs`: a remote 401 exits 1 with a message naming the scheme
/// the agent asks for; a 403 exits 1 as PERMISSION_DENIED.
#[tokio::test]
async fn ask_exits_1_naming_the_scheme() {
    let base = agent("", false).await;
    for (extra, says) in [
        (&[][..], "UNAUTHENTICATED"),
        (&["--bearer", "weak"][..], "PERMISSION_DENIED"),
    ] {
        let mut args = vec![base.clone()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push("hello".into());
        let run = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            crate::ask::ask(&args)
        })
        .await
        .unwrap();
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains(says), "{run:?}");
        if says == "UNAUTHENTICATED" {
            assert!(run.stderr.contains("the Bearer scheme"), "{run:?}");
        }
    }
}
