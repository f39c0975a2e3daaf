//! An artifact chunk appended to a long artifact costs what one appended to
//! a short artifact costs, counted in bytes allocated (by every thread,
//! through a counting global allocator), not in time: through the memory,
//! SQLite and PostgreSQL logs directly, and through the engine streaming a text
//! agent's chunks to a subscriber (issue 18, item 3). Before the fix, every
//! append deep-copied the whole task (a committed head or snapshot still
//! shared it), SQLite stored the whole task again every 64 records and
//! PostgreSQL on every append, so the bytes per chunk grew with the
//! artifact.

#![cfg(feature = "sqlite")]

mod support;

use std::alloc::System;

use a2a_tower::engine::{Agent, AgentExecutor, AgentInput, TaskLayer};
use a2a_tower::log::{
    AppendRequest, MemoryTaskLog, Record, SqliteTaskLog, Synchronous, TaskBackend, TaskLog,
};
use a2a_tower::types::{Artifact, Part, StreamResponse};
use a2a_tower::{BoxError, Operation};
use futures_core::Stream;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use support::engine::{card, collect, engine_with, send_req, stream, user};
use support::server::TempDir;
use tokio::sync::Mutex;
use tower::util::BoxCloneSyncService;

/// Counts every allocation, of every thread.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The counter counts every thread: one measurement at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// The bytes allocated since `region` began, growth by reallocation included.
fn allocated(region: &Region<'_, System>) -> u64 {
    let s = region.change();
    (s.bytes_allocated + usize::try_from(s.bytes_reallocated).unwrap_or(0)) as u64
}

/// The artifact chunks of one append.
const BATCH: u64 = 64;
/// Chunks before the measured appends: a short artifact, and a 16 times
/// longer one.
const SHORT: u64 = 1024;
const LONG: u64 = 16 * SHORT;
/// The measured chunks (whole batches).
const MEASURED: u64 = 4096;

fn chunk(i: u64) -> Record {
    Record::ArtifactChunk {
        artifact: Artifact {
            artifact_id: "a-1".into(),
            parts: vec![Part::text(format!("w{} ", i % 1000))],
            ..Artifact::default()
        },
        append: i > 0,
        last_chunk: false,
    }
}

/// Bytes allocated per append of [`BATCH`] chunks to a task whose artifact
/// already has `before` chunks: `(median, mean)` over [`MEASURED`] chunks.
async fn append_cost(log: &dyn TaskBackend, task: &str, before: u64) -> (u64, u64) {
    let mut seq = log
        .append(AppendRequest::create(
            "a",
            task,
            vec![Record::created(task, "c"), chunk(0)],
        ))
        .await
        .unwrap()
        .seq;
    let mut n = 1;
    let append = |seq: u64, n: u64| {
        let records = (n..n + BATCH).map(chunk).collect();
        log.append(AppendRequest::new("a", task, seq, 1, records))
    };
    while n < before {
        seq = append(seq, n).await.unwrap().seq;
        n += BATCH;
    }
    let mut costs = Vec::new();
    for _ in 0..MEASURED / BATCH {
        let region = Region::new(GLOBAL);
        let appended = append(seq, n).await.unwrap();
        seq = appended.seq;
        drop(appended);
        costs.push(allocated(&region));
        n += BATCH;
    }
    let snapshot = log.snapshot("a", task).await.unwrap();
    // One text part: each appended chunk's text continues it.
    let text: String = (0..n).map(|i| format!("w{} ", i % 1000)).collect();
    assert_eq!(snapshot.task.artifacts[0].parts, [Part::text(text)]);
    costs.sort_unstable();
    let mean = costs.iter().sum::<u64>() / costs.len() as u64;
    (costs[costs.len() / 2], mean)
}

/// The cost per append on the long artifact is within twice that on the
/// short one (a copy of the task per append makes it about 10 times).
async fn assert_flat(log: &dyn TaskBackend) {
    let short = append_cost(log, "short", SHORT).await;
    let long = append_cost(log, "long", LONG).await;
    eprintln!("bytes per append of {BATCH} chunks (median, mean): short {short:?}, long {long:?}");
    assert!(long.0 <= 2 * short.0, "median grew: {short:?} → {long:?}");
    assert!(long.1 <= 2 * short.1, "mean grew: {short:?} → {long:?}");
}

fn sqlite(dir: &TempDir) -> SqliteTaskLog {
    // Durability does not change what is allocated; it only takes longer.
    SqliteTaskLog::builder(dir.0.join("tasks.db"))
        .synchronous(Synchronous::Normal)
        .open()
        .unwrap()
}

#[tokio::test]
async fn a_chunk_costs_the_same_on_a_long_artifact_in_memory() {
    let _serial = SERIAL.lock().await;
    assert_flat(&MemoryTaskLog::new()).await;
}

#[tokio::test]
async fn a_chunk_costs_the_same_on_a_long_artifact_in_sqlite() {
    let _serial = SERIAL.lock().await;
    let dir = TempDir::new("append-cost");
    assert_flat(&sqlite(&dir)).await;
}

/// The memory log's estimate of what it holds (what its `max_bytes` bound
/// counts) is near the heap it really holds: for a live task streaming a long
/// artifact past the log's window of records (the default one), where the
/// kept records dominate, and once the task is terminal and packed.
#[tokio::test]
async fn the_memory_logs_estimate_is_near_its_heap() {
    let _serial = SERIAL.lock().await;
    let region = Region::new(GLOBAL);
    let log = MemoryTaskLog::new();
    let mut seq = log
        .append(AppendRequest::create(
            "a",
            "t",
            vec![Record::created("t", "c"), chunk(0)],
        ))
        .await
        .unwrap()
        .seq;
    for i in 1..200_000 {
        seq = log
            .append(AppendRequest::new("a", "t", seq, 1, vec![chunk(i)]))
            .await
            .unwrap()
            .seq;
    }
    // Growth by reallocation is already in `bytes_allocated` (and shrinking
    // in `bytes_deallocated`).
    let live = |region: &Region<'_, System>| {
        let s = region.change();
        s.bytes_allocated.saturating_sub(s.bytes_deallocated) as f64
    };
    let (heap, estimate) = (live(&region), log.bytes() as f64);
    eprintln!("live task: heap {heap} bytes, estimate {estimate}");
    assert!(
        (0.5..=1.5).contains(&(estimate / heap)),
        "live: estimate {estimate} for {heap} bytes of heap"
    );
    let done = a2a_tower::types::TaskStatus::new(a2a_tower::types::TaskState::Completed);
    log.append(AppendRequest::new(
        "a",
        "t",
        seq,
        1,
        vec![Record::status(done)],
    ))
    .await
    .unwrap();
    let (heap, estimate) = (live(&region), log.bytes() as f64);
    eprintln!("packed task: heap {heap} bytes, estimate {estimate}");
    assert!(
        (0.5..=1.5).contains(&(estimate / heap)),
        "packed: estimate {estimate} for {heap} bytes of heap"
    );
}

/// Streams its input back word by word, as `examples/echo.rs` does.
struct Words;

impl Agent for Words {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let words: Vec<_> = input.text.split(' ').map(|w| Ok(format!("{w} "))).collect();
        futures_util::stream::iter(words)
    }
}

/// Bytes allocated per chunk streaming `n` chunks to the sender, through
/// the engine on `layer`; every chunk reaches the stream.
async fn stream_cost(layer: TaskLayer, n: usize) -> u64 {
    // The agent writes faster than anyone reads: let the stream lag the
    // whole artifact rather than be cut off.
    let layer = layer.subscriber_buffer(1 << 20).unwrap();
    let svc = engine_with(
        layer,
        BoxCloneSyncService::new(AgentExecutor::service(Words)),
    );
    let text = (0..n)
        .map(|i| format!("w{}", i % 1000))
        .collect::<Vec<_>>()
        .join(" ");
    let request = send_req(user(&text));
    let region = Region::new(GLOBAL);
    let events = collect(
        stream(&svc, Operation::SendStreamingMessage(request))
            .await
            .unwrap(),
    )
    .await;
    let cost = allocated(&region);
    let chunks = events
        .iter()
        .map(|e| match e {
            Ok(StreamResponse::ArtifactUpdate(u)) => u.artifact.parts.len(),
            Ok(StreamResponse::Task(t)) => t.artifacts.iter().map(|a| a.parts.len()).sum(),
            Ok(_) => 0,
            Err(e) => panic!("stream failed: {e:?}"),
        })
        .sum::<usize>();
    assert_eq!(chunks, n);
    cost / n as u64
}

/// A streamed chunk of a 16 times longer artifact costs at most twice as
/// much (amortized: the final artifact itself is allocated once).
async fn assert_stream_flat(layer: impl Fn() -> TaskLayer) {
    let short = stream_cost(layer(), SHORT as usize).await;
    let long = stream_cost(layer(), LONG as usize).await;
    eprintln!("bytes per streamed chunk: short {short}, long {long}");
    assert!(long <= 2 * short, "{short} → {long}");
}

#[tokio::test]
async fn a_streamed_chunk_costs_the_same_on_a_long_artifact_in_memory() {
    let _serial = SERIAL.lock().await;
    assert_stream_flat(|| TaskLayer::new(card(), MemoryTaskLog::new()).unwrap()).await;
}

#[tokio::test]
async fn a_streamed_chunk_costs_the_same_on_a_long_artifact_in_sqlite() {
    let _serial = SERIAL.lock().await;
    let dir = TempDir::new("append-cost");
    let log = sqlite(&dir);
    assert_stream_flat(|| TaskLayer::new(card(), log.clone()).unwrap()).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_chunk_costs_the_same_on_a_long_artifact_in_postgres() {
    use a2a_tower::log::PostgresTaskLog;
    use support::postgres::{url, with_schema};

    let _serial = SERIAL.lock().await;
    with_schema(|schema| async move {
        let log = PostgresTaskLog::builder(url())
            .schema(schema)
            .connect()
            .await
            .unwrap();
        assert_flat(&log).await;
    })
    .await;
}
