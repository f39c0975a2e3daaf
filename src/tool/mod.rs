//! Tools: a small contract of the crate's own ([`Tool`]), so remote A2A
//! agents can be handed to any tool-calling host (a model loop, an MCP
//! server) without depending on one agent framework.
//!
//! ```
//! use a2a_tower::tool::{Concurrency, Effect};
//! assert_eq!(Effect::default(), Effect::Unsafe);
//! assert!(!Concurrency::exclusive("k").concurrent);
//! ```

mod contract;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;

pub use contract::{
    Answer, Concurrency, Effect, Failure, InputRequest, Invocation, Outcome, Tool, ToolError,
    ToolErrorKind, ToolFuture, ToolOutput,
};
