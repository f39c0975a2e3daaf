//! [`Executor`]: user code that works on a task, and what it is handed:
//! [`Execution`] (the admitted message, the task, the call context) and the
//! [`Emitter`] that records its progress.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::writer::Writer;
use crate::log::{LogErrorKind, Record};
use crate::types::{Artifact, Message, Task, TaskState, TaskStatus, Timestamp};
use crate::{BoxError, CallContext};

/// One execution of a task, as the inner service of
/// [`TaskLayer`](super::TaskLayer) receives it.
#[non_exhaustive]
pub struct Execution {
    /// The admitted message (its task and context ids are set).
    pub message: Message,
    /// The task after the message was admitted. Drop it as soon as it is not
    /// needed: while an executor holds it, the next commit copies the task.
    pub task: Arc<Task>,
    /// The call that admitted the message: tenant, headers, and the request
    /// extensions (where a host auth layer put the principal).
    pub context: CallContext,
    /// Records progress: status, artifact chunks, a direct reply.
    pub emit: Emitter,
    /// Messages appended to the running execution (see [`Inputs`](super::Inputs)).
    pub inputs: super::Inputs,
}

impl fmt::Debug for Execution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Execution")
            .field("task_id", &self.task.id)
            .field("context_id", &self.task.context_id)
            .finish_non_exhaustive()
    }
}

/// Why an emission was not recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// The execution is over: the task reached a terminal or interrupted
    /// state, was canceled, or timed out.
    Closed,
    /// Another writer took the task over; this execution must stop.
    Superseded,
    /// The emission is not valid (unspecified or SUBMITTED state, an artifact
    /// without id or parts).
    Invalid,
    /// The task log failed.
    Log(LogErrorKind),
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("the execution is closed"),
            Self::Superseded => f.write_str("another writer took over the task"),
            Self::Invalid => f.write_str("invalid emission"),
            Self::Log(kind) => write!(f, "task log error: {kind}"),
        }
    }
}

impl std::error::Error for EmitError {}

/// The handle an executor records its progress with. Every method awaits the
/// commit to the task log; subscribers see each emission in order.
///
/// The first terminal (COMPLETED, FAILED, CANCELED, REJECTED) or interrupted
/// (INPUT_REQUIRED, AUTH_REQUIRED) status ends the execution: later emissions
/// fail with [`EmitError::Closed`], and a continuation message starts a new
/// execution. If the executor returns without such a status, the task is
/// COMPLETED; if it returns an error or panics, the task is FAILED with a
/// fixed message.
#[derive(Clone)]
pub struct Emitter {
    writer: Arc<Writer>,
}

impl fmt::Debug for Emitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emitter")
            .field("task_id", &self.writer.task_id)
            .finish_non_exhaustive()
    }
}

impl Emitter {
    pub(crate) fn new(writer: Arc<Writer>) -> Self {
        Self { writer }
    }

    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.writer.task_id
    }

    /// The context id.
    pub fn context_id(&self) -> &str {
        &self.writer.context_id
    }

    /// Records a status. `message` is stamped as an agent message of this task.
    pub async fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> Result<(), EmitError> {
        if matches!(state, TaskState::Unspecified | TaskState::Submitted) {
            return Err(EmitError::Invalid);
        }
        let status = TaskStatus {
            state,
            message: message.map(|m| self.writer.agent_message(m)),
            timestamp: Some(Timestamp::now()),
        };
        self.writer
            .commit(vec![Record::status(status)])
            .await
            .map(drop)
    }

    /// The record of a status, stamped now, `message` as an agent message of
    /// this task (what [`status`](Self::status) commits).
    pub(crate) fn status_record(&self, state: TaskState, message: Option<Message>) -> Record {
        Record::status(TaskStatus {
            state,
            message: message.map(|m| self.writer.agent_message(m)),
            timestamp: Some(Timestamp::now()),
        })
    }

    /// Commits several records in one append (nothing when empty); the
    /// records must be valid emissions (built by this emitter).
    pub(crate) async fn commit_records(&self, records: Vec<Record>) -> Result<(), EmitError> {
        if records.is_empty() {
            return Ok(());
        }
        self.writer.commit(records).await.map(drop)
    }

    /// Records WORKING.
    pub async fn working(&self) -> Result<(), EmitError> {
        self.status(TaskState::Working, None).await
    }

    /// Records COMPLETED.
    pub async fn complete(&self) -> Result<(), EmitError> {
        self.status(TaskState::Completed, None).await
    }

    /// Records INPUT_REQUIRED with the question as the status message.
    pub async fn input_required(&self, question: impl Into<String>) -> Result<(), EmitError> {
        let m = Message::agent("", question);
        self.status(TaskState::InputRequired, Some(m)).await
    }

    /// Records FAILED with the given (client-visible) explanation.
    pub async fn fail(&self, explanation: impl Into<String>) -> Result<(), EmitError> {
        let m = Message::agent("", explanation);
        self.status(TaskState::Failed, Some(m)).await
    }

    /// Records an artifact, or a chunk of one: `append` adds the parts to the
    /// artifact with the same id; `last_chunk` marks its final chunk.
    pub async fn artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), EmitError> {
        if artifact.artifact_id.is_empty() || artifact.parts.is_empty() {
            return Err(EmitError::Invalid);
        }
        let record = Record::ArtifactChunk {
            artifact,
            append,
            last_chunk,
        };
        self.writer.commit(vec![record]).await.map(drop)
    }

    /// Replies with a direct message: a SendMessage answers with this message
    /// (a stream sends it as its only event) when it is the execution's first
    /// emission; the task is COMPLETED with it as status message.
    pub async fn reply(&self, message: Message) -> Result<(), EmitError> {
        let record = Record::Replied {
            message: self.writer.agent_message(message),
            at: Timestamp::now(),
        };
        self.writer.commit(vec![record]).await.map(drop)
    }

    /// The task was canceled (or the execution timed out): stop working.
    pub fn is_cancelled(&self) -> bool {
        self.writer.cancel.is_set()
    }

    /// Completes when the task is canceled or the execution timed out.
    pub async fn cancelled(&self) {
        self.writer.cancel.wait().await;
    }
}

/// User code that executes tasks.
///
/// ```
/// use a2a_tower::BoxError;
/// use a2a_tower::engine::{Execution, Executor};
/// use a2a_tower::types::{Artifact, Part};
///
/// struct Upper;
///
/// impl Executor for Upper {
///     async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
///         ex.emit.working().await?;
///         let artifact = Artifact {
///             artifact_id: "out".into(),
///             parts: vec![Part::text(ex.message.text().to_uppercase())],
///             ..Artifact::default()
///         };
///         ex.emit.artifact(artifact, false, true).await?;
///         ex.emit.complete().await?;
///         Ok(())
///     }
/// }
/// # let _ = a2a_tower::engine::ExecutorService::new(Upper);
/// ```
pub trait Executor: Send + Sync + 'static {
    /// Executes one admitted message; may run long; should watch
    /// [`Emitter::cancelled`]. An `Err` ends the task FAILED with a fixed
    /// message; the error reaches tracing only as a classification.
    fn execute(&self, execution: Execution) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// An [`Executor`] as a `Service<Execution>`, the inner service of
/// [`TaskLayer`](super::TaskLayer).
pub struct ExecutorService<E> {
    executor: Arc<E>,
}

impl<E> ExecutorService<E> {
    /// Wraps an executor.
    pub fn new(executor: E) -> Self {
        Self {
            executor: Arc::new(executor),
        }
    }
}

impl<E> Clone for ExecutorService<E> {
    fn clone(&self) -> Self {
        Self {
            executor: self.executor.clone(),
        }
    }
}

impl<E> fmt::Debug for ExecutorService<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExecutorService(..)")
    }
}

/// The future of [`ExecutorService`].
pub type ExecutionFuture = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;

impl<E: Executor> Service<Execution> for ExecutorService<E> {
    type Response = ();
    type Error = BoxError;
    type Future = ExecutionFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, execution: Execution) -> Self::Future {
        let executor = self.executor.clone();
        Box::pin(async move { executor.execute(execution).await })
    }
}
