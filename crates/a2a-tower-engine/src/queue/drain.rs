//! The drain of one context: settle the runs whose task ended (and wake the
//! agents their replies hand off to), then look at the comparator's head and
//! only at it — admit it, fail it visibly, drop it if its task was canceled,
//! or wait.

use std::sync::Arc;

use super::admit::{admit, resolve_agent};
use super::core::Core;
use super::handoff::handoffs;
use super::record::QueueRecord;
use super::state::ContextQueue;
use super::stream::Slot;
use crate::log::{AppendRequest, LogError, LogErrorKind, Snapshot};
use crate::types::TaskState;

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

impl Step {
    /// The step of a commit that was made (`true`) or lost.
    pub(crate) fn of(committed: bool) -> Self {
        if committed { Self::Again } else { Self::Lost }
    }
}

/// One drain pass over `slot`'s context, until the head waits or the queue
/// is empty.
pub(crate) async fn pass(core: &Arc<Core>, slot: &Slot) -> Result<(), LogError> {
    let log = &*core.shared.log;
    let mut st = slot.state.lock().await;
    let mut lost = 0;
    loop {
        slot.catch_up(log, &mut st).await?;
        let step = match settle(core, slot, &st).await? {
            Some(step) => step,
            None => head(core, slot, &st).await?,
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

/// Commits `requests`; a refusal because another writer moved first is not
/// an error (the caller looks again).
pub(crate) async fn commit(core: &Core, requests: Vec<AppendRequest>) -> Result<bool, LogError> {
    match core.shared.log.append_all(requests).await {
        Ok(_) => Ok(true),
        Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => Ok(false),
        Err(e) => Err(e),
    }
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

/// Settles the first admitted run whose task has ended: the agent is free
/// in the context, a completed reply makes it the last replier and wakes the
/// agents it names. `None` when every admitted run is still going.
async fn settle(core: &Core, slot: &Slot, st: &ContextQueue) -> Result<Option<Step>, LogError> {
    for (agent, run) in st.active() {
        let snap = task(core, slot, &run.task_id).await?;
        let (ended, completed) = match &snap {
            Some(s) => (s.state().is_terminal(), s.state() == TaskState::Completed),
            None => (true, false),
        };
        if !ended {
            continue;
        }
        let mut requests = Vec::new();
        let mut records = vec![QueueRecord::Settled {
            task_id: run.task_id.clone(),
            agent: agent.clone(),
            completed,
        }];
        if let (true, Some(snap)) = (completed, &snap) {
            for (request, entered) in handoffs(core, slot, snap, agent, run.hops) {
                requests.push(request);
                records.push(entered);
            }
        }
        requests.push(slot.append(st, records));
        return Ok(Some(Step::of(commit(core, requests).await?)));
    }
    Ok(None)
}

/// Decides about the head, and only the head.
async fn head(core: &Arc<Core>, slot: &Slot, st: &ContextQueue) -> Result<Step, LogError> {
    let Some(head) = st.head() else {
        return Ok(Step::Rest);
    };
    let snap = task(core, slot, &head.task_id).await?;
    let Some(snap) =
        snap.filter(|s| super::record::is_queued(&s.projection) && !s.state().is_terminal())
    else {
        // Canceled while queued (or gone): it leaves the queue, never runs.
        let removed = QueueRecord::Removed {
            task_id: head.task_id.clone(),
        };
        let committed = commit(core, vec![slot.append(st, vec![removed])]).await?;
        return Ok(Step::of(committed));
    };
    match resolve_agent(core, st, head) {
        // The head's agent (or, for an input naming none, any agent) is
        // busy in this context: wait, never skip ahead.
        Err(Wait) => Ok(Step::Rest),
        Ok(agent) => admit(core, slot, st, head, snap, agent).await,
    }
}

/// The head cannot be admitted yet.
pub(crate) struct Wait;
