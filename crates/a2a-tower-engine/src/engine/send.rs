//! SendMessage and SendStreamingMessage: the blocking, immediate and
//! streaming answers over an admitted message (a2a-spec.md §4.1, §4.2).

use std::future::Future;
use std::sync::Arc;

use tower_service::Service;

use super::admit::{Admission, Admitted, Answer, admit, not_admitted};
use super::executor::Execution;
use super::layer::Shared;
use super::ops::{view, view_encoded};
use super::subscribe::{Reopen, Start, event_stream, until_then_catch_up};
use super::writer::Outcome;
use crate::log::Watch;
use crate::types::{Encoded, SendMessageRequest, SendMessageResponse, Task};
use crate::{A2aError, A2aResponse, BoxError, CallContext, ErrorKind};

/// SendMessage: blocks until the task is terminal or interrupted, unless
/// `returnImmediately`. (An `async` block rather than an `async fn`, as
/// [`admit`] is: an `async fn` keeps a second copy of the request.)
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn keeps a second copy of its arguments"
)]
pub(crate) fn send<S>(
    shared: Arc<Shared>,
    inner: S,
    mut req: SendMessageRequest,
    mut context: CallContext,
) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    async move {
        // Only two scalars of the configuration matter here; `admit` takes the rest.
        let (return_immediately, history_length) = req
            .configuration
            .as_ref()
            .map_or((false, None), |c| (c.return_immediately, c.history_length));
        let log = shared.log.clone();
        let answer = if return_immediately {
            Answer::Immediately
        } else {
            Answer::Outcome
        };
        let Admitted {
            writer,
            mut driver,
            admission,
        } = admit(shared, inner, &mut req, &mut context, answer).await?;
        if let Admission::Snapshot(snapshot) = admission {
            driver.detach();
            return Ok(respond(view(&snapshot.task, history_length, true).into()));
        }
        // Run the execution here until it closes the task (terminal or
        // interrupted), another writer fences it, or it ends without closing
        // it. An executor still running after it closed the task (or this call
        // dropped before) goes on in a task of its own.
        tokio::select! {
            biased;
            () = driver.drive() => {}
            () = writer.closed.wait() => {}
        }
        driver.detach();
        let (task, json) = match writer.take_outcome() {
            Some(Outcome::Reply(message)) => {
                return Ok(A2aResponse::SendMessage(SendMessageResponse::Message(
                    *message,
                )));
            }
            Some(Outcome::NotAdmitted(e)) => return Err(not_admitted(&writer.task_id, e)),
            Some(Outcome::Task(task, json)) => (task, json),
            // Fenced, or the execution ended without closing the task: answer
            // with the task as the log has it.
            None => (
                log.snapshot(&writer.authority, &writer.task_id).await?.task,
                None,
            ),
        };
        drop(writer);
        Ok(respond(view_encoded(task, json, history_length, true)))
    }
}

fn respond(task: Encoded<Task>) -> A2aResponse {
    A2aResponse::SendMessage(SendMessageResponse::Task(task))
}

/// SendStreamingMessage: the Task (or a lone Message), then updates until a
/// terminal or interrupted state.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn keeps a second copy of its arguments"
)]
pub(crate) fn stream<S>(
    shared: Arc<Shared>,
    inner: S,
    mut req: SendMessageRequest,
    mut context: CallContext,
) -> impl Future<Output = Result<A2aResponse, A2aError>> + Send
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    async move {
        let buffer = shared.subscriber_buffer;
        let log = shared.log.clone();
        let Admitted {
            writer,
            driver,
            admission,
        } = admit(shared, inner, &mut req, &mut context, Answer::Stream).await?;
        driver.detach();
        let Admission::Watch { seq, watch } = admission else {
            return Err(A2aError::new(ErrorKind::Internal));
        };
        let (authority, task_id) = (writer.authority.clone(), writer.task_id.clone());
        let reopen = Reopen {
            log: log.clone(),
            authority: authority.clone(),
            task_id: task_id.clone(),
        };
        // A fenced execution stops: the stream ends with what the log holds when
        // it is fenced (what fenced it included), not only with what its watch
        // had been woken for.
        let fenced = async move { writer.fenced.wait().await };
        let records = until_then_catch_up(watch.records, fenced, log, authority, task_id, seq);
        Ok(A2aResponse::Stream(event_stream(
            Watch {
                snapshot: watch.snapshot,
                records,
            },
            Start::FirstEmission,
            buffer,
            Some(reopen),
        )))
    }
}
