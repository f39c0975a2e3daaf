//! Reads of a task log that wait: until a task gets somewhere (following
//! its committed records, within [`GUARD`]), every record of a task,
//! every record of a task as it ends, and a task's metadata values.

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::log::{Record, TaskBackend};
use a2a_tower::types::Task;
use futures_util::StreamExt as _;

/// How long anything the tests wait for may take (a guard: reaching it is
/// a failure, never a wait that passes).
pub(crate) const GUARD: Duration = Duration::from_secs(30);

/// Waits, following the task's committed records, until `done` holds for
/// the task (within [`GUARD`]); the task then.
pub(crate) async fn until(
    log: &dyn TaskBackend,
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

/// The task metadata value under `key` (`null` when absent).
pub(crate) fn meta(task: &Task, key: &str) -> serde_json::Value {
    task.metadata
        .as_ref()
        .and_then(|m| m.get(key))
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

/// Waits until the task is terminal.
pub(crate) async fn until_terminal(log: &dyn TaskBackend, authority: &str, id: &str) -> Arc<Task> {
    until(log, authority, id, |t| t.status.state.is_terminal()).await
}

/// Every committed record of the task.
pub(crate) async fn records(log: &dyn TaskBackend, authority: &str, id: &str) -> Vec<Record> {
    log.read(authority, id, 0)
        .await
        .expect("read")
        .into_iter()
        .map(|s| (*s.record).clone())
        .collect()
}

/// Every record of the task from its first on, collected in the background
/// until its terminal one (the watch is registered when this returns, so a
/// memory log cannot pack the task away first). Read with [`collected`].
pub(crate) async fn recorded(
    log: &dyn TaskBackend,
    authority: &str,
    id: &str,
) -> tokio::task::JoinHandle<Vec<Record>> {
    let watch = log
        .watch(authority, id, Some(0))
        .await
        .expect("watch the task");
    tokio::spawn(async move {
        let mut out = Vec::new();
        let mut records = watch.records;
        while let Some(r) = records.next().await {
            let r = r.expect("a record");
            let end = r.record.is_terminal();
            out.push((*r.record).clone());
            if end {
                break;
            }
        }
        out
    })
}

/// What [`recorded`] collected (within [`GUARD`]).
pub(crate) async fn collected(handle: tokio::task::JoinHandle<Vec<Record>>) -> Vec<Record> {
    tokio::time::timeout(GUARD, handle)
        .await
        .expect("the task ends in time")
        .expect("the watch ran")
}
