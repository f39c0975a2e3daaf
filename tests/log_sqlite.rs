//! The TaskLog conformance suite on `SqliteTaskLog`, plus what only a
//! durable file log does: reopen, group commit, two handles on one file.

#![cfg(feature = "sqlite")]

#[path = "support/log_suite.rs"]
mod log_suite;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use a2a_tower::log::{AppendRequest, LogErrorKind, Record, SqliteTaskLog, Synchronous, TaskLog};
use a2a_tower::types::{Message, TaskState, TaskStatus};

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let p = std::env::temp_dir().join(format!("a2a-sqlite-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }

    fn db(&self) -> PathBuf {
        self.0.join("tasks.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn run<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskLog>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = TempDir::new();
    case(Arc::new(SqliteTaskLog::open(dir.db()).unwrap())).await;
}

log_suite!(run);

fn msg(i: u64) -> Record {
    Record::MessageAdmitted {
        message: Message::user(format!("m{i}"), "x"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_reopen_and_keeps_live_tasks() {
    let dir = TempDir::new();
    {
        let log = SqliteTaskLog::open(dir.db()).unwrap();
        log.append(AppendRequest::create(
            "a",
            "t1",
            vec![Record::created("t1", "c"), msg(1)],
        ))
        .await
        .unwrap();
        let working = Record::status(TaskStatus::new(TaskState::Working));
        log.append(AppendRequest::new("a", "t1", 2, 1, vec![working]))
            .await
            .unwrap();
    }
    // "Process restart": a new log on the same file.
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let snap = log.snapshot("a", "t1").await.unwrap();
    assert_eq!(
        (snap.seq, snap.epoch, snap.state()),
        (3, 1, TaskState::Working)
    );
    assert_eq!(snap.task.history.len(), 1);
    let live = log.live_tasks(None, 10).await.unwrap();
    assert_eq!(live.len(), 1);
    let closed = log
        .fail_live(&live[0], Message::agent("r", "server restarted"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((closed.seq, closed.snapshot.epoch), (4, 2));
    assert!(log.live_tasks(None, 10).await.unwrap().is_empty());
    assert_eq!(log.read("a", "t1", 0).await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_on_one_file_fence_each_other() {
    // Two hosts sharing one file: the writer's projection cache must not
    // hide the other host's appends.
    let dir = TempDir::new();
    let a = SqliteTaskLog::open(dir.db()).unwrap();
    let b = SqliteTaskLog::open(dir.db()).unwrap();
    a.append(AppendRequest::create(
        "x",
        "t",
        vec![Record::created("t", "c")],
    ))
    .await
    .unwrap();
    a.append(AppendRequest::new("x", "t", 1, 1, vec![msg(1)]))
        .await
        .unwrap();
    assert_eq!(
        b.append(AppendRequest::new("x", "t", 2, 2, vec![msg(2)]))
            .await
            .unwrap()
            .seq,
        3
    );
    let err = a
        .append(AppendRequest::new("x", "t", 3, 1, vec![msg(3)]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Fenced);
    let out = a
        .append(AppendRequest::new("x", "t", 3, 2, vec![msg(3)]))
        .await
        .unwrap();
    let ids: Vec<&str> = out
        .snapshot
        .task
        .history
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(ids, ["m1", "m2", "m3"], "a saw b's record");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_batches_and_failures_stay_per_append() {
    let dir = TempDir::new();
    let log = Arc::new(
        SqliteTaskLog::builder(dir.db())
            .max_batch(64)
            .synchronous(Synchronous::Normal)
            .open()
            .unwrap(),
    );
    log.append(AppendRequest::create(
        "a",
        "t",
        vec![Record::created("t", "c")],
    ))
    .await
    .unwrap();
    // Many appends in flight at once: the good ones commit, the conflicting
    // ones fail alone, whatever batch they share.
    let mut handles = Vec::new();
    for i in 0..200u64 {
        let log = log.clone();
        handles.push(tokio::spawn(async move {
            let id = format!("g{i}");
            let create = log
                .append(AppendRequest::create(
                    "a",
                    &id,
                    vec![Record::created(&id, "c")],
                ))
                .await
                .map(|a| a.seq);
            let stale = log
                .append(AppendRequest::new("a", "t", 5, 1, vec![msg(i)]))
                .await
                .map(|a| a.seq)
                .map_err(|e| e.kind());
            (create.unwrap(), stale)
        }));
    }
    for h in handles {
        let (created, stale) = h.await.unwrap();
        assert_eq!(created, 1);
        assert_eq!(stale, Err(LogErrorKind::Conflict));
    }
    let page = log
        .list(
            "a",
            &a2a_tower::log::ListQuery {
                page_size: 1,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 201);
    let stats = log.stats();
    assert_eq!(stats.appends, 401);
    assert!(
        stats.transactions >= 1 && stats.transactions <= 401,
        "{stats:?}"
    );
}

#[test]
fn rejects_a_zero_batch() {
    let dir = TempDir::new();
    let err = SqliteTaskLog::builder(dir.db())
        .max_batch(0)
        .open()
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Backend);
}

#[path = "support/recovery_suite.rs"]
mod recovery_suite;

/// Two handles on one file: the old host writes through one, the restarted
/// hosts recover through the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_recovery_and_fencing_through_the_engine() {
    let dir = TempDir::new();
    let a: Arc<dyn TaskLog> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    let b: Arc<dyn TaskLog> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    recovery_suite::restart_recovery_and_fencing(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_execution_stops_cleanly() {
    let dir = TempDir::new();
    let a: Arc<dyn TaskLog> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    let b: Arc<dyn TaskLog> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    recovery_suite::fenced_execution_stops_cleanly(a, b).await;
}

/// A version-1 database (before hosts were recorded) migrates to the
/// current version; its live tasks have no host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrates_a_version_1_database() {
    let dir = TempDir::new();
    {
        let log = SqliteTaskLog::open(dir.db()).unwrap();
        log.append(AppendRequest::create(
            "a",
            "old",
            vec![Record::created("old", "c")],
        ))
        .await
        .unwrap();
    }
    {
        // Back to the version-1 schema, as an older crate left it.
        let conn = rusqlite::Connection::open(dir.db()).unwrap();
        conn.execute_batch(
            "ALTER TABLE tasks DROP COLUMN host; UPDATE schema_version SET version = 1;",
        )
        .unwrap();
    }
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let live = log.live_tasks(None, 10).await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].host, None);
    assert_eq!(SqliteTaskLog::SCHEMA_VERSION, 2);
}
