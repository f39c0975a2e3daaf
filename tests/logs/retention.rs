//! Retention (`log::Retention`, `log::RetentionPolicy`) on the three logs:
//! a sweep deletes exactly the terminal tasks whose status is older than the
//! cutoff (with their records and push delivery progress), in small
//! batches, while other tasks are being appended to; recent terminal tasks,
//! running tasks and the appends made meanwhile are untouched; a stale
//! task that is not terminal (running, or waiting for its client) is failed
//! as interrupted only under `Stale::FailAfter`.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::log::{
    AppendRequest, DeliveryLog, ListQuery, LogErrorKind, Record, Retention, RetentionPolicy,
    STALE_MESSAGE, Stale, TaskLog,
};
use a2a_tower::types::{TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp};

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
