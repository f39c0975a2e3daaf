//! The protocol core, shared by both directions and every part of the crate:
//! one A2A operation (or an extension's method, [`ExtensionRequest`]) with
//! its call context ([`A2aRequest`]), the core's answer
//! ([`A2aResponse`]), the readable bound for a core ([`A2aService`]), the
//! protocol error and its one table of codes ([`A2aError`]), configuration
//! errors ([`ConfigError`]), the one table of the eleven operations
//! ([`OperationKind`]), and the operation-level rules that both the
//! bindings and the task engine apply (`check`).
//!
//! It uses the wire model ([`crate::types`]) and never HTTP framing: the only
//! `http` types here are the header map and extensions a request carries.
//!
//! ```
//! use a2a_tower::types::{GetTaskRequest};
//! use a2a_tower::{A2aRequest, Operation};
//!
//! let req = A2aRequest::new(Operation::GetTask(GetTaskRequest {
//!     id: "task-1".into(),
//!     ..Default::default()
//! }));
//! assert_eq!(req.operation.method(), "GetTask");
//! ```

#[doc(hidden)]
pub mod check;
mod config;
mod error;
mod event_id;
mod extension;
mod extension_method;
mod operation;
mod request;
mod response;
#[doc(hidden)]
pub mod service;

pub use config::ConfigError;
#[doc(hidden)]
pub use error::is_a2a_error;
pub use error::{A2aError, BoxError, ERROR_DOMAIN, ErrorKind};
pub use event_id::LastEventId;
pub use extension::ExtensionRequest;
pub use extension_method::ExtensionMethod;
#[doc(hidden)]
pub use operation::DecodeParams;
pub use operation::{Capability, HttpRoute, HttpVerb, OperationKind, ResponseKind};
pub use request::{
    A2aRequest, ActivatedExtensions, CallContext, GrpcCall, InvalidVersion, Operation,
    ProtocolVersion,
};
pub use response::{A2aResponse, EventStream, IdentifiedEvent};
pub use service::A2aService;
