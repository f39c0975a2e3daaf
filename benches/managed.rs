//! Managed tasks on a durable SQLite log (default `synchronous=FULL`, in a
//! temporary directory), through `ManagedService` with `oneshot`, no HTTP.
//!
//! `cargo bench --bench managed -- --warm-up-time 1 --measurement-time 5`
//!
//! The program `bench.ask` opens one wait (`go`, a boolean) and returns its
//! input once answered.
//!
//! - `managed/start_to_input_required`: a blocking SendMessage that starts a
//!   run, returning when the run has committed its wait (INPUT_REQUIRED).
//! - `managed/answer_to_completed`: a blocking SendMessage answering that
//!   wait, returning when the run has committed COMPLETED.
//! - `managed_throughput/starts_32`: 32 starts at once (elements: starts).
//! - `managed_throughput/runs_32`: 32 clients at once, each a start then its
//!   answer (elements: whole runs).
//!
//! Whatever is not measured (the answer after a timed start, the start
//! before a timed answer) runs between measurements, so no run is left open.

use std::hint::black_box;
use std::time::{Duration, Instant};

use a2a_tower::log::SqliteTaskLog;
use a2a_tower::managed::{EXTERNAL_WAIT_EXTENSION, ManagedService, Process, Program, Wait};
use a2a_tower::types::{
    AgentCard, AgentExtension, Message, SendMessageRequest, SendMessageResponse, Task, TaskState,
};
use a2a_tower::{A2aRequest, A2aResponse, Operation};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Concurrent clients of the throughput benches.
const CLIENTS: usize = 32;

fn program() -> Program {
    Program::new(
        "bench.ask",
        json!({"type": "object"}),
        json!({"type": "object"}),
        |p: Process, input: Value| async move {
            let go = p
                .wait(Wait::new("go").schema(json!({"type": "boolean"})))
                .await?;
            Ok(if go == json!(true) { input } else { json!({}) })
        },
    )
    .expect("program")
}

fn card() -> AgentCard {
    let mut card = AgentCard::new("Bench", "One question, then done", "1.0.0");
    card.capabilities.extensions.push(AgentExtension {
        uri: EXTERNAL_WAIT_EXTENSION.into(),
        ..Default::default()
    });
    card.default_output_modes = vec!["application/json".into()];
    card
}

async fn send(svc: &ManagedService, message: Message) -> Task {
    let req = A2aRequest::new(Operation::SendMessage(SendMessageRequest {
        message,
        ..Default::default()
    }));
    match svc.clone().oneshot(req).await.expect("SendMessage") {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    }
}

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Starts a run: returns at INPUT_REQUIRED.
async fn start(svc: &ManagedService) -> Task {
    let task = send(
        svc,
        Message::user(id(), r#"{"order": "o-1", "amount": 12.50}"#),
    )
    .await;
    assert_eq!(task.status.state, TaskState::InputRequired);
    task
}

/// Answers the run's only wait: returns at COMPLETED.
async fn answer(svc: &ManagedService, task: &Task) {
    let mut m = Message::user(id(), "true");
    m.task_id.clone_from(&task.id);
    m.context_id.clone_from(&task.context_id);
    let done = send(svc, m).await;
    assert_eq!(done.status.state, TaskState::Completed);
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("a2a-bench-managed-{}", id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = SqliteTaskLog::open(dir.join("tasks.db")).expect("open the log");
    let svc = ManagedService::builder(card(), log, program())
        .build()
        .expect("managed service");

    let mut g = c.benchmark_group("managed");
    g.bench_function("start_to_input_required", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let svc = svc.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let task = black_box(start(&svc).await);
                    timed += t.elapsed();
                    answer(&svc, &task).await;
                }
                timed
            }
        })
    });
    g.bench_function("answer_to_completed", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let svc = svc.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let task = start(&svc).await;
                    let t = Instant::now();
                    answer(&svc, &task).await;
                    timed += t.elapsed();
                }
                timed
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("managed_throughput");
    g.throughput(Throughput::Elements(CLIENTS as u64));
    g.bench_function(format!("starts_{CLIENTS}"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let svc = svc.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let tasks = futures_util::future::join_all(
                        (0..CLIENTS).map(|_| tokio::spawn(black_box(start_owned(svc.clone())))),
                    )
                    .await;
                    timed += t.elapsed();
                    let answers = tasks.into_iter().map(|task| {
                        let svc = svc.clone();
                        let task = task.expect("start");
                        tokio::spawn(async move { answer(&svc, &task).await })
                    });
                    for a in futures_util::future::join_all(answers).await {
                        a.expect("answer");
                    }
                }
                timed
            }
        })
    });
    g.bench_function(format!("runs_{CLIENTS}"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let svc = svc.clone();
            async move {
                let t = Instant::now();
                for _ in 0..iters {
                    let runs = (0..CLIENTS).map(|_| {
                        let svc = svc.clone();
                        tokio::spawn(async move {
                            let task = start(&svc).await;
                            answer(&svc, &task).await;
                        })
                    });
                    for r in futures_util::future::join_all(runs).await {
                        r.expect("run");
                    }
                }
                t.elapsed()
            }
        })
    });
    g.finish();

    assert_eq!(svc.running(), 0, "every run ended");
    drop(svc);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn start_owned(svc: ManagedService) -> Task {
    start(&svc).await
}

criterion_group!(benches, bench);
criterion_main!(benches);
