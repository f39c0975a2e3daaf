//! The engine-level backend suites (feature `suite`): what a task log must
//! hold for the engine on top of it, run through real engines
//! ([`TaskLayer`](crate::engine::TaskLayer)) over any
//! `Arc<dyn TaskBackend>`. The built-in logs (memory, SQLite, PostgreSQL)
//! run them beside the log crate's `TaskLog` cases (`a2a_tower_log::suite`);
//! a log of your own can run them too.
//!
//! - [`push`]: the push-config storage rules (create, get, list with pages,
//!   idempotent delete, validation, authority scoping, terminal tasks,
//!   SendMessage's inline config), configs appended while another engine
//!   runs the task, and configs read back through a second handle of the
//!   log (a restart).
//! - [`recovery`]: restart recovery (the tasks a host was running are closed
//!   FAILED exactly once) and fencing (an older writer stops cleanly).
//!
//! A case that takes two logs (`log_a`, `log_b`) wants two handles of one
//! store (the same `Arc` for a memory log, two connections or two opens of
//! one file for a durable one). Each case uses authorities of its own, so
//! cases stay independent on a shared database. The cases spawn Tokio tasks
//! and wait on them: run them on a multi-threaded runtime
//! (`#[tokio::test(flavor = "multi_thread")]`).
//!
//! ```
//! use std::sync::Arc;
//! use a2a_tower::log::{MemoryTaskLog, TaskBackend};
//! use a2a_tower_engine::suite::{push, recovery};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! push::push_config_rules(Arc::new(MemoryTaskLog::new())).await;
//! let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
//! recovery::fenced_execution_stops_cleanly(log.clone(), log).await;
//! # });
//! ```

pub mod push;
pub mod recovery;
