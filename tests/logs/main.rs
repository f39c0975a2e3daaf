//! The task-log backends (memory, SQLite, PostgreSQL), each through the shared
//! conformance suite, and several hosts on one PostgreSQL log.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

mod log_memory;
#[cfg(feature = "postgres")]
mod log_postgres;
#[cfg(feature = "sqlite")]
mod log_sqlite;
#[cfg(all(feature = "managed", any(feature = "sqlite", feature = "postgres")))]
mod log_upgrade;
#[cfg(all(feature = "postgres", feature = "jsonrpc", feature = "rest"))]
mod multihost_postgres;
#[cfg(feature = "postgres")]
mod postgres_commit;
#[cfg(all(feature = "push", feature = "sqlite"))]
mod push_secrets;
mod retention;
