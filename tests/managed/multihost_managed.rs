//! Managed tasks on two hosts sharing one PostgreSQL schema. Hosts `A` and
//! `B` are two `ManagedService`s in this process, each with its own
//! `PostgresTaskLog` connection, serving the same service name and program (a
//! refund: a counted step `lookup`, a root wait `approve` and a child
//! `fraud-check` waiting for `score`). Host A runs in a runtime of its own on
//! a dedicated thread: dropping that runtime is A's crash (its tasks stop
//! wherever they are, its connections close).
//!
//! - A run started on A is read (both questions, with A's ids), subscribed
//!   to and answered on B; A, the only writer, finishes it and B's
//!   subscription sees A's terminal event. B never takes a writer epoch: the
//!   task stays at epoch 1 and every `ExecutionStarted` names A.
//! - An answer admitted on B does not fence A: A's later commits succeed.
//! - A crash of A while both waits are open: B's `recover_host("A")` resumes
//!   the run at epoch 2, with the same question ids; answered on B, the run
//!   completes and its step ran once overall.
//! - An answer B admits while no host writes (A dead, not yet resumed) is
//!   kept for the next writer: B's recovery delivers it from the journal.
//!
//! Needs PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); a test FAILS when it is
//! unreachable. Each test works in its own `a2a_test_<uuid>` schema
//! (`support::postgres`), dropped afterwards even when the test fails.

use crate::support;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tower::log::{PostgresTaskLog, Record, Sequenced, TaskLog};
use a2a_tower::managed::{JournalEntry, ManagedService, PENDING_KEY, RESULT_ARTIFACT_ID};
use a2a_tower::types::{
    GetTaskRequest, Message, PartContent, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskState,
};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, EventStream, Operation};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use support::managed::{Counter, card, count, entries, refund};
use support::postgres::with_schema;
use tokio::runtime::Handle;
use tower::ServiceExt as _;

/// The bound of every wait in these tests.
const GUARD: Duration = Duration::from_secs(30);
/// The service name both hosts serve.
const SERVICE: &str = "refunds";
/// The log authority of every task here: the service name and the public
/// authority.
const AUTHORITY: &str = "refunds/public";
/// An amount whose exact text must survive both hosts.
const AMOUNT: &str = "12345678901234567890.123456789";

async fn connect(schema: &str) -> Arc<PostgresTaskLog> {
    let log = support::postgres::open(support::postgres::builder(schema).pool_size(4)).await;
    Arc::new(log)
}

fn managed(log: Arc<PostgresTaskLog>, host: &str, lookups: Counter) -> ManagedService {
    ManagedService::builder(card(&["application/json"]), log, refund(lookups))
        .service(SERVICE)
        .host_id(host)
        .build()
        .expect("a managed service")
}

/// One host: its service and its own log connection, and the runtime its
/// calls (and so the runs they start) run on.
struct Host {
    svc: ManagedService,
    log: Arc<PostgresTaskLog>,
    runtime: Handle,
}

impl Host {
    /// Host `id` on the test's runtime.
    async fn here(schema: &str, id: &str, lookups: Counter) -> Self {
        let log = connect(schema).await;
        Self {
            svc: managed(log.clone(), id, lookups),
            log,
            runtime: Handle::current(),
        }
    }

    async fn call(&self, op: Operation) -> Result<A2aResponse, A2aError> {
        let call = self.svc.clone().oneshot(A2aRequest::new(op));
        bounded("a call", self.runtime.spawn(call))
            .await
            .expect("the host's runtime is running")
    }

    async fn send(&self, message: Message) -> Task {
        let op = Operation::SendMessage(SendMessageRequest {
            message,
            ..Default::default()
        });
        match self.call(op).await.expect("SendMessage") {
            A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
            other => panic!("expected a task, got {other:?}"),
        }
    }

    /// Starts a refund of [`AMOUNT`] for `order` in `context` (a fresh one
    /// when empty): the blocking call returns at the first INPUT_REQUIRED.
    async fn start(&self, context: &str, message_id: &str, order: &str) -> Task {
        let input = format!(r#"{{"order": "{order}", "amount": {AMOUNT}}}"#);
        let mut m = Message::user(message_id, input);
        m.context_id = context.into();
        let task = self.send(m).await;
        assert_eq!(task.status.state, TaskState::InputRequired, "{task:?}");
        task
    }

    /// Answers the wait `(process, key)` of `task` with the JSON `answer`.
    async fn answer(&self, task: &Task, process: &str, key: &str, answer: Value) -> Task {
        let id = uuid::Uuid::new_v4().to_string();
        self.answer_as(&id, task, process, key, answer).await
    }

    /// [`answer`](Self::answer) with the message id `message_id`.
    async fn answer_as(
        &self,
        message_id: &str,
        task: &Task,
        process: &str,
        key: &str,
        answer: Value,
    ) -> Task {
        let mut m = Message::user(message_id, answer.to_string());
        m.task_id.clone_from(&task.id);
        m.context_id.clone_from(&task.context_id);
        let mut meta = a2a_tower::types::Metadata::new();
        meta.insert("scope.wait".into(), json!({"process": process, "key": key}));
        m.metadata = Some(meta);
        self.send(m).await
    }

    async fn get(&self, id: &str) -> Task {
        let op = Operation::GetTask(GetTaskRequest {
            id: id.into(),
            ..Default::default()
        });
        match self.call(op).await.expect("GetTask") {
            A2aResponse::Task(t) => t,
            other => panic!("expected a task, got {other:?}"),
        }
    }

    async fn subscribe(&self, id: &str) -> EventStream {
        let op = Operation::SubscribeToTask(SubscribeToTaskRequest {
            id: id.into(),
            ..Default::default()
        });
        match self.call(op).await.expect("SubscribeToTask") {
            A2aResponse::Stream(s) => s,
            other => panic!("expected a stream, got {other:?}"),
        }
    }

    /// GetTask until `n` questions are open.
    async fn until_pending(&self, id: &str, n: usize) -> Task {
        let deadline = Instant::now() + GUARD;
        loop {
            let task = self.get(id).await;
            if pending(&task).len() == n {
                return task;
            }
            assert!(
                Instant::now() < deadline,
                "{n} open questions within {GUARD:?}: {task:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The task's records, read through this host's log.
    async fn records(&self, id: &str) -> Vec<Sequenced> {
        self.log.read(AUTHORITY, id, 0).await.expect("read")
    }

    /// Reads the task's records until one matches `found`.
    async fn until_record(&self, id: &str, found: impl Fn(&Record) -> bool) -> Vec<Sequenced> {
        let deadline = Instant::now() + GUARD;
        loop {
            let records = self.records(id).await;
            if records.iter().any(|s| found(&s.record)) {
                return records;
            }
            assert!(Instant::now() < deadline, "a record within {GUARD:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn epoch(&self, id: &str) -> u64 {
        self.log
            .snapshot(AUTHORITY, id)
            .await
            .expect("snapshot")
            .epoch
    }
}

/// Host `A`, in a runtime of its own on a thread of its own.
struct Crashable {
    host: Host,
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Crashable {
    async fn start(schema: &str, id: &'static str, lookups: Counter) -> Self {
        let schema = schema.to_owned();
        let (made, host) = tokio::sync::oneshot::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("A's runtime");
            let log = runtime.block_on(connect(&schema));
            let host = Host {
                svc: managed(log.clone(), id, lookups),
                log,
                runtime: runtime.handle().clone(),
            };
            if made.send(host).is_err() {
                return;
            }
            // Until the test kills A (or ends).
            let _ = stopped.recv();
            // The crash: every task of A stops at its next await point, and
            // its connections (pool and LISTEN) close with their drivers.
            drop(runtime);
        });
        let host = bounded("A's start", host)
            .await
            .expect("host A started (is PostgreSQL up?)");
        Self { host, stop, thread }
    }

    /// Drops A's runtime and waits until it is gone.
    async fn kill(self) {
        let Self { host, stop, thread } = self;
        let _ = stop.send(());
        bounded(
            "A's crash",
            tokio::task::spawn_blocking(move || thread.join()),
        )
        .await
        .expect("join")
        .expect("A's thread");
        // What is left of A (its service and log handles) is inert now.
        drop(host);
    }
}

async fn bounded<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(GUARD, f)
        .await
        .unwrap_or_else(|_| panic!("{what} within {GUARD:?}"))
}

/// The open questions: `(id, owner, key)`.
fn pending(task: &Task) -> Vec<(String, String, String)> {
    let entries = task
        .metadata
        .as_ref()
        .and_then(|m| m.get(PENDING_KEY))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    entries
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("id"), s("owner"), s("key"))
        })
        .collect()
}

/// The owner of the wait `key` among the task's open questions.
fn owner(task: &Task, key: &str) -> String {
    pending(task)
        .into_iter()
        .find(|(_, _, k)| k == key)
        .unwrap_or_else(|| panic!("{key} is open: {task:?}"))
        .1
}

/// The hosts that started executions of the task, in order.
fn executions(records: &[Sequenced]) -> Vec<String> {
    records
        .iter()
        .filter_map(|s| match &*s.record {
            Record::ExecutionStarted { host } => Some(host.to_string()),
            _ => None,
        })
        .collect()
}

/// The result artifact's JSON text.
fn result(task: &Task) -> String {
    let artifact = task
        .artifacts
        .iter()
        .find(|a| a.artifact_id == RESULT_ARTIFACT_ID)
        .unwrap_or_else(|| panic!("a result: {task:?}"));
    match &artifact.parts[..] {
        [part] => match &part.content {
            PartContent::Data(v) => v.to_string(),
            other => panic!("a data part, got {other:?}"),
        },
        parts => panic!("one part, got {parts:?}"),
    }
}

/// The events of a stream that ended without an error.
fn events(items: Vec<Result<StreamResponse, A2aError>>) -> Vec<StreamResponse> {
    items
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("no stream error")
}

/// What each event is: `task`, a status (`working`, `input-required`,
/// `completed`, ...) or an artifact's id.
fn kinds(events: &[StreamResponse]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(_) => "task".to_owned(),
            StreamResponse::StatusUpdate(u) => match u.status.state {
                TaskState::Working => "working".to_owned(),
                TaskState::InputRequired => "input-required".to_owned(),
                TaskState::Completed => "completed".to_owned(),
                other => format!("{other:?}"),
            },
            StreamResponse::ArtifactUpdate(u) => u.artifact.artifact_id.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

fn refunded(order: &str, note: &str) -> String {
    format!(r#"{{"order":"{order}","refunded":{AMOUNT},"note":"{note}"}}"#)
}

fn approve(note: &str) -> Value {
    json!({"approved": true, "note": note})
}

async fn read_answer_and_subscribe_on_b(schema: &str) {
    let lookups = Counter::default();
    let a = Crashable::start(schema, "A", lookups.clone()).await;
    let b = Host::here(schema, "B", lookups.clone()).await;

    let started = a.host.start("", "m-1", "o-1").await;
    let id = started.id.clone();
    let on_a = a.host.until_pending(&id, 2).await;

    // B reads the run from the shared log: both questions, with A's ids.
    let on_b = b.until_pending(&id, 2).await;
    assert_eq!(on_b.status.state, TaskState::InputRequired);
    assert_eq!(pending(&on_b), pending(&on_a));
    assert_eq!(on_b.metadata, on_a.metadata);

    // B subscribes while both questions are open. A stream closes at an
    // interrupted state as well as a terminal one: this one ends with the
    // INPUT_REQUIRED that B's own answer to `score` commits.
    let first = b.subscribe(&id).await;
    let first = tokio::spawn(bounded(
        "B's first subscription to end",
        first.collect::<Vec<_>>(),
    ));
    let score_owner = owner(&on_b, "score");
    let approve_owner = owner(&on_b, "approve");
    let after_score = b.answer(&on_b, &score_owner, "score", json!(10)).await;
    assert_eq!(after_score.status.state, TaskState::InputRequired);
    let first = events(first.await.expect("the subscription task"));
    assert_eq!(kinds(&first), ["task", "input-required"], "{first:?}");

    // B subscribes again, with only `approve` open, and answers it. The
    // blocking answer returns once A (the writer) has committed the end,
    // which B reads through its watch of the shared log.
    let second = b.subscribe(&id).await;
    let second = tokio::spawn(bounded(
        "B's second subscription to end",
        second.collect::<Vec<_>>(),
    ));
    let done = b
        .answer(&on_b, &approve_owner, "approve", approve("fine"))
        .await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    assert_eq!(result(&done), refunded("o-1", "fine"));
    assert_eq!(lookups.get(), 1);

    // B's stream: the task, B's answer (WORKING), then what A committed: the
    // result and the terminal COMPLETED.
    let second = events(second.await.expect("the subscription task"));
    assert_eq!(
        kinds(&second),
        ["task", "working", "result", "completed"],
        "{second:?}"
    );
    match second.last() {
        Some(StreamResponse::StatusUpdate(u)) => assert_eq!(u.task_id, id),
        other => panic!("A's terminal event last, got {other:?}"),
    }

    // B never took a writer epoch: only A ever executed the run.
    let records = b.records(&id).await;
    assert_eq!(b.epoch(&id).await, 1);
    assert_eq!(executions(&records), ["A"]);
    assert_eq!(b.svc.running(), 0);
    let on_a = a.host.get(&id).await;
    assert_eq!(result(&on_a), refunded("o-1", "fine"));
    a.kill().await;
}

async fn answer_on_b_does_not_fence_a(schema: &str) {
    let lookups = Counter::default();
    let a = Crashable::start(schema, "A", lookups.clone()).await;
    let b = Host::here(schema, "B", lookups.clone()).await;

    let started = a.host.start("", "m-1", "o-2").await;
    let id = started.id.clone();
    let task = b.until_pending(&id, 2).await;
    // A retry of the start on B reconciles with A's run: B starts nothing.
    let retried = b.start(&started.context_id, "m-1", "o-2").await;
    assert_eq!(retried.id, id);
    assert_eq!(b.svc.running(), 0);
    let score_owner = owner(&task, "score");
    let approve_owner = owner(&task, "approve");
    assert_ne!(score_owner, approve_owner, "a child's wait is its own");

    // B admits the score while A writes; A folds it in and commits the
    // child's exit after it: A was not fenced.
    b.answer(&task, &score_owner, "score", json!(49)).await;
    let exited = |r: &Record| matches!(JournalEntry::of(r), Some(JournalEntry::ProcessExited { process, .. }) if process == score_owner);
    let records = b.until_record(&id, exited).await;
    let seq = |is: &dyn Fn(&Record) -> bool| {
        records
            .iter()
            .find(|s| is(&s.record))
            .map(|s| s.seq)
            .unwrap()
    };
    let admitted = seq(
        &|r| matches!(JournalEntry::of(r), Some(JournalEntry::SignalAdmitted { key, .. }) if key == "score"),
    );
    assert!(seq(&exited) > admitted, "A committed after B's answer");
    assert_eq!(a.host.svc.running(), 1, "A still runs the task");
    assert_eq!(b.svc.running(), 0);

    // The other wait answered on A itself: A finishes the run at epoch 1.
    let done = a
        .host
        .answer(&task, &approve_owner, "approve", approve("ok"))
        .await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    assert_eq!(result(&done), refunded("o-2", "ok"));
    assert_eq!(b.epoch(&id).await, 1);
    assert_eq!(executions(&b.records(&id).await), ["A"]);
    assert_eq!(lookups.get(), 1);
    a.kill().await;
}

async fn crash_of_a_is_recovered_by_b(schema: &str) {
    let lookups = Counter::default();
    let a = Crashable::start(schema, "A", lookups.clone()).await;
    let b = Host::here(schema, "B", lookups.clone()).await;

    let id = a.host.start("", "m-1", "o-3").await.id;
    let before = a.host.until_pending(&id, 2).await;
    assert_eq!(lookups.get(), 1);

    // A dies with both waits open.
    a.kill().await;
    let orphan = b.get(&id).await;
    assert_eq!(orphan.status.state, TaskState::InputRequired);
    assert_eq!(b.epoch(&id).await, 1);

    // B takes the run over: epoch 2, an execution of B, the same questions.
    let resumed = b.svc.recover_host("A").await.expect("recover A's runs");
    assert_eq!((resumed.resumed, resumed.skipped), (1, 0));
    assert_eq!(b.svc.running(), 1);
    assert_eq!(b.epoch(&id).await, 2);
    assert_eq!(executions(&b.records(&id).await), ["A", "B"]);
    let after = b.until_pending(&id, 2).await;
    assert_eq!(pending(&after), pending(&before), "the same question ids");
    // Recovering again finds nothing of A left to resume.
    let again = b.svc.recover_host("A").await.expect("recover again");
    assert_eq!(again.resumed, 0);

    // Answered on B, the new writer, the run completes there.
    let after_score = b
        .answer(&after, &owner(&after, "score"), "score", json!(3))
        .await;
    assert_eq!(after_score.status.state, TaskState::InputRequired);
    let done = b
        .answer(
            &after,
            &owner(&after, "approve"),
            "approve",
            approve("late"),
        )
        .await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    assert_eq!(result(&done), refunded("o-3", "late"));

    // The step ran once overall; nothing was opened or started twice.
    assert_eq!(lookups.get(), 1);
    let records = b.records(&id).await;
    assert_eq!(executions(&records), ["A", "B"]);
    assert_eq!(b.epoch(&id).await, 2);
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
    // The run leaves B's table once its program has returned, which may be
    // just after the answer saw the committed end.
    let deadline = Instant::now() + GUARD;
    while b.svc.running() > 0 {
        assert!(Instant::now() < deadline, "B's run ends within {GUARD:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn answer_while_no_writer_is_delivered_by_recovery(schema: &str) {
    let lookups = Counter::default();
    let a = Crashable::start(schema, "A", lookups.clone()).await;
    let b = Host::here(schema, "B", lookups.clone()).await;

    let id = a.host.start("", "m-1", "o-4").await.id;
    let before = a.host.until_pending(&id, 2).await;
    a.kill().await;

    // With A dead and nobody resumed yet, B still admits an answer: it is
    // committed to the log (epoch 1) for whoever writes next. A repeat of
    // the same message reconciles with it.
    let score_owner = owner(&before, "score");
    let admitted = b
        .answer_as("score-1", &before, &score_owner, "score", json!(7))
        .await;
    assert_eq!(admitted.status.state, TaskState::InputRequired);
    let open = pending(&admitted);
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].2, "approve");
    let again = b
        .answer_as("score-1", &before, &score_owner, "score", json!(7))
        .await;
    assert_eq!(pending(&again), open);
    let signals = |r: &Record| {
        matches!(
            JournalEntry::of(r),
            Some(JournalEntry::SignalAdmitted { .. })
        )
    };
    assert_eq!(count(&b.records(&id).await, signals), 1);
    assert_eq!(b.epoch(&id).await, 1);

    // B's recovery replays the run: the child gets the admitted score from
    // the journal and exits (committed at epoch 2); `approve` stays open
    // with the id it had on A.
    let resumed = b.svc.recover_host("A").await.expect("recover A's runs");
    assert_eq!(resumed.resumed, 1);
    let exited = |r: &Record| matches!(JournalEntry::of(r), Some(JournalEntry::ProcessExited { process, .. }) if process == score_owner);
    b.until_record(&id, exited).await;
    assert_eq!(b.epoch(&id).await, 2);
    let waiting = b.get(&id).await;
    assert_eq!(pending(&waiting), open, "the same open question");

    let done = b
        .answer(
            &waiting,
            &owner(&waiting, "approve"),
            "approve",
            approve("after"),
        )
        .await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    assert_eq!(result(&done), refunded("o-4", "after"));
    assert_eq!(lookups.get(), 1);
    let records = b.records(&id).await;
    assert_eq!(executions(&records), ["A", "B"]);
    assert_eq!(count(&records, signals), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_started_on_a_is_read_subscribed_and_answered_on_b_and_finished_by_a() {
    with_schema(|schema| async move { read_answer_and_subscribe_on_b(&schema).await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_admitted_on_b_does_not_fence_the_writer_on_a() {
    with_schema(|schema| async move { answer_on_b_does_not_fence_a(&schema).await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_of_a_crashed_host_is_resumed_by_b() {
    with_schema(|schema| async move { crash_of_a_is_recovered_by_b(&schema).await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_admitted_while_no_host_writes_is_delivered_by_recovery() {
    with_schema(
        |schema| async move { answer_while_no_writer_is_delivered_by_recovery(&schema).await },
    )
    .await;
}
