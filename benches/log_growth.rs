//! Grows the memory task log to 1M completed echo tasks and reports the
//! latency of every append: p50, p99, p99.9 and the maximum. A log behind
//! one big map stalls for the whole rehash as it grows; the sharded log
//! bounds that pause to one shard's table. For comparison the same growth
//! runs with a single shard first.
//!
//! Run with `cargo bench --bench log_growth` (optionally `-- 300000` for a
//! smaller run).

use std::time::{Duration, Instant};

use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
use a2a_tower::types::{Artifact, Message, Part, TaskState, TaskStatus};
use futures_util::FutureExt as _;

fn append(log: &MemoryTaskLog, req: AppendRequest, lat: &mut Vec<u32>) -> u64 {
    let start = Instant::now();
    let seq = log
        .append(req)
        .now_or_never()
        .expect("memory log is synchronous")
        .expect("append")
        .seq;
    lat.push(u32::try_from(start.elapsed().as_nanos()).unwrap_or(u32::MAX));
    seq
}

fn grow(shards: usize, n: usize) {
    let log = MemoryTaskLog::builder()
        .shards(shards)
        .max_tasks(n + 1)
        .max_bytes(usize::MAX / 2)
        .build()
        .expect("config");
    let mut lat = Vec::with_capacity(n * 2);
    let mut worst_step = Duration::ZERO;
    let started = Instant::now();
    for i in 0..n {
        let id = uuid::Uuid::new_v4().to_string();
        let ctx = uuid::Uuid::new_v4().to_string();
        let mut m = Message::user(uuid::Uuid::new_v4().to_string(), format!("hello {i}"));
        m.task_id.clone_from(&id);
        m.context_id.clone_from(&ctx);
        let first = vec![
            Record::created(&id, &ctx),
            Record::MessageAdmitted { message: m },
        ];
        let seq = append(&log, AppendRequest::create("public", &id, first), &mut lat);
        let rest = vec![
            Record::status(TaskStatus::new(TaskState::Working)),
            Record::ArtifactChunk {
                artifact: Artifact {
                    artifact_id: "a-1".into(),
                    parts: vec![Part::text(format!("hello {i}"))],
                    ..Artifact::default()
                },
                append: false,
                last_chunk: true,
            },
            Record::status(TaskStatus::new(TaskState::Completed)),
        ];
        append(
            &log,
            AppendRequest::new("public", &id, seq, 1, rest),
            &mut lat,
        );
        if (i + 1) % (n / 10).max(1) == 0 {
            let max = Duration::from_nanos(u64::from(lat.iter().copied().max().unwrap_or(0)));
            worst_step = worst_step.max(max);
            println!(
                "  shards={shards:>3} tasks={:>8} max append so far {:?}",
                i + 1,
                max
            );
        }
    }
    let total = started.elapsed();
    lat.sort_unstable();
    let pct = |p: f64| {
        let idx = ((lat.len() as f64 - 1.0) * p) as usize;
        Duration::from_nanos(u64::from(lat[idx]))
    };
    println!(
        "shards={shards:>3}: {n} tasks ({} appends) in {total:?}; p50 {:?} p99 {:?} p99.9 {:?} max {:?}; {} tasks held",
        lat.len(),
        pct(0.5),
        pct(0.99),
        pct(0.999),
        pct(1.0),
        log.len()
    );
}

fn main() {
    let n = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(1_000_000);
    println!("growing the memory task log to {n} completed echo tasks");
    // The one-shard run goes first so that the sharded run does not get
    // memory the allocator already faulted in (page faults on fresh heap
    // are charged to whichever run comes first).
    grow(1, n);
    grow(1024, n);
}
