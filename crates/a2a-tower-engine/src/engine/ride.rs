//! What an execution's closing commit may carry for a feature built on the
//! engine ([`Writer::riding`]): the delivery queue settles a run it admitted
//! in the commit that ends its task, so a message into an idle context costs
//! one commit less.

use std::future::Future;
use std::pin::Pin;

use super::writer::Writer;
use crate::log::{AppendRequest, Record};
use crate::types::TaskState;

/// What [`Rider::board`] answers.
pub(crate) type Boarding<'a> = Pin<Box<dyn Future<Output = Option<Box<dyn Boarded>>> + Send + 'a>>;

/// Decides what an execution's closing commit carries beside its task.
pub(crate) trait Rider: Send + Sync {
    /// Whether `records`, committed by an execution, keep its closing
    /// commit from carrying anything (the queue: text that may name an
    /// agent, a handoff whose new inputs its settlement must commit).
    fn bars(&self, records: &[Record]) -> bool;

    /// Before the commit that ends `writer`'s task in the terminal `state`
    /// (under the writer's lock): what it carries, if anything. What is
    /// boarded holds whatever it needs until it has landed or is dropped.
    fn board<'a>(&'a self, writer: &'a Writer, state: TaskState) -> Boarding<'a>;
}

/// The append a closing commit carries, its conditions its own.
pub(crate) trait Boarded: Send {
    /// The append, committed atomically with the task's.
    fn request(&mut self) -> AppendRequest;

    /// The commit carrying it was made. Dropped without this call: it was
    /// not (the task's records are then committed alone).
    fn landed(self: Box<Self>);
}

/// The terminal state `records` end a task in, if any.
pub(crate) fn terminal(records: &[Record]) -> Option<TaskState> {
    records
        .iter()
        .filter_map(Record::state)
        .find(|s| s.is_terminal())
}
