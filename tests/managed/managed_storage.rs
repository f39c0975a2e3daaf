//! Managed tasks on every task log (issue 14, rule 3 and the storage part of
//! rules 6 to 12): the whole refund flow (a step, a root wait and a child's
//! wait, exact numbers, a second service over the same store that reads,
//! retries and answers without taking a writer epoch) on memory, SQLite and
//! PostgreSQL; and durable replay after a crash on memory and SQLite: the
//! host running a run dies while it waits (its tokio runtime is dropped, so
//! the run stops wherever it is), a new host with the same id resumes it from
//! the journal, the step that ran is not run again, the waits keep their
//! question ids, and answers admitted before (or while no host ran the task)
//! are delivered again.
//!
//! The PostgreSQL test needs PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and FAILS when it is
//! unreachable; it works in its own `a2a_test_<uuid>` schema, dropped
//! afterwards.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use a2a_tower::engine::TaskLayer;
use a2a_tower::log::{MemoryTaskLog, Record, SqliteTaskLog, TaskBackend, TaskLog};
use a2a_tower::managed::JournalEntry;
use a2a_tower::types::{ListTasksRequest, Part, StreamResponse, TaskState};
use a2a_tower::{ErrorKind, managed::TERMINATION_KEY};
use serde_json::json;
use support::calls::{cancel, get, list, read_events, subscribe};
use support::managed::{
    Counter, EXACT, REFUND, answer, authority, card, count, entries, part_value, pending,
    question_ids, refund, refund_input, result, send, send_now, service_on, start, until_pending,
};
use support::server::TempDir;
use support::tasks::{collected, meta, recorded, until_terminal};

/// The result the refund flow ends with (approved, score below 50), as
/// JSON text: the amount keeps its exact text.
fn refunded(note: &str) -> String {
    format!(r#"{{"order":"A-1","refunded":{EXACT},"note":"{note}"}}"#)
}

// ------------------------------------------------------------ the whole flow

/// The refund flow over `log`, run by host `a`; host `b` (over `b_log`, the
/// same store) retries the start, reads, and answers, and never takes a
/// writer epoch. Every record is read through a watch from the first one
/// (so a memory log that packs a finished task still shows them).
async fn refund_flow(log: Arc<dyn TaskBackend>, b_log: Arc<dyn TaskBackend>) {
    let lookups = Counter::default();
    let a = service_on(log.clone(), refund(lookups.clone()), "a");
    let b = service_on(b_log.clone(), refund(lookups.clone()), "b");
    let auth = authority(REFUND);
    let input = || Part::data(refund_input("A-1", EXACT));

    let started = send(&a, start("m-1", "ctx-1", input())).await.unwrap();
    assert_eq!(started.status.state, TaskState::InputRequired);
    let root = started.id.clone();
    let child = format!("{root}/fraud-check");
    let all = recorded(&*log, &auth, &root).await;

    // A retry on the other host reconciles with the run already started.
    let retried = send(&b, start("m-1", "ctx-1", input())).await.unwrap();
    assert_eq!(retried.id, root);
    let task = until_pending(&*log, &auth, &root, 2).await;
    let ids = question_ids(&task);
    assert_eq!(
        ids.keys().cloned().collect::<Vec<_>>(),
        [
            (root.clone(), "approve".to_owned()),
            (child.clone(), "score".to_owned())
        ]
    );
    assert_eq!(
        pending(&task)[0]["question"],
        json!({"text": format!("Refund {EXACT} for A-1?")})
    );
    let on_b = until_pending(&*b_log, &auth, &root, 2).await;
    assert_eq!(question_ids(&on_b), ids);
    assert_eq!(question_ids(&get(&b, &root).await.unwrap()), ids);

    // Host b answers the child's wait; a repeat on host a admits nothing.
    let t = send(
        &b,
        answer(&task, "a-score", &child, "score", Part::text("12")),
    )
    .await
    .unwrap();
    assert_eq!(t.status.state, TaskState::InputRequired);
    let left = question_ids(&t);
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[&(root.clone(), "approve".into())],
        ids[&(root.clone(), "approve".into())]
    );
    let repeat = send(
        &a,
        answer(&task, "a-score", &child, "score", Part::text("99")),
    )
    .await
    .unwrap();
    assert_eq!(question_ids(&repeat), left);
    // An invalid approval is refused on either host.
    for svc in [&a, &b] {
        let bad = answer(&task, "a-bad", &root, "approve", Part::text("true"));
        let e = send(svc, bad).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
    }
    // Host b follows the end of the run that host a answers and finishes.
    let followed = subscribe(&b, &root).await.unwrap();
    let approve = Part::data(json!({"approved": true, "note": "ok"}));
    let done = send(&a, answer(&task, "a-ok", &root, "approve", approve))
        .await
        .unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(result(&done).to_string(), refunded("ok"));
    assert_eq!(meta(&done, TERMINATION_KEY), json!("completed"));
    assert_eq!(lookups.get(), 1, "the lookup ran once");
    let events = read_events(followed).await;
    let states: Vec<TaskState> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::Task(t) => Some(t.status.state),
            StreamResponse::StatusUpdate(u) => Some(u.status.state),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            TaskState::InputRequired,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    let artifacts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some(part_value(&a.artifact.parts[0]).to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(artifacts, [refunded("ok")]);
    // A start retried after the end (its acknowledgment lost) is the task.
    let retried = send(&b, start("m-1", "ctx-1", input())).await.unwrap();
    assert_eq!(retried.id, root);
    assert_eq!(retried.status.state, TaskState::Completed);
    assert_eq!(result(&retried).to_string(), refunded("ok"));
    // So is an answer repeated after the end, on either host.
    for svc in [&a, &b] {
        let again = answer(&task, "a-ok", &root, "approve", Part::text("{}"));
        let t = send(svc, again).await.unwrap();
        assert_eq!(t.status.state, TaskState::Completed);
        assert_eq!(result(&t).to_string(), refunded("ok"));
    }

    // Both hosts read the same finished task.
    for (svc, l) in [(&a, &log), (&b, &b_log)] {
        let got = get(svc, &root).await.unwrap();
        assert_eq!(got.status.state, TaskState::Completed);
        assert_eq!(result(&got).to_string(), refunded("ok"));
        assert_eq!(got.metadata, done.metadata);
        let listed = list(svc, ListTasksRequest::default()).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, root);
        assert_eq!(
            l.snapshot(&auth, &root).await.unwrap().epoch,
            1,
            "no epoch taken"
        );
    }
    let records = collected(all).await;
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::RunStarted { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::StepRecorded { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::WaitOpened { .. })),
        2
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::ChildStarted { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(
            e,
            JournalEntry::SignalAdmitted { .. }
        )),
        2
    );
    assert_eq!(
        entries(&records, |e| matches!(
            e,
            JournalEntry::ProcessExited { .. }
        )),
        2
    );
    assert_eq!(count(&records, |r| r.is_terminal()), 1);
    assert!(records.last().unwrap().is_terminal());
    let started_input = records.iter().find_map(|r| match JournalEntry::of(r) {
        Some(JournalEntry::RunStarted { input, .. }) => Some(input.to_string()),
        _ => None,
    });
    assert_eq!(
        started_input.unwrap(),
        format!(r#"{{"order":"A-1","amount":{EXACT}}}"#)
    );
}

// The refund flow on the memory log (default bounds: a finished task is
// packed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refund_flow_on_memory() {
    let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
    refund_flow(log.clone(), log).await;
}

// The refund flow on SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refund_flow_on_sqlite() {
    let dir = TempDir::new("managed-flow");
    let log: Arc<dyn TaskBackend> = Arc::new(SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap());
    refund_flow(log.clone(), log).await;
}

// The refund flow on PostgreSQL, hosts a and b on connections of their own.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refund_flow_on_postgres() {
    use support::postgres::{connect, with_schema};
    with_schema(|schema| async move {
        let a: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        let b: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        refund_flow(a, b).await;
    })
    .await;
}

// ------------------------------------------------------------ durable replay

/// What the host that died left: the task id and its question ids.
struct Left {
    root: String,
    ids: BTreeMap<(String, String), String>,
}

/// Host `h` starts a refund run over the log `open` gives and answers its
/// `score` wait, in a tokio runtime of its own on a thread of its own; then
/// the runtime is dropped with the run waiting for `approve` (the host dies:
/// nothing of it runs any more, and every handle it held on the log is
/// dropped).
fn die_while_waiting(
    open: impl FnOnce() -> Arc<dyn TaskBackend> + Send + 'static,
    lookups: Counter,
) -> Left {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let left = rt.block_on(async move {
            let log = open();
            let svc = service_on(log.clone(), refund(lookups), "h");
            let input = Part::data(refund_input("A-1", EXACT));
            let t = send(&svc, start("m-1", "ctx-1", input)).await.unwrap();
            let auth = authority(REFUND);
            let task = until_pending(&*log, &auth, &t.id, 2).await;
            let child = format!("{}/fraud-check", task.id);
            let t = send(
                &svc,
                answer(&task, "a-score", &child, "score", Part::text("12")),
            )
            .await
            .unwrap();
            assert_eq!(t.status.state, TaskState::InputRequired);
            assert_eq!(svc.running(), 1);
            Left {
                root: task.id.clone(),
                ids: question_ids(&task),
            }
        });
        drop(rt);
        left
    })
    .join()
    .expect("host h ran")
}

/// What happens while no host runs the task.
#[derive(Clone, Copy, PartialEq)]
enum WhileDead {
    Nothing,
    /// Another service admits the approval.
    Answer,
    /// Another service records a cancel request.
    Cancel,
}

/// The crash and the resume over the logs `open` gives (the same store each
/// time), with `meanwhile` happening while no host runs the task.
async fn resumes_without_running_a_step_again(
    open: impl Fn() -> Arc<dyn TaskBackend> + Send + Clone + 'static,
    meanwhile: WhileDead,
) {
    let lookups = Counter::default();
    let left = die_while_waiting(open.clone(), lookups.clone());
    assert_eq!(lookups.get(), 1);
    let (root, auth) = (left.root.clone(), authority(REFUND));
    let approve_id = left.ids[&(root.clone(), "approve".into())].clone();

    let log = open();
    let waiting = log.snapshot(&auth, &root).await.unwrap();
    assert_eq!(waiting.state(), TaskState::InputRequired);
    assert_eq!(question_ids(&waiting.task).len(), 1, "only approve is open");
    let task = waiting.task.clone();
    let approve = || Part::data(json!({"approved": true, "note": "ok"}));
    let other = service_on(log.clone(), refund(lookups.clone()), "other");
    // The score admitted by the dead host: repeating it admits nothing.
    let child = format!("{root}/fraud-check");
    let repeat = answer(&task, "a-score", &child, "score", Part::text("99"));
    let t = send(&other, repeat).await.unwrap();
    assert_eq!(question_ids(&t), question_ids(&task));
    match meanwhile {
        WhileDead::Nothing => {}
        WhileDead::Answer => {
            let t = send_now(&other, answer(&task, "a-ok", &root, "approve", approve()))
                .await
                .unwrap();
            assert_eq!(t.status.state, TaskState::Working, "admitted, not run");
        }
        WhileDead::Cancel => {
            let t = cancel(&other, &root).await.unwrap();
            assert_eq!(t.status.state, TaskState::InputRequired, "observed");
        }
    }
    assert_eq!(other.running(), 0);
    assert_eq!(other.recover().await.unwrap().resumed, 0, "not its host id");

    // The plain engine's start-up recovery (same host id) fails only plain
    // tasks: it leaves the managed run to the managed layer.
    let engine = TaskLayer::new(card(&["application/json"]), log.clone())
        .unwrap()
        .host_id("h")
        .unwrap();
    assert_eq!(engine.recover().await.unwrap().closed, 0);
    assert!(
        !log.snapshot(&auth, &root)
            .await
            .unwrap()
            .state()
            .is_terminal()
    );

    // The same host id comes back and resumes the run from its journal.
    let svc = service_on(log.clone(), refund(lookups.clone()), "h");
    let resumed = svc.recover().await.unwrap();
    assert_eq!((resumed.resumed, resumed.skipped), (1, 0));
    let done = if meanwhile == WhileDead::Nothing {
        let reopened = get(&svc, &root).await.unwrap();
        assert_eq!(reopened.status.state, TaskState::InputRequired);
        assert_eq!(
            question_ids(&reopened)[&(root.clone(), "approve".into())],
            approve_id,
            "the wait keeps its question id"
        );
        let t = send(&svc, answer(&task, "a-ok", &root, "approve", approve()))
            .await
            .unwrap();
        Arc::new(t)
    } else {
        until_terminal(&*log, &auth, &root).await
    };
    if meanwhile == WhileDead::Cancel {
        assert_eq!(done.status.state, TaskState::Canceled);
        assert_eq!(meta(&done, TERMINATION_KEY), json!("canceled"));
    } else {
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(result(&done).to_string(), refunded("ok"));
        assert_eq!(meta(&done, TERMINATION_KEY), json!("completed"));
    }
    assert_eq!(lookups.get(), 1, "the step did not run again");
    assert_eq!(svc.recover().await.unwrap().resumed, 0, "nothing to resume");

    let records: Vec<Record> = log
        .read(&auth, &root, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (*s.record).clone())
        .collect();
    let answers = if meanwhile == WhileDead::Cancel { 1 } else { 2 };
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::RunStarted { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::StepRecorded { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::WaitOpened { .. })),
        2
    );
    assert_eq!(
        entries(&records, |e| matches!(e, JournalEntry::ChildStarted { .. })),
        1
    );
    assert_eq!(
        entries(&records, |e| matches!(
            e,
            JournalEntry::SignalAdmitted { .. }
        )),
        answers
    );
    assert_eq!(
        count(&records, |r| matches!(r, Record::ExecutionStarted { .. })),
        2
    );
    assert_eq!(count(&records, |r| r.is_terminal()), 1);
    assert!(records.last().unwrap().is_terminal());
    let epoch = log.snapshot(&auth, &root).await.unwrap().epoch;
    assert_eq!(epoch, 2, "recovery alone took a new epoch");
}

/// A memory log that every "process" shares (it outlives the host that
/// dies) and that keeps a finished task's records.
fn shared_memory() -> impl Fn() -> Arc<dyn TaskBackend> + Send + Clone + 'static {
    let log: Arc<dyn TaskBackend> = Arc::new(
        MemoryTaskLog::builder()
            .compact_terminal(false)
            .build()
            .unwrap(),
    );
    move || log.clone()
}

/// A SQLite file each "process" opens anew (the dead host's handle is gone).
fn sqlite_file(path: PathBuf) -> impl Fn() -> Arc<dyn TaskBackend> + Send + Clone + 'static {
    move || Arc::new(SqliteTaskLog::open(&path).unwrap()) as Arc<dyn TaskBackend>
}

// Rule 3 on memory: the resumed host gets the approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_memory_resumes_a_waiting_run() {
    resumes_without_running_a_step_again(shared_memory(), WhileDead::Nothing).await;
}

// Rule 3 on memory: the approval came while no host ran the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_memory_delivers_an_answer_admitted_while_dead() {
    resumes_without_running_a_step_again(shared_memory(), WhileDead::Answer).await;
}

// Rule 3 on SQLite: the resumed host gets the approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_sqlite_resumes_a_waiting_run() {
    let dir = TempDir::new("managed-replay");
    resumes_without_running_a_step_again(sqlite_file(dir.0.join("tasks.db")), WhileDead::Nothing)
        .await;
}

// Rule 3 on SQLite: the approval came while no host ran the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_sqlite_delivers_an_answer_admitted_while_dead() {
    let dir = TempDir::new("managed-replay");
    resumes_without_running_a_step_again(sqlite_file(dir.0.join("tasks.db")), WhileDead::Answer)
        .await;
}

// Rule 3 and 11 on memory: a cancel requested while no host ran the task
// ends the resumed run CANCELED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_memory_honours_a_cancel_requested_while_dead() {
    resumes_without_running_a_step_again(shared_memory(), WhileDead::Cancel).await;
}

// Rule 3 and 11 on SQLite: a cancel requested while no host ran the task
// ends the resumed run CANCELED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_on_sqlite_honours_a_cancel_requested_while_dead() {
    let dir = TempDir::new("managed-replay");
    resumes_without_running_a_step_again(sqlite_file(dir.0.join("tasks.db")), WhileDead::Cancel)
        .await;
}
