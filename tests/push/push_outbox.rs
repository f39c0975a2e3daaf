//! The push-notification outbox over real logs, with a recording `Deliver`:
//! order per config, configs independent of each other, the commit trigger
//! and the sweep, a restart on the same SQLite file resuming after the
//! cursor, and two hosts on one PostgreSQL database delivering each event
//! exactly once (and taking over a dead host's lease once it expired).
//!
//! The PostgreSQL tests need it at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and fail when it is missing.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_tower::log::{AppendRequest, DeliveryLog, MemoryTaskLog, Record, TaskLog};
use a2a_tower::push::outbox::{Deliver, Delivery, Outbox};
use a2a_tower::types::{
    Artifact, Part, StreamResponse, TaskPushNotificationConfig, TaskState, TaskStatus,
};
use tokio::sync::Semaphore;

const GUARD: Duration = Duration::from_secs(20);

/// One delivery: the host, the config, and the event in short
/// (`task:what`).
type Sent = (String, String, String);

/// A `Deliver` that records what it is given; a config named in `gated`
/// waits for a permit before each delivery; `hang_at` makes the n-th
/// delivery (counted from 1) record its event and then never finish.
#[derive(Clone, Default)]
struct Recorder {
    host: String,
    sent: Arc<Mutex<Vec<Sent>>>,
    gated: Option<(String, Arc<Semaphore>)>,
    hang_at: Option<usize>,
}

impl Recorder {
    fn on(host: &str, sent: &Arc<Mutex<Vec<Sent>>>) -> Self {
        Self {
            host: host.into(),
            sent: sent.clone(),
            ..Self::default()
        }
    }
}

fn short(event: &StreamResponse) -> String {
    match event {
        StreamResponse::Task(t) => format!("{}:task", t.id),
        StreamResponse::StatusUpdate(u) => format!("{}:{}", u.task_id, u.status.state.as_str()),
        StreamResponse::ArtifactUpdate(u) => {
            format!("{}:artifact {}", u.task_id, u.artifact.artifact_id)
        }
        StreamResponse::Message(m) => format!("message {}", m.message_id),
    }
}

impl Deliver for Recorder {
    async fn deliver(
        &self,
        config: &TaskPushNotificationConfig,
        event: &StreamResponse,
    ) -> Delivery {
        if let Some((id, gate)) = &self.gated
            && *id == config.id
        {
            gate.acquire().await.expect("open gate").forget();
        }
        let n = {
            let mut sent = self.sent.lock().unwrap();
            sent.push((self.host.clone(), config.id.clone(), short(event)));
            sent.len()
        };
        if self.hang_at == Some(n) {
            std::future::pending::<()>().await;
        }
        Delivery::Delivered
    }
}

fn config(id: &str) -> Record {
    Record::PushConfigSet {
        config: TaskPushNotificationConfig {
            id: id.into(),
            url: format!("https://example.com/{id}"),
            ..TaskPushNotificationConfig::default()
        },
    }
}

fn state(s: TaskState) -> Record {
    Record::status(TaskStatus::new(s))
}

fn artifact(id: &str) -> Record {
    Record::ArtifactChunk {
        artifact: Artifact {
            artifact_id: id.into(),
            parts: vec![Part::text("x")],
            ..Artifact::default()
        },
        append: false,
        last_chunk: true,
    }
}

/// Creates `task` with the configs, then commits WORKING, an artifact and
/// COMPLETED, one append each.
async fn run_task(log: &dyn TaskLog, task: &str, configs: &[&str]) {
    let mut records = vec![Record::created(task, "c")];
    records.extend(configs.iter().map(|c| config(c)));
    let mut seq = log
        .append(AppendRequest::create("public", task, records))
        .await
        .unwrap()
        .seq;
    for r in [
        state(TaskState::Working),
        artifact("a1"),
        state(TaskState::Completed),
    ] {
        seq = log
            .append(AppendRequest::new("public", task, seq, 1, vec![r]))
            .await
            .unwrap()
            .seq;
    }
}

/// The events `run_task` makes, for each config.
fn events(task: &str) -> Vec<String> {
    [
        "task",
        "TASK_STATE_WORKING",
        "artifact a1",
        "TASK_STATE_COMPLETED",
    ]
    .iter()
    .map(|e| format!("{task}:{e}"))
    .collect()
}

fn of(sent: &Arc<Mutex<Vec<Sent>>>, config: &str) -> Vec<String> {
    let sent = sent.lock().unwrap();
    sent.iter()
        .filter(|(_, c, _)| c == config)
        .map(|(_, _, e)| e.clone())
        .collect()
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(GUARD, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

/// Committed through the outbox's log, with no sweep running: each config
/// gets every event in order, the task's creation first; once all is
/// delivered the task has no cursors left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_are_delivered_in_order_per_config() {
    let sent = Arc::default();
    let outbox = Outbox::builder(MemoryTaskLog::new(), Recorder::on("h", &sent))
        .build()
        .unwrap();
    let log = outbox.store().records().clone();
    run_task(&log, "t1", &["p1", "p2"]).await;
    until("both configs", || {
        of(&sent, "p1").len() == 4 && of(&sent, "p2").len() == 4
    })
    .await;
    assert_eq!(of(&sent, "p1"), events("t1"));
    assert_eq!(of(&sent, "p2"), events("t1"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        outbox
            .store()
            .deliveries()
            .delivery_cursors("public", "t1")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(sent.lock().unwrap().len(), 8, "nothing delivered twice");
}

/// A config whose webhook hangs delays neither another config of the task
/// nor another task; its own events follow in order once it moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_config_delays_only_itself() {
    let sent = Arc::default();
    let gate = Arc::new(Semaphore::new(0));
    let deliver = Recorder {
        gated: Some(("slow".into(), gate.clone())),
        ..Recorder::on("h", &sent)
    };
    let outbox = Outbox::builder(MemoryTaskLog::new(), deliver)
        .build()
        .unwrap();
    let log = outbox.store().records().clone();
    run_task(&log, "t1", &["slow", "fast"]).await;
    run_task(&log, "t2", &["other"]).await;
    until("the fast configs", || {
        of(&sent, "fast").len() == 4 && of(&sent, "other").len() == 4
    })
    .await;
    assert!(of(&sent, "slow").is_empty());
    gate.add_permits(4);
    until("the slow config", || of(&sent, "slow").len() == 4).await;
    assert_eq!(of(&sent, "slow"), events("t1"));
    assert_eq!(of(&sent, "other"), events("t2"));
}

/// A config deleted while one of its events is in flight gets nothing
/// after that event; the task's other config goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_config_stops() {
    let sent = Arc::default();
    let gate = Arc::new(Semaphore::new(1));
    let deliver = Recorder {
        gated: Some(("p".into(), gate.clone())),
        ..Recorder::on("h", &sent)
    };
    let outbox = Outbox::builder(MemoryTaskLog::new(), deliver)
        .build()
        .unwrap();
    let log = outbox.store().records().clone();
    let records = vec![
        Record::created("t1", "c"),
        config("p"),
        config("q"),
        state(TaskState::Working),
    ];
    log.append(AppendRequest::create("public", "t1", records))
        .await
        .unwrap();
    until("the first events", || {
        of(&sent, "q").len() == 2 && of(&sent, "p").len() == 1
    })
    .await;
    assert_eq!(of(&sent, "p"), ["t1:task"], "p waits at its gate");
    let deleted = Record::PushConfigDeleted { id: "p".into() };
    log.append(AppendRequest::new(
        "public",
        "t1",
        4,
        1,
        vec![deleted, artifact("a1")],
    ))
    .await
    .unwrap();
    gate.add_permits(10);
    until("q's artifact", || of(&sent, "q").len() == 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(of(&sent, "p"), ["t1:task", "t1:TASK_STATE_WORKING"]);
    assert!(
        outbox
            .store()
            .deliveries()
            .delivery_cursors("public", "t1")
            .await
            .unwrap()
            .iter()
            .all(|c| c.config_id == "q")
    );
}

/// Commits that did not go through the outbox's log (another process, a
/// crash before the trigger) are found by the sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_finds_what_no_commit_triggered() {
    let sent = Arc::default();
    let log = MemoryTaskLog::new();
    run_task(&log, "t1", &["p"]).await;
    let outbox = Outbox::builder(log.clone(), Recorder::on("h", &sent))
        .sweep_every(Duration::from_millis(50))
        .build()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(of(&sent, "p").is_empty(), "nothing triggered a delivery");
    let _sweeper = outbox.start();
    until("the sweep", || of(&sent, "p").len() == 4).await;
    assert_eq!(of(&sent, "p"), events("t1"));
    // Later commits without a trigger: the periodic sweep again.
    log.append(AppendRequest::create(
        "public",
        "t2",
        vec![Record::created("t2", "c"), config("q")],
    ))
    .await
    .unwrap();
    until("the next sweep", || of(&sent, "q") == ["t2:task"]).await;
}

/// A process that dies mid-delivery (here: its runtime is shut down while
/// a webhook call hangs) leaves the cursor at the last outcome: a new outbox
/// on the same SQLite file resumes there — the events before it are not
/// delivered again, the one in flight and the rest are.
#[cfg(feature = "sqlite")]
#[test]
fn a_restart_resumes_after_the_cursor() {
    use a2a_tower::log::SqliteTaskLog;

    let dir = std::env::temp_dir().join(format!("a2a-outbox-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tasks.db");
    let first: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let deliver = Recorder {
            hang_at: Some(3),
            ..Recorder::on("before", &first)
        };
        let outbox = Outbox::builder(SqliteTaskLog::open(&path).unwrap(), deliver)
            .host_id("h")
            .build()
            .unwrap();
        run_task(&**outbox.store().records(), "t1", &["p"]).await;
        until("the third event", || first.lock().unwrap().len() == 3).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    });
    rt.shutdown_timeout(GUARD);
    assert_eq!(of(&first, "p"), events("t1")[..3]);

    let second: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let log = SqliteTaskLog::open(&path).unwrap();
        let outbox = Outbox::builder(log.clone(), Recorder::on("after", &second))
            .host_id("h")
            .build()
            .unwrap();
        assert_eq!(outbox.sweep().await.unwrap(), 1);
        until("the rest", || second.lock().unwrap().len() == 2).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(of(&second, "p"), events("t1")[2..]);
        assert!(
            log.delivery_cursors("public", "t1")
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(outbox.sweep().await.unwrap(), 0);
    });
    drop(rt);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two hosts on one database, both sweeping, each committing half of the
/// tasks through its own outbox: every event is delivered exactly once, in
/// order per config.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_deliver_each_event_exactly_once() {
    use support::postgres::{connect, with_schema};

    with_schema(|schema| async move {
        let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
        let outbox = |host: &'static str, log| {
            Outbox::builder(log, Recorder::on(host, &sent))
                .host_id(host)
                .sweep_every(Duration::from_millis(30))
                .build()
                .unwrap()
        };
        let a = outbox("a", connect(&schema).await);
        let b = outbox("b", connect(&schema).await);
        let (_sa, _sb) = (a.start(), b.start());
        let tasks: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
        let runs = tasks.iter().enumerate().map(|(i, t)| {
            let (mine, other) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
            let (log, other) = (mine.store().records().clone(), other.clone());
            let (t, p) = (t.clone(), format!("{t}-p"));
            async move {
                run_task(&log, &t, &[p.as_str()]).await;
                // Both hosts race for the task.
                other.notify("public", &t);
            }
        });
        futures_util::future::join_all(runs).await;
        until("every event", || {
            sent.lock().unwrap().len() == tasks.len() * 4
        })
        .await;
        // Sweeps go on: nothing more may arrive.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(sent.lock().unwrap().len(), tasks.len() * 4);
        for t in &tasks {
            assert_eq!(of(&sent, &format!("{t}-p")), events(t), "{t}");
        }
        let hosts: std::collections::HashSet<String> = sent
            .lock()
            .unwrap()
            .iter()
            .map(|(h, _, _)| h.clone())
            .collect();
        assert!(!hosts.is_empty());
    })
    .await;
}

/// A host that died holding a task's lease: another host delivers nothing
/// of the task until the lease expired, then everything.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_hosts_lease_is_taken_over_once_expired() {
    use support::postgres::{connect, with_schema};

    with_schema(|schema| async move {
        let dead = connect(&schema).await;
        run_task(&dead, "t1", &["p"]).await;
        let lease = Duration::from_millis(800);
        assert!(
            dead.claim_deliveries("public", "t1", "dead", lease)
                .await
                .unwrap()
        );
        let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
        let alive = Outbox::builder(connect(&schema).await, Recorder::on("alive", &sent))
            .host_id("alive")
            .sweep_every(Duration::from_millis(30))
            .build()
            .unwrap();
        let _sweeper = alive.start();
        tokio::time::sleep(lease / 2).await;
        assert!(sent.lock().unwrap().is_empty(), "the lease is still held");
        until("the takeover", || of(&sent, "p").len() == 4).await;
        assert_eq!(of(&sent, "p"), events("t1"));
        // The dead host, back, can no longer move the cursor.
        let stale = a2a_tower::log::Advance {
            authority: "public".into(),
            task_id: "t1".into(),
            config_id: "p".into(),
            holder: "dead".into(),
            from: 0,
            to: 1,
        };
        assert!(!dead.advance_delivery(&stale).await.unwrap());
    })
    .await;
}
