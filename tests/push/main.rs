//! Push notifications: configs, delivery, the outbox, and the whole path end to
//! end.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod push_config;
#[cfg(feature = "push")]
mod push_delivery;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "push"))]
mod push_e2e;
#[cfg(feature = "push")]
mod push_outbox;
