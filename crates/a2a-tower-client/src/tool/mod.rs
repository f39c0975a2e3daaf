//! Tools: a small contract of the crate's own ([`Tool`]), so remote A2A
//! agents can be handed to any tool-calling host (a model loop, an MCP
//! server) without depending on one agent framework; and [`ToolSet`], which
//! turns remote agents ([`Endpoint`]s) into such tools.
//!
//! - [`Endpoint`]: a card URL and the client's settings, with the host's
//!   tool name, continuation identity, concurrency policy and replay effect;
//! - [`ToolSet`]: opens every endpoint (all or nothing), owns the clients,
//!   closes them in reverse order;
//! - the A2A tool takes `{"message": string}` ([`input_schema`]), sends one
//!   blocking SendMessage and projects the result to text, an input request,
//!   a definite failure ([`RemoteAgentError`]) or an error;
//! - continuations: a remote INPUT_REQUIRED becomes an [`InputRequest`]
//!   bound to the remote task and the tool's binding and identity; an
//!   external wait ([`WaitAddress`], [`WAIT_KEY`], [`ANSWER_SCHEMA_KEY`])
//!   takes JSON checked against its exact schema.
//!
//! ```
//! use a2a_tower::tool::{Concurrency, Effect, Endpoint};
//! assert_eq!(Effect::default(), Effect::Unsafe);
//! assert!(!Concurrency::exclusive("k").concurrent);
//! let endpoint = Endpoint::new("http://localhost:8080/.well-known/agent-card.json")
//!     .name("local_agent");
//! # let _ = endpoint;
//! ```

mod agent;
mod continuation;
mod contract;
mod endpoint;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
mod name;
mod project;
mod remote;
mod set;
mod wait;

pub use agent::input_schema;
pub use contract::{
    Answer, Concurrency, Effect, Failure, InputRequest, Invocation, Outcome, Tool, ToolError,
    ToolErrorKind, ToolFuture, ToolOutput,
};
pub use endpoint::{ConcurrencyPolicy, Endpoint};
pub use name::tool_name;
pub use remote::RemoteAgentError;
pub use set::ToolSet;
pub use wait::WaitAddress;

pub use crate::external_wait::{ANSWER_SCHEMA_KEY, EXTERNAL_WAIT_EXTENSION, WAIT_KEY};
