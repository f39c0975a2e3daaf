//! The task engine of [`a2a-tower`](https://docs.rs/a2a-tower): executors
//! and text agents, the per-context delivery queue, managed tasks, and push
//! notifications over the task log.
//!
//! - [`engine`]: [`TaskLayer`](engine::TaskLayer) turns user code (an
//!   [`Executor`](engine::Executor), a text [`Agent`](engine::Agent), or
//!   closures through [`agent_fn`](engine::agent_fn)) into a
//!   `Service<A2aRequest>` that answers all eleven operations from a task
//!   log, with start-up recovery and fencing;
//! - [`queue`]: a [`Team`](queue::Team) of named agents behind one endpoint,
//!   one durable delivery queue per context;
//! - `managed` (feature `managed`): durable programs served as A2A tasks;
//! - `push` (feature `push`): the push outbox over the task log and
//!   `PushSender`, which delivers task events to webhooks behind an SSRF
//!   guard;
//! - `suite` (feature `suite`): the engine-level backend suites (push-config
//!   storage, restart recovery and fencing), for a task log of your own.
//!
//! This crate depends on `a2a-tower-core` and `a2a-tower-log` only: never on
//! the HTTP edge and bindings, the client, or a durable log's crate (the
//! engine runs on any `TaskBackend`). Applications use it through the
//! `a2a-tower` facade, which re-exports it under the same paths
//! (`a2a_tower::engine`, `a2a_tower::queue`, `a2a_tower::managed`,
//! `a2a_tower::push`) and feature names, and serves it over HTTP
//! (`a2a_tower::server::A2aServer`).
//!
//! ```
//! use a2a_tower::engine::{AgentExecutor, AgentInput, TaskLayer, agent_fn};
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::types::{AgentCard, Message, SendMessageRequest, SendMessageResponse, TaskState};
//! use a2a_tower::{A2aRequest, A2aResponse, Operation};
//! use tower::{Layer, ServiceExt};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let shout = agent_fn(|input: AgentInput| async move { Ok(input.text.to_uppercase()) });
//! let card = AgentCard::new("Shout", "Shouts", "1.0.0");
//! let engine = TaskLayer::new(card, MemoryTaskLog::new())
//!     .unwrap()
//!     .layer(AgentExecutor::service(shout));
//!
//! let send = SendMessageRequest { message: Message::user("m-1", "hi"), ..Default::default() };
//! let res = engine.oneshot(A2aRequest::new(Operation::SendMessage(send))).await.unwrap();
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("HI"));
//! # });
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

// The modules were the facade's `engine`, `queue`, `managed` and `push`:
// these make the paths they name (`crate::types`, `crate::protocol`,
// `crate::A2aError`, `crate::schema`, `crate::log::…`) resolve unchanged.
#[allow(unused_imports)]
use a2a_tower_core::*;
use a2a_tower_log as log;

pub mod engine;
#[cfg(feature = "managed")]
#[cfg_attr(docsrs, doc(cfg(feature = "managed")))]
pub mod managed;
#[cfg(feature = "push")]
#[cfg_attr(docsrs, doc(cfg(feature = "push")))]
pub mod push;
pub mod queue;
#[cfg(feature = "suite")]
#[cfg_attr(docsrs, doc(cfg(feature = "suite")))]
pub mod suite;

#[cfg(test)]
mod tests {
    /// The crate line: of the a2a-tower crates, the engine depends on the
    /// core and the log only, never on the HTTP edge, the client or a
    /// durable log's crate.
    #[test]
    fn the_core_and_the_log_are_the_only_a2a_tower_dependencies() {
        let manifest = include_str!("../Cargo.toml");
        let (_, rest) = manifest.split_once("\n[dependencies]\n").unwrap();
        let table = rest.split("\n[").next().unwrap();
        let ours: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("a2a-tower"))
            .map(|l| l.split(['.', ' ', '=']).next().unwrap())
            .collect();
        assert_eq!(ours, ["a2a-tower-core", "a2a-tower-log"]);
    }
}
