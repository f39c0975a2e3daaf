//! The TaskLog conformance suite on `SqliteTaskLog` (twice: with the heads
//! of recent tasks in memory, and with every read from the database), plus
//! what only a durable file log does: reopen, group commit, one owner.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, DeliveryLog, LiveTaskScan, LogErrorKind, Record, SqliteTaskLog, Synchronous,
    TaskBackend, TaskLog,
};
use a2a_tower::types::{Message, TaskState, TaskStatus};
use a2a_tower_engine::suite::{push as push_suite, recovery as recovery_suite};
use a2a_tower_log::log_suite;
use a2a_tower_log::suite::msg;

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

    /// A log on the database that keeps no heads in memory: every read is
    /// a query.
    fn uncached(&self) -> SqliteTaskLog {
        SqliteTaskLog::builder(self.db())
            .cached_tasks(0)
            .open()
            .unwrap()
    }

    /// An integer the query reads from the database, on a connection of
    /// its own.
    fn stored(&self, query: &str) -> i64 {
        let c = rusqlite::Connection::open(self.db()).unwrap();
        c.query_row(query, [], |r| r.get(0)).unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn run<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = TempDir::new();
    case(Arc::new(SqliteTaskLog::open(dir.db()).unwrap())).await;
}

log_suite!(run);

/// The same cases with no heads kept in memory: every read is a query.
async fn run_uncached<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = TempDir::new();
    case(Arc::new(dir.uncached())).await;
}

mod uncached {
    use super::*;
    log_suite!(super::run_uncached);
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
    let closed = a2a_tower::log::fail_live(&log, &live[0], Message::agent("r", "server restarted"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((closed.seq, closed.snapshot.epoch), (4, 2));
    assert!(log.live_tasks(None, 10).await.unwrap().is_empty());
    assert_eq!(log.read("a", "t1", 0).await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_log_owns_the_file_until_dropped() {
    let dir = TempDir::new();
    let a = SqliteTaskLog::open(dir.db()).unwrap();
    a.append(AppendRequest::create(
        "x",
        "t",
        vec![Record::created("t", "c")],
    ))
    .await
    .unwrap();
    // Its heads in memory would hide another writer's appends: refused.
    let err = SqliteTaskLog::builder(dir.db())
        .busy_timeout(std::time::Duration::from_millis(50))
        .open()
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Backend);
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("in use"), "{cause}");
    // Dropping the last handle releases the file at once.
    drop(a);
    let b = SqliteTaskLog::builder(dir.db())
        .busy_timeout(std::time::Duration::ZERO)
        .open()
        .unwrap();
    assert_eq!(b.snapshot("x", "t").await.unwrap().seq, 1);
}

fn artifact(text: &str) -> a2a_tower::types::Artifact {
    a2a_tower::types::Artifact {
        artifact_id: "a-1".into(),
        parts: vec![a2a_tower::types::Part::text(text)],
        ..Default::default()
    }
}

/// What a reader gets from the heads in memory is exactly what the database
/// gives after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_in_memory_equal_the_stored_snapshot() {
    let dir = TempDir::new();
    let records = vec![
        Record::created("t", "c"),
        msg(1),
        Record::status(TaskStatus::new(TaskState::Working)),
        Record::ArtifactChunk {
            artifact: artifact("part one"),
            append: false,
            last_chunk: false,
        },
        Record::ArtifactChunk {
            artifact: artifact(" and two"),
            append: true,
            last_chunk: true,
        },
        Record::ExecutionStarted { host: "h-1".into() },
        Record::CancelRequested {
            at: a2a_tower::types::Timestamp::from_unix_millis(5),
        },
        Record::status(TaskStatus {
            state: TaskState::InputRequired,
            message: Some(Message::agent("m-agent", "which one?")),
            timestamp: Some(a2a_tower::types::Timestamp::from_unix_millis(7)),
        }),
    ];
    let cached = {
        let log = SqliteTaskLog::open(dir.db()).unwrap();
        log.append(AppendRequest::create("x", "t", records))
            .await
            .unwrap();
        log.append(AppendRequest::new("x", "t", 8, 1, vec![msg(2)]))
            .await
            .unwrap();
        let s = log.snapshot("x", "t").await.unwrap();
        assert!(log.snapshot("y", "t").await.is_err(), "authority checked");
        s
    };
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let stored = log.snapshot("x", "t").await.unwrap();
    assert_eq!((stored.seq, stored.epoch), (cached.seq, cached.epoch));
    assert_eq!(stored.task, cached.task);
    assert_eq!(stored.projection.host(), cached.projection.host());
    assert_eq!(
        stored.projection.cancel_requested(),
        cached.projection.cancel_requested()
    );
}

/// A terminal task keeps no head in memory: the snapshot its last append
/// returns is its caller's alone (a blocking SendMessage moves the task into
/// its answer instead of copying it), and reads go to the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_task_keeps_no_head() {
    let dir = TempDir::new();
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let live = log
        .append(AppendRequest::create(
            "x",
            "t",
            vec![Record::created("t", "c"), msg(1)],
        ))
        .await
        .unwrap();
    // The caller's snapshot holds the task twice (itself and its
    // projection); a live task's head in memory holds it too.
    assert!(Arc::strong_count(&live.snapshot.task) > 2);
    drop(live);
    let done = log
        .append(AppendRequest::new(
            "x",
            "t",
            2,
            1,
            vec![Record::status(TaskStatus::new(TaskState::Completed))],
        ))
        .await
        .unwrap();
    assert_eq!(Arc::strong_count(&done.snapshot.task), 2);
    let read = log.snapshot("x", "t").await.unwrap();
    assert!(
        !Arc::ptr_eq(&read.task, &done.snapshot.task),
        "read from the database"
    );
    assert_eq!(
        (read.seq, read.epoch),
        (done.snapshot.seq, done.snapshot.epoch)
    );
    assert_eq!(read.task, done.snapshot.task);
    assert_eq!(
        log.snapshot("y", "t").await.unwrap_err().kind(),
        LogErrorKind::NotFound
    );
}

/// One `entries` row per append; a live task's snapshot is stored every 64
/// records and when it comes to rest, and a read that finds no head in
/// memory replays the entries after the stored snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_and_periodic_snapshots() {
    let dir = TempDir::new();
    let log = dir.uncached();
    log.append(AppendRequest::create(
        "a",
        "t",
        vec![Record::created("t", "c"), msg(0)],
    ))
    .await
    .unwrap();
    for i in 1..=148u64 {
        log.append(AppendRequest::new("a", "t", i + 1, 1, vec![msg(i)]))
            .await
            .unwrap();
    }
    let stored = |q: &str| dir.stored(q);
    assert_eq!(stored("SELECT count(*) FROM entries"), 149);
    assert_eq!(
        stored("SELECT count(*) FROM entries WHERE snapshot IS NOT NULL"),
        2,
        "at 64 and 128"
    );
    assert_eq!(stored("SELECT snapshot_seq FROM tasks"), 128);
    let snap = log.snapshot("a", "t").await.unwrap();
    assert_eq!(snap.seq, 150);
    assert_eq!(snap.task.history.len(), 149);
    assert_eq!(snap.task.history[148].message_id, "m148");
    log.append(AppendRequest::new(
        "a",
        "t",
        150,
        1,
        vec![Record::status(TaskStatus::new(TaskState::Completed))],
    ))
    .await
    .unwrap();
    assert_eq!(stored("SELECT snapshot_seq FROM tasks"), 151);
    let page = log
        .list(
            "a",
            &a2a_tower::log::ListQuery {
                page_size: 5,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.tasks[0].history.len(), 149);
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

/// The writer's idle time counts how long it waited for work, the wait in
/// progress included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_idle_time_is_counted() {
    let dir = TempDir::new();
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    let waiting = log.stats().writer_idle;
    assert!(
        waiting >= std::time::Duration::from_millis(30),
        "{waiting:?}"
    );
    log.append(AppendRequest::create(
        "a",
        "t",
        vec![Record::created("t", "c")],
    ))
    .await
    .unwrap();
    let idle = log.stats().writer_idle;
    assert!(idle >= waiting, "{idle:?} < {waiting:?}");
}

#[test]
fn rejects_a_zero_batch() {
    let dir = TempDir::new();
    let err = SqliteTaskLog::builder(dir.db())
        .max_batch(0)
        .open()
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Config);
}

/// One file has one log (see `one_log_owns_the_file_until_dropped`): the
/// old host and the restarted hosts are engines on that log, as they are on
/// one memory log. A restart of the process itself is `crash_sqlite`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_recovery_and_fencing_through_the_engine() {
    let dir = TempDir::new();
    let log: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    recovery_suite::restart_recovery_and_fencing(log.clone(), log).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_execution_stops_cleanly() {
    let dir = TempDir::new();
    let log: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    recovery_suite::fenced_execution_stops_cleanly(log.clone(), log).await;
}

/// A version-1 database, as the first release wrote it (one row per record,
/// a snapshot per task, no hosts), migrates to the current version: its
/// tasks read back the same, take appends, and its live tasks have no host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrates_a_version_1_database() {
    let dir = TempDir::new();
    let records = [
        Record::created("old", "c"),
        msg(1),
        Record::status(TaskStatus::new(TaskState::Working)),
    ];
    let projection = a2a_tower::log::Projection::replay(&records).unwrap();
    {
        let conn = rusqlite::Connection::open(dir.db()).unwrap();
        conn.execute_batch(
            r#"
            PRAGMA journal_mode = WAL;
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version (version) VALUES (1);
            CREATE TABLE tasks (
                task_id TEXT NOT NULL PRIMARY KEY, authority TEXT NOT NULL,
                context_id TEXT NOT NULL, state INTEGER NOT NULL,
                status_ts INTEGER NOT NULL, live INTEGER NOT NULL,
                seq INTEGER NOT NULL, epoch INTEGER NOT NULL,
                snapshot TEXT NOT NULL, created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX tasks_list ON tasks (authority, status_ts DESC, task_id);
            CREATE INDEX tasks_context ON tasks (authority, context_id, status_ts DESC, task_id);
            CREATE INDEX tasks_live ON tasks (authority, task_id) WHERE live = 1;
            CREATE TABLE records (
                task_id TEXT NOT NULL, seq INTEGER NOT NULL,
                authority TEXT NOT NULL, epoch INTEGER NOT NULL,
                record TEXT NOT NULL, created_at INTEGER NOT NULL,
                PRIMARY KEY (task_id, seq)
            ) WITHOUT ROWID;
            "#,
        )
        .unwrap();
        let snapshot = serde_json::json!({ "task": &**projection.task() }).to_string();
        conn.execute(
            "INSERT INTO tasks VALUES ('old', 'a', 'c', 2, 0, 1, 3, 1, ?1, 0, 0)",
            [snapshot],
        )
        .unwrap();
        for (i, r) in records.iter().enumerate() {
            conn.execute(
                "INSERT INTO records VALUES ('old', ?1, 'a', 1, ?2, 0)",
                rusqlite::params![i as i64 + 1, serde_json::to_string(r).unwrap()],
            )
            .unwrap();
        }
    }
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let live = log.live_tasks(None, 10).await.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].host, None);
    let snap = log.snapshot("a", "old").await.unwrap();
    assert_eq!(snap.seq, 3);
    assert_eq!(&snap.task, projection.task());
    let read = log.read("a", "old", 1).await.unwrap();
    assert_eq!(read.iter().map(|r| r.seq).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(*read[0].record, records[1]);
    log.append(AppendRequest::new("a", "old", 3, 1, vec![msg(2)]))
        .await
        .unwrap();
    drop(log);
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    assert_eq!(log.read("a", "old", 0).await.unwrap().len(), 4);
    // The push delivery tables came with the migration.
    let config = a2a_tower_log::suite::config("p");
    log.append(AppendRequest::new("a", "old", 4, 1, vec![config]))
        .await
        .unwrap();
    assert_eq!(log.delivery_cursors("a", "old").await.unwrap()[0].seq, 4);
    // Schema 7 (feature records hold their tasks) is `log_upgrade`'s.
    assert_eq!(SqliteTaskLog::SCHEMA_VERSION, 8);
}

/// A task created and answered in one append: its entry is its whole log
/// and stores no snapshot; reads (with no head in memory, and after a
/// reopen) replay it. Creating it again is a conflict that writes nothing,
/// though this log never held its head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_written_once_is_replayed_and_not_created_twice() {
    let dir = TempDir::new();
    let whole = || {
        vec![
            Record::created("t", "c"),
            msg(0),
            Record::ArtifactChunk {
                artifact: artifact("hello"),
                append: false,
                last_chunk: true,
            },
            Record::status(TaskStatus::new(TaskState::Completed)),
        ]
    };
    {
        let log = dir.uncached();
        let done = log
            .append(AppendRequest::create("a", "t", whole()))
            .await
            .unwrap();
        assert_eq!(done.seq, 4);
        let snap = log.snapshot("a", "t").await.unwrap();
        assert_eq!(*snap.task, *done.snapshot.task);
    }
    let stored = |q: &str| dir.stored(q);
    assert_eq!(
        stored("SELECT count(*) FROM entries WHERE snapshot IS NOT NULL"),
        0
    );
    assert_eq!(stored("SELECT snapshot_seq FROM tasks"), 0);
    let log = SqliteTaskLog::open(dir.db()).unwrap();
    let snap = log.snapshot("a", "t").await.unwrap();
    assert_eq!((snap.seq, snap.state()), (4, TaskState::Completed));
    assert_eq!(snap.task.artifacts.len(), 1);
    let page = log
        .list("a", &a2a_tower::log::ListQuery::default())
        .await
        .unwrap();
    assert_eq!(*page.tasks[0], *snap.task);
    for authority in ["a", "b"] {
        let again = log
            .append(AppendRequest::create(authority, "t", whole()))
            .await
            .unwrap_err();
        assert_eq!(again.kind(), LogErrorKind::Conflict, "{authority}");
    }
    assert_eq!(stored("SELECT count(*) FROM entries"), 1);
    assert_eq!(log.snapshot("a", "t").await.unwrap().seq, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_rules_through_the_engine() {
    let dir = TempDir::new();
    push_suite::push_config_rules(Arc::new(SqliteTaskLog::open(dir.db()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_fold_into_a_running_execution() {
    let dir = TempDir::new();
    let log: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    push_suite::configs_fold_into_a_running_execution(log.clone(), log).await;
}

// A config persists until its task ends (a2a-spec.md §4.7): it survives
// closing and reopening the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_survive_a_restart() {
    let dir = TempDir::new();
    let written = {
        let log: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
        push_suite::configs_written(log).await
    };
    let reopened: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.db()).unwrap());
    push_suite::configs_read_back(reopened, written).await;
}
