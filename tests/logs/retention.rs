//! Retention (`log::Retention`, `log::RetentionPolicy`) on the three logs:
//! a sweep deletes exactly the terminal tasks whose status is older than the
//! cutoff (with their records and push delivery progress), in small
//! batches, while other tasks are being appended to; recent terminal tasks,
//! running tasks and the appends made meanwhile are untouched; a stale
//! task that is not terminal (running, or waiting for its client) is failed
//! as interrupted only under `Stale::FailAfter`. And readers running
//! beside the sweeps (GetTask's snapshot, ListTasks' pages) find every
//! expired task whole or gone, never half deleted: on the memory log a
//! crash loses everything, so this is its whole-or-gone property.

use crate::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use a2a_tower::log::{
    AppendRequest, DeliveryLog, ListQuery, LogErrorKind, Record, Retention, RetentionPolicy,
    STALE_MESSAGE, Stale, TaskLog,
};
use a2a_tower::types::{
    Artifact, Message, Part, Task, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};

const AUTH: &str = "public";

fn status(state: TaskState, ago: Duration) -> Record {
    let ms = Timestamp::now().unix_millis() - ago.as_millis() as i64;
    Record::status(TaskStatus {
        state,
        timestamp: Some(Timestamp::from_unix_millis(ms)),
        ..Default::default()
    })
}

async fn task<L: TaskLog + ?Sized>(log: &L, id: &str, state: TaskState, ago: Duration) {
    let config = TaskPushNotificationConfig {
        task_id: id.into(),
        id: "cfg".into(),
        url: "https://example.com/hook".into(),
        ..Default::default()
    };
    let records = vec![
        Record::created(id, format!("ctx-{id}")),
        Record::PushConfigSet { config },
        status(state, ago),
    ];
    log.append(AppendRequest::create(AUTH, id, records))
        .await
        .unwrap();
}

const HOUR: Duration = Duration::from_secs(3600);

/// The case every log runs.
async fn deletes_exactly_the_expired_terminal_tasks<L: Retention + DeliveryLog>(log: Arc<L>) {
    let mut expired = Vec::new();
    for (i, state) in [
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::Rejected,
    ]
    .into_iter()
    .cycle()
    .take(23)
    .enumerate()
    {
        let id = format!("old-{i}");
        task(&*log, &id, state, 2 * HOUR).await;
        expired.push(id);
    }
    let mut kept = Vec::new();
    for i in 0..5 {
        let id = format!("new-{i}");
        task(&*log, &id, TaskState::Completed, Duration::ZERO).await;
        kept.push(id);
    }
    for (i, state) in [
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::Submitted,
        TaskState::AuthRequired,
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("running-{i}");
        task(&*log, &id, state, 2 * HOUR).await;
        kept.push(id);
    }

    // Load: tasks created and completed while the sweep runs.
    let load = {
        let log = log.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                let id = format!("load-{i}");
                task(&*log, &id, TaskState::Completed, Duration::ZERO).await;
                tokio::task::yield_now().await;
            }
        })
    };
    let policy = RetentionPolicy::new(HOUR).batch(4);
    let swept = policy.sweep(&*log).await.unwrap();
    load.await.unwrap();
    assert_eq!(swept.deleted, expired.len());
    assert_eq!(swept.failed, 0);
    for id in &expired {
        let e = log.snapshot(AUTH, id).await.unwrap_err();
        assert_eq!(e.kind(), LogErrorKind::NotFound, "{id}");
        assert!(
            log.delivery_cursors(AUTH, id).await.unwrap().is_empty(),
            "{id}"
        );
    }
    for id in kept.iter().chain(
        (0..40)
            .map(|i| format!("load-{i}"))
            .collect::<Vec<_>>()
            .iter(),
    ) {
        log.snapshot(AUTH, id)
            .await
            .unwrap_or_else(|e| panic!("{id}: {e:?}"));
    }
    let page = log
        .list(
            AUTH,
            &ListQuery {
                page_size: 100,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), kept.len() + 40);
    assert!(page.tasks.iter().all(|t| !t.id.starts_with("old-")));
    // Nothing more to delete.
    assert_eq!(policy.sweep(&*log).await.unwrap().deleted, 0);

    // Stale running tasks: failed under the policy, then expire like any.
    let fail = RetentionPolicy::new(HOUR).stale(Stale::FailAfter(HOUR));
    // A recent task waiting for its client is no stale one.
    task(
        &*log,
        "waiting-new",
        TaskState::InputRequired,
        Duration::ZERO,
    )
    .await;
    let swept = fail.sweep(&*log).await.unwrap();
    assert_eq!(
        swept.failed, 4,
        "WORKING, SUBMITTED, and those waiting for their client (INPUT_REQUIRED, AUTH_REQUIRED)"
    );
    for i in 0..4 {
        let stale = log.snapshot(AUTH, &format!("running-{i}")).await.unwrap();
        assert_eq!(stale.state(), TaskState::Failed, "running-{i}");
        let message = stale.task.status.message.as_ref().unwrap();
        assert_eq!(message.text(), STALE_MESSAGE);
    }
    let recent = log.snapshot(AUTH, "waiting-new").await.unwrap();
    assert_eq!(recent.state(), TaskState::InputRequired);
    // Failed now, they expire an hour from now: nothing more this sweep.
    assert_eq!(fail.sweep(&*log).await.unwrap(), Default::default());
}

/// Task `id` of several commits (created with its message; an artifact and
/// a push config; completed `ago`), as its snapshot then reads.
async fn whole_task<L: TaskLog + ?Sized>(log: &L, id: &str, ago: Duration) -> Task {
    let created = vec![
        Record::created(id, format!("ctx-{id}")),
        Record::MessageAdmitted {
            message: Message::user(format!("m-{id}"), format!("words of {id}")),
        },
    ];
    log.append(AppendRequest::create(AUTH, id, created))
        .await
        .unwrap();
    let config = TaskPushNotificationConfig {
        task_id: id.into(),
        id: "cfg".into(),
        url: "https://example.com/hook".into(),
        ..Default::default()
    };
    let output = vec![
        Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: "a1".into(),
                parts: vec![Part::text(format!("answer to {id}"))],
                ..Artifact::default()
            },
            append: false,
            last_chunk: true,
        },
        Record::PushConfigSet { config },
    ];
    log.append(AppendRequest::new(AUTH, id, 2, 1, output))
        .await
        .unwrap();
    log.append(AppendRequest::new(
        AUTH,
        id,
        4,
        1,
        vec![status(TaskState::Completed, ago)],
    ))
    .await
    .unwrap();
    let task = log.snapshot(AUTH, id).await.unwrap().task;
    assert_eq!(task.history.len(), 1);
    assert_eq!(task.artifacts.len(), 1);
    (*task).clone()
}

/// Expired tasks of this many: enough batches for the readers to run
/// between them.
const EXPIRED: usize = 600;

/// The case every log runs: readers (snapshots and ListTasks pages) beside
/// a sweep deleting in batches of 4 while new tasks are appended find each
/// expired task exactly as it was written, or NotFound.
async fn readers_see_every_task_whole_or_gone<L: Retention>(log: Arc<L>) {
    let mut written = HashMap::new();
    for i in 0..EXPIRED {
        let id = format!("old-{i}");
        let task = whole_task(&*log, &id, 2 * HOUR).await;
        written.insert(id, task);
    }
    let written = Arc::new(written);
    let done = Arc::new(AtomicBool::new(false));
    // What the readers saw: (whole, gone) of the expired tasks.
    let seen = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let mut readers = Vec::new();
    for r in 0..2usize {
        let (log, written, done, seen) = (log.clone(), written.clone(), done.clone(), seen.clone());
        readers.push(tokio::spawn(async move {
            let mut i = r;
            while !done.load(Ordering::Acquire) {
                let id = format!("old-{}", i % EXPIRED);
                match log.snapshot(AUTH, &id).await {
                    Ok(snap) => {
                        assert_eq!(*snap.task, written[&id], "{id} read half deleted");
                        assert_eq!(snap.seq, 5, "{id}");
                        seen.0.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), LogErrorKind::NotFound, "{id}");
                        seen.1.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if i % 50 == r {
                    let query = ListQuery {
                        page_size: EXPIRED + 100,
                        ..Default::default()
                    };
                    let page = log.list(AUTH, &query).await.unwrap();
                    for t in page.tasks.iter().filter(|t| t.id.starts_with("old-")) {
                        let want = &written[&t.id];
                        assert_eq!(t.status, want.status, "{} listed half deleted", t.id);
                        assert_eq!(t.artifacts, want.artifacts, "{} listed half deleted", t.id);
                    }
                }
                i += 7;
                tokio::task::yield_now().await;
            }
        }));
    }
    let load = {
        let log = log.clone();
        tokio::spawn(async move {
            for i in 0..100 {
                whole_task(&*log, &format!("load-{i}"), Duration::ZERO).await;
            }
        })
    };
    // The readers are reading before the sweep begins, and go on until one
    // of them has seen a deleted task: they cannot all have idled through
    // (a reader that failed ends the wait; its panic is raised below).
    let failed = |readers: &[tokio::task::JoinHandle<()>]| readers.iter().any(|r| r.is_finished());
    while seen.0.load(Ordering::Relaxed) < 2 && !failed(&readers) {
        tokio::task::yield_now().await;
    }
    let swept = RetentionPolicy::new(HOUR)
        .batch(4)
        .sweep(&*log)
        .await
        .unwrap();
    load.await.unwrap();
    while seen.1.load(Ordering::Relaxed) == 0 && !failed(&readers) {
        tokio::task::yield_now().await;
    }
    done.store(true, Ordering::Release);
    for r in readers {
        r.await.unwrap();
    }
    assert_eq!(swept.deleted, EXPIRED);
    for id in written.keys() {
        let e = log.snapshot(AUTH, id).await.unwrap_err();
        assert_eq!(e.kind(), LogErrorKind::NotFound, "{id}");
    }
    for i in 0..100 {
        log.snapshot(AUTH, &format!("load-{i}")).await.unwrap();
    }
    eprintln!(
        "readers saw {} whole and {} gone",
        seen.0.load(Ordering::Relaxed),
        seen.1.load(Ordering::Relaxed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_readers_see_whole_or_gone() {
    readers_see_every_task_whole_or_gone(Arc::new(a2a_tower::log::MemoryTaskLog::new())).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_readers_see_whole_or_gone() {
    let dir = support::server::TempDir::new("retention-readers");
    let log = a2a_tower::log::SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap();
    readers_see_every_task_whole_or_gone(Arc::new(log)).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_readers_see_whole_or_gone() {
    support::postgres::with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        readers_see_every_task_whole_or_gone(Arc::new(log)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory() {
    deletes_exactly_the_expired_terminal_tasks(Arc::new(a2a_tower::log::MemoryTaskLog::new()))
        .await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    let dir = support::server::TempDir::new("retention");
    let log = a2a_tower::log::SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap();
    deletes_exactly_the_expired_terminal_tasks(Arc::new(log)).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    support::postgres::with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        deletes_exactly_the_expired_terminal_tasks(Arc::new(log)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_streams_compact() {
    a2a_tower_log::suite::streams_compact(Arc::new(a2a_tower::log::MemoryTaskLog::new())).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_streams_compact() {
    let dir = support::server::TempDir::new("retention-compact");
    let path = dir.0.join("tasks.db");
    let log = a2a_tower::log::SqliteTaskLog::open(&path).unwrap();
    a2a_tower_log::suite::streams_compact(Arc::new(log)).await;
    // A fresh process: no head in memory, so the stream's projection comes
    // from the snapshot the compaction stored (its first records are gone).
    let log = a2a_tower::log::SqliteTaskLog::open(&path).unwrap();
    let mut after = None;
    let mut streams = Vec::new();
    loop {
        use a2a_tower::log::LiveTaskScan;
        let key = after
            .as_ref()
            .map(|(a, t): &(String, String)| (a.as_str(), t.as_str()));
        let page = log.live_tasks(key, 64).await.unwrap();
        streams.extend(page.iter().filter(|t| t.stream().is_some()).cloned());
        match page.last() {
            Some(last) if page.len() == 64 => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => break,
        }
    }
    assert_eq!(streams.len(), 1, "{streams:?}");
    let s = &streams[0];
    let feature =
        a2a_tower::log::FeatureRecord::new("suite", &serde_json::json!({ "n": 76 })).unwrap();
    let req = AppendRequest::new(
        &*s.authority,
        &*s.task_id,
        s.seq,
        1,
        vec![Record::Feature(feature)],
    );
    assert_eq!(log.append(req).await.unwrap().seq, s.seq + 1);
    let read = log.read(&s.authority, &s.task_id, 0).await.unwrap();
    assert_eq!(read.first().map(|r| r.seq), Some(75));
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_streams_compact() {
    support::postgres::with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        a2a_tower_log::suite::streams_compact(Arc::new(log)).await;
    })
    .await;
}
