//! [`ResponseFuture`]: the future of [`TaskService`](super::TaskService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::{A2aError, A2aResponse};

type BoxFuture = Pin<Box<dyn Future<Output = Result<A2aResponse, A2aError>> + Send>>;

/// The response future of [`TaskService`](super::TaskService).
pub struct ResponseFuture {
    inner: BoxFuture,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture(..)")
    }
}

impl ResponseFuture {
    pub(crate) fn new(inner: BoxFuture) -> Self {
        Self { inner }
    }

    /// `call` inside the call's `a2a.call` span (method, task and context
    /// ids, and the error's kind: never its message), as every core of the
    /// crate answers; inside a binding's call span, which names the method
    /// and the error already, `call` records the ids there and no second
    /// span is made.
    pub(crate) fn in_call_span<F>(method: &'static str, call: F) -> Self
    where
        F: Future<Output = Result<A2aResponse, A2aError>> + Send + 'static,
    {
        if a2a_tower_core::telemetry::in_binding_span() {
            // Polled inside the binding's instrumented call.
            return Self::new(Box::pin(call));
        }
        let span = tracing::info_span!(
            "a2a.call",
            method,
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
            error.kind = tracing::field::Empty,
        );
        // A combinator, not an `async` block awaiting `call`: such a block
        // holds the captured future and the awaited one apart, doubling what
        // is boxed (and moved) per call.
        let record = span.clone();
        let fut = futures_util::FutureExt::inspect(call, move |out| {
            if let Err(e) = out {
                record.record("error.kind", e.kind().reason());
            }
        });
        Self::new(Box::pin(tracing::Instrument::instrument(fut, span)))
    }
}

impl Future for ResponseFuture {
    type Output = Result<A2aResponse, A2aError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}
