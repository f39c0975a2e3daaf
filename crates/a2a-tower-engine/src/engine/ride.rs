//! What an execution's commits may carry for a feature built on the
//! engine: its closing commit ([`Writer::riding`]), and, for a task whose
//! admission rides with its first commit, that first commit
//! ([`Deferred::with_companion`](super::deferred::Deferred::with_companion)).
//! The delivery queue settles a run it admitted in the commit that ends its
//! task, and admits an input into an idle context in the commit that creates
//! its task: a message to a quick agent there is one commit.

use std::future::Future;
use std::pin::Pin;

use super::writer::Writer;
use crate::log::{AppendRequest, Appended, LogErrorKind, Record};
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

/// What [`Companion::refused`] answers: whether to make the commit again.
pub(crate) type Again<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// The append a task's first commit carries (the one that creates it, its
/// admission deferred), its conditions its own. A refused commit created
/// nothing; the companion decides whether it is made again.
pub(crate) trait Companion: Send {
    /// The append, committed atomically with the task's first. `ends`: the
    /// terminal state that commit ends the task in, when the rider does not
    /// bar it (what a closing commit's rider would have boarded then rides
    /// here: the lock a rider takes is the companion's).
    fn request(&mut self, ends: Option<TaskState>) -> AppendRequest;

    /// The commit was made; `task` is the task's append.
    fn landed(self: Box<Self>, task: &Appended);

    /// The commit was refused (a `kind` error): `true` to make it again
    /// (its next [`request`](Self::request) re-planned on what moved),
    /// `false` to give up (the task is never created).
    fn refused(&mut self, kind: LogErrorKind) -> Again<'_>;
}

/// The terminal state `records` end a task in, if any.
pub(crate) fn terminal(records: &[Record]) -> Option<TaskState> {
    records
        .iter()
        .filter_map(Record::state)
        .find(|s| s.is_terminal())
}
