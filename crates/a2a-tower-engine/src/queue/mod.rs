//! The per-context delivery queue: several named agents behind one endpoint,
//! one durable queue per context, a strict head, one admission commit, and
//! an event-driven drain that cannot stick.
//!
//! A [`Team`] hosts named agents (each an [`Agent`](crate::engine::Agent)
//! or [`Executor`](crate::engine::Executor)) with a default one; served
//! through [`A2aServerBuilder::team`](https://docs.rs/a2a-tower/latest/a2a_tower/server/struct.A2aServerBuilder.html#method.team)
//! (or [`Team::service`] by hand) it answers every A2A operation. An A2A
//! context is a conversation thread; each input admitted to it becomes one
//! task of one agent.
//!
//! - **Queueing.** A message without a task id is a new input: it is
//!   committed as a SUBMITTED task of its context together with its entry in
//!   the context's queue (one commit, shared by the inputs that wait for
//!   the context's queue together), visible to GetTask, ListTasks and
//!   SubscribeToTask, its message not yet in any run. Message metadata
//!   steers it: `queue.target` names the agent (an unknown name is refused
//!   before anything is written), `queue.priority` is `"urgent"` or
//!   `"normal"` (the default). A blocking SendMessage answers when the run
//!   ends or asks for input; `returnImmediately` answers with the queued
//!   task; a stream starts with it. A blocking SendMessage (without a push
//!   config) into a context with nothing queued and its agent free is
//!   admitted in that same commit (its caller never sees it queued): the
//!   queue stream records its entry and its admission together. A context
//!   such a message opens itself (no context id), its run ending in that
//!   commit, keeps no queue stream: its next message finds the last replier
//!   among the context's tasks.
//! - **One comparator.** Manual position first, then urgent before normal,
//!   then arrival order, then task id ([`Entry::order`]).
//! - **Strict head.** The drain looks only at the head: if its agent already
//!   runs an input of this context, it waits, never skipping ahead. Different
//!   agents run concurrently in one context; contexts never wait for each
//!   other. A run that waits for input (INPUT_REQUIRED) keeps its agent busy
//!   in the context until it ends.
//! - **Targets.** An input naming an agent never goes to another; if that
//!   agent is not hosted when the input reaches the head, its task ends
//!   FAILED with [`TARGET_UNAVAILABLE_MESSAGE`] (metadata `queue.error`:
//!   `TARGET_UNAVAILABLE`). An input naming none waits until the context is
//!   idle, then goes to the agent that last completed a reply in the
//!   context, else to the default agent.
//! - **Admission is the one switch point**: one conditional commit, on the
//!   task and on the queue's revision together, admits the input as the
//!   task's message with status WORKING (and metadata `queue.agent`); only
//!   then does the agent run. Hosts sharing a PostgreSQL log are serialised
//!   by the revision: an entry is never admitted twice or out of order.
//! - **One terminal per run, in place**: the run's task ends COMPLETED,
//!   FAILED or CANCELED with everything it streamed. Unless its reply may
//!   hand off, the commit that ends the task also settles the run in the
//!   queue, and admits the next input it lets run; otherwise the drain
//!   settles it with what the head does next.
//! - **Event-driven drain** ([`DrainGate`]): an enqueue, a cancel, a
//!   reorder, a run's end or a start-up drains the context; an event during
//!   a drain forces one more pass. No timers, no polling.
//! - **Controls**, none of which pauses or reorders the queue:
//!   `queue.mode: "append"` on a message to a running task hands it to the
//!   execution ([`Inputs`](crate::engine::Inputs)); `queue.mode: "steer"`
//!   (with `queue.target`) queues the input before every other and cancels
//!   that agent's run in the context; CancelTask on a queued task removes it
//!   (it never runs); CancelTask on a run stops it and the drain goes on.
//! - **Handoff**: a completed reply naming another agent of the team as
//!   `@name` queues an input for it that refers to the reply (the reply's
//!   task id; the queued task's metadata `queue.handoffFrom`), at normal
//!   priority; each hop closes only its own task (at most [`MAX_HOPS`]).
//! - **The extension** [`QUEUE_EXTENSION`]: [`GET_QUEUE_METHOD`] reads a
//!   context's queue and its revision; [`REORDER_QUEUE_METHOD`] submits the
//!   complete order with that revision, and a stale revision or an
//!   incomplete order changes nothing.
//! - **Recovery** ([`TeamService::recover`]): runs this host left are
//!   closed as interrupted, queued inputs stay queued, every queue drains.
//! - **Compaction** ([`QueueStreams`], with a retention policy): the queue
//!   of a context with nothing queued and nothing running, idle for the
//!   policy's age, is restated as one record keeping its last replier, and
//!   the records before it are dropped; the revision goes on.
//!
//! The queue of a context is a [stream](crate::log::stream_id) of
//! [`QueueRecord`]s in the task log, under the caller's authority, so it is
//! as durable as the log; no caller reads, lists or recovers it as a task.
//!
//! ```
//! use a2a_tower::engine::{Agent, AgentInput, TaskLayer};
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::queue::Team;
//! use a2a_tower::types::{AgentCard, Message, SendMessageRequest, SendMessageResponse, TaskState};
//! use a2a_tower::{A2aRequest, A2aResponse, BoxError, Operation};
//! use futures_core::Stream;
//! use tower::ServiceExt;
//!
//! struct Upper;
//! impl Agent for Upper {
//!     fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
//!         futures_util::stream::iter([Ok(input.text.to_uppercase())])
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let team = Team::builder().agent("upper", Upper).build().unwrap();
//! let card = AgentCard::new("Team", "Agents behind one endpoint", "1.0.0");
//! let tasks = TaskLayer::new(card, MemoryTaskLog::new()).unwrap();
//! let svc = team.service(tasks);
//! svc.recover().await.unwrap();
//!
//! let mut message = Message::user("m-1", "hello");
//! message.metadata = Some(serde_json::from_str(r#"{"queue.target":"upper"}"#).unwrap());
//! let send = SendMessageRequest { message, ..Default::default() };
//! let res = svc.oneshot(A2aRequest::new(Operation::SendMessage(send))).await.unwrap();
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("HELLO"));
//! assert_eq!(task.metadata.as_ref().unwrap()["queue.agent"], "upper");
//! # });
//! ```

mod admit;
mod at_once;
mod cancel;
mod closing;
mod compact;
mod core;
mod drain;
mod enqueue;
mod entry;
mod ext;
mod gate;
mod group;
mod handoff;
mod record;
mod send;
mod service;
mod state;
mod stream;
mod team;

pub use admit::{INPUT_UNAVAILABLE_MESSAGE, TARGET_UNAVAILABLE_MESSAGE};
pub use compact::QueueStreams;
pub use entry::{Entry, Priority};
pub use ext::{GET_QUEUE_METHOD, REORDER_QUEUE_METHOD, extension_methods};
pub use gate::DrainGate;
pub use handoff::MAX_HOPS;
pub use record::{QUEUE_FEATURE, QueueRecord, QueuedInput};
pub use service::TeamService;
pub use team::{Team, TeamBuilder};

/// The URI of the delivery-queue extension a team's card declares.
pub const QUEUE_EXTENSION: &str = "urn:a2a-tower:delivery-queue:v1";
/// Message metadata: the agent an input is for.
pub const TARGET_KEY: &str = "queue.target";
/// Message metadata: `"urgent"` or `"normal"`.
pub const PRIORITY_KEY: &str = "queue.priority";
/// Message metadata: `"append"` or `"steer"`.
pub const MODE_KEY: &str = "queue.mode";
/// Task metadata: the agent a task was admitted for.
pub const AGENT_KEY: &str = "queue.agent";
/// Task metadata: the task whose reply a handoff's input refers to.
pub const HANDOFF_FROM_KEY: &str = "queue.handoffFrom";
/// Message metadata of a handoff's input: `{taskId, messageId?}` of the reply.
pub const HANDOFF_KEY: &str = "queue.handoff";
/// Status-message metadata of an input failed by the queue: the reason.
pub const ERROR_KEY: &str = "queue.error";

impl Team {
    /// The team served over `tasks` (its log, authority, host id and card):
    /// call [`TeamService::recover`] once before serving.
    pub fn service(self, tasks: crate::engine::TaskLayer) -> TeamService {
        TeamService {
            core: core::Core::new(tasks.into_shared(), self),
        }
    }
}
