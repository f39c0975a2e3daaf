//! The task-log conformance suite against `MemoryTaskLog`, memory-specific
//! bounds, and projection properties.

use std::collections::HashSet;
use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, Eviction, ListQuery, LogErrorKind, MemoryTaskLog, Projection, Record,
    TaskBackend, TaskLog,
};
use a2a_tower::types::{
    Artifact, Message, Part, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use a2a_tower_engine::suite::{push as push_suite, recovery as recovery_suite};
use a2a_tower_log::log_suite;
use futures_util::FutureExt as _;
use futures_util::StreamExt as _;
use proptest::prelude::*;

type Log = Arc<dyn TaskBackend>;

fn memory() -> Log {
    Arc::new(MemoryTaskLog::new())
}

async fn run<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    case(memory()).await;
}

log_suite!(run);

/// The suite again on one shard without terminal compaction.
mod one_shard {
    use super::*;

    async fn run<F, Fut>(case: F)
    where
        F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let log = MemoryTaskLog::builder()
            .shards(1)
            .compact_terminal(false)
            .build()
            .unwrap();
        case(Arc::new(log)).await;
    }

    log_suite!(run);
}

fn status(state: TaskState) -> Record {
    Record::status(TaskStatus::new(state))
}

async fn create(log: &Log, authority: &str, id: &str, context: &str) -> u64 {
    let records = vec![
        Record::created(id, context),
        Record::MessageAdmitted {
            message: Message::user(format!("m-{id}"), "hi"),
        },
    ];
    log.append(AppendRequest::create(authority, id, records))
        .await
        .expect("create")
        .seq
}

async fn finish(log: &Log, id: &str) -> a2a_tower::log::Appended {
    let r = AppendRequest::new("a", id, 2, 1, vec![status(TaskState::Completed)]);
    log.append(r).await.unwrap()
}

// Eviction: terminal tasks go first, oldest terminal first; live tasks are
// never evicted silently (Full instead).
#[tokio::test]
async fn eviction_by_count() {
    let log: Log = Arc::new(
        MemoryTaskLog::builder()
            .max_tasks(3)
            .shards(1)
            .build()
            .unwrap(),
    );
    for id in ["t1", "t2", "t3"] {
        create(&log, "a", id, "c").await;
    }
    let err = log
        .append(AppendRequest::create(
            "a",
            "t4",
            vec![Record::created("t4", "c")],
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Full);
    finish(&log, "t3").await;
    finish(&log, "t1").await;
    create(&log, "a", "t4", "c").await;
    assert!(
        log.snapshot("a", "t3").await.is_err(),
        "oldest terminal evicted"
    );
    assert!(log.snapshot("a", "t1").await.is_ok());
    assert!(log.snapshot("a", "t2").await.is_ok(), "live task kept");
}

// Eviction by bytes, with a watched terminal task skipped while watched.
#[tokio::test]
async fn eviction_by_bytes_skips_watched() {
    let mem = MemoryTaskLog::builder()
        .max_bytes(8 * 1024)
        .shards(1)
        .build()
        .unwrap();
    let log: Log = Arc::new(mem.clone());
    create(&log, "a", "watched", "c").await;
    let w = log.watch("a", "watched", Some(0)).await.unwrap();
    finish(&log, "watched").await;
    for i in 0..200 {
        let id = format!("t{i}");
        log.append(AppendRequest::create(
            "a",
            &id,
            vec![Record::created(&id, "c")],
        ))
        .await
        .unwrap();
        let end = AppendRequest::new("a", &id, 1, 1, vec![status(TaskState::Completed)]);
        log.append(end).await.unwrap();
        assert!(mem.bytes() <= 8 * 1024, "{}", mem.bytes());
    }
    assert!(
        mem.len() < 100,
        "terminal tasks were evicted to make room: {}",
        mem.len()
    );
    // Live tasks are never evicted: eventually a create is refused.
    let mut live = 0;
    loop {
        let id = format!("live{live}");
        match log
            .append(AppendRequest::create(
                "a",
                &id,
                vec![Record::created(&id, "c")],
            ))
            .await
        {
            Ok(_) => live += 1,
            Err(e) => {
                assert_eq!(e.kind(), LogErrorKind::Full);
                break;
            }
        }
        assert!(live < 1_000);
    }
    for i in 0..live {
        assert!(log.snapshot("a", &format!("live{i}")).await.is_ok());
    }
    // The watched task survived and its watcher reads every record.
    assert_eq!(w.records.count().await, 3);
    assert!(log.snapshot("a", "watched").await.is_ok());
}

#[test]
fn never_policy() {
    let log = MemoryTaskLog::builder()
        .max_tasks(1)
        .eviction(Eviction::Never)
        .build()
        .unwrap();
    let log: Log = Arc::new(log);
    create(&log, "a", "t1", "c").now_or_never().unwrap();
    finish(&log, "t1").now_or_never().unwrap();
    let err = log
        .append(AppendRequest::create(
            "a",
            "t2",
            vec![Record::created("t2", "c")],
        ))
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Full);
}

// Snapshots of a live task are shared, not deep-copied per read. A completed
// task nobody watches is packed (its records dropped, the task kept as
// JSON): each read decodes an equal task of its own.
#[tokio::test]
async fn snapshots_are_shared() {
    let log = memory();
    create(&log, "a", "t1", "c").await;
    let a = log.snapshot("a", "t1").await.unwrap();
    let b = log.snapshot("a", "t1").await.unwrap();
    assert!(Arc::ptr_eq(&a.task, &b.task));
    let done = finish(&log, "t1").await;
    let c = log.snapshot("a", "t1").await.unwrap();
    let d = log.snapshot("a", "t1").await.unwrap();
    assert_eq!(c.task, done.snapshot.task);
    assert_eq!(c.task, d.task);
    assert_eq!((c.seq, c.epoch), (done.seq, 1));
    let err = log.read("a", "t1", 0).await.unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Compacted);
}

// A packed task reads back exactly: history, artifacts, metadata, the cancel
// flag, push configs and the execution's host; appending to it is still Invalid, and a stale
// append still Conflict.
#[tokio::test]
async fn packed_task_reads_back_exactly() {
    let log = memory();
    let mut meta = serde_json::Map::new();
    meta.insert("n".into(), serde_json::json!(1.50));
    let created = log
        .append(AppendRequest::create(
            "a",
            "t1",
            vec![
                Record::Created {
                    task_id: "t1".into(),
                    context_id: "c".into(),
                    at: Timestamp::from_unix_millis(1_700_000_000_123),
                    metadata: Some(meta),
                },
                Record::MessageAdmitted {
                    message: Message::user("m1", "hi"),
                },
                Record::ExecutionStarted {
                    host: "web-1".into(),
                },
                Record::PushConfigSet {
                    config: TaskPushNotificationConfig {
                        id: "p".into(),
                        url: "https://h/".into(),
                        ..Default::default()
                    },
                },
                Record::ArtifactChunk {
                    artifact: Artifact {
                        artifact_id: "a1".into(),
                        parts: vec![Part::text("x"), Part::text("y")],
                        ..Artifact::default()
                    },
                    append: false,
                    last_chunk: true,
                },
                Record::CancelRequested {
                    at: Timestamp::from_unix_millis(1_700_000_000_124),
                },
            ],
        ))
        .await
        .unwrap();
    let live = log.snapshot("a", "t1").await.unwrap();
    let done = log
        .append(AppendRequest::new(
            "a",
            "t1",
            created.seq,
            1,
            vec![status(TaskState::Canceled)],
        ))
        .await
        .unwrap();
    let packed = log.snapshot("a", "t1").await.unwrap();
    assert_eq!(packed.projection, done.snapshot.projection);
    assert_eq!(packed.task.history, live.task.history);
    assert!(packed.projection.cancel_requested());
    assert_eq!(packed.projection.push_configs().len(), 1);
    assert_eq!(packed.projection.host(), Some("web-1"));
    let page = log
        .list(
            "a",
            &ListQuery {
                page_size: 10,
                ..ListQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 1);
    assert_eq!(page.tasks[0], packed.task);
    let late = AppendRequest::new("a", "t1", done.seq, 1, vec![status(TaskState::Working)]);
    assert_eq!(
        log.append(late).await.unwrap_err().kind(),
        LogErrorKind::Invalid
    );
    let stale = AppendRequest::new("a", "t1", 1, 1, vec![status(TaskState::Working)]);
    assert_eq!(
        log.append(stale).await.unwrap_err().kind(),
        LogErrorKind::Conflict
    );
}

// A small completed echo task is stored compactly: records dropped, the task
// packed as its JSON (~0.5 KiB) instead of the wire structs (~1.7 KiB: a
// `Part` is 192 bytes, a `Message` 224); see benches/log.rs for the
// measured resident size.
#[tokio::test]
async fn completed_echo_task_is_compact() {
    let mem = MemoryTaskLog::new();
    let log: Log = Arc::new(mem.clone());
    for i in 0..100 {
        echo_task(&log, i).await;
    }
    let per_task = mem.bytes() / 100;
    assert!(per_task <= 1024, "{per_task} bytes per task");
}

async fn echo_task(log: &Log, i: usize) {
    let id = uuid::Uuid::new_v4().to_string();
    let ctx = uuid::Uuid::new_v4().to_string();
    let mut m = Message::user(uuid::Uuid::new_v4().to_string(), format!("hello {i}"));
    m.task_id.clone_from(&id);
    m.context_id.clone_from(&ctx);
    let created = log
        .append(AppendRequest::create(
            "public",
            &id,
            vec![
                Record::created(&id, &ctx),
                Record::MessageAdmitted { message: m },
            ],
        ))
        .await
        .unwrap();
    let rest = vec![
        status(TaskState::Working),
        Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: uuid::Uuid::new_v4().to_string(),
                parts: vec![Part::text(format!("hello {i}"))],
                ..Artifact::default()
            },
            append: false,
            last_chunk: true,
        },
        status(TaskState::Completed),
    ];
    log.append(AppendRequest::new("public", &id, created.seq, 1, rest))
        .await
        .unwrap();
}

fn arb_state() -> impl Strategy<Value = TaskState> {
    (0..9i32).prop_map(|n| match n {
        0 => TaskState::Unspecified,
        1 => TaskState::Submitted,
        2 => TaskState::Working,
        3 => TaskState::Completed,
        4 => TaskState::Failed,
        5 => TaskState::Canceled,
        6 => TaskState::InputRequired,
        7 => TaskState::Rejected,
        _ => TaskState::AuthRequired,
    })
}

fn arb_record() -> impl Strategy<Value = Record> {
    let text = "[a-z]{0,6}";
    prop_oneof![
        1 => Just(Record::Created {
            task_id: "t".into(),
            context_id: "c".into(),
            at: Timestamp::from_unix_millis(1),
            metadata: None,
        }),
        3 => text.prop_map(|t| Record::MessageAdmitted { message: Message::user(format!("m{t}"), t) }),
        4 => (arb_state(), proptest::option::of(text)).prop_map(|(state, m)| Record::status(TaskStatus {
            state,
            message: m.map(|t| Message::agent("q", t)),
            timestamp: Some(Timestamp::from_unix_millis(2)),
        })),
        4 => ("[ab]?", 0..3usize, any::<bool>()).prop_map(|(id, n, append)| Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: id,
                parts: (0..n).map(|i| Part::text(i.to_string())).collect(),
                ..Artifact::default()
            },
            append,
            last_chunk: false,
        }),
        1 => text.prop_map(|t| Record::Replied { message: Message::agent("r", t), at: Timestamp::from_unix_millis(3) }),
        1 => Just(Record::CancelRequested { at: Timestamp::from_unix_millis(4) }),
        1 => "[xy]".prop_map(|id| Record::PushConfigSet { config: TaskPushNotificationConfig { id, url: "https://h/".into(), ..Default::default() } }),
        1 => "[xy]".prop_map(|id| Record::PushConfigDeleted { id }),
    ]
}

/// A projected task is valid whatever records it came from.
fn assert_valid(p: &Projection) {
    let t = p.task();
    assert_eq!(t.id, "t");
    assert_eq!(t.context_id, "c");
    assert_ne!(t.status.state, TaskState::Unspecified);
    let mut ids = HashSet::new();
    for a in &t.artifacts {
        assert!(!a.artifact_id.is_empty());
        assert!(!a.parts.is_empty());
        assert!(ids.insert(a.artifact_id.clone()), "artifact ids unique");
    }
    let mut cfg = HashSet::new();
    assert!(p.push_configs().iter().all(|c| cfg.insert(c.id.clone())));
}

proptest! {
    // Any record sequence: the records the log accepts project to a valid
    // task, and replaying the log gives the same snapshot, however the
    // records were batched.
    #[test]
    fn any_records_project_to_a_valid_task_and_replay_equal(
        records in proptest::collection::vec(arb_record(), 0..40),
        batch in 1..4usize,
    ) {
        let mem = MemoryTaskLog::builder().compact_terminal(false).build().unwrap();
        let log: Log = Arc::new(mem);
        let mut reference = Projection::default();
        let mut seq = 0;
        for chunk in records.chunks(batch) {
            let valid = reference.check(chunk).is_ok();
            let r = log.append(AppendRequest::new("a", "t", seq, 1, chunk.to_vec()))
                .now_or_never().unwrap();
            match r {
                Ok(out) => {
                    prop_assert!(valid, "accepted an invalid batch");
                    for rec in chunk { reference.apply(rec); }
                    seq = out.seq;
                    prop_assert_eq!(out.snapshot.task.as_ref(), reference.task().as_ref());
                }
                Err(e) => {
                    prop_assert!(!valid || e.kind() == LogErrorKind::Invalid, "{:?}", e);
                    prop_assert!(!valid);
                }
            }
        }
        if seq > 0 {
            let snap = log.snapshot("a", "t").now_or_never().unwrap().unwrap();
            assert_valid(&snap.projection);
            let read = log.read("a", "t", 0).now_or_never().unwrap().unwrap();
            prop_assert_eq!(read.len() as u64, seq);
            let replayed = Projection::replay(read.iter().map(|r| &*r.record)).unwrap();
            prop_assert_eq!(&replayed, &snap.projection);
            // JSON round trip of the records (what durable backends store).
            let json = serde_json::to_string(&read.iter().map(|r| &*r.record).collect::<Vec<_>>()).unwrap();
            let back: Vec<Record> = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(&Projection::replay(back.iter()).unwrap(), &snap.projection);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_recovery_and_fencing_through_the_engine() {
    let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
    recovery_suite::restart_recovery_and_fencing(log.clone(), log).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_execution_stops_cleanly() {
    let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
    recovery_suite::fenced_execution_stops_cleanly(log.clone(), log).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_rules_through_the_engine() {
    push_suite::push_config_rules(Arc::new(MemoryTaskLog::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_fold_into_a_running_execution() {
    let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
    push_suite::configs_fold_into_a_running_execution(log.clone(), log).await;
}
