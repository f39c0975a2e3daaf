//! Task-log benches: append, snapshot, projection replay, and the resident
//! memory per stored (completed, compacted) echo task.
//!
//! Run with `cargo bench --bench log`.

use std::hint::black_box;
use std::sync::Arc;

use a2a_tower::log::{AppendRequest, MemoryTaskLog, Projection, Record, TaskBackend, TaskLog};
use a2a_tower::types::{Artifact, Message, Part, TaskState, TaskStatus};
use criterion::{BatchSize, Criterion, criterion_group};
use futures_util::FutureExt as _;

fn echo_records(id: &str, ctx: &str, i: usize) -> (Vec<Record>, Vec<Record>) {
    let mut m = Message::user(uuid::Uuid::new_v4().to_string(), format!("hello {i}"));
    m.task_id = id.into();
    m.context_id = ctx.into();
    let first = vec![
        Record::created(id, ctx),
        Record::MessageAdmitted { message: m },
    ];
    let rest = vec![
        Record::status(TaskStatus::new(TaskState::Working)),
        Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: uuid::Uuid::new_v4().to_string(),
                parts: vec![Part::text(format!("hello {i}"))],
                ..Artifact::default()
            },
            append: false,
            last_chunk: true,
        },
        Record::status(TaskStatus::new(TaskState::Completed)),
    ];
    (first, rest)
}

/// Creates and completes one echo task (two appends).
fn echo_task(log: &MemoryTaskLog, i: usize) {
    let id = uuid::Uuid::new_v4().to_string();
    let ctx = uuid::Uuid::new_v4().to_string();
    let (first, rest) = echo_records(&id, &ctx, i);
    let seq = log
        .append(AppendRequest::create("public", &id, first))
        .now_or_never()
        .expect("memory log is synchronous")
        .expect("create")
        .seq;
    log.append(AppendRequest::new("public", &id, seq, 1, rest))
        .now_or_never()
        .expect("memory log is synchronous")
        .expect("complete");
}

fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Resident bytes per stored completed echo task (Linux; RSS delta).
fn memory_per_task() {
    const N: usize = 200_000;
    let log = MemoryTaskLog::builder()
        .max_tasks(N + 1)
        .max_bytes(usize::MAX / 2)
        .build()
        .expect("config");
    let before = rss_bytes();
    for i in 0..N {
        echo_task(&log, i);
    }
    let after = rss_bytes();
    println!(
        "memory per completed echo task: {} bytes resident (RSS delta over {N} tasks), {} bytes estimated by the log",
        (after.saturating_sub(before)) / N,
        log.bytes() / N
    );
    let task = log
        .snapshot("public", "missing")
        .now_or_never()
        .and_then(Result::ok);
    black_box(task);
}

fn benches(c: &mut Criterion) {
    let log = MemoryTaskLog::builder()
        .max_tasks(10_000_000)
        .max_bytes(usize::MAX / 2)
        .build()
        .expect("config");
    let mut i = 0;
    c.bench_function("log/echo_task_create_and_complete", |b| {
        b.iter(|| {
            i += 1;
            echo_task(&log, i);
        });
    });

    // The steady state of a server on the default log: the log full at its
    // default bound (100 000 tasks), so each new task evicts the oldest.
    let full = MemoryTaskLog::new();
    let bound = 100_000;
    for n in 0..bound {
        echo_task(&full, n);
    }
    c.bench_function("log/echo_task_at_the_default_bound", |b| {
        b.iter(|| {
            i += 1;
            echo_task(&full, i);
        });
    });

    // One status append to a live task (a fresh task every 1000 appends).
    let live = MemoryTaskLog::builder()
        .max_bytes(usize::MAX / 2)
        .max_tasks(10_000_000)
        .build()
        .expect("config");
    let mut task = String::new();
    let mut seq = 0;
    c.bench_function("log/append_status", |b| {
        b.iter(|| {
            if seq == 0 || seq > 1000 {
                task = uuid::Uuid::new_v4().to_string();
                let (first, _) = echo_records(&task, "c", 0);
                seq = live
                    .append(AppendRequest::create("a", &task, first))
                    .now_or_never()
                    .unwrap()
                    .unwrap()
                    .seq;
            }
            let r = AppendRequest::new(
                "a",
                &task,
                seq,
                1,
                vec![Record::status(TaskStatus::new(TaskState::Working))],
            );
            seq = live.append(r).now_or_never().unwrap().unwrap().seq;
        });
    });

    let shared: Arc<dyn TaskBackend> = Arc::new(log.clone());
    let id = uuid::Uuid::new_v4().to_string();
    let (first, rest) = echo_records(&id, "c", 1);
    shared
        .append(AppendRequest::create("public", &id, first))
        .now_or_never()
        .unwrap()
        .unwrap();
    shared
        .append(AppendRequest::new("public", &id, 2, 1, rest))
        .now_or_never()
        .unwrap()
        .unwrap();
    c.bench_function("log/snapshot_shared", |b| {
        b.iter(|| {
            black_box(
                shared
                    .snapshot("public", &id)
                    .now_or_never()
                    .unwrap()
                    .unwrap(),
            )
        });
    });

    c.bench_function("log/project_100_records", |b| {
        b.iter_batched(
            || {
                let mut records = vec![Record::created("t", "c")];
                for i in 0..98 {
                    records.push(Record::ArtifactChunk {
                        artifact: Artifact {
                            artifact_id: "a".into(),
                            parts: vec![Part::text(format!("chunk {i}"))],
                            ..Artifact::default()
                        },
                        append: i > 0,
                        last_chunk: false,
                    });
                }
                records.push(Record::status(TaskStatus::new(TaskState::Completed)));
                records
            },
            |records| black_box(Projection::replay(records.iter()).unwrap()),
            BatchSize::SmallInput,
        );
    });
}

criterion_group!(log_benches, benches);

fn main() {
    memory_per_task();
    log_benches();
    Criterion::default().configure_from_args().final_summary();
}
