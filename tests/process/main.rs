//! The example binaries as processes: their end-to-end behaviour, and crash
//! recovery (a server killed and restarted on the same storage).
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(
    feature = "sqlite",
    feature = "managed",
    feature = "jsonrpc",
    feature = "rest"
))]
mod crash_managed;
#[cfg(all(
    feature = "sqlite",
    feature = "jsonrpc",
    feature = "rest",
    feature = "push"
))]
mod crash_push;
#[cfg(all(feature = "sqlite", feature = "jsonrpc", feature = "rest"))]
mod crash_queue;
#[cfg(all(feature = "sqlite", feature = "jsonrpc", feature = "rest"))]
mod crash_sqlite;
#[cfg(all(feature = "engine", feature = "jsonrpc", feature = "rest"))]
mod examples;
#[cfg(all(feature = "sqlite", feature = "jsonrpc", feature = "rest"))]
mod retention;
#[cfg(all(
    feature = "sqlite",
    feature = "client",
    feature = "jsonrpc",
    feature = "rest"
))]
mod stream_resume;
#[cfg(all(
    feature = "sqlite",
    feature = "jsonrpc",
    feature = "rest",
    feature = "client"
))]
mod telemetry;
