//! Agents and executors from closures, in the style of `tower::service_fn`:
//! [`agent_fn`] (one reply), [`streaming_agent_fn`] (a stream of chunks) and
//! [`executor_fn`].
//!
//! A one-reply agent is a closure returning a future of its text; no
//! `futures` crate is needed, and `?` works inside (errors become
//! [`BoxError`]):
//!
//! ```
//! use a2a_tower::engine::{AgentExecutor, AgentInput, TaskLayer, agent_fn};
//! use a2a_tower::log::MemoryTaskLog;
//! use a2a_tower::types::{AgentCard, Message, SendMessageRequest, SendMessageResponse, TaskState};
//! use a2a_tower::{A2aRequest, A2aResponse, Operation};
//! use tower::{Layer, ServiceExt};
//!
//! let echo = agent_fn(|input: AgentInput| async move { Ok(format!("echo: {}", input.text)) });
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0");
//! let engine = TaskLayer::new(card, MemoryTaskLog::new())?.layer(AgentExecutor::service(echo));
//! let send = SendMessageRequest { message: Message::user("m-1", "hi"), ..Default::default() };
//! let res = engine.oneshot(A2aRequest::new(Operation::SendMessage(send))).await?;
//! let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else { panic!() };
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].parts[0].as_text(), Some("echo: hi"));
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```
//!
//! The results are an [`Agent`] and an [`Executor`], so everything that takes
//! one (`A2aServer::builder(card).agent(..)`, a `Team`) takes them too.

use std::fmt;
use std::future::Future;

use futures_core::Stream;
use futures_util::{FutureExt as _, StreamExt as _};

use super::agent::{Agent, AgentInput};
use super::executor::{Execution, Executor};
use crate::BoxError;

/// An [`Agent`] that answers each message with the one text its closure's
/// future yields (see [`agent_fn`]).
#[derive(Clone, Copy)]
pub struct AgentFn<F> {
    f: F,
}

/// An [`Agent`] from a closure returning a future of one reply: the text is
/// the task's only artifact (anything `Into<String>`: `String`, `&'static
/// str`, …); an `Err` ends the task FAILED, as for any [`Agent`].
///
/// ```
/// use a2a_tower::engine::{AgentInput, agent_fn};
///
/// let shout = agent_fn(|input: AgentInput| async move {
///     let text = input.text.trim();
///     if text.is_empty() {
///         return Err("nothing to shout".into());
///     }
///     Ok(text.to_uppercase())
/// });
/// # let _ = a2a_tower::engine::AgentExecutor::service(shout);
/// ```
pub fn agent_fn<F, Fut, T>(f: F) -> AgentFn<F>
where
    F: Fn(AgentInput) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, BoxError>> + Send,
    T: Into<String>,
{
    AgentFn { f }
}

impl<F, Fut, T> Agent for AgentFn<F>
where
    F: Fn(AgentInput) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, BoxError>> + Send,
    T: Into<String>,
{
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::once((self.f)(input).map(|reply| reply.map(Into::into)))
    }
}

impl<F> fmt::Debug for AgentFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AgentFn(..)")
    }
}

/// An [`Agent`] that streams the chunks its closure's stream yields (see
/// [`streaming_agent_fn`]).
#[derive(Clone, Copy)]
pub struct StreamingAgentFn<F> {
    f: F,
}

/// An [`Agent`] from a closure returning a stream of text chunks (a model's
/// token stream, say): the chunks make one artifact, streamed as they come,
/// exactly as for an [`Agent`]; an `Err` item ends the task FAILED.
///
/// ```
/// use a2a_tower::engine::{AgentInput, streaming_agent_fn};
///
/// let words = streaming_agent_fn(|input: AgentInput| {
///     let words: Vec<_> = input.text.split_inclusive(' ').map(str::to_owned).collect();
///     futures_util::stream::iter(words.into_iter().map(Ok::<_, std::io::Error>))
/// });
/// # let _ = a2a_tower::engine::AgentExecutor::service(words);
/// ```
pub fn streaming_agent_fn<F, S, T, E>(f: F) -> StreamingAgentFn<F>
where
    F: Fn(AgentInput) -> S + Send + Sync + 'static,
    S: Stream<Item = Result<T, E>> + Send,
    T: Into<String>,
    E: Into<BoxError>,
{
    StreamingAgentFn { f }
}

impl<F, S, T, E> Agent for StreamingAgentFn<F>
where
    F: Fn(AgentInput) -> S + Send + Sync + 'static,
    S: Stream<Item = Result<T, E>> + Send,
    T: Into<String>,
    E: Into<BoxError>,
{
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        (self.f)(input).map(|chunk| chunk.map(Into::into).map_err(Into::into))
    }
}

impl<F> fmt::Debug for StreamingAgentFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StreamingAgentFn(..)")
    }
}

/// An [`Executor`] that runs its closure on each execution (see
/// [`executor_fn`]).
#[derive(Clone, Copy)]
pub struct ExecutorFn<F> {
    f: F,
}

/// An [`Executor`] from a closure over the [`Execution`], returning a future
/// that records the task's progress through `execution.emit` (`?` works on
/// each emission).
///
/// ```
/// use a2a_tower::engine::{Execution, executor_fn};
///
/// let ask = executor_fn(|ex: Execution| async move {
///     ex.emit.working().await?;
///     ex.emit.input_required("Which order?").await?;
///     Ok(())
/// });
/// # let _ = a2a_tower::engine::ExecutorService::new(ask);
/// ```
pub fn executor_fn<F, Fut>(f: F) -> ExecutorFn<F>
where
    F: Fn(Execution) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send,
{
    ExecutorFn { f }
}

impl<F, Fut> Executor for ExecutorFn<F>
where
    F: Fn(Execution) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send,
{
    fn execute(&self, execution: Execution) -> impl Future<Output = Result<(), BoxError>> + Send {
        (self.f)(execution)
    }
}

impl<F> fmt::Debug for ExecutorFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExecutorFn(..)")
    }
}

#[cfg(test)]
mod tests {
    use tower::{Layer, ServiceExt};

    use super::*;
    use crate::engine::{AGENT_FAILED_MESSAGE, AgentExecutor, ExecutorService, TaskLayer};
    use crate::log::MemoryTaskLog;
    use crate::types::{
        AgentCard, Message, SendMessageRequest, SendMessageResponse, Task, TaskState,
    };
    use crate::{A2aRequest, A2aResponse, A2aService, Operation};

    fn engine<X>(executor: X) -> impl A2aService
    where
        X: tower_service::Service<Execution, Response = ()> + Clone + Send + 'static,
        X::Error: Into<BoxError>,
        X::Future: Send + 'static,
    {
        let card = AgentCard::new("Fn", "Closures", "1.0.0");
        TaskLayer::new(card, MemoryTaskLog::new())
            .unwrap()
            .layer(executor)
    }

    async fn send(svc: impl A2aService, text: &str) -> Task {
        let send = SendMessageRequest {
            message: Message::user("m-1", text),
            ..Default::default()
        };
        let req = A2aRequest::new(Operation::SendMessage(send));
        match svc.oneshot(req).await.unwrap() {
            A2aResponse::SendMessage(SendMessageResponse::Task(task)) => task.into_inner(),
            other => panic!("not a task: {other:?}"),
        }
    }

    fn texts(task: &Task) -> Vec<&str> {
        let parts = task.artifacts.iter().flat_map(|a| &a.parts);
        parts.filter_map(|p| p.as_text()).collect()
    }

    #[tokio::test]
    async fn a_one_reply_agent_completes_with_its_text() {
        let agent = agent_fn(|input: AgentInput| async move {
            Ok(format!("{} from {}", input.text, input.task_id.len()))
        });
        let task = send(engine(AgentExecutor::service(agent)), "hi").await;
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(texts(&task), ["hi from 36"]);
    }

    #[tokio::test]
    async fn a_one_reply_agent_takes_any_text_and_question_mark() {
        let fixed = agent_fn(|_| async { Ok("fixed") });
        let task = send(engine(AgentExecutor::service(fixed)), "x").await;
        assert_eq!(texts(&task), ["fixed"]);

        let parse = agent_fn(|input: AgentInput| async move {
            let n: u32 = input.text.parse()?;
            Ok((n * 2).to_string())
        });
        let svc = engine(AgentExecutor::service(parse));
        assert_eq!(texts(&send(svc.clone(), "21").await), ["42"]);
        let failed = send(svc, "twenty").await;
        assert_eq!(failed.status.state, TaskState::Failed);
        let message = failed.status.message.as_ref().unwrap().text();
        assert_eq!(message, AGENT_FAILED_MESSAGE);
        assert!(failed.artifacts.is_empty());
    }

    #[tokio::test]
    async fn a_streaming_agent_sends_every_chunk_of_one_artifact() {
        let agent = streaming_agent_fn(|input: AgentInput| {
            let words: Vec<String> = input.text.split_inclusive(' ').map(Into::into).collect();
            futures_util::stream::iter(words.into_iter().map(Ok::<_, BoxError>))
        });
        let task = send(engine(AgentExecutor::service(agent)), "one two three").await;
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.artifacts.len(), 1);
        assert_eq!(texts(&task).concat(), "one two three");
    }

    #[tokio::test]
    async fn a_streaming_agent_error_fails_the_task_keeping_the_chunks() {
        let agent = streaming_agent_fn(|_| {
            let items = [Ok("partial"), Err(std::io::Error::other("boom"))];
            futures_util::stream::iter(items)
        });
        let task = send(engine(AgentExecutor::service(agent)), "x").await;
        assert_eq!(task.status.state, TaskState::Failed);
        assert_eq!(texts(&task), ["partial"]);
    }

    #[tokio::test]
    async fn an_executor_fn_emits_through_the_execution() {
        let exec = executor_fn(|ex: Execution| async move {
            let question = format!("{}?", ex.message.text());
            ex.emit.working().await?;
            ex.emit.input_required(question).await?;
            Ok(())
        });
        let task = send(engine(ExecutorService::new(exec)), "which").await;
        assert_eq!(task.status.state, TaskState::InputRequired);
        let question = task.status.message.as_ref().unwrap().text();
        assert_eq!(question, "which?");
    }

    #[tokio::test]
    async fn an_executor_fn_error_fails_the_task() {
        let exec = executor_fn(|_| async { Err("no".into()) });
        let task = send(engine(ExecutorService::new(exec)), "x").await;
        assert_eq!(task.status.state, TaskState::Failed);
    }
}
