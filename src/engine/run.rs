//! The driver of one execution: runs the inner service detached from the
//! connection, enforces the inactivity timeout, and records the outcome.

use std::sync::Arc;

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

/// Spawns the execution on the runtime; it outlives the call that started it.
pub(crate) fn spawn<S>(shared: Arc<Shared>, inner: S, execution: Execution, writer: Arc<Writer>)
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let span = tracing::info_span!(
        "a2a.execution",
        task_id = %writer.task_id,
        context_id = %writer.context_id,
        outcome = tracing::field::Empty,
    );
    tokio::spawn(
        async move {
            let outcome = drive(&shared, inner, execution, &writer).await;
            tracing::Span::current().record("outcome", outcome);
            shared.registry.remove(&writer);
        }
        .instrument(span),
    );
}

async fn drive<S>(
    shared: &Shared,
    mut inner: S,
    execution: Execution,
    writer: &Arc<Writer>,
) -> &'static str
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    // Wait for the inner service (a host concurrency limit, say); a cancel
    // while waiting ends the execution before it starts.
    let ready = tokio::select! {
        r = std::future::poll_fn(|cx| inner.poll_ready(cx)) => r.map_err(Into::<BoxError>::into),
        () = writer.closed.wait() => return "canceled",
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
    let fut = inner
        .call(execution)
        .map(|r| r.map_err(Into::<BoxError>::into));
    let mut handle = std::pin::pin!(std::panic::AssertUnwindSafe(fut).catch_unwind());
    loop {
        let idle = shared
            .inactivity_timeout
            .map(|t| tokio::time::Instant::from_std(writer.idle_deadline(t)));
        tokio::select! {
            res = &mut handle => {
                return match res {
                    Ok(Ok(())) => {
                        writer.finish(TaskState::Completed, None).await;
                        "completed"
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error.kind = classify(&*e), "executor failed");
                        writer.finish(TaskState::Failed, Some(EXECUTOR_FAILED)).await;
                        "failed"
                    }
                    Err(_panic) => {
                        tracing::warn!(error.kind = "PANIC", "executor panicked");
                        writer.finish(TaskState::Failed, Some(EXECUTOR_FAILED)).await;
                        "panicked"
                    }
                };
            }
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

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
