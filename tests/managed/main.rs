//! Managed tasks: the programs, their storage, and several hosts on one
//! PostgreSQL log.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "managed", feature = "jsonrpc", feature = "rest"))]
mod managed;
#[cfg(feature = "managed")]
mod managed_quiescent;
#[cfg(all(feature = "managed", feature = "sqlite"))]
mod managed_storage;
#[cfg(all(feature = "postgres", feature = "managed"))]
mod multihost_managed;
