//! The wire model and protocol core of [`a2a-tower`](https://docs.rs/a2a-tower):
//! the A2A 1.0 types as ProtoJSON ([`types`]), the operation table
//! ([`Operation`], [`OperationKind`]), errors ([`A2aError`], [`ErrorKind`]),
//! and the request and response of a core ([`A2aRequest`], [`A2aResponse`],
//! [`A2aService`]).
//!
//! This crate depends on no runtime and no HTTP server: it is what every
//! other a2a-tower crate (the task log, the engine, the HTTP bindings, the
//! client) builds on. Applications use it through the `a2a-tower` facade,
//! which re-exports it under the same paths (`a2a_tower::types`,
//! `a2a_tower::A2aError`, ...).
//!
//! ```
//! use a2a_tower::types::{Message, Role};
//! use a2a_tower_core::{Operation, OperationKind};
//!
//! let kind = OperationKind::SendMessage;
//! assert_eq!(kind.jsonrpc_method(), "SendMessage");
//! let msg = Message::new(Role::User, "m-1", "hi");
//! assert_eq!(msg.text(), "hi");
//! # let _ = std::mem::size_of::<Operation>();
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
pub mod external_wait;
#[doc(hidden)]
pub mod json;
#[doc(hidden)]
pub mod protocol;
#[cfg(feature = "schema")]
#[doc(hidden)]
pub mod schema;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub mod signing;
pub mod telemetry;
pub mod types;
pub mod v03;

pub use protocol::{
    A2aError, A2aRequest, A2aResponse, A2aService, ActivatedExtensions, BoxError, CallContext,
    Capability, ConfigError, ERROR_DOMAIN, ErrorKind, EventStream, ExtensionMethod,
    ExtensionRequest, GrpcCall, HttpRoute, HttpVerb, IdentifiedEvent, InvalidVersion, LastEventId,
    Operation, OperationKind, ProtocolVersion, ResponseKind,
};
