//! [`AgentCardLayer`]: serves the agent card at `/.well-known/agent-card.json`
//! (a2a-spec.md §2.1) and passes every other request through untouched.
//!
//! The card is checked when the layer is built, so a card the stack cannot
//! honour never goes live. [`AgentCardLayer::new`] returns a
//! [`ConfigError`](crate::ConfigError) naming every problem:
//!
//! - a missing required field (a2a-spec.md §2.2, §2.4): `name`, `description`,
//!   `version`, at least one interface, input and output mode and skill; each
//!   skill's `id`, `name`, `description` and `tags`; each interface's `url`,
//!   `protocolBinding` and `protocolVersion`; a provider's `organization` and
//!   `url`; security requirements that name undeclared schemes; an OAuth 2.0
//!   scheme without `flows`;
//! - an interface URL that is not an absolute `http(s)` URL, or has user-info,
//!   a query or a fragment, or whose path is the well-known card path;
//! - a `protocolVersion` other than `1.0`, a binding other than `JSONRPC`,
//!   `HTTP+JSON` and `GRPC`, or a `GRPC` interface when the stack serves no
//!   gRPC ([`StackCapabilities::grpc`]) or whose url is not `host:port`;
//! - a capability the assembled stack cannot fulfil (see
//!   [`StackCapabilities`] and [`AgentCardLayer::with_capabilities`]).
//!
//! The card is then serialized once. `GET` and `HEAD` on the card path answer
//! with those frozen bytes (no body for `HEAD`) and `Content-Type:
//! application/json`, `Content-Length`, a strong `ETag` (a hash of the bytes),
//! `Last-Modified` (the build time) and `Cache-Control: public, max-age=…`
//! (300 s unless [`max_age`](AgentCardLayer::max_age) says otherwise). A
//! matching `If-None-Match` (or, without one, a satisfied `If-Modified-Since`)
//! gets `304 Not Modified`. `OPTIONS` answers `204` with `Allow`; other
//! methods get `405` with `Allow` and a REST error body. With
//! [`cors(true)`](AgentCardLayer::cors) every card response also carries
//! `Access-Control-Allow-Origin: *` and `OPTIONS` answers the CORS preflight.
//! The card endpoint needs no `A2A-Version` header.
//!
//! ```
//! use std::convert::Infallible;
//! use a2a_tower::AgentCardLayer;
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use bytes::Bytes;
//! use http::{Request, Response, StatusCode, header};
//! use http_body_util::{BodyExt, Full};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), a2a_tower::BoxError> {
//! let mut card = AgentCard::new("Echo", "Repeats what it hears", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("https://agent.example/a2a"))
//!     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"));
//! let layer = AgentCardLayer::new(&card)?.cors(true);
//! card.name = "Changed later".into(); // changes nothing that is served
//!
//! let svc = ServiceBuilder::new().layer(layer.clone()).service(service_fn(
//!     |_req: Request<Full<Bytes>>| async {
//!         Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("inner"))))
//!     },
//! ));
//!
//! let get = Request::get("/.well-known/agent-card.json").body(Full::default())?;
//! let res = svc.clone().oneshot(get).await?;
//! assert_eq!(res.status(), StatusCode::OK);
//! assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
//! assert_eq!(res.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
//! let etag = res.headers()[header::ETAG].clone();
//! let json: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(json["name"], "Echo");
//!
//! // Revalidation with the ETag costs no body.
//! let again = Request::get("/.well-known/agent-card.json")
//!     .header(header::IF_NONE_MATCH, etag)
//!     .body(Full::default())?;
//! assert_eq!(svc.clone().oneshot(again).await?.status(), StatusCode::NOT_MODIFIED);
//!
//! // Everything else reaches the inner service.
//! let other = Request::post("/a2a").body(Full::from("{}"))?;
//! let res = svc.oneshot(other).await?;
//! assert_eq!(&res.into_body().collect().await?.to_bytes()[..], b"inner");
//!
//! // A card the stack cannot serve is refused when the layer is built (no
//! // gRPC binding declared in the default StackCapabilities).
//! let grpc = AgentCard::new("Echo", "Repeats", "1.0.0")
//!     .with_interface(AgentInterface::new("agent.example:443", "GRPC"))
//!     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"));
//! assert!(AgentCardLayer::new(&grpc).is_err());
//! # Ok(())
//! # }
//! ```

mod extended;
mod layer;
mod service;
mod validate;

pub use extended::{ExtendedCard, ExtendedCardFuture, ExtendedCardLayer, ExtendedCardService};
pub use layer::AgentCardLayer;
pub use service::AgentCardService;
pub use validate::StackCapabilities;

/// The well-known path of the agent card (a2a-spec.md §2.1, RFC 8615).
pub const WELL_KNOWN_PATH: &str = crate::plumbing::routes::WELL_KNOWN_CARD_PATH;

crate::plumbing::future::opaque_future! {
    /// Response future of [`AgentCardService`].
    pub type ResponseFuture<F> = crate::plumbing::future::EdgeFuture<F>;
}
