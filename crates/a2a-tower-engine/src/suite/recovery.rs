//! Restart recovery and fencing through the engine, on any task log: the
//! "crashed" host's engine (`log_a`) keeps running while restarted hosts of
//! the same id recover over `log_b` (the same `Arc` for the memory log, a
//! second handle or connection on the same file or schema for the durable
//! ones). The built-in logs run it in the repository's
//! `tests/logs/log_{memory,sqlite,postgres}.rs`.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::{EmitError, Execution, RESTARTED_MESSAGE, TaskLayer, TaskService};
use crate::log::{AppendRequest, Record, TaskBackend, TaskLog};
use crate::types::{
    AgentCard, Artifact, GetTaskRequest, Message, Part, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus,
};
use crate::{A2aRequest, A2aResponse, BoxError, EventStream, Operation};
use futures_util::StreamExt as _;
use tokio::sync::{mpsc, watch};
use tower::util::BoxCloneSyncService;
use tower::{Layer, ServiceExt};

type Svc = TaskService<BoxCloneSyncService<Execution, (), BoxError>>;

const GUARD: Duration = Duration::from_secs(10);

/// What a held executor saw when it emitted after the gate opened.
#[derive(Debug)]
struct Report {
    task_id: String,
    emitted: Result<(), EmitError>,
    cancelled: bool,
}

struct Harness {
    started: mpsc::UnboundedReceiver<String>,
    reports: mpsc::UnboundedReceiver<Report>,
    gate: watch::Sender<bool>,
    started_tx: mpsc::UnboundedSender<String>,
    reports_tx: mpsc::UnboundedSender<Report>,
}

impl Harness {
    fn new() -> Self {
        let (started_tx, started) = mpsc::unbounded_channel();
        let (reports_tx, reports) = mpsc::unbounded_channel();
        Self {
            started,
            reports,
            gate: watch::channel(false).0,
            started_tx,
            reports_tx,
        }
    }

    /// An engine of `host` over `log`. Its executor answers "ask" with
    /// INPUT_REQUIRED; any other text emits WORKING, reports the task as
    /// started, waits for the gate, then emits an artifact and reports how
    /// that went.
    fn engine(&self, host: &str, log: Arc<dyn TaskBackend>) -> Svc {
        let (started, reports, gate) = (
            self.started_tx.clone(),
            self.reports_tx.clone(),
            self.gate.subscribe(),
        );
        let inner = BoxCloneSyncService::new(tower::service_fn(move |ex: Execution| {
            let (started, reports, mut gate) = (started.clone(), reports.clone(), gate.clone());
            async move {
                if ex.message.text() == "ask" {
                    ex.emit.input_required("more?").await?;
                    return Ok::<(), BoxError>(());
                }
                ex.emit.working().await?;
                let _ = started.send(ex.emit.task_id().to_owned());
                let _ = gate.wait_for(|open| *open).await;
                let artifact = Artifact {
                    artifact_id: "out".into(),
                    parts: vec![Part::text("late")],
                    ..Artifact::default()
                };
                let emitted = ex.emit.artifact(artifact, false, true).await;
                let _ = reports.send(Report {
                    task_id: ex.emit.task_id().to_owned(),
                    emitted,
                    cancelled: ex.emit.is_cancelled(),
                });
                Ok(())
            }
        }));
        TaskLayer::new(card(), log)
            .unwrap()
            .host_id(host)
            .unwrap()
            .layer(inner)
    }

    async fn next_started(&mut self) -> String {
        tokio::time::timeout(GUARD, self.started.recv())
            .await
            .expect("an executor started")
            .unwrap()
    }

    async fn next_report(&mut self) -> Report {
        tokio::time::timeout(GUARD, self.reports.recv())
            .await
            .expect("an executor reported")
            .unwrap()
    }
}

fn card() -> AgentCard {
    AgentCard::new("Test", "test agent", "1.0.0").with_streaming(true)
}

fn request(text: &str, immediately: bool) -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user(uuid::Uuid::new_v4().to_string(), text),
        configuration: Some(SendMessageConfiguration {
            return_immediately: immediately,
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn call(svc: &Svc, op: Operation) -> A2aResponse {
    tokio::time::timeout(GUARD, svc.clone().oneshot(A2aRequest::new(op)))
        .await
        .expect("the call answered")
        .expect("the call succeeded")
}

async fn send_task(svc: &Svc, req: SendMessageRequest) -> Task {
    match call(svc, Operation::SendMessage(req)).await {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn send_stream(svc: &Svc, req: SendMessageRequest) -> EventStream {
    match call(svc, Operation::SendStreamingMessage(req)).await {
        A2aResponse::Stream(s) => s,
        other => panic!("expected a stream, got {other:?}"),
    }
}

async fn get(svc: &Svc, id: &str) -> Task {
    let op = Operation::GetTask(GetTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    match call(svc, op).await {
        A2aResponse::Task(t) => t,
        other => panic!("unexpected {other:?}"),
    }
}

fn assert_restarted(task: &Task) {
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let m = task.status.message.as_ref().expect("a status message");
    assert_eq!(m.text(), RESTARTED_MESSAGE);
    assert_eq!(m.task_id, task.id);
    assert_eq!(m.context_id, task.context_id);
}

/// Restart recovery: a restarted host closes the tasks it was running as
/// FAILED with the restart message, exactly once although two instances of
/// it recover at once; tasks waiting for input and tasks of another host stay
/// as they are. Fencing: the old host, still alive, is fenced: its executors
/// are cancelled and append nothing, no second terminal is written, its
/// blocking call answers with the task as the log has it and its stream ends.
pub async fn restart_recovery_and_fencing(
    log_a: Arc<dyn TaskBackend>,
    log_b: Arc<dyn TaskBackend>,
) {
    let mut h = Harness::new();
    let old = h.engine("h1", log_a.clone());
    let other = h.engine("h2", log_a.clone());

    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(send_task(&old, request("hold", true)).await.id);
    }
    // The engine's own future is 'static and Send: spawn it as it is.
    let blocking = tokio::spawn(old.clone().oneshot(A2aRequest::new(Operation::SendMessage(
        request("hold", false),
    ))));
    let stream = send_stream(&old, request("hold", false)).await;
    let streamed = tokio::spawn(async move { stream.collect::<Vec<_>>().await });
    let waiting = send_task(&old, request("ask", false)).await;
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    let foreign = send_task(&other, request("hold", true)).await.id;

    let mut started = Vec::new();
    for _ in 0..6 {
        started.push(h.next_started().await);
    }
    let mut held: Vec<String> = started.iter().filter(|t| **t != foreign).cloned().collect();
    held.sort();
    assert_eq!(held.len(), 5);
    assert!(mine.iter().all(|t| held.contains(t)));

    // Two instances of the restarted host h1 recover at once.
    let r1 = TaskLayer::new(card(), log_b.clone())
        .unwrap()
        .host_id("h1")
        .unwrap();
    let r2 = TaskLayer::new(card(), log_b.clone())
        .unwrap()
        .host_id("h1")
        .unwrap();
    let (a, b) = tokio::join!(r1.recover(), r2.recover());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.closed + b.closed, 5, "{a:?} {b:?}");
    let again = r1.recover().await.unwrap();
    assert_eq!(again.closed, 0);

    let fresh = h.engine("h1", log_b.clone());
    for id in &held {
        assert_restarted(&get(&fresh, id).await);
    }
    let w = get(&fresh, &waiting.id).await;
    assert_eq!(w.status.state, TaskState::InputRequired);
    assert_eq!(w.history.len(), waiting.history.len());
    assert_eq!(get(&fresh, &foreign).await.status.state, TaskState::Working);

    // The old host's executors wake up: fenced, cancelled, nothing appended.
    h.gate.send_replace(true);
    for _ in 0..6 {
        let r = h.next_report().await;
        if r.task_id == foreign {
            assert_eq!(r.emitted, Ok(()));
            assert!(!r.cancelled);
        } else {
            assert_eq!(r.emitted, Err(EmitError::Superseded), "{}", r.task_id);
            assert!(r.cancelled, "{}", r.task_id);
        }
    }
    let answered = match tokio::time::timeout(GUARD, blocking)
        .await
        .expect("the blocking call ended")
        .unwrap()
        .expect("the blocking call succeeded")
    {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    };
    assert_restarted(&answered);
    let events = tokio::time::timeout(GUARD, streamed)
        .await
        .expect("the stream ended")
        .unwrap();
    assert!(!events.is_empty());
    for e in &events {
        let state = match e.as_ref().expect("no error event") {
            StreamResponse::Task(t) => t.status.state,
            StreamResponse::StatusUpdate(u) => u.status.state,
            StreamResponse::ArtifactUpdate(_) | StreamResponse::Message(_) => {
                panic!("the fenced execution emitted {e:?}")
            }
        };
        assert!(matches!(
            state,
            TaskState::Working | TaskState::Failed | TaskState::Submitted
        ));
    }

    // Exactly one terminal record per task, written by the recovery.
    for id in &held {
        let snap = log_b.snapshot("public", id).await.unwrap();
        assert!(snap.task.artifacts.is_empty(), "{id}");
        let records = match log_b.read("public", id, 0).await {
            Ok(records) => records,
            // The memory log compacts a terminal task into its snapshot.
            Err(e) if e.kind() == crate::log::LogErrorKind::Compacted => continue,
            Err(e) => panic!("{e:?}"),
        };
        let terminals: Vec<_> = records.iter().filter(|r| r.record.is_terminal()).collect();
        assert_eq!(terminals.len(), 1, "{id}");
        assert_eq!(terminals[0].seq, snap.seq);
        assert!(
            records
                .iter()
                .all(|r| !matches!(*r.record, Record::ArtifactChunk { .. })),
            "{id}"
        );
    }
    // The other host's task completes normally (watched through the log its
    // engine writes to, which wakes on its commits).
    let mut w = log_a.watch("public", &foreign, None).await.unwrap();
    if !w.snapshot.state().is_terminal() {
        while let Some(r) = tokio::time::timeout(GUARD, w.records.next())
            .await
            .expect("the foreign task ends")
        {
            if r.unwrap().record.is_terminal() {
                break;
            }
        }
    }
    let done = get(&fresh, &foreign).await;
    assert_eq!(done.status.state, TaskState::Completed);
}

/// Fencing: a newer writer takes a running task over without ending
/// it (a higher epoch): the old execution stops on its next emission (the
/// executor is cancelled), its blocking call answers with the task as the log
/// has it, and it never writes a terminal.
pub async fn fenced_execution_stops_cleanly(
    log_a: Arc<dyn TaskBackend>,
    log_b: Arc<dyn TaskBackend>,
) {
    let mut h = Harness::new();
    let old = h.engine("h1", log_a.clone());
    // The engine's own future is 'static and Send: spawn it as it is.
    let blocking = tokio::spawn(old.clone().oneshot(A2aRequest::new(Operation::SendMessage(
        request("hold", false),
    ))));
    let id = h.next_started().await;
    let snap = log_b.snapshot("public", &id).await.unwrap();
    let takeover = AppendRequest::new(
        "public",
        id.clone(),
        snap.seq,
        snap.epoch + 1,
        vec![
            Record::ExecutionStarted { host: "h2".into() },
            Record::status(TaskStatus::new(TaskState::Working)),
        ],
    );
    let taken = log_b.append(takeover).await.unwrap();
    h.gate.send_replace(true);
    let r = h.next_report().await;
    assert_eq!(r.emitted, Err(EmitError::Superseded));
    assert!(r.cancelled);
    let answered = match tokio::time::timeout(GUARD, blocking)
        .await
        .expect("the blocking call ended")
        .unwrap()
        .expect("the blocking call succeeded")
    {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    };
    assert_eq!(answered.status.state, TaskState::Working);
    assert!(answered.artifacts.is_empty());
    // Nothing after the takeover: no artifact, no COMPLETED from the old host.
    let now = log_b.snapshot("public", &id).await.unwrap();
    assert_eq!((now.seq, now.epoch), (taken.seq, snap.epoch + 1));
    assert_eq!(now.state(), TaskState::Working);
    // The new owner's host is what recovery sees.
    let live = log_b.live_tasks(None, usize::MAX).await.unwrap();
    let mine = live.iter().find(|l| l.task_id == id).unwrap();
    assert_eq!(mine.host.as_deref(), Some("h2"));
}
