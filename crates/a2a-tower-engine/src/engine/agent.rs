//! [`Agent`]: the text boundary (text in, a stream of text chunks out) and
//! its adapter onto [`Executor`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_core::Stream;
use futures_util::{FutureExt as _, StreamExt as _};

use super::executor::{Execution, Executor, ExecutorService};
use crate::log::Record;
use crate::types::{Artifact, Message, Part, PartContent, TaskState};
use crate::{A2aError, BoxError, CallContext};

/// The fixed, client-visible explanation of a task whose text agent failed.
pub const AGENT_FAILED_MESSAGE: &str = "The agent failed to produce a reply.";

/// How long the text agent adapter holds a chunk back while waiting for the
/// next one (to learn whether it is the last) before sending it anyway.
const CHUNK_LINGER: std::time::Duration = std::time::Duration::from_millis(50);

/// What a text [`Agent`] receives.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentInput {
    /// The text of the current message (its text parts, concatenated). The
    /// task's earlier history is not an implicit conversational context.
    pub text: String,
    /// The task id.
    pub task_id: String,
    /// The context id.
    pub context_id: String,
    /// The call context (tenant, headers, extensions with the principal).
    pub call: CallContext,
}

/// A text agent: text in, a stream of text chunks out (the seed's `Agent`).
///
/// A single-shot agent yields once; a streaming agent yields deltas. All
/// chunks go into one artifact (empty chunks are skipped). Each chunk is sent
/// when the next one arrives, so the final chunk carries `lastChunk`; if the
/// agent pauses for more than 50 ms the waiting chunk is sent at once, and
/// should the stream then end, the artifact's end shows only in the
/// COMPLETED status. An `Err` ends the
/// task FAILED with [`AGENT_FAILED_MESSAGE`]; the error itself reaches only
/// tracing, as a classification. Dropping the stream is how a canceled task
/// stops the agent. Non-text input is answered with ContentTypeNotSupported
/// before the agent runs, provided the card declares only `text/plain` input
/// (see [`TaskLayer`](super::TaskLayer)).
///
/// ```
/// use a2a_tower::BoxError;
/// use a2a_tower::engine::{Agent, AgentInput};
/// use futures_core::Stream;
///
/// struct Echo;
///
/// impl Agent for Echo {
///     fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
///         futures_util::stream::iter([Ok(input.text)])
///     }
/// }
/// # let _ = a2a_tower::engine::AgentExecutor::service(Echo);
/// ```
pub trait Agent: Send + Sync + 'static {
    /// Runs the agent on one message.
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send;
}

/// Adapts an [`Agent`] onto [`Executor`].
pub struct AgentExecutor<A> {
    agent: Arc<A>,
}

impl<A: Agent> AgentExecutor<A> {
    /// Wraps an agent.
    pub fn new(agent: A) -> Self {
        Self {
            agent: Arc::new(agent),
        }
    }

    /// The agent as the inner service of [`TaskLayer`](super::TaskLayer).
    pub fn service(agent: A) -> ExecutorService<Self> {
        ExecutorService::new(Self::new(agent))
    }
}

impl<A> fmt::Debug for AgentExecutor<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AgentExecutor(..)")
    }
}

/// The record of one text chunk of the agent's artifact.
fn chunk_record(artifact_id: String, text: String, append: bool, last_chunk: bool) -> Record {
    Record::ArtifactChunk {
        artifact: text_chunk(artifact_id, text),
        append,
        last_chunk,
    }
}

/// At most this many records wait for one commit: an agent whose chunks are
/// always ready still commits (and yields) regularly. Each commit is one
/// fsync on a durable log, so this sets how many fsyncs a fast agent's long
/// artifact costs (200 000 chunks: 782 at 256, 3 125 at 64); it stays a
/// quarter of the default subscriber lag bound (1 024 records), so that one
/// commit alone does not cut off a subscriber that was keeping up.
const MAX_BATCH: usize = 256;

fn text_chunk(artifact_id: String, text: String) -> Artifact {
    Artifact {
        artifact_id,
        parts: vec![Part::text(text)],
        ..Artifact::default()
    }
}

/// The text of `message` (its text parts, concatenated), taken out of the
/// message when it is its one part: the usual message's text is moved to
/// the agent, not copied.
fn into_text(message: Message) -> String {
    let mut parts = message.parts;
    if let [
        Part {
            content: PartContent::Text(text),
            ..
        },
    ] = parts.as_mut_slice()
    {
        return std::mem::take(text);
    }
    parts.iter().filter_map(Part::as_text).collect()
}

/// A classification of an error for tracing (never its message).
pub(crate) fn classify(err: &(dyn std::error::Error + 'static)) -> &'static str {
    if let Some(e) = err.downcast_ref::<A2aError>() {
        e.kind().reason()
    } else if err.is::<super::EmitError>() {
        "EMIT_ERROR"
    } else if err.is::<std::io::Error>() {
        "IO_ERROR"
    } else {
        "AGENT_ERROR"
    }
}

impl<A: Agent> Executor for AgentExecutor<A> {
    fn execute(&self, ex: Execution) -> impl Future<Output = Result<(), BoxError>> + Send {
        let agent = self.agent.clone();
        async move {
            // The message and the context are used in place, not bound:
            // a binding would be a second copy of each in this future.
            let emit = ex.emit;
            // Held for the execution, as before the fields were taken one
            // by one (a field not named here would be dropped with `ex` when
            // this block is made, not captured).
            let _inputs = ex.inputs;
            // Not needed: holding it would make the first commit copy the task.
            drop(ex.task);
            if ex.message.parts.iter().any(|p| p.as_text().is_none()) {
                // The engine rejects this before admission when the card
                // declares text input only; never hand non-text to the agent.
                emit.fail("Only plain text input is supported.").await?;
                return Ok(());
            }
            // What the agent produces without waiting is committed together:
            // WORKING, the chunks that are ready, and (if the stream ends
            // then) the last chunk with COMPLETED. Whenever the agent would
            // wait, what is pending is committed first, so clients see it
            // without delay.
            // Room for WORKING, a chunk and COMPLETED: a one-shot agent's.
            let mut pending = Vec::with_capacity(4);
            pending.push(emit.status_record(TaskState::Working, None));
            let input = AgentInput {
                text: into_text(ex.message),
                task_id: emit.task_id().to_owned(),
                context_id: emit.context_id().to_owned(),
                call: ex.context,
            };
            let stream = agent.run(input);
            futures_util::pin_mut!(stream);
            let mut artifact_id = super::id_text(uuid::Uuid::new_v4());
            // One chunk is held back so that the last one goes out with
            // `last_chunk` set: chunk k is recorded when chunk k + 1 arrives,
            // or after CHUNK_LINGER if the agent pauses.
            let mut held: Option<String> = None;
            let mut started = false;
            loop {
                if emit.is_cancelled() {
                    return Ok(());
                }
                if pending.len() >= MAX_BATCH {
                    emit.commit_records(std::mem::take(&mut pending)).await?;
                }
                let next = match stream.next().now_or_never() {
                    Some(next) => next,
                    None => {
                        emit.commit_records(std::mem::take(&mut pending)).await?;
                        tokio::select! {
                            next = stream.next() => next,
                            () = emit.cancelled() => return Ok(()),
                            // The agent paused: send the held chunk now rather
                            // than late (it then cannot be marked last).
                            () = tokio::time::sleep(CHUNK_LINGER), if held.is_some() => {
                                if let Some(prev) = held.take() {
                                    pending.push(chunk_record(artifact_id.clone(), prev, started, false));
                                    started = true;
                                }
                                continue;
                            }
                        }
                    }
                };
                match next {
                    None => break,
                    Some(Ok(chunk)) if chunk.is_empty() => {}
                    Some(Ok(chunk)) => {
                        if let Some(prev) = held.replace(chunk) {
                            pending.push(chunk_record(artifact_id.clone(), prev, started, false));
                            started = true;
                        }
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error.kind = classify(&*e), "text agent failed");
                        // What the agent produced is kept, but it is not
                        // marked complete.
                        if let Some(prev) = held.take() {
                            let id = std::mem::take(&mut artifact_id);
                            pending.push(chunk_record(id, prev, started, false));
                        }
                        let failed = Message::agent("", AGENT_FAILED_MESSAGE);
                        pending.push(emit.status_record(TaskState::Failed, Some(failed)));
                        emit.commit_records(pending).await?;
                        return Ok(());
                    }
                }
            }
            // The last chunk and COMPLETED go in the final commit.
            if let Some(prev) = held.take() {
                // The last use of the id: moved, not copied.
                pending.push(chunk_record(artifact_id, prev, started, true));
            }
            pending.push(emit.status_record(TaskState::Completed, None));
            emit.commit_records(pending).await?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_of_a_message_is_its_text_parts_joined() {
        assert_eq!(into_text(Message::user("m", "one part")), "one part");
        let mut message = Message::user("m", "a ");
        message.parts.push(Part::url("https://example.com/x"));
        message.parts.push(Part::text("b"));
        assert_eq!(into_text(message), "a b");
        let mut only_url = Message::user("m", "");
        only_url.parts = vec![Part::url("https://example.com/x")];
        assert_eq!(into_text(only_url), "");
    }
}
