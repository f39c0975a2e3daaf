//! Reads of a task log that wait: until a task gets somewhere (following
//! its committed records, within [`GUARD`]), and every record of a task.

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::log::{Record, TaskLog};
use a2a_tower::types::Task;
use futures_util::StreamExt as _;

/// How long anything the tests wait for may take (a guard: reaching it is
/// a failure, never a wait that passes).
pub(crate) const GUARD: Duration = Duration::from_secs(30);

/// Waits, following the task's committed records, until `done` holds for
/// the task (within [`GUARD`]); the task then.
pub(crate) async fn until(
    log: &dyn TaskLog,
    authority: &str,
    id: &str,
    done: impl Fn(&Task) -> bool,
) -> Arc<Task> {
    let wait = async {
        let watch = log.watch(authority, id, None).await.expect("watch");
        if done(&watch.snapshot.task) {
            return watch.snapshot.task;
        }
        let mut records = watch.records;
        while let Some(r) = records.next().await {
            r.expect("a record");
            let snap = log.snapshot(authority, id).await.expect("snapshot");
            if done(&snap.task) {
                return snap.task;
            }
        }
        let task = log.snapshot(authority, id).await.expect("snapshot").task;
        assert!(done(&task), "the task ended without: {task:?}");
        task
    };
    tokio::time::timeout(GUARD, wait)
        .await
        .expect("the task gets there in time")
}

/// Waits until the task is terminal.
pub(crate) async fn until_terminal(log: &dyn TaskLog, authority: &str, id: &str) -> Arc<Task> {
    until(log, authority, id, |t| t.status.state.is_terminal()).await
}

/// Every committed record of the task.
pub(crate) async fn records(log: &dyn TaskLog, authority: &str, id: &str) -> Vec<Record> {
    log.read(authority, id, 0)
        .await
        .expect("read")
        .into_iter()
        .map(|s| (*s.record).clone())
        .collect()
}
