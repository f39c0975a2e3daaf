//! [`LiveTask`]: what start-up recovery needs to find and close the tasks a
//! dead process was running.

use crate::types::{Message, TaskState, TaskStatus, Timestamp};

use super::{AppendRequest, Appended, LogErrorKind, LogFuture, Record, TaskLog};

/// Start-up recovery's part of a backend: the [live](LiveTask) tasks of
/// every authority, paged. Recovery closes them through the [`TaskLog`]
/// with [`fail_live`], so a wrapper of the records sees those commits too.
pub trait LiveTaskScan: Send + Sync + 'static {
    /// At most `limit` [live](LiveTask) tasks of every authority, in
    /// `(authority, task_id)` order, strictly after `after` (a previous
    /// page's last [`LiveTask::key`]).
    fn live_tasks<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<LiveTask>>;
}

/// A task whose last state is neither terminal nor waiting for the client
/// (INPUT_REQUIRED, AUTH_REQUIRED): some host was running it; or a feature's
/// [stream](crate::stream_id) ([`stream`](Self::stream) says which), listed
/// so that the feature finds its streams in the same scan.
///
/// Listed by [`LiveTaskScan::live_tasks`] across all authorities, in
/// `(authority, task_id)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTask {
    /// The task's authority.
    pub authority: String,
    /// The task id.
    pub task_id: String,
    /// The task's context id.
    pub context_id: String,
    /// The task's state (SUBMITTED or WORKING).
    pub state: TaskState,
    /// The task's sequence number when it was listed.
    pub seq: u64,
    /// The highest writer epoch committed for the task when it was listed.
    pub epoch: u64,
    /// The host that started the task's latest execution
    /// ([`Record::ExecutionStarted`]); `None` for tasks written before hosts
    /// were recorded.
    pub host: Option<String>,
}

impl LiveTask {
    /// The state is one a running host leaves a task in.
    pub fn is_live(state: TaskState) -> bool {
        !state.is_terminal() && !state.is_interrupted() && state != TaskState::Unspecified
    }

    /// The feature and name of the [stream](crate::stream_id) this entry
    /// is, or `None` for a task: recovery leaves streams to their feature.
    pub fn stream(&self) -> Option<(&str, &str)> {
        crate::stream_of(&self.task_id)
    }

    /// The position after this task, for the next [`LiveTaskScan::live_tasks`] call.
    pub fn key(&self) -> (&str, &str) {
        (&self.authority, &self.task_id)
    }
}

/// Takes `task` over with epoch `task.epoch + 1` and appends a FAILED status
/// with `message`, exactly once: the append is conditional on `task.seq`, so
/// of two hosts racing to close the same task one wins (`Ok(Some(_))`) and
/// the other gets `Ok(None)`, as does a call after the task moved on in any
/// way (another writer appended, took over or ended it). The newer epoch
/// fences the old writer if it is in fact still alive.
///
/// ```
/// use a2a_tower::log::{fail_live, AppendRequest, LiveTaskScan, MemoryTaskLog, Record, TaskLog};
/// use a2a_tower::types::{Message, TaskState};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let log = MemoryTaskLog::new();
/// log.append(AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]))
///     .await
///     .unwrap();
/// let live = log.live_tasks(None, 10).await.unwrap();
/// let closed = fail_live(&log, &live[0], Message::agent("m-1", "restarted")).await.unwrap();
/// assert_eq!(closed.unwrap().snapshot.state(), TaskState::Failed);
/// // A second close finds the task moved on.
/// assert!(fail_live(&log, &live[0], Message::agent("m-2", "again")).await.unwrap().is_none());
/// # });
/// ```
pub fn fail_live<'a, L: TaskLog + ?Sized>(
    log: &'a L,
    task: &'a LiveTask,
    message: Message,
) -> LogFuture<'a, Option<Appended>> {
    Box::pin(async move {
        let status = TaskStatus {
            state: TaskState::Failed,
            message: Some(message),
            timestamp: Some(Timestamp::now()),
        };
        let req = AppendRequest::new(
            task.authority.clone(),
            task.task_id.clone(),
            task.seq,
            task.epoch.saturating_add(1),
            vec![Record::status(status)],
        );
        match log.append(req).await {
            Ok(appended) => Ok(Some(appended)),
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => Ok(None),
            Err(e) => Err(e),
        }
    })
}
