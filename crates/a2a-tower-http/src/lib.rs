//! The HTTP edge and bindings of [`a2a-tower`](https://docs.rs/a2a-tower):
//! the layers between an HTTP host and an A2A core service
//! (`Service<A2aRequest>`).
//!
//! - edge layers: the agent card endpoint ([`card`]), the request body
//!   limit ([`limit`]), the `A2A-Version` check ([`version`]) and the
//!   `A2A-Extensions` check ([`extensions`]);
//! - bindings ([`binding`]): JSON-RPC 2.0 (`jsonrpc`, feature `jsonrpc`),
//!   HTTP+JSON (`rest`, feature `rest`) and gRPC (`grpc`, feature `grpc`,
//!   code generated from `proto/` at build time), each HTTP ⇄
//!   [`A2aRequest`] /
//!   [`A2aResponse`] with SSE for streams, and
//!   the router of the bindings a card advertises;
//! - ready authentication layers ([`auth`], features `auth-jwt` and
//!   `auth-api-key`) that declare the scheme they enforce in the card;
//! - the response [`Body`] and the [`NotFound`] fallback.
//!
//! The bindings see the core only as an
//! [`A2aService`]: never the task engine or a
//! task log. Applications use this crate through the `a2a-tower` facade,
//! which re-exports it under the same paths (`a2a_tower::card`,
//! `a2a_tower::JsonRpcLayer`, `a2a_tower::server::BindingLayer`, ...) and
//! features.
//!
//! ```
//! use a2a_tower::types::{AgentCard, AgentInterface};
//! use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind};
//! use a2a_tower_http::{JsonRpcLayer, VersionLayer};
//! use http_body_util::BodyExt;
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let card = AgentCard::new("Doc", "Refuses everything", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"));
//! let core = tower::service_fn(|_: A2aRequest| async {
//!     Err::<A2aResponse, _>(A2aError::new(ErrorKind::UnsupportedOperation))
//! });
//! let app = VersionLayer::new(&card)?.layer(JsonRpcLayer::new(&card)?.layer(core));
//!
//! let rpc = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#;
//! let req = http::Request::post("/rpc")
//!     .header("content-type", "application/json")
//!     .header("a2a-version", "1.0")
//!     .body(rpc.to_owned())?;
//! let res = app.oneshot(req).await?;
//! let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await?.to_bytes())?;
//! assert_eq!(body["error"]["code"], -32004);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

// The core's items under the paths this crate's code names (`crate::types`,
// `crate::protocol`, `crate::A2aError`, ...), as the facade imports them.
#[allow(unused_imports)]
use a2a_tower_core::*;

#[cfg(any(feature = "auth-jwt", feature = "auth-api-key"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "auth-jwt", feature = "auth-api-key"))))]
pub mod auth;
pub mod binding;
pub mod card;
pub mod extensions;
pub mod limit;
mod plumbing;
pub mod v03;
pub mod version;

#[cfg(feature = "grpc")]
pub use binding::grpc;
#[cfg(feature = "jsonrpc")]
pub use binding::jsonrpc;
#[cfg(feature = "rest")]
pub use binding::rest;
#[cfg(feature = "grpc")]
#[allow(deprecated)]
pub use grpc::{GrpcBindingLayer, GrpcBindingService, GrpcLayer, GrpcService};

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub use a2a_tower_core::ExtensionMethod;
pub use card::AgentCardLayer;
#[allow(deprecated)]
pub use extensions::{A2aExtensionsLayer, ExtensionsLayer};
#[cfg(feature = "jsonrpc")]
pub use jsonrpc::{JsonRpcLayer, JsonRpcService};
#[allow(deprecated)]
pub use limit::{A2aBodyLimitLayer, BodyLimitLayer};
pub use plumbing::{Body, NotFound};
#[cfg(feature = "rest")]
pub use rest::{RestLayer, RestService};
#[allow(deprecated)]
pub use version::{A2aVersionLayer, VersionLayer};
