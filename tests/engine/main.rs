//! The task engine (`TaskLayer`) over a log: executions, admission, agents,
//! concurrency.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

mod engine;
mod engine_admission;
mod engine_agent;
mod engine_concurrency;
mod engine_resume;
mod engine_slow_reader;
