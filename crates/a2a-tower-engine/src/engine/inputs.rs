//! [`Inputs`]: the messages appended to a running execution.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;

use crate::types::Message;

/// How many appended messages may wait for the executor to take them; an
/// append beyond that is refused (the executor is not reading).
pub(crate) const INPUTS_BUFFER: usize = 64;

/// The messages a client appended to this execution while it runs
/// (`queue.mode: "append"` on a [delivery-queue](crate::queue) team), each
/// already committed to the task's history, in that order. Outside a team
/// nothing can be appended and the stream ends at once. An executor that
/// takes appended input reads them; one that never does can drop the stream
/// (appends are then refused). The stream ends when the execution closes.
///
/// ```
/// use a2a_tower::engine::{Executor, Execution};
/// use futures_util::StreamExt;
///
/// struct Listener;
/// impl Executor for Listener {
///     async fn execute(&self, mut execution: Execution) -> Result<(), a2a_tower::BoxError> {
///         // Work on execution.message, then take what was appended meanwhile.
///         while let Some(more) = execution.inputs.next().await {
///             if more.text() == "done" {
///                 break;
///             }
///         }
///         Ok(())
///     }
/// }
/// ```
pub struct Inputs {
    /// `None`: the core takes no appended input (a plain engine); the
    /// stream is empty and costs no channel.
    rx: Option<mpsc::Receiver<Message>>,
}

impl Inputs {
    /// A stream and the sender the writer keeps.
    pub(crate) fn channel() -> (mpsc::Sender<Message>, Self) {
        let (tx, rx) = mpsc::channel(INPUTS_BUFFER);
        (tx, Self { rx: Some(rx) })
    }

    /// The stream of an execution nothing can append to: ends at once.
    pub(crate) fn none() -> Self {
        Self { rx: None }
    }
}

impl fmt::Debug for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inputs").finish_non_exhaustive()
    }
}

impl Stream for Inputs {
    type Item = Message;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        match self.rx.as_mut() {
            Some(rx) => rx.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}
