//! Calling agents: `A2aClient`, the `ask` example, `ToolSet` and the MCP
//! server.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(
    feature = "client",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "sqlite",
    feature = "managed"
))]
mod ask;
#[cfg(all(feature = "client", feature = "engine"))]
mod auth_errors;
#[cfg(all(
    feature = "client",
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine"
))]
mod client;
#[cfg(all(
    feature = "client",
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "grpc"
))]
mod client_grpc;
#[cfg(feature = "client")]
mod credentials;
#[cfg(all(
    feature = "mcp",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "sqlite",
    feature = "managed"
))]
mod mcp;
#[cfg(feature = "client")]
mod oauth2;
#[cfg(all(
    feature = "tools",
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "managed"
))]
mod toolset;
