//! Agent2Agent (A2A) protocol 1.0 as composable [Tower] layers.
//!
//! `a2a-tower` turns any `tower::Service<http::Request<_>>` host (hyper, axum,
//! actix through an adapter) into a conformant A2A endpoint, built from layers
//! the host can reorder and interleave with its own:
//!
//! ```text
//! HTTP request (the host's server)
//!  └ host layers: TLS, authentication, timeouts, rate limits      (the host's own)
//!    └ AgentCardLayer        GET /.well-known/agent-card.json, frozen bytes, ETag
//!      └ A2aBodyLimitLayer   bounds the request body before anything decodes it (4 MiB)
//!        └ A2aVersionLayer   A2A-Version header / query → negotiated version
//!          └ A2aExtensionsLayer  A2A-Extensions → activated extensions, required ones enforced
//!            └ JsonRpcLayer | RestLayer   HTTP ⇄ A2aRequest / A2aResponse, SSE for streams
//!              └ host A2aRequest layers: authority, quotas, audit   (the host's own)
//!                └ the core: any `Service<A2aRequest>` (see [`A2aService`])
//! ```
//!
//! Everything above the binding is `Service<http::Request<B>>` and answers
//! HTTP-level faults with a response shaped for the binding (a JSON-RPC error
//! object or the REST error body). Everything below it is
//! `Service<A2aRequest>` and never touches HTTP framing.
//!
//! The wire model ([`types`]) is ProtoJSON of `a2a.proto` exactly; errors
//! ([`A2aError`]) come from one table of codes, statuses and reasons.
//!
//! [Tower]: https://docs.rs/tower

#![cfg_attr(docsrs, feature(doc_cfg))]

mod binding;
mod body;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
mod capability;
mod config;
mod error;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
mod exchange;
mod fallback;
mod future;
mod macros;
mod request;
mod response;
mod service;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
mod sse;
#[cfg(any(feature = "jsonrpc", feature = "rest"))]
mod validate;

pub mod card;
pub mod extensions;
#[cfg(feature = "jsonrpc")]
#[cfg_attr(docsrs, doc(cfg(feature = "jsonrpc")))]
pub mod jsonrpc;
pub mod limit;
#[cfg(feature = "rest")]
#[cfg_attr(docsrs, doc(cfg(feature = "rest")))]
pub mod rest;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine")))
)]
pub mod server;
pub mod types;
pub mod version;

#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub mod engine;
#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub mod log;

pub use body::Body;
pub use card::AgentCardLayer;
pub use config::ConfigError;
pub use error::{A2aError, BoxError, ERROR_DOMAIN, ErrorKind};
pub use extensions::A2aExtensionsLayer;
pub use fallback::NotFound;
#[cfg(feature = "jsonrpc")]
pub use jsonrpc::{JsonRpcLayer, JsonRpcService};
pub use limit::A2aBodyLimitLayer;
pub use request::{
    A2aRequest, ActivatedExtensions, CallContext, InvalidVersion, Operation, ProtocolVersion,
};
pub use response::{A2aResponse, EventStream};
#[cfg(feature = "rest")]
pub use rest::{RestLayer, RestService};
pub use service::A2aService;
pub use version::A2aVersionLayer;

/// The README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
