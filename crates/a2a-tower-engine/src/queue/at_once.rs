//! An input admitted at once, in its run's first commit.
//!
//! A blocking send into an idle context, its agent free, is admitted by its
//! enqueue (see `enqueue::enqueue`). Its caller sees the task only when the
//! run ends or asks for input, so the task need not exist before the run's
//! first commit: as the engine defers a new task's admission
//! ([`Deferred`]), the queue's admission rides that commit too. One commit
//! then creates the task WORKING for its agent with what the agent first
//! emits, and appends the queue stream's `entered` and `admitted` records
//! beside it (its [`Companion`]); when that commit also ends the task (a
//! quick agent, and no `@` in its reply), the stream's `settled` record is in
//! it as well; or, if the queue is then as the admission found it (a stream
//! exists and the last replier stays), no record at all: the stream is only
//! checked to be at that revision ([`Slot::check_at`]), and its revision
//! stays. A message to a quick agent in an idle context is one commit
//! of two appends. Into a context it opens itself (no context id), whose
//! run ends in that commit, it is one append, as a SendMessage to a plain
//! engine: the queue it would leave is idle and its only state, the last
//! replier, is the task's agent, which a view of a context with no stream
//! reads from the context's tasks (`Slot::catch_up`); a stream created
//! later starts with it.
//!
//! The enqueue holds the context's lock until that commit is made or
//! refused, so nothing of this host changes the queue between the decision
//! and its commit (other hosts are held off by the revision, as ever). It
//! waits for one poll of the agent at most: a run that waits for anything
//! before committing has its admission committed alone at once by its
//! driver. The first commit takes no context lock (its companion settles
//! what a closing commit's rider would), so the wait cannot close a cycle.
//!
//! A refused commit created nothing: the run is stopped before anything of
//! it is seen, and the enqueue is made again under a new task id (a lost
//! race with another host) or answers the error.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::admit::{resolve_agent, with_agent};
use super::core::Core;
use super::entry::Entry;
use super::record::QueueRecord;
use super::state::ContextQueue;
use super::stream::Slot;
use super::team::Dispatch;
use crate::CallContext;
use crate::engine::deferred::Deferred;
use crate::engine::executor::{Emitter, Execution};
use crate::engine::ride::{Again, Companion};
use crate::engine::run::Driver;
use crate::engine::writer::Writer;
use crate::log::{AppendRequest, Appended, LogErrorKind, Snapshot};
use crate::types::{Message, Metadata, TaskState};

/// What the first commit tells the enqueue waiting for it.
enum Event {
    /// Made: the task as it left it, and the queue records it appended
    /// (`None`: it kept no stream, see [`Opening::streamless`]).
    Landed(Snapshot, Option<Vec<QueueRecord>>),
    /// Refused for a `kind` error: the view to make it again on, if the
    /// admission still stands there.
    Refused(LogErrorKind, oneshot::Sender<Option<Revision>>),
}

/// What the first commit needs of the view it stands on.
struct Revision {
    /// The view's revision.
    seq: u64,
    /// The view's last replier.
    last: Option<String>,
}

impl Revision {
    fn of(st: &ContextQueue) -> Self {
        Self {
            seq: st.seq,
            last: st.last_replier().map(str::to_owned),
        }
    }
}

/// The queue stream's part of the first commit.
struct Opening {
    slot: Arc<Slot>,
    /// The view the admission stands on.
    view: Revision,
    task_id: String,
    agent: String,
    /// `entered` and `admitted`, then `settled` if the last request
    /// carried it: the records of the last request, when it had records.
    records: Vec<QueueRecord>,
    /// The context was made by this enqueue (nobody else knows its id): if
    /// the first commit also ends the task, no stream is created. The
    /// queue it would hold is idle, its last replier the task's agent if
    /// it completed, which is what a view of a context with no stream
    /// reads from its tasks (`Slot::catch_up`). A one-message context then
    /// costs one append, as on the engine alone.
    streamless: bool,
    /// What the last request sent to the stream.
    sent: Sent,
    events: mpsc::Sender<Event>,
}

/// What a request of the first commit sends to the queue stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// `records`.
    Records,
    /// No record: a check of the revision (the queue left as found).
    Check,
    /// No append: the context keeps no stream ([`Opening::streamless`]).
    Nothing,
}

impl Companion for Opening {
    fn request(&mut self, ends: Option<TaskState>) -> Option<AppendRequest> {
        if self.streamless && ends.is_some() {
            self.sent = Sent::Nothing;
            return None;
        }
        // A request made again (the last refused) starts from `entered` and
        // `admitted`, whatever the last one sent.
        self.records.truncate(2);
        let (seq, last) = (self.view.seq, self.view.last.as_deref());
        if let Some(state) = ends {
            let completed = state == TaskState::Completed;
            if seq > 0 && (!completed || last == Some(&*self.agent)) {
                // Entered, admitted and settled in one commit, the last
                // replier as it was: the queue is left as it was found, so
                // its stream is only checked to be at the revision the
                // admission stands on (no record, no row written).
                self.sent = Sent::Check;
                return Some(self.slot.check_at(seq));
            }
            self.records.push(QueueRecord::Settled {
                task_id: self.task_id.clone(),
                agent: self.agent.clone(),
                completed,
            });
        }
        // A stream created starts with the last replier its view knew
        // without it.
        self.sent = Sent::Records;
        Some(self.slot.append_at(seq, last, &self.records))
    }

    fn landed(self: Box<Self>, task: &Appended) {
        let records = match self.sent {
            Sent::Records => Some(self.records),
            Sent::Check => Some(Vec::new()),
            Sent::Nothing => None,
        };
        let _ = self
            .events
            .try_send(Event::Landed(task.snapshot.clone(), records));
    }

    fn refused(&mut self, kind: LogErrorKind) -> Again<'_> {
        Box::pin(async move {
            let (tell, told) = oneshot::channel();
            if self.events.send(Event::Refused(kind, tell)).await.is_err() {
                return false;
            }
            match told.await {
                Ok(Some(view)) => {
                    self.view = view;
                    true
                }
                _ => false,
            }
        })
    }
}

/// How many times a refused first commit is made again (as an enqueue's
/// lost races are).
const AGAIN: usize = 64;

/// The input `message` (its ids set), with its task's `metadata`, entered
/// into `slot`'s queue as `entry` and admitted for `agent` in its run's first
/// commit, `st` (locked) its view: the task as that commit left it (the view
/// then at it), and the rest of the run. `Err`: nothing was committed.
///
/// A commit refused for a lost race (another host's change, a compaction's
/// restatement) is made again, the view caught up, while the admission still
/// stands on it (nothing queued, the agent free): the run, already started,
/// is not started twice.
pub(crate) async fn admit(
    core: &Arc<Core>,
    slot: &Arc<Slot>,
    st: &mut ContextQueue,
    (message, metadata): (Message, Option<&Metadata>),
    entry: &Entry,
    agent: String,
    streamless: bool,
) -> Result<(Snapshot, Run), LogErrorKind> {
    let task_id = message.task_id.clone();
    let entered = QueueRecord::Entered {
        task_id: task_id.clone(),
        target: entry.target.clone(),
        priority: entry.priority,
        position: entry.position,
        hops: entry.hops,
    };
    let admitted = QueueRecord::Admitted {
        task_id: task_id.clone(),
        agent: agent.clone(),
        hops: entry.hops,
    };
    let (events, mut told) = mpsc::channel(1);
    let opening = Opening {
        slot: slot.clone(),
        view: Revision::of(st),
        task_id: task_id.clone(),
        agent: agent.clone(),
        records: {
            let mut records = Vec::with_capacity(3);
            records.extend([entered, admitted]);
            records
        },
        streamless,
        sent: Sent::Records,
        events,
    };
    let deferred = Deferred::new(
        task_id.clone(),
        slot.context_id.clone(),
        Some(with_agent(metadata, &agent)),
        message.clone(),
        None,
        core.shared.host_id.clone(),
    )
    .working()
    .with_companion(Box::new(opening));
    let writer = Arc::new(
        Writer::new(
            core.shared.log.clone(),
            slot.authority.clone(),
            task_id,
            slot.context_id.clone(),
            0,
            1,
        )
        .riding(Some(core.rider.clone()))
        // Its closing commit fires `closed`, which `Run::finish` waits for.
        .keeping_outcome(),
    );
    // A fresh task id: no writer of it runs here.
    if !core.shared.registry.claim(&writer) {
        return Err(LogErrorKind::Conflict);
    }
    let execution = Execution {
        message,
        task: deferred.task(),
        context: CallContext::default(),
        inputs: writer.open_inputs(),
        emit: Emitter::new(writer.clone()),
    };
    writer.defer_admission(deferred);
    let dispatch = Dispatch {
        team: core.team.clone(),
    };
    a2a_tower_core::telemetry::admission_wait(&agent, std::time::Duration::ZERO);
    let mut driver = Driver::new(core.shared.clone(), dispatch, execution, writer.clone());
    let mut again = 0;
    let landed = {
        // The run goes on in this future until its first commit (no task to
        // spawn, no wake to hand the commit over).
        let mut drive = std::pin::pin!(driver.drive());
        let mut driven = false;
        loop {
            let event = tokio::select! {
                biased;
                event = told.recv() => event,
                () = &mut drive, if !driven => {
                    driven = true;
                    continue;
                }
            };
            match event {
                Some(Event::Landed(snapshot, Some(records))) => {
                    Slot::applied(st, &records);
                    break Ok(snapshot);
                }
                Some(Event::Landed(snapshot, None)) => {
                    let completed = snapshot.task.status.state == TaskState::Completed;
                    st.without_stream(completed.then(|| agent.clone()));
                    break Ok(snapshot);
                }
                Some(Event::Refused(kind, tell)) => {
                    let stands = again < AGAIN
                        && matches!(kind, LogErrorKind::Conflict | LogErrorKind::Fenced)
                        && slot.catch_up(&*core.shared.log, st).await.is_ok()
                        && st.len() == 0
                        && resolve_agent(core, st, entry).is_ok_and(|a| a == agent);
                    again += 1;
                    let _ = tell.send(stands.then(|| Revision::of(st)));
                    if !stands {
                        break Err(kind);
                    }
                }
                // The companion was dropped unanswered: no commit was made
                // (not seen: a writer closes only by committing).
                None => break Err(LogErrorKind::Backend),
            }
        }
    };
    // Not driven further here: the rest of the run is the caller's to drive
    // (or, dropped, goes on in a task of its own).
    landed.map(|snapshot| (snapshot, Run { driver, writer }))
}

/// The rest of a run admitted at once, for its caller to drive.
pub(crate) struct Run {
    driver: Driver,
    writer: Arc<Writer>,
}

impl Run {
    /// Drives the run in the calling future until it closes its task
    /// (terminal, or waiting for input), is fenced, or ends: the task as its
    /// closing commit left it, else (none did) its id. An agent still
    /// running after that goes on in a task of its own (`Driver`'s drop), as
    /// after the engine's blocking SendMessage.
    pub(crate) async fn finish(mut self) -> Result<Arc<crate::types::Task>, String> {
        tokio::select! {
            biased;
            () = self.driver.drive() => {}
            () = self.writer.closed.wait() => {}
        }
        self.writer
            .ended()
            .ok_or_else(|| self.writer.task_id.clone())
    }
}
