//! Start-up recovery: closes the tasks this host was running when it died.
//!
//! Every execution records the id of the host that runs it
//! ([`Record::ExecutionStarted`](crate::log::Record::ExecutionStarted)). On
//! start, [`TaskLayer::recover`](super::TaskLayer::recover) pages through the
//! log's [live tasks](crate::log::LiveTask), keeps those of its own host id
//! that are not running in this process, and closes each as FAILED with
//! [`RESTARTED_MESSAGE`] through
//! [`log::fail_live`](crate::log::fail_live): a conditional
//! append with a newer epoch, so two hosts of the same id recovering at once
//! close each task exactly once, and a writer still alive somewhere is fenced.
//! Tasks waiting for the client (INPUT_REQUIRED, AUTH_REQUIRED) are not live
//! and stay as they are; tasks of other host ids are left to their hosts.
//!
//! ```
//! use a2a_tower::engine::{RESTARTED_MESSAGE, TaskLayer};
//! use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
//! use a2a_tower::types::{AgentCard, Message, TaskState};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! // What a dead process left behind: tasks of hosts "a" and "b", running.
//! for (task, host) in [("t-a", "a"), ("t-b", "b")] {
//!     let records = vec![
//!         Record::created(task, "c"),
//!         Record::MessageAdmitted { message: Message::user("m", "hi") },
//!         Record::ExecutionStarted { host: host.into() },
//!     ];
//!     log.append(AppendRequest::create("public", task, records)).await.unwrap();
//! }
//!
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0");
//! let engine = TaskLayer::new(card, log.clone()).unwrap().host_id("a").unwrap();
//! assert_eq!(engine.recover().await.unwrap().closed, 1);
//! assert_eq!(engine.recover().await.unwrap().closed, 0, "exactly once");
//!
//! let closed = log.snapshot("public", "t-a").await.unwrap();
//! assert_eq!(closed.state(), TaskState::Failed);
//! assert_eq!(closed.task.status.message.as_ref().unwrap().text(), RESTARTED_MESSAGE);
//! let other = log.snapshot("public", "t-b").await.unwrap();
//! assert_eq!(other.state(), TaskState::Submitted, "host b's task is left alone");
//! # });
//! ```

use super::layer::Shared;
use crate::log::{LiveTask, LogError};
use crate::types::{Message, Role};

/// The status message of a task closed by start-up recovery.
pub const RESTARTED_MESSAGE: &str = "The server restarted while this task was running.";

/// The host id of an engine that was not given one, and the host assumed for
/// live tasks written before host ids were recorded.
pub const DEFAULT_HOST_ID: &str = "local";

/// How many live tasks one [`LiveTaskScan::live_tasks`](crate::log::LiveTaskScan::live_tasks) call lists.
const PAGE: usize = 256;

/// What start-up recovery did, for every core: the task engine
/// ([`TaskLayer::recover`](super::TaskLayer::recover)), a team
/// ([`TeamService::recover`](crate::queue::TeamService::recover)) and
/// managed runs (`ManagedService::recover`). A count a core has no use for
/// stays 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovered {
    /// Tasks this call closed as FAILED (the engine's and a team's runs
    /// that the dead process left).
    pub closed: usize,
    /// Managed runs taken over and running again on this host.
    pub resumed: usize,
    /// Live tasks or runs of this host that another recovery (or writer)
    /// moved on first: left as they were.
    pub skipped: usize,
    /// The contexts whose queues were drained (a team).
    pub contexts: usize,
}

/// The task belongs to this host and no execution of it runs here.
fn is_orphan(shared: &Shared, task: &LiveTask) -> bool {
    task.host.as_deref().unwrap_or(DEFAULT_HOST_ID) == &*shared.host_id
        && !shared
            .registry
            .get(&task.task_id)
            .is_some_and(|w| w.is_open())
}

fn restarted(task: &LiveTask) -> Message {
    let mut m = Message::agent(super::id_text(uuid::Uuid::new_v4()), RESTARTED_MESSAGE);
    m.role = Role::Agent;
    m.task_id.clone_from(&task.task_id);
    m.context_id.clone_from(&task.context_id);
    m
}

pub(crate) async fn recover(shared: &Shared) -> Result<Recovered, LogError> {
    let mut out = Recovered::default();
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let page = shared.live.live_tasks(key, PAGE).await?;
        // A feature's stream (a context's queue) is its feature's to resume.
        for task in page
            .iter()
            .filter(|t| t.stream().is_none() && is_orphan(shared, t))
        {
            // A task a feature holds (a managed run, a queued input) is the
            // feature's to resume: not failed here.
            if shared
                .log
                .snapshot(&task.authority, &task.task_id)
                .await
                .is_ok_and(|s| s.projection.hold().is_some())
            {
                continue;
            }
            match crate::log::fail_live(&*shared.log, task, restarted(task)).await? {
                Some(_) => out.closed += 1,
                None => out.skipped += 1,
            }
        }
        match page.last() {
            Some(last) if page.len() >= PAGE => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => break,
        }
    }
    if out.closed > 0 {
        tracing::info!(closed = out.closed, "closed tasks interrupted by a restart");
    }
    Ok(out)
}
