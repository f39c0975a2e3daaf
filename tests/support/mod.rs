//! Helpers shared by the integration tests. A test binary declares it once
//! (`tests/<area>/main.rs`: `#[path = "../support/mod.rs"] mod support;`, a
//! binary of one file `tests/<name>.rs`: `mod support;`); a test module
//! brings it in with `use crate::support;` and imports each helper by its
//! path, e.g. `use support::http::{client, rpc};`, so a reader sees where it
//! comes from.
//!
//! The `TaskLog` conformance cases every backend runs are a part of the log
//! crate (`a2a_tower_log::suite`, `a2a_tower_log::log_suite!`), and the cases
//! that go through the engine (push-config storage, restart recovery and
//! fencing) a part of the engine's (`a2a_tower_engine::suite`).
//!
//! - `ask`: the `ask` example as a process (its output and exit status).
//! - `assembled`: the whole `A2aServer` over a scripted agent, and the calls
//!   that assert its wire answers on both bindings.
//! - `calls`: A2A calls on any core (`Service<A2aRequest>`) with `oneshot`,
//!   each answered in time.
//! - `client`: calling an agent through `A2aClient` (bounded calls, event
//!   lines).
//! - `core`: a scripted `Service<A2aRequest>` core that records its calls.
//! - `engine`: driving a `TaskService` with `oneshot` (executors, gates,
//!   calls).
//! - `http`: building A2A requests, reading answers, and a JSON-RPC client
//!   over real HTTP.
//! - `loopback`: serving an HTTP `Service` on a loopback listener.
//! - `managed`: programs, a card and calls for the managed-task tests.
//! - `postgres`: the test database's URL, a fresh schema per test, and a
//!   log on it.
//! - `python`: the interop tests' Python (`.venv`) and its scripts.
//! - `queue`: agents the delivery-queue tests control, the logs a case runs
//!   on, a host that dies, calls on a `TeamService`, and reads of a
//!   context's queue stream.
//! - `server`: spawning a built example binary as a server.
//! - `sse`: reading server-sent events.
//! - `tasks`: waiting for a task in a log to get somewhere, and its records.
//! - `team`: the team example as a process over JSON-RPC: queued inputs,
//!   waits for a task's state, a task's output and timestamp.
//! - `trace`: a subscriber recording every span's fields.
//! - `webhook`: a push webhook receiver on loopback that records what it
//!   gets and answers from a script.

// Every test binary compiles all of `support`, and no binary uses every
// helper: what one leaves unused another one uses.
#![allow(dead_code)]

pub(crate) mod ask;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
pub(crate) mod assembled;
#[cfg(feature = "engine")]
pub(crate) mod calls;
#[cfg(feature = "client")]
pub(crate) mod client;
pub(crate) mod core;
#[cfg(feature = "engine")]
pub(crate) mod engine;
#[cfg(feature = "engine")]
pub(crate) mod gated;
pub(crate) mod http;
pub(crate) mod loopback;
#[cfg(feature = "managed")]
pub(crate) mod managed;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod python;
#[cfg(all(feature = "engine", feature = "sqlite"))]
pub(crate) mod queue;
pub(crate) mod server;
pub(crate) mod sse;
#[cfg(feature = "engine")]
pub(crate) mod tasks;
#[cfg(all(feature = "engine", feature = "sqlite"))]
pub(crate) mod team;
pub(crate) mod trace;
#[cfg(feature = "push")]
pub(crate) mod webhook;
