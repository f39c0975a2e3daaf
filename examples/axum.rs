//! Run with `cargo run --example axum`: the echo agent mounted in an axum 0.8
//! `Router` next to the host's own routes, behind an axum bearer-auth
//! middleware whose principal the agent reads.
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`; `127.0.0.1:0` picks a
//! free port) and prints `listening on http://ADDR` once bound.
//!
//! - `GET /health`: the host's own route (public).
//! - `GET /.well-known/agent-card.json`: the card (public, so that clients can
//!   discover the agent and its security scheme before authenticating).
//! - `POST /a2a` (JSON-RPC) and `/a2a/rest/...` (HTTP+JSON): need
//!   `Authorization: Bearer <token>`; without one the middleware answers
//!   `401` with `WWW-Authenticate: Bearer`. The demo tokens are
//!   `secret-alice` and `secret-bob`.
//!
//! ```text
//! curl -s localhost:8080/a2a/rest/message:send -H 'authorization: Bearer secret-alice' \
//!   -H 'a2a-version: 1.0' -H 'content-type: application/json' \
//!   -d '{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}'
//! ```
//! answers a completed task whose artifact is `alice: hi`.

#[path = "common/agents.rs"]
mod agents;

use std::collections::BTreeMap;

use a2a_tower::engine::Authority;
use a2a_tower::server::A2aServer;
use a2a_tower::types::{HttpAuthSecurityScheme, ScopeList, SecurityRequirement, SecurityScheme};
use agents::Principal;
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The demo's token table. A real host verifies a JWT or looks up a session.
const TOKENS: &[(&str, &str)] = &[("secret-alice", "alice"), ("secret-bob", "bob")];

/// axum middleware: `401` + `WWW-Authenticate: Bearer` without a known bearer
/// token; otherwise the caller's [`Principal`] goes into the request
/// extensions, where the A2A bindings pick it up for the engine's
/// [`Authority`] and the agent (`AgentInput::call.extensions`).
async fn bearer_auth(mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = token else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response();
    };
    let Some((_, name)) = TOKENS.iter().find(|(t, _)| *t == token) else {
        let challenge = r#"Bearer error="invalid_token""#;
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
        )
            .into_response();
    };
    req.extensions_mut().insert(Principal((*name).to_owned()));
    next.run(req).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let listener = tokio::net::TcpListener::bind(agents::addr()).await?;
    let addr = listener.local_addr()?;

    // The shared echo card, plus the bearer scheme this host enforces.
    let mut card = agents::card(&agents::base_url(addr));
    let bearer = HttpAuthSecurityScheme {
        scheme: "Bearer".into(),
        ..Default::default()
    };
    card.security_schemes
        .insert("bearer".into(), SecurityScheme::HttpAuth(bearer));
    card.security_requirements.push(SecurityRequirement {
        schemes: BTreeMap::from([("bearer".into(), ScopeList::default())]),
    });

    // Each principal sees only its own tasks: a task of another principal
    // answers TaskNotFound, exactly like one that does not exist.
    let a2a = A2aServer::builder(card)
        .authority(Authority::principal(|p: &Principal, tenant: &str| {
            format!("{}/{tenant}", p.0)
        }))
        .agent(agents::Echo)
        .await?;

    // The A2A service matches paths relative to where it is mounted, so it
    // nests like any axum service: `/a2a` and `/a2a/rest/...` reach it as
    // `/` and `/rest/...`, the card's paths relative to their base `/a2a`.
    let app = Router::new()
        .nest_service(agents::MOUNT, a2a.clone())
        // Applies to the routes added above only: the A2A endpoints.
        .route_layer(middleware::from_fn(bearer_auth))
        // Public: the card (served by the same service) and the host's route.
        .route_service("/.well-known/agent-card.json", a2a)
        .route("/health", get(|| async { "ok" }));

    println!("listening on http://{addr}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    println!("shut down gracefully");
    Ok(())
}
