//! The driver of one execution: runs the inner service apart from the
//! connection (in a task of its own, or in a blocking call's future until
//! that is dropped), enforces the inactivity timeout, and records the
//! outcome.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt as _;
use tower_service::Service;
use tracing::Instrument as _;

use super::agent::classify;
use super::executor::Execution;
use super::layer::Shared;
use super::writer::Writer;
use crate::BoxError;
use crate::types::TaskState;

/// The fixed explanation of a task whose executor failed or panicked.
pub(crate) const EXECUTOR_FAILED: &str = "The agent failed to complete the task.";
/// The fixed explanation of a task whose executor stopped producing.
pub(crate) const EXECUTOR_TIMED_OUT: &str = "The agent stopped responding.";

/// One execution, from admission to its end. Either detached at once
/// ([`Driver::detach`]) or driven by the caller's own future
/// ([`Driver::drive`], a blocking SendMessage: no task to spawn, no wake to
/// hand the answer over); if that future is dropped first, the rest is
/// spawned, so an execution outlives the call that started it either way.
pub(crate) struct Driver {
    run: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    runtime: tokio::runtime::Handle,
}

impl Driver {
    /// Prepares the execution; nothing runs until it is driven or detached.
    pub(crate) fn new<S>(
        shared: Arc<Shared>,
        inner: S,
        execution: Execution,
        writer: Arc<Writer>,
    ) -> Self
    where
        S: Service<Execution, Response = ()> + Send + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        let span = tracing::info_span!(
            "a2a.execution",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.conversation.id = writer.context_id.as_str(),
            task_id = writer.task_id.as_str(),
            context_id = writer.context_id.as_str(),
            outcome = tracing::field::Empty,
        );
        span.follows_from(tracing::Span::current());
        // A child of the call that admitted it (so in the caller's trace),
        // and it outlives that call.
        let run = drive(shared, inner, Some(execution), writer).instrument(span);
        Self {
            run: Some(Box::pin(run)),
            runtime: tokio::runtime::Handle::current(),
        }
    }

    /// Spawns the execution on the runtime; it outlives the call that
    /// started it.
    pub(crate) fn detach(self) {
        drop(self);
    }

    /// Runs the execution in the calling future until it ends.
    pub(crate) async fn drive(&mut self) {
        std::future::poll_fn(|cx| {
            if let Some(run) = self.run.as_mut() {
                std::task::ready!(run.as_mut().poll(cx));
                self.run = None;
            }
            Poll::Ready(())
        })
        .await;
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            // A runtime shutting down drops the task: its executions stop
            // with it, as spawned ones do.
            drop(self.runtime.spawn(run));
        }
    }
}

/// Runs the execution (given as `Some`) to its end, then records how it
/// ended and leaves the registry.
///
/// An `async` block, not an `async fn`, which would keep a second copy of
/// the execution; and [`run`] borrows what it uses (it takes the execution
/// out of its `Option`), so that it holds no copy of its own either and the
/// end needs no clones of the shared state.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn keeps a second copy of its arguments"
)]
fn drive<S>(
    shared: Arc<Shared>,
    mut inner: S,
    mut execution: Option<Execution>,
    writer: Arc<Writer>,
) -> impl Future<Output = ()> + Send
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    async move {
        a2a_tower_core::telemetry::active_executions(1.0);
        let outcome = run(&shared, &mut inner, &mut execution, &writer).await;
        a2a_tower_core::telemetry::active_executions(-1.0);
        a2a_tower_core::telemetry::execution_ended(outcome);
        tracing::Span::current().record("outcome", outcome);
        shared.registry.remove(&writer);
        if let Some(hook) = &shared.on_end {
            hook(&writer);
        }
    }
}

/// The execution from waiting for the inner service to its end; how it
/// ended.
async fn run<S>(
    shared: &Shared,
    inner: &mut S,
    execution: &mut Option<Execution>,
    writer: &Arc<Writer>,
) -> &'static str
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    // Wait for the inner service (a host concurrency limit, say); a cancel
    // while waiting ends the execution before it starts. A deferred
    // admission is committed first rather than wait for it.
    let mut poll_ready = std::future::poll_fn(|cx| {
        inner
            .poll_ready(cx)
            .map(|r| r.map_err(Into::<BoxError>::into))
    });
    let first = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut poll_ready).poll(cx))).await;
    let ready = match first {
        Poll::Ready(r) => r,
        Poll::Pending => {
            writer.commit_admission().await;
            tokio::select! {
                r = &mut poll_ready => r,
                () = writer.closed.wait() => return "canceled",
            }
        }
    };
    if let Err(e) = ready {
        tracing::warn!(error.kind = classify(&*e), "executor not ready");
        writer
            .finish(TaskState::Failed, Some(EXECUTOR_FAILED))
            .await;
        return "failed";
    }
    // The executor runs inside this task (no second spawn); a panic is
    // caught here like a failure.
    let execution = execution.take().expect("an execution is run once");
    let fut = inner
        .call(execution)
        .map(|r| r.map_err(Into::<BoxError>::into));
    let mut handle = std::pin::pin!(std::panic::AssertUnwindSafe(fut).catch_unwind());
    // A deferred admission rides with what the executor commits in its first
    // poll. If it waits for anything else first, the admission is committed
    // alone at once, beside it (not here: the executor may be queued on the
    // writer's lock and must keep being polled).
    if writer.admission_pending() {
        let first = std::future::poll_fn(|cx| Poll::Ready(handle.as_mut().poll(cx))).await;
        if let Poll::Ready(res) = first {
            return settle(writer, res).await;
        }
        if writer.admission_pending() {
            let writer = writer.clone();
            tokio::spawn(async move { writer.commit_admission().await });
        }
    }
    loop {
        let idle = shared
            .inactivity_timeout
            .map(|t| tokio::time::Instant::from_std(writer.idle_deadline(t)));
        tokio::select! {
            res = &mut handle => return settle(writer, res).await,
            () = writer.closed.wait() => {
                // Terminal, interrupted or canceled: let the executor return
                // (it sees the cancellation), then stop it (drop it).
                let _ = tokio::time::timeout(shared.shutdown_grace, &mut handle).await;
                return "closed";
            }
            () = sleep_until(idle) => {
                let Some(timeout) = shared.inactivity_timeout else { continue };
                if std::time::Instant::now() >= writer.idle_deadline(timeout) {
                    tracing::warn!(error.kind = "INACTIVITY_TIMEOUT", "executor stopped producing");
                    writer.cancel.fire();
                    writer.finish(TaskState::Failed, Some(EXECUTOR_TIMED_OUT)).await;
                }
            }
        }
    }
}

/// Records how the executor returned (a no-op if it closed the task).
async fn settle(
    writer: &Writer,
    res: Result<Result<(), BoxError>, Box<dyn std::any::Any + Send>>,
) -> &'static str {
    match res {
        Ok(Ok(())) => {
            writer.finish(TaskState::Completed, None).await;
            "completed"
        }
        Ok(Err(e)) => {
            tracing::warn!(error.kind = classify(&*e), "executor failed");
            writer
                .finish(TaskState::Failed, Some(EXECUTOR_FAILED))
                .await;
            "failed"
        }
        Err(_panic) => {
            tracing::warn!(error.kind = "PANIC", "executor panicked");
            writer
                .finish(TaskState::Failed, Some(EXECUTOR_FAILED))
                .await;
            "panicked"
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
