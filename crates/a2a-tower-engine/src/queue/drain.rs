//! The drain of one context: settle the runs whose task ended (and wake the
//! agents their replies hand off to), then look at the comparator's head and
//! only at it — admit it, fail it visibly, drop it if its task was canceled,
//! or wait. A settlement and what it lets happen to the head are one commit.

use std::sync::Arc;

use super::admit::{Start, admit, resolve_agent};
use super::core::Core;
use super::handoff::handoffs;
use super::record::QueueRecord;
use super::state::ContextQueue;
use super::stream::Slot;
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind, Snapshot};
use crate::types::{Task, TaskState};

/// How many commits in a row one pass may lose to other writers before it
/// gives up (the drain passes again after a backoff).
const MAX_LOST: usize = 64;

/// What one step of a pass did.
pub(crate) enum Step {
    /// Something was committed: look again.
    Again,
    /// Another writer moved first: look again.
    Lost,
    /// The head must wait for a run to end, or nothing is queued.
    Rest,
}

/// What one step of a pass commits, at once: appends to tasks and the
/// records of the context's queue stream (at the view's revision), and the
/// run to start once they are committed.
#[derive(Default)]
pub(crate) struct Plan {
    pub(crate) tasks: Vec<AppendRequest>,
    pub(crate) records: Vec<QueueRecord>,
    /// The admission's run, its task's append being `tasks[0]`.
    pub(crate) start: Option<Start>,
    /// The head's task was taken as its enqueue committed it (not read):
    /// if the commit is refused, it is read next time.
    pub(crate) kept: Option<String>,
}

/// One drain pass over `slot`'s context, until the head waits or the queue
/// is empty.
pub(crate) async fn pass(core: &Arc<Core>, slot: &Slot) -> Result<(), LogError> {
    let log = &*core.shared.log;
    let mut st = slot.state.lock().await;
    let mut lost = 0;
    loop {
        slot.catch_up(log, &mut st).await?;
        slot.forget_settled(&st);
        let mut plan = Plan::default();
        let settling = settle(core, slot, &st, &mut plan).await?;
        // A settlement that wakes no agent is committed together with what
        // the head does next (a handoff's new entries are committed first).
        if plan.tasks.is_empty() {
            let undo = settling.map(|(agent, completed)| st.settle(&agent, completed));
            let headed = head(core, slot, &st, &mut plan).await;
            if let Some(undo) = undo {
                st.undo(undo);
            }
            headed?;
        }
        let step = if plan.records.is_empty() {
            Step::Rest
        } else {
            commit(core, slot, &mut st, plan).await?
        };
        match step {
            Step::Rest => return Ok(()),
            Step::Again => lost = 0,
            Step::Lost => {
                lost += 1;
                if lost > MAX_LOST {
                    return Err(LogError::new(LogErrorKind::Conflict));
                }
            }
        }
    }
}

/// Commits `requests`; a refusal because another writer moved first is
/// `None`, not an error (the caller looks again).
pub(crate) async fn try_commit(
    core: &Core,
    requests: Vec<AppendRequest>,
) -> Result<Option<Vec<Appended>>, LogError> {
    match core.shared.log.append_all(requests).await {
        Ok(out) => Ok(Some(out)),
        Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Commits `plan` at the view's revision; once committed, the view is
/// caught up with its records (no read) and the admitted run starts.
async fn commit(
    core: &Arc<Core>,
    slot: &Slot,
    st: &mut ContextQueue,
    plan: Plan,
) -> Result<Step, LogError> {
    let Plan {
        mut tasks,
        records,
        start,
        kept,
    } = plan;
    tasks.push(slot.append(st, &records));
    let Some(mut out) = try_commit(core, tasks).await? else {
        if let Some(task_id) = kept {
            st.forget_task(&task_id);
        }
        return Ok(Step::Lost);
    };
    Slot::applied(st, &records);
    if let Some(start) = start {
        start.run(core, slot, out.swap_remove(0));
    }
    Ok(Step::Again)
}

/// The task of `task_id`, `None` if it is gone (evicted from a bounded log).
pub(crate) async fn task(
    core: &Core,
    slot: &Slot,
    task_id: &str,
) -> Result<Option<Snapshot>, LogError> {
    match core.shared.log.snapshot(&slot.authority, task_id).await {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == LogErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// How an admitted run stands.
enum RunIs {
    /// Its task is not terminal.
    Going,
    /// Its task ended so.
    Ended(Arc<Task>),
    /// Its task is gone from the log (evicted from a bounded one).
    Gone,
}

/// How the run of `task_id` stands. A run of this host is not read: while
/// its writer is open nothing but that writer can have ended its task here
/// (a cancel on this host goes through it; a run ended by another host's
/// commit is settled by that host's drain, which its commit notifies), and
/// once its execution is over its end hook has kept the task it ended with.
/// Any other run (another host's, one of a process before this one, or one
/// between its writer's close and its end hook) is read.
async fn run_is(core: &Core, slot: &Slot, task_id: &str) -> Result<RunIs, LogError> {
    if let Some(task) = slot.ended_run(task_id) {
        return Ok(RunIs::Ended(task));
    }
    if core
        .shared
        .registry
        .get(task_id)
        .is_some_and(|w| w.is_open())
    {
        return Ok(RunIs::Going);
    }
    Ok(match task(core, slot, task_id).await? {
        Some(s) if s.state().is_terminal() => RunIs::Ended(s.task),
        Some(_) => RunIs::Going,
        None => RunIs::Gone,
    })
}

/// Plans the settlement of the first admitted run whose task has ended: the
/// agent is free in the context, a completed reply makes it the last
/// replier and wakes the agents it names. Returns the agent and whether its
/// reply completed; `None` when every admitted run is still going.
async fn settle(
    core: &Core,
    slot: &Slot,
    st: &ContextQueue,
    plan: &mut Plan,
) -> Result<Option<(String, bool)>, LogError> {
    for (agent, run) in st.active() {
        let ended = match run_is(core, slot, &run.task_id).await? {
            RunIs::Going => continue,
            RunIs::Ended(task) => Some(task),
            RunIs::Gone => None,
        };
        let completed = ended
            .as_ref()
            .is_some_and(|t| t.status.state == TaskState::Completed);
        plan.records.push(QueueRecord::Settled {
            task_id: run.task_id.clone(),
            agent: agent.clone(),
            completed,
        });
        if let (true, Some(task)) = (completed, &ended) {
            for (request, entered) in handoffs(core, slot, task, agent, run.hops) {
                plan.tasks.push(request);
                plan.records.push(entered);
            }
        }
        return Ok(Some((agent.clone(), completed)));
    }
    Ok(None)
}

/// Decides about the head, and only the head, adding what it does to
/// `plan` (nothing: it waits, or nothing is queued).
pub(crate) async fn head(
    core: &Arc<Core>,
    slot: &Slot,
    st: &ContextQueue,
    plan: &mut Plan,
) -> Result<(), LogError> {
    let Some(head) = st.head() else {
        return Ok(());
    };
    // The task as this host's enqueue committed it, else as the log has it.
    let snap = match st.kept_task(&head.task_id) {
        Some(kept) => {
            plan.kept = Some(head.task_id.clone());
            Some(kept.clone())
        }
        None => task(core, slot, &head.task_id).await?,
    };
    let Some(snap) =
        snap.filter(|s| super::record::is_queued(&s.projection) && !s.state().is_terminal())
    else {
        // Canceled while queued (or gone): it leaves the queue, never runs.
        plan.records.push(QueueRecord::Removed {
            task_id: head.task_id.clone(),
        });
        return Ok(());
    };
    match resolve_agent(core, st, head) {
        // The head's agent (or, for an input naming none, any agent) is
        // busy in this context: wait, never skip ahead.
        Err(Wait) => Ok(()),
        Ok(agent) => admit(core, slot, st, head, snap, agent, plan).await,
    }
}

/// The head cannot be admitted yet.
pub(crate) struct Wait;
