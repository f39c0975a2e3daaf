//! The delivery queue: its model, its rules on every log, isolation, the queue
//! extension over HTTP, and several hosts on one queue.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "postgres", feature = "sqlite", feature = "jsonrpc"))]
mod multihost_queue;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_commits;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_compact;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_contexts;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod queue_extension;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_faults;
#[cfg(all(feature = "sqlite", feature = "jsonrpc"))]
mod queue_isolation;
#[cfg(feature = "engine")]
mod queue_model;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_rules;
#[cfg(all(feature = "engine", feature = "sqlite"))]
mod queue_stream;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "push"))]
mod team_push;
