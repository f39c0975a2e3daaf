//! One-call assembly of the whole A2A surface ([`A2aServer`]), the
//! [`BindingsService`] the card advertises as one service,
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

#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod builder;
mod ext;
#[cfg(feature = "serve")]
mod listen;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod serve;

#[cfg(all(feature = "jsonrpc", feature = "rest"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "jsonrpc", feature = "rest"))))]
pub use crate::binding::router::{BindingsLayer, BindingsService, ResponseFuture};
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
