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

/// The appends a closing commit carries, their conditions their own.
pub(crate) trait Boarded: Send {
    /// Pushes its appends (at least one) onto `requests`, after the
    /// task's, to be committed atomically with it; asked once.
    fn requests(&mut self, requests: &mut Vec<AppendRequest>);

    /// The commit carrying them was made; `appended`: theirs, in order.
    /// Dropped without this call: it was not (the task's records are then
    /// committed alone).
    fn landed(self: Box<Self>, appended: Vec<Appended>);
}

/// What [`Companion::refused`] answers: whether to make the commit again.
pub(crate) type Again<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// The append a task's first commit carries (the one that creates it, its
/// admission deferred), its conditions its own. A refused commit created
/// nothing; the companion decides whether it is made again.
pub(crate) trait Companion: Send {
    /// The append, committed atomically with the task's first, if any
    /// (`None`: the task's alone). `ends`: the terminal state that commit
    /// ends the task in, when the rider does not bar it (what a closing
    /// commit's rider would have boarded then rides here: the lock a rider
    /// takes is the companion's).
    fn request(&mut self, ends: Option<TaskState>) -> Option<AppendRequest>;

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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::engine::deferred::Deferred;
    use crate::log::{LogErrorKind, MemoryTaskLog, TaskLog};
    use crate::types::{Message, TaskStatus};

    /// What a companion was asked and told, in order.
    type Seen = Arc<Mutex<Vec<String>>>;

    /// Creates the stream `s` beside the task, first at revision `seq`
    /// (refused when not 0), then at 0 if it asks again.
    struct Stream {
        seq: u64,
        again: bool,
        seen: Seen,
    }

    impl Companion for Stream {
        fn request(&mut self, ends: Option<TaskState>) -> Option<AppendRequest> {
            let ends = ends.map(|s| s.as_str());
            self.seen
                .lock()
                .unwrap()
                .push(format!("request {} {ends:?}", self.seq));
            let created = vec![Record::created("s", "c")];
            Some(AppendRequest::new("a", "s", self.seq, 1, created))
        }

        fn landed(self: Box<Self>, task: &Appended) {
            let landed = format!("landed {}", task.snapshot.task.id);
            self.seen.lock().unwrap().push(landed);
        }

        fn refused(&mut self, _: LogErrorKind) -> Again<'_> {
            Box::pin(async move {
                self.seen.lock().unwrap().push("refused".into());
                self.seq = 0;
                std::mem::replace(&mut self.again, false)
            })
        }
    }

    /// A rider that bars nothing and boards nothing.
    struct Idle;

    impl Rider for Idle {
        fn bars(&self, _: &[Record]) -> bool {
            false
        }

        fn board<'a>(&'a self, _: &'a Writer, _: TaskState) -> Boarding<'a> {
            Box::pin(async { None })
        }
    }

    /// A writer of the task `t` whose admission rides its first commit with
    /// `companion`.
    fn writer(log: Arc<dyn TaskLog>, companion: Stream) -> Writer {
        let mut message = Message::user("m", "hi");
        message.task_id = "t".into();
        message.context_id = "c".into();
        let admission = Deferred::new("t".into(), "c".into(), None, message, None, "h".into())
            .working()
            .with_companion(Box::new(companion));
        let writer =
            Writer::new(log, "a".into(), "t".into(), "c".into(), 0, 1).riding(Some(Arc::new(Idle)));
        writer.defer_admission(admission);
        writer
    }

    /// A memory log, and a writer of `t` on it whose companion's first
    /// request is refused; it asks again if `again`.
    fn refused_once(again: bool) -> (Arc<MemoryTaskLog>, Seen, Writer) {
        let log = Arc::new(MemoryTaskLog::new());
        let seen = Seen::default();
        let companion = Stream {
            seq: 7,
            again,
            seen: seen.clone(),
        };
        let w = writer(log.clone(), companion);
        (log, seen, w)
    }

    #[tokio::test]
    async fn a_refused_first_commit_is_made_again_while_its_companion_asks() {
        let (log, seen, w) = refused_once(true);
        let done = Record::status(TaskStatus::new(TaskState::Completed));
        let task = w.commit(vec![done]).await.unwrap();
        assert_eq!(task.snapshot.task.status.state, TaskState::Completed);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "request 7 Some(\"TASK_STATE_COMPLETED\")",
                "refused",
                "request 0 Some(\"TASK_STATE_COMPLETED\")",
                "landed t",
            ]
        );
        assert!(w.carried(), "the companion carried the task's end");
        let stored = log.snapshot("a", "t").await.unwrap();
        assert_eq!(stored.task.status.state, TaskState::Completed);
        assert!(log.snapshot("a", "s").await.is_ok(), "the stream too");
    }

    #[tokio::test]
    async fn a_first_commit_its_companion_gives_up_creates_nothing() {
        let (log, seen, w) = refused_once(false);
        let working = Record::status(TaskStatus::new(TaskState::Working));
        assert!(w.commit(vec![working]).await.is_err());
        assert_eq!(*seen.lock().unwrap(), ["request 7 None", "refused"]);
        assert!(!w.is_open(), "the writer closes: there is no task");
        assert!(w.cancel.is_set(), "and the execution is asked to stop");
        for id in ["t", "s"] {
            let read = log.snapshot("a", id).await;
            assert_eq!(read.err().map(|e| e.kind()), Some(LogErrorKind::NotFound));
        }
    }
}
