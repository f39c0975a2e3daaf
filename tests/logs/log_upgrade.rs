//! Data written before feature records held their tasks opens after the
//! change: a SQLite file of schema 6 and a PostgreSQL schema of version 3,
//! both written by main at dd8faf8 (the fixtures under `tests/fixtures/`),
//! migrate on open, and every task reads, recovers and replays as before.
//! So does the same PostgreSQL data at version 5 (the version-3 fixture
//! migrated by main at c0010d8, one `records` row per record), whose rows
//! become entries of one record each.
//!
//! The fixtures hold: a plain task some host (`h1`) was running; a finished
//! task with a push config; a task waiting in its context's queue and that
//! queue's stream (72 records, so a snapshot was stored); a managed run
//! waiting for its second answer (82 records, a stored snapshot, a signal
//! that carried a message, an input with an exact `1.50`).

use std::sync::Arc;

use a2a_tower::engine::TaskLayer;
use a2a_tower::log::{FeatureRecord, LogErrorKind, Record, TaskBackend, TaskStore, stream_id};
use a2a_tower::managed::{JournalEntry, MANAGED_FEATURE};
use a2a_tower::queue::{QUEUE_FEATURE, QueueRecord, QueuedInput};
use a2a_tower::types::TaskState;

use crate::support;

/// The queue stream's id in the fixture, under the reserved authority the
/// queue kept its streams under then.
const OLD_STREAM: &str = "queue:6:public:c-q";
const OLD_QUEUE_AUTHORITY: &str = "\u{1}a2a-tower.queue";
const RUN_AUTHORITY: &str = "prog/public";

fn feature(r: &Record) -> Option<&FeatureRecord> {
    match r {
        Record::Feature(f) => Some(f),
        _ => None,
    }
}

/// What every backend must read from the upgraded fixture.
async fn assert_upgraded(log: Arc<dyn TaskBackend>) {
    // The holds the old flags meant.
    let queued = log.snapshot("public", "t-queued").await.unwrap();
    let hold = queued.projection.hold().expect("the queued task is held");
    assert_eq!(
        (hold.by.as_str(), hold.until_admitted),
        (QUEUE_FEATURE, true)
    );
    let records = log.read("public", "t-queued", 0).await.unwrap();
    let input = QueuedInput::of(&records[1].record).expect("the queued input");
    let held = |r: &Record| feature(r).and_then(|f| f.hold()).map(|h| h.by.clone());
    assert_eq!(
        held(&records[1].record).as_deref(),
        Some(QUEUE_FEATURE),
        "the record holds too"
    );
    assert!(matches!(input, QueuedInput::Message { message } if message.message_id == "m-4"));

    // The queue stream moved to its caller's authority, under the stream id
    // the queue derives for the context, and is no task any more.
    let stream = stream_id(QUEUE_FEATURE, "6:public:c-q");
    assert_eq!(
        log.read(OLD_QUEUE_AUTHORITY, OLD_STREAM, 0)
            .await
            .unwrap_err()
            .kind(),
        LogErrorKind::NotFound
    );
    assert_eq!(
        log.snapshot("public", &stream).await.unwrap_err().kind(),
        LogErrorKind::NotFound,
        "a stream is not read as a task"
    );
    let live = log.live_tasks(None, 100).await.unwrap();
    let found: Vec<_> = live.iter().filter(|t| t.stream().is_some()).collect();
    assert_eq!(found.len(), 1, "{live:?}");
    assert_eq!(
        (
            found[0].authority.as_str(),
            found[0].task_id.as_str(),
            found[0].context_id.as_str()
        ),
        ("public", stream.as_str(), "c-q")
    );
    assert_eq!(found[0].seq, 72);
    let records = log.read("public", &stream, 0).await.unwrap();
    assert_eq!(records.len(), 72);
    assert!(matches!(&*records[0].record, Record::Created { task_id, .. } if *task_id == stream));
    let queue: Vec<QueueRecord> = records
        .iter()
        .filter_map(|r| QueueRecord::of(&r.record))
        .collect();
    assert_eq!(queue.len(), 71);
    assert!(
        records[1..]
            .iter()
            .all(|r| held(&r.record).as_deref() == Some(QUEUE_FEATURE))
    );
    assert!(matches!(&queue[0], QueueRecord::Entered { task_id, .. } if task_id == "t-queued"));

    let run = log.snapshot(RUN_AUTHORITY, "m-run").await.unwrap();
    assert_eq!(run.seq, 82);
    assert_eq!(run.projection.held_by(), Some(MANAGED_FEATURE));
    assert!(run.projection.is_live(), "a waiting run is live");
    assert_eq!(run.state(), TaskState::InputRequired);
    let history: Vec<&str> = run
        .task
        .history
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(
        history,
        ["m-5", "m-6"],
        "the signal's message joined the history"
    );
    let records = log.read(RUN_AUTHORITY, "m-run", 0).await.unwrap();
    let journal: Vec<JournalEntry> = records
        .iter()
        .filter_map(|r| JournalEntry::of(&r.record))
        .collect();
    let count = |f: fn(&JournalEntry) -> bool| journal.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, JournalEntry::RunStarted { .. })), 1);
    assert_eq!(
        count(|e| matches!(e, JournalEntry::StepRecorded { .. })),
        70
    );
    assert_eq!(count(|e| matches!(e, JournalEntry::WaitOpened { .. })), 2);
    assert_eq!(
        count(|e| matches!(e, JournalEntry::SignalAdmitted { .. })),
        1
    );
    assert_eq!(count(|e| matches!(e, JournalEntry::ChildStarted { .. })), 1);
    assert_eq!(
        count(|e| matches!(e, JournalEntry::ProcessExited { .. })),
        1
    );
    let start = records
        .iter()
        .find(|r| {
            matches!(
                JournalEntry::of(&r.record),
                Some(JournalEntry::RunStarted { .. })
            )
        })
        .unwrap();
    assert_eq!(held(&start.record).as_deref(), Some(MANAGED_FEATURE));
    let Some(JournalEntry::RunStarted { input, .. }) = journal.first() else {
        panic!("{journal:?}")
    };
    assert_eq!(
        input.to_string(),
        r#"{"n":1.50}"#,
        "numbers keep their text"
    );
    let signal = records
        .iter()
        .filter_map(|r| feature(&r.record))
        .find(|f| f.name() == "signalAdmitted")
        .unwrap();
    assert_eq!(signal.message().unwrap().message_id, "m-6");

    let done = log.snapshot("public", "t-done").await.unwrap();
    assert_eq!(done.state(), TaskState::Completed);
    assert_eq!(done.projection.push_configs().len(), 1);
    assert_eq!(done.projection.hold(), None);

    // The engine's recovery of h1 closes its plain task only: the run, the
    // queued task and the stream are held by their features.
    let store = TaskStore::from(log.clone());
    let tasks = TaskLayer::new(support::engine::card(), store)
        .unwrap()
        .host_id("h1")
        .unwrap();
    let recovered = tasks.recover().await.unwrap();
    assert_eq!((recovered.closed, recovered.skipped), (1, 0));
    let live = log.snapshot("public", "t-live").await.unwrap();
    assert_eq!(live.state(), TaskState::Failed);
    assert_eq!(
        log.snapshot("public", "t-queued").await.unwrap().state(),
        TaskState::Submitted
    );
    assert_eq!(log.snapshot(RUN_AUTHORITY, "m-run").await.unwrap().seq, 82);
    let stream = stream_id(QUEUE_FEATURE, "6:public:c-q");
    assert_eq!(log.read("public", &stream, 0).await.unwrap().len(), 72);
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_file_of_schema_6_opens_and_reads_as_before() {
    let dir = std::env::temp_dir().join(format!("a2a-upgrade-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tasks.db");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sqlite-schema6.db"
    );
    std::fs::copy(fixture, &path).unwrap();
    {
        let log = a2a_tower::log::SqliteTaskLog::open(&path).unwrap();
        assert_eq!(a2a_tower::log::SqliteTaskLog::SCHEMA_VERSION, 8);
        assert_upgraded(Arc::new(log)).await;
    }
    // Opened again: migrated once, the recovery's commit is there.
    let log = a2a_tower::log::SqliteTaskLog::open(&path).unwrap();
    let live = a2a_tower::log::TaskLog::snapshot(&log, "public", "t-live")
        .await
        .unwrap();
    assert_eq!(live.state(), TaskState::Failed);
    let run = a2a_tower::log::TaskLog::snapshot(&log, RUN_AUTHORITY, "m-run")
        .await
        .unwrap();
    assert_eq!(run.projection.held_by(), Some(MANAGED_FEATURE));
    drop(log);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Loads a fixture dump into `schema`; a client on the test database.
#[cfg(feature = "postgres")]
async fn load(schema: &str, dump: &str) -> tokio_postgres::Client {
    use support::postgres::url;
    let (client, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} is required for this test: {e}", url()));
    tokio::spawn(conn);
    client
        .batch_execute(&dump.replace("{schema}", schema))
        .await
        .expect("load the fixture");
    client
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_schema_of_version_3_opens_and_reads_as_before() {
    use support::postgres::{connect, with_schema};

    with_schema(|schema| async move {
        drop(load(&schema, include_str!("../fixtures/postgres-schema3.sql")).await);
        assert_eq!(a2a_tower::log::PostgresTaskLog::SCHEMA_VERSION, 7);
        assert_upgraded(Arc::new(connect(&schema).await)).await;
        // A second host opening the schema finds it migrated.
        let again = connect(&schema).await;
        let run = a2a_tower::log::TaskLog::snapshot(&again, RUN_AUTHORITY, "m-run")
            .await
            .unwrap();
        assert_eq!(run.projection.held_by(), Some(MANAGED_FEATURE));
    })
    .await;
}

/// Version 5 to 6: every `records` row becomes an entry of one record
/// (same task, sequence number, epoch and JSON), the table goes, and every
/// read after any cursor gives the records after it, before and after new
/// appends stored as entries.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_schema_of_version_5_opens_and_reads_as_before() {
    use support::postgres::{connect, with_schema};

    with_schema(|schema| async move {
        let client = load(&schema, include_str!("../fixtures/postgres-schema5.sql")).await;
        let s = format!("\"{schema}\"");
        let rows = client
            .query(
                &format!("SELECT task_id, seq, epoch, record FROM {s}.records ORDER BY task_id, seq"),
                &[],
            )
            .await
            .unwrap();
        let before: Vec<(String, i64, i64, String)> = rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
        assert_eq!(before.len(), 4 + 5 + 2 + 72 + 82);
        let log = connect(&schema).await;
        let version: i64 = client
            .query_one(&format!("SELECT version FROM {s}.schema_version"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(version, 7);
        let rows = client
            .query(
                &format!(
                    "SELECT task_id, seq, epoch, records, first FROM {s}.entries ORDER BY task_id, seq"
                ),
                &[],
            )
            .await
            .unwrap();
        let after: Vec<(String, i64, i64, String)> = rows
            .iter()
            .map(|r| {
                assert_eq!(r.get::<_, i64>(4), r.get::<_, i64>(1), "an entry of one");
                let records: String = r.get(3);
                let one = records
                    .strip_prefix('[')
                    .and_then(|j| j.strip_suffix(']'))
                    .expect("a JSON array")
                    .to_owned();
                (r.get(0), r.get(1), r.get(2), one)
            })
            .collect();
        assert_eq!(after, before);
        let gone: bool = client
            .query_one(&format!("SELECT to_regclass('{s}.records') IS NULL"), &[])
            .await
            .unwrap()
            .get(0);
        assert!(gone, "the records table is dropped");

        let log: Arc<dyn TaskBackend> = Arc::new(log);
        assert_upgraded(log.clone()).await;
        // The recovery appended to t-live after its entries of one: every
        // cursor reads the rest, on every migrated task.
        let stream = stream_id(QUEUE_FEATURE, "6:public:c-q");
        for (authority, task) in [
            ("public", "t-live"),
            ("public", "t-done"),
            ("public", stream.as_str()),
            (RUN_AUTHORITY, "m-run"),
        ] {
            let all = log.read(authority, task, 0).await.unwrap();
            let head = all.last().unwrap().seq;
            assert_eq!(all.len() as u64, head, "{task}");
            for k in 0..=head {
                let rest = log.read(authority, task, k).await.unwrap();
                let seqs: Vec<u64> = rest.iter().map(|r| r.seq).collect();
                assert_eq!(seqs, (k + 1..=head).collect::<Vec<_>>(), "{task} after {k}");
                assert!(rest.iter().all(|r| r.head == head));
                assert!(rest.iter().zip(&all[k as usize..]).all(|(a, b)| a.record == b.record));
            }
        }
    })
    .await;
}
