//! Managed tasks: a durable [`Program`] run served as an A2A task.
//!
//! A managed task is a program run whose committed log *is* the task: its
//! status, artifacts and open questions are projected from the records the
//! run commits to the task log (memory, SQLite or PostgreSQL), never kept in
//! a second store.
//!
//! - **Durable runs.** A program records [steps](Process::step) (journaled:
//!   on replay the result is returned and the step is not run again), opens
//!   [waits](Process::wait) (external questions addressed by process id and
//!   key, answered by any client) and starts [child processes](Process::child).
//!   After a crash, [`ManagedService::recover`] resumes every run of its host
//!   by running the program again over its journal; see [`Program`] for the
//!   determinism this needs.
//! - **Identity.** The task id is derived from (service, authority, context
//!   id, message id): retrying a start reconciles with the task already
//!   started; the same ids with another input are refused before any work.
//! - **Inputs and answers** are one text or data part, validated against the
//!   program's (or the wait's) JSON Schema with numbers compared by their
//!   exact text, which the log keeps end to end.
//! - **Questions.** While any wait is open the task is INPUT_REQUIRED; its
//!   metadata `scope.pending` lists every open question (`id`, `owner`,
//!   `key`, `question` or `null`, `schema` or `true`). An answer is a
//!   SendMessage to the task naming the wait in message metadata
//!   `scope.wait` (`{"process", "key"}`; optional when one wait is open). Any
//!   host admits it with a conditional append that does not take the writer's
//!   epoch; the writer folds it in.
//! - **A blocking start** (SendMessage without a task id, not
//!   `returnImmediately`) answers once the run is quiescent: every process
//!   waits for an answer (or for its children) or has exited, so the answer
//!   lists every question the run asks at once, whatever the timing. Work a
//!   program does outside [steps](Process::step) is not waited for. A
//!   retried start whose run is on another host answers at the first
//!   question committed or at the end; so does an answer.
//! - **Output** follows the card's `defaultOutputModes`, frozen at build
//!   ([`OutputPolicy`]); the result is the artifact `result`.
//! - **Cancel** records a request and answers with the status observed; only
//!   the committed terminal status proves the run stopped.
//!
//! ```
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::managed::{ManagedService, Process, Program, Wait, EXTERNAL_WAIT_EXTENSION};
//! use a2a_tower::types::{AgentCard, AgentExtension, Message, SendMessageRequest, SendMessageResponse, TaskState};
//! use a2a_tower::{A2aRequest, A2aResponse, Operation};
//! use serde_json::{Value, json};
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let double = Program::new("example.double", json!({"type": "integer"}), json!({"type": "integer"}),
//!     |p: Process, n: Value| async move {
//!         let ok = p.wait(Wait::new("go").schema(json!({"type": "boolean"}))).await?;
//!         Ok(if ok == json!(true) { json!(n.as_i64().unwrap_or(0) * 2) } else { json!(0) })
//!     }).unwrap();
//! let mut card = AgentCard::new("Doubler", "Doubles a number once allowed", "1.0.0");
//! card.capabilities.extensions.push(AgentExtension { uri: EXTERNAL_WAIT_EXTENSION.into(), ..Default::default() });
//! card.default_output_modes = vec!["application/json".into()];
//! let svc = ManagedService::builder(card, MemoryTaskLog::new(), double).build().unwrap();
//!
//! let send = |m: Message| A2aRequest::new(Operation::SendMessage(SendMessageRequest { message: m, ..Default::default() }));
//! let res = svc.clone().oneshot(send(Message::user("m-1", "21"))).await.unwrap();
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::InputRequired);
//!
//! let mut yes = Message::user("m-2", "true");
//! yes.task_id = task.id.clone();
//! let res = svc.oneshot(send(yes)).await.unwrap();
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(serde_json::to_value(&task.artifacts[0].parts[0]).unwrap()["data"], json!(42));
//! # });
//! ```

mod admit;
mod entry;
mod input;
mod journal;
mod pending;
mod policy;
mod process;
mod program;
mod quiet;
mod recover;
mod run;
mod runs;
mod service;

pub use crate::schema::Schema;
pub use entry::{JournalEntry, MANAGED_FEATURE};
pub use pending::{
    ANSWER_SCHEMA_KEY, EXTERNAL_WAIT_EXTENSION, PENDING_KEY, PROGRAM_KEY, ROOT_KEY,
    ROOT_STATUS_KEY, TERMINATION_KEY, WAIT_KEY,
};
pub use policy::OutputPolicy;
pub use process::{Process, RunError, Wait};
pub use program::Program;
pub use run::{OUTPUT_INVALID_MESSAGE, PROGRAM_FAILED_MESSAGE, RESULT_ARTIFACT_ID};
pub use service::{ManagedBuilder, ManagedService};
