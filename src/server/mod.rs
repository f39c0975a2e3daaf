//! One-call assembly of the whole A2A surface ([`A2aServer`]), the
//! [`BindingsService`] the card advertises as one service (each HTTP binding
//! the one [`BindingService`] shape, filled with its [`Codec`]),
//! [`A2aServiceBuilderExt`] for composing by hand, and [`serve`] for hosts
//! without a web framework (feature `serve`).
//!
//! ```
//! use a2a_tower::engine::{AgentInput, agent_fn};
//! use a2a_tower::server::A2aServer;
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use http_body_util::BodyExt;
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost:8080/"))
//!     .with_interface(AgentInterface::http_json("http://localhost:8080/rest"))
//!     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"))
//!     .with_streaming(true);
//! let echo = agent_fn(|input: AgentInput| async move { Ok(input.text) });
//! // Recovers the task log (here a fresh in-memory one), then assembles.
//! let app = A2aServer::builder(card).agent(echo).await?;
//!
//! let send = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
//! let req = http::Request::post("/rest/message:send")
//!     .header("content-type", "application/json")
//!     .header("a2a-version", "1.0")
//!     .body(send.to_owned())?;
//! let res = app.oneshot(req).await?;
//! assert_eq!(res.status(), 200);
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["task"]["status"]["state"], "TASK_STATE_COMPLETED");
//! assert_eq!(body["task"]["artifacts"][0]["parts"][0]["text"], "hi");
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```
//!
//! # Mounting
//!
//! The card's interface URLs say where clients reach the agent; the stack
//! matches request paths relative to where the host mounted it. The base of
//! the card's JSON-RPC and HTTP+JSON paths (their longest common prefix, on
//! segment boundaries) is where the stack expects to be mounted, and a path
//! is read first as the card's full path (the host passes paths through: a
//! plain mount at the root, axum's `route_service`, a fallback, an actix
//! `scope`, whose requests keep their full path), then as a path below the
//! base (the host stripped it: axum's `nest_service("/agents/shout", app)`,
//! a proxy that rewrites `/agents/shout/x` to `/x`). So one stack serves
//! either way:
//!
//! ```
//! # #[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use a2a_tower::engine::{AgentInput, agent_fn};
//! use a2a_tower::server::A2aServer;
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//! use tower::ServiceExt;
//!
//! let card = AgentCard::new("Shout", "Shouts", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("https://example.com/agents/shout"))
//!     .with_interface(AgentInterface::http_json("https://example.com/agents/shout/rest"))
//!     .with_skill(AgentSkill::new("shout", "Shout", "Shouts"));
//! let shout = agent_fn(|input: AgentInput| async move { Ok(input.text.to_uppercase()) });
//! let app = A2aServer::builder(card).agent(shout).await?;
//! let get = |path: &str| {
//!     http::Request::get(path).header("a2a-version", "1.0").body(String::new())
//! };
//! // Full paths, as a root mount passes them, and the same paths with the
//! // base `/agents/shout` stripped, as `nest_service` passes them.
//! for path in ["/agents/shout/rest/tasks/t-1", "/rest/tasks/t-1"] {
//!     let res = app.clone().oneshot(get(path)?).await?;
//!     assert_eq!(res.status(), 404); // TaskNotFound, an A2A answer
//!     assert!(res.headers().contains_key("content-type"));
//! }
//! // A path of no binding: a 404 that says no A2A endpoint is there.
//! let res = app.oneshot(get("/agents/other")?).await?;
//! assert_eq!(res.status(), 404);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```
//!
//! The trade-off of reading both ways: a stack that receives every path of
//! a host (as its fallback) also answers below `/` what its card puts below
//! the base. A host that wants only the card's full paths routes just those
//! to the stack; one that nests it routes just the nested prefix. A path of
//! no binding gets [`NotFound`](crate::NotFound)'s 404, a `google.rpc.Status`
//! body without an A2A reason, and the crate's client reports any 404
//! without an A2A error as MethodNotFound "no A2A endpoint at URL", never
//! as TaskNotFound.

#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod builder;
mod ext;
#[cfg(feature = "serve")]
mod listen;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod serve;

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "jsonrpc", feature = "rest"))))]
pub use a2a_tower_http::binding::{BindingLayer, BindingService, Codec};
#[cfg(all(feature = "jsonrpc", feature = "rest"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "jsonrpc", feature = "rest"))))]
pub use a2a_tower_http::binding::{BindingsLayer, BindingsService, ResponseFuture};
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine")))
)]
pub use builder::{A2aHttpService, A2aServer, A2aServerBuilder, Edge};
pub use ext::A2aServiceBuilderExt;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use listen::{Serve, ServeFuture, WithGracefulShutdown, serve};
