//! The task engine: turns user code into a complete, conformant A2A core.
//!
//! [`TaskLayer`] wraps an inner `Service<`[`Execution`]`>` (user code: an
//! [`Executor`] through [`ExecutorService`], or a text [`Agent`] through
//! [`AgentExecutor`]; closures become either with [`agent_fn`],
//! [`streaming_agent_fn`] and [`executor_fn`]) into a [`TaskService`], a `Service<A2aRequest>` that
//! answers all eleven operations from a [`TaskLog`](crate::log::TaskLog).
//! Host layers such as timeouts or concurrency limits can sit between the
//! task layer and the executor, since the executor is reached as a service.
//!
//! ```text
//! A2aRequest ─▶ TaskService ─┬─ GetTask / ListTasks / SubscribeToTask: read the log
//!                            ├─ CancelTask: the live writer commits CANCELED
//!                            └─ SendMessage: admit (a log commit), run the execution
//!                                  └─▶ host layers ─▶ Service<Execution> (your executor)
//!                                         └─ Emitter: status, artifact chunks, reply → log
//! ```
//!
//! Rules the engine enforces:
//! - **One execution per task.** A message to a task that is still running is
//!   rejected (UnsupportedOperation, naming the task): the client waits for
//!   INPUT_REQUIRED / AUTH_REQUIRED and then continues with the same task id.
//!   Queueing is the job of the optional per-context delivery queue.
//! - **Executions are detached from connections.** Dropping a stream or a
//!   blocking call cancels nothing; SubscribeToTask reconnects. (A blocking
//!   SendMessage runs its execution in its own future, which saves a task
//!   and a wake-up per call; if the call is dropped, or the executor keeps
//!   running after it closed the task, the rest goes on in a task of its
//!   own.)
//! - **Slow subscribers are never waited for, nor cut off**: each is a
//!   cursor over the log and reads it at its own pace, page by page, so a
//!   reader far behind the task's head holds about one page of records and
//!   delays nobody. A stream ends only when its connection closes, at the
//!   task's terminal (or interrupted) event, or when it falls more records
//!   behind than a limit the host set with [`TaskLayer::subscriber_buffer`]
//!   (then with an `Unavailable` error event; it can resubscribe).
//! - **An optional inactivity timeout** ([`TaskLayer::inactivity_timeout`])
//!   cancels an executor that stops emitting and fails its task.
//! - **A panicking or failing executor** ends its task FAILED with a fixed
//!   message; the panic or error reaches tracing as a classification only.
//! - **Every call is scoped by an [`Authority`]** derived from the call
//!   context; a task of another authority is reported as not found.
//!
//! - **Admission is one commit with the answer when it can be.** A stream,
//!   a `returnImmediately` send and a continuation commit the message's
//!   admission before the executor runs. A blocking SendMessage that
//!   creates a task (whose id nobody knows before the answer) lets the
//!   admission ride with what the executor commits in its first poll, so a
//!   quick agent writes each task once; if the executor (or a host layer in
//!   front of it) waits for anything first, the admission is committed
//!   alone at once, and the task is listed meanwhile. If that commit fails,
//!   no task exists and the caller gets the error, as for any refused
//!   admission.
//! - **Fenced executions stop cleanly.** Every execution records its host
//!   ([`TaskLayer::host_id`]); a writer whose append is refused because
//!   another writer took the task over (a newer epoch, or a record appended
//!   meanwhile by another host) stops: its executor is cancelled, it appends
//!   nothing more (no second terminal), and the calls and streams waiting on
//!   it on this host end, a blocking SendMessage answering with the task as
//!   the log has it.
//!
//! # Resuming a stream
//!
//! Every event of a stream (SendStreamingMessage, SubscribeToTask) carries
//! the sequence number of the log record it shows as its
//! [`LastEventId`](crate::LastEventId): the JSON bindings send it as the SSE
//! `id:` field (the snapshot that starts a subscription has the snapshot's
//! number). A SubscribeToTask with a `Last-Event-ID` header (as the SSE
//! specification defines it; an empty value is no cursor) gets exactly the
//! events after that cursor, replayed from the log, then the live tail: no
//! gap, no duplicate, and no snapshot first. A task that ended meanwhile
//! replays up to its terminal event; a cursor at a terminal task's last
//! event gets the specification's answer for a terminal task
//! (UnsupportedOperation), as a subscription without a cursor does; a
//! cursor this engine never sent (not a number, or beyond the task's last
//! record) is InvalidParams. Where the log no longer holds the records after
//! the cursor (the memory log compacts a finished task nobody watches), the
//! stream starts from the task's snapshot instead, as without a cursor. A
//! client that sends no header sees the 1.0 wire unchanged, which is why no
//! card extension is declared for it.
//!
//! gRPC has no equivalent on the 1.0 wire: `StreamResponse` messages carry
//! no id (there is no field for one, and a gRPC stream has no per-message
//! metadata), so a gRPC client has no cursor to resume from. The engine
//! reads the cursor from the call's headers, so `last-event-id` request
//! metadata is honoured on gRPC as on HTTP, for a client that got a cursor
//! elsewhere (the same task streamed over a JSON binding).
//!
//! # Push notification configs
//!
//! When the card declares `capabilities.pushNotifications`, the engine
//! answers the four push-config operations (a2a-spec.md §4.7) and stores
//! SendMessage's inline `configuration.taskPushNotificationConfig` with the
//! message's admission. Configs live in the task log with their task
//! ([`Record::PushConfigSet`](crate::log::Record::PushConfigSet),
//! [`Record::PushConfigDeleted`](crate::log::Record::PushConfigDeleted)),
//! under the task's authority (another authority's config is TaskNotFound).
//! Create checks the URL (absolute `http`/`https`) and the authentication
//! info (a scheme), assigns a UUID when the id is empty and replaces a
//! config with the same id; List pages in id order (`pageSize` up to 100,
//! an opaque `pageToken`); Delete is idempotent; a missing config is
//! TaskNotFound; a terminal task keeps its configs and accepts new ones,
//! which receive nothing more (no delivery cursor); a task keeps at most 16
//! configs. The engine
//! stores configs; delivering them is the job of the push outbox over its
//! log (`push::outbox`, feature `push`; `A2aServerBuilder::push_notifications`).
//!
//! # Restart recovery
//!
//! [`TaskLayer::recover`], called once before serving, closes as FAILED
//! ([`RESTARTED_MESSAGE`]) the tasks that were live on this host id when its
//! process died, exactly once even if two hosts start together; tasks waiting
//! for input, and tasks of other host ids, stay as they are.
//!
//! Tracing: one `a2a.call` span per call (method, task_id, context_id,
//! error.kind) and one `a2a.execution` span per execution (task_id,
//! context_id, outcome). Error messages never enter a span.
//!
//! ```
//! use a2a_tower::engine::{Agent, AgentExecutor, AgentInput, TaskLayer};
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::types::{AgentCard, Message, SendMessageRequest, SendMessageResponse, TaskState};
//! use a2a_tower::{A2aRequest, A2aResponse, BoxError, Operation};
//! use futures_core::Stream;
//! use tower::{Layer, ServiceExt};
//!
//! struct Echo;
//! impl Agent for Echo {
//!     fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
//!         futures_util::stream::iter([Ok(input.text)])
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0");
//! let engine = TaskLayer::new(card, MemoryTaskLog::new())
//!     .unwrap()
//!     .layer(AgentExecutor::service(Echo));
//!
//! let send = SendMessageRequest { message: Message::user("m-1", "hello"), ..Default::default() };
//! let res = engine.oneshot(A2aRequest::new(Operation::SendMessage(send))).await.unwrap();
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("hello"));
//! # });
//! ```

pub(crate) mod admit;
mod agent;
mod authority;
pub(crate) mod deferred;
pub(crate) mod dispatch;
pub(crate) mod executor;
mod from_fn;
mod future;
mod inputs;
pub(crate) mod layer;
mod media;
pub(crate) mod ops;
pub(crate) mod push_config;
mod recovery;
pub(crate) mod ride;
pub(crate) mod run;
pub(crate) mod send;
pub(crate) mod service;
pub(crate) mod subscribe;
pub(crate) mod writer;

pub use agent::{AGENT_FAILED_MESSAGE, Agent, AgentExecutor, AgentInput};
pub use authority::Authority;
pub use executor::{EmitError, Emitter, Execution, ExecutionFuture, Executor, ExecutorService};
pub use from_fn::{
    AgentFn, ExecutorFn, StreamingAgentFn, agent_fn, executor_fn, streaming_agent_fn,
};
pub use future::ResponseFuture;
pub use inputs::Inputs;
pub use layer::TaskLayer;
pub use recovery::{DEFAULT_HOST_ID, RESTARTED_MESSAGE, Recovered};
pub use service::TaskService;

// What the managed layer and the delivery queue share with the engine: the
// reads, the event streams, the views and the one-shot signal.
pub(crate) use layer::Shared;
#[cfg(feature = "managed")]
pub(crate) use ops::view;
pub(crate) use recovery::recover as recovery_of;
#[cfg(feature = "managed")]
pub(crate) use service::record_ids;
#[cfg(feature = "managed")]
pub(crate) use subscribe::{Reopen, Start, event_stream};
#[cfg(feature = "managed")]
pub(crate) use writer::Signal;

/// The fixed status message of a task whose executor failed, panicked, or
/// could not start.
pub const EXECUTOR_FAILED_MESSAGE: &str = run::EXECUTOR_FAILED;
/// The fixed status message of a task whose executor timed out.
pub const EXECUTOR_TIMED_OUT_MESSAGE: &str = run::EXECUTOR_TIMED_OUT;

/// A UUID as its lowercase hyphenated text, written without `fmt` (an id or
/// two per message).
pub(crate) fn id_text(id: uuid::Uuid) -> String {
    id.hyphenated()
        .encode_lower(&mut uuid::Uuid::encode_buffer())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send::<TaskService<ExecutorService<AgentExecutor<Nop>>>>();
        assert_sync::<TaskService<ExecutorService<AgentExecutor<Nop>>>>();
        assert_send::<ResponseFuture>();
        assert_send::<Execution>();
        assert_send::<Emitter>();
        assert_sync::<Emitter>();
        assert_send::<TaskLayer>();
        assert_sync::<TaskLayer>();
    }

    #[test]
    fn id_text_is_the_hyphenated_lowercase_text() {
        for id in [
            uuid::Uuid::now_v7(),
            uuid::Uuid::new_v4(),
            uuid::Uuid::max(),
        ] {
            assert_eq!(super::id_text(id), id.to_string());
        }
    }

    struct Nop;
    impl Agent for Nop {
        fn run(
            &self,
            _: AgentInput,
        ) -> impl futures_core::Stream<Item = Result<String, crate::BoxError>> + Send {
            futures_util::stream::empty()
        }
    }
}
