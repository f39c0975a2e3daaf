//! Load benchmark over loopback: SendMessage (JSON-RPC) against the full echo
//! stack of `examples/echo.rs` (card, body limit, version, extensions,
//! JSON-RPC with the REST fallback, task engine over a `MemoryTaskLog`, the
//! word-by-word echo agent), next to a raw hyper handler that parses the same
//! body into the crate's types and writes a completed task (no layers, no
//! store). Both run in this process on `127.0.0.1:0` (HTTP/1.1 keep-alive);
//! a load generator drives each with concurrent hyper client connections and
//! reports requests/s, p50/p99/max latency and the ratio full/raw.
//!
//! It also measures memory per stored task: the RSS growth after SendMessages
//! through the engine (no HTTP), divided by their count, next to the log's
//! own estimate ([`MemoryTaskLog::bytes`]).
//!
//! `cargo bench --bench load`. Environment: `LOAD_CONNS` (default 32),
//! `LOAD_SECS` per run (default 2), `LOAD_WARMUP_SECS` (default 1),
//! `LOAD_TASKS` for the memory figure (default 100000, 0 skips it),
//! `LOAD_ROUNDS` (default 9; in each round every side runs right after a
//! raw run of its own, and the median of its ratios to those is
//! reported), `LOAD_ONLY=raw|full|sqlite|pg` to run one side (for profiling),
//! `LOAD_LOG_MAX_TASKS` to change the task bound of the full stack's log
//! (default: the example's `MemoryTaskLog::new()`, 100 000 tasks),
//! `LOAD_WORKERS` for the runtime's worker threads (default: one per CPU;
//! the servers and the load generator share the runtime).
//!
//! Durable sides: the same full stack over a `SqliteTaskLog` in a temporary
//! directory (`sqlite`, the example's default log) and, built with
//! `--features postgres`, over a `PostgresTaskLog` in a temporary schema
//! (`pg`, at `A2A_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`; dropped afterwards).
//! `LOAD_SIDES` picks the sides after `raw` (default `full,sqlite,pg`;
//! `full` is the memory log); each round reports every side's ratio to raw.
//! `LOAD_SQLITE_SYNC=normal` runs SQLite without an fsync per commit. After
//! each SQLite run a line gives the writer's mean batch, the share of the run
//! its thread spent idle (waiting for work) and on CPU, and its CPU time per
//! request: an idle share near zero means the writer is the bottleneck.
//!
//! Each line also gives the process CPU time per request (servers and load
//! generator together), which other processes on the machine disturb less
//! than throughput, and the machine's idle share during the run: a side
//! with idle CPU is bound by waiting, not by CPU. The allocator matters:
//! with glibc malloc, once the full stack's log is at its bound and evicts,
//! CPU per request rises on both sides over the rounds;
//! `LD_PRELOAD=libjemalloc.so.2` on the bench binary
//! (`target/release/deps/load-*`) shows the difference.

// The example itself (its `main` and unit tests unused here).
#[allow(dead_code, unused_imports)]
#[path = "../examples/echo.rs"]
mod echo;
#[path = "common/proc.rs"]
mod proc;
#[path = "common/raw.rs"]
mod raw;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use a2a_tower::engine::{AgentExecutor, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{Message, SendMessageRequest, SendMessageResponse, TaskState};
use a2a_tower::{A2aRequest, A2aResponse, Body, Operation};
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tower::{Layer, Service, ServiceExt};

use proc::{cpu_time, env_or};

const TEXT: &str = "hello world";

fn send_body() -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m-1","role":"ROLE_USER","parts":[{{"text":"{TEXT}"}}]}}}}}}"#
    ))
}

// ---------------------------------------------------------------- servers

/// Accepts HTTP/1.1 keep-alive connections and serves each with `svc`.
async fn serve<S>(listener: TcpListener, svc: S)
where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let svc = TowerToHyperService::new(svc.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn bind() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    (listener, addr)
}

/// The full echo stack, exactly as the example composes it.
async fn start_full() -> SocketAddr {
    let (listener, addr) = bind().await;
    let card = echo::card(&format!("http://{addr}"));
    // The example's log (`MemoryTaskLog::new()`), unless LOAD_LOG_MAX_TASKS
    // changes its task bound (to see the cost of eviction).
    let log = match std::env::var("LOAD_LOG_MAX_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => MemoryTaskLog::builder()
            .max_tasks(n)
            .max_bytes(usize::MAX / 2)
            .build()
            .expect("log"),
        None => MemoryTaskLog::new(),
    };
    let tasks = TaskLayer::new(card.clone(), log).expect("engine");
    let app = echo::app_with(&card, tasks).expect("echo stack");
    tokio::spawn(serve(listener, app));
    addr
}

/// The SQLite side's log, for its group-commit counters.
static SQLITE: std::sync::OnceLock<a2a_tower::log::SqliteTaskLog> = std::sync::OnceLock::new();

/// The SQLite writer's counters since `before`: appends per transaction,
/// and the writer thread's CPU time per request of `run`.
fn sqlite_batches(before: (a2a_tower::log::SqliteStats, Duration), run: &Run) -> Option<String> {
    let now = SQLITE.get()?.stats();
    let (a, t) = (
        now.appends - before.0.appends,
        now.transactions - before.0.transactions,
    );
    let cpu = writer_cpu().saturating_sub(before.1);
    let idle = now.writer_idle.saturating_sub(before.0.writer_idle);
    Some(format!(
        "          sqlite writer: {a} appends in {t} transactions (mean batch {:.1}), writer thread idle {:.0} %, on CPU {:.0} %, {:.1} us CPU per request",
        a as f64 / t.max(1) as f64,
        100.0 * idle.as_secs_f64() / run.elapsed.as_secs_f64(),
        100.0 * cpu.as_secs_f64() / run.elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / run.requests.max(1) as f64,
    ))
}

fn sqlite_stats() -> (a2a_tower::log::SqliteStats, Duration) {
    (
        SQLITE.get().map(|l| l.stats()).unwrap_or_default(),
        writer_cpu(),
    )
}

/// CPU time of the SQLite writer thread so far (Linux; zero elsewhere).
fn writer_cpu() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() != "a2a-sqlite-writ" {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, r)| r.split_whitespace().collect());
        // utime and stime: fields 14 and 15, the 12th and 13th after the name.
        let ticks: u64 = fields
            .get(11..13)
            .map_or(0, |f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum());
        return Duration::from_millis(ticks * 10);
    }
    Duration::ZERO
}

/// The full stack over SQLite in `dir`.
async fn start_sqlite(dir: &std::path::Path) -> SocketAddr {
    let (listener, addr) = bind().await;
    let card = echo::card(&format!("http://{addr}"));
    // `LOAD_SQLITE_SYNC=normal`: no fsync per commit (safe against a process
    // crash, not against the machine going down).
    let sync = match std::env::var("LOAD_SQLITE_SYNC").as_deref() {
        Ok("normal") => a2a_tower::log::Synchronous::Normal,
        _ => a2a_tower::log::Synchronous::Full,
    };
    let log = a2a_tower::log::SqliteTaskLog::builder(dir.join("tasks.db"))
        .synchronous(sync)
        .open()
        .expect("sqlite log");
    let _ = SQLITE.set(log.clone());
    let tasks = TaskLayer::new(card.clone(), log).expect("engine");
    let app = echo::app_with(&card, tasks).expect("echo stack");
    tokio::spawn(serve(listener, app));
    addr
}

#[cfg(feature = "postgres")]
fn pg_url() -> String {
    std::env::var("A2A_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// The full stack over PostgreSQL in `schema`.
#[cfg(feature = "postgres")]
async fn start_pg(schema: &str) -> SocketAddr {
    let (listener, addr) = bind().await;
    let card = echo::card(&format!("http://{addr}"));
    let log = a2a_tower::log::PostgresTaskLog::builder(pg_url())
        .schema(schema)
        .connect()
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {}: {e:?}", pg_url()));
    let tasks = TaskLayer::new(card.clone(), log).expect("engine");
    let app = echo::app_with(&card, tasks).expect("echo stack");
    tokio::spawn(serve(listener, app));
    addr
}

#[cfg(feature = "postgres")]
async fn drop_pg(schema: &str) {
    if let Ok((client, conn)) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await {
        let driver = tokio::spawn(conn);
        let _ = client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
            .await;
        drop(client);
        let _ = driver.await;
    }
}

async fn start_raw() -> SocketAddr {
    let (listener, addr) = bind().await;
    tokio::spawn(serve(listener, tower::service_fn(raw::handle)));
    addr
}

// ---------------------------------------------------------- load generator

struct Run {
    requests: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    /// Process CPU time (all threads: servers and load generator).
    cpu: Duration,
    /// The machine's idle share during the run (idle and iowait of
    /// /proc/stat; `None` elsewhere): well above zero, the side is bound by
    /// waiting (for fsync, a lock, its few connections), not by CPU.
    idle: Option<f64>,
}

impl Run {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    /// Process CPU time per request, in microseconds.
    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64
    }

    fn pct(&self, p: f64) -> Duration {
        // Zero when nothing was sent (`LOAD_SECS=0`, the engine-only run).
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies.get(i).copied().unwrap_or_default()
    }
}

/// One keep-alive connection sending SendMessage until `until`.
async fn connection(addr: SocketAddr, body: Bytes, until: Instant) -> Vec<Duration> {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let mut latencies = Vec::with_capacity(1 << 16);
    while Instant::now() < until {
        let req = Request::post("/")
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(Full::new(body.clone()))
            .expect("request");
        let start = Instant::now();
        sender.ready().await.expect("connection ready");
        let res = sender.send_request(req).await.expect("response");
        assert_eq!(res.status(), 200);
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        latencies.push(start.elapsed());
        assert!(
            bytes.windows(20).any(|w| w == b"TASK_STATE_COMPLETED"),
            "not a completed task: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    latencies
}

async fn load(addr: SocketAddr, conns: usize, duration: Duration) -> Run {
    let body = send_body();
    let cpu_start = cpu_time();
    let machine_start = machine_ticks();
    let start = Instant::now();
    let until = start + duration;
    let tasks: Vec<_> = (0..conns)
        .map(|_| tokio::spawn(connection(addr, body.clone(), until)))
        .collect();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("load connection"));
    }
    let elapsed = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_start);
    let idle = machine_start
        .zip(machine_ticks())
        .map(|((i0, t0), (i1, t1))| {
            (i1.saturating_sub(i0)) as f64 / (t1.saturating_sub(t0)).max(1) as f64
        });
    latencies.sort_unstable();
    Run {
        requests: latencies.len(),
        elapsed,
        latencies,
        cpu,
        idle,
    }
}

fn report(name: &str, run: &Run) {
    println!(
        "{name:<5} {:>9.0} req/s  p50 {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms  cpu {:>5.1} us/req  idle {:>3}  ({} requests in {:.2} s)",
        run.rps(),
        run.pct(0.50).as_secs_f64() * 1e3,
        run.pct(0.99).as_secs_f64() * 1e3,
        run.latencies
            .last()
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3,
        run.cpu_us(),
        run.idle
            .map_or_else(|| "-".to_owned(), |i| format!("{:.0}%", 100.0 * i)),
        run.requests,
        run.elapsed.as_secs_f64(),
    );
}

/// The machine's idle (idle + iowait) and total clock ticks so far, from the
/// first line of /proc/stat (Linux; `None` elsewhere).
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is
    // already inside user).
    let total = ticks.iter().take(8).sum();
    Some((ticks.get(3)? + ticks.get(4)?, total))
}

// ------------------------------------------------------------------ memory

/// Resident set size in bytes (`VmRSS` of /proc/self/status).
fn rss_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Sends `count` messages through the engine (no HTTP) and reports the RSS
/// growth per stored task and the log's own estimate.
async fn memory(count: usize) {
    let log = MemoryTaskLog::builder()
        .max_tasks(count + 1)
        .max_bytes(usize::MAX / 2)
        .build()
        .expect("log");
    let card = echo::card("http://127.0.0.1:0");
    let engine = TaskLayer::new(card, log.clone())
        .expect("engine")
        .layer(AgentExecutor::service(echo::Echo));
    let before = rss_bytes();
    let start = Instant::now();
    futures_util::stream::iter(0..count)
        .map(|i| {
            let engine = engine.clone();
            async move {
                let send = SendMessageRequest {
                    message: Message::user(format!("m-{i}"), TEXT),
                    ..Default::default()
                };
                let res = engine
                    .oneshot(A2aRequest::new(Operation::SendMessage(send)))
                    .await
                    .expect("send");
                let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else {
                    panic!("not a task");
                };
                assert_eq!(task.status.state, TaskState::Completed);
            }
        })
        .buffer_unordered(64)
        .collect::<()>()
        .await;
    let elapsed = start.elapsed();
    let after = rss_bytes();
    assert_eq!(log.len(), count, "every task is stored");
    println!(
        "engine (no HTTP): {count} SendMessages in {:.2} s = {:.0} /s",
        elapsed.as_secs_f64(),
        count as f64 / elapsed.as_secs_f64()
    );
    match (before, after) {
        (Some(b), Some(a)) => println!(
            "memory per stored task: RSS +{:.1} MiB / {count} = {:.0} B/task; log estimate {:.0} B/task ({:.1} MiB total)",
            a.saturating_sub(b) as f64 / (1 << 20) as f64,
            a.saturating_sub(b) as f64 / count as f64,
            log.bytes() as f64 / count as f64,
            log.bytes() as f64 / (1 << 20) as f64,
        ),
        _ => println!("memory per stored task: /proc/self/status unavailable"),
    }
    drop(engine);
}

/// Runs each side right after its own raw run, `rounds` times, and reports
/// each side's ratio to the raw run beside it: the VM this was tuned on
/// changes speed by half within minutes, so a ratio means something only
/// between runs seconds apart, and the median of many short rounds is
/// steadier than one long round.
async fn rounds_of(servers: &[(&str, SocketAddr)], conns: usize, secs: Duration, rounds: u64) {
    let mut ratios: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); servers.len()];
    for round in 1..=rounds {
        for (i, &(name, addr)) in servers.iter().enumerate().skip(1) {
            let raw = load(servers[0].1, conns, secs).await;
            report("raw", &raw);
            let before = sqlite_stats();
            let run = load(addr, conns, secs).await;
            report(name, &run);
            if name == "sqlite" {
                sqlite_batches(before, &run)
                    .into_iter()
                    .for_each(|l| println!("{l}"));
            }
            let ratio = run.rps() / raw.rps();
            // Less sensitive to other processes than throughput.
            let cpu_ratio = raw.cpu_us() / run.cpu_us();
            println!(
                "round {round}: ratio {name}/raw {ratio:.2} (throughput), {cpu_ratio:.2} (inverse CPU per request)"
            );
            ratios[i].0.push(ratio);
            ratios[i].1.push(cpu_ratio);
        }
    }
    for (i, &(name, _)) in servers.iter().enumerate().skip(1) {
        let (t, c) = &mut ratios[i];
        for (what, r) in [("throughput", t), ("inverse CPU per request", c)] {
            r.sort_by(f64::total_cmp);
            println!(
                "ratio {name}/raw by {what}: median {:.2} over {rounds} round(s) (min {:.2}, max {:.2})",
                r[r.len() / 2],
                r[0],
                r[r.len() - 1],
            );
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let conns = env_or("LOAD_CONNS", 32) as usize;
    let secs = Duration::from_secs(env_or("LOAD_SECS", 2));
    let warmup = Duration::from_secs(env_or("LOAD_WARMUP_SECS", 1));
    let tasks = env_or("LOAD_TASKS", 100_000) as usize;
    // For profiling one side: `raw`, `full`, `sqlite` or `pg`.
    let only = std::env::var("LOAD_ONLY").ok();
    let rounds = env_or("LOAD_ROUNDS", 9).max(1);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = (env_or("LOAD_WORKERS", cpus as u64) as usize).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        println!(
            "load: {conns} keep-alive connections, {} s per server after {} s warm-up, {} worker threads",
            secs.as_secs(),
            warmup.as_secs(),
            workers,
        );
        // Memory first, while the heap is fresh.
        if tasks > 0 {
            memory(tasks).await;
        }
        let sides = std::env::var("LOAD_SIDES").unwrap_or_else(|_| "full,sqlite,pg".into());
        let dir = std::env::temp_dir().join(format!("a2a-load-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let schema = format!("a2a_load_{}", uuid::Uuid::new_v4().simple());
        let mut servers = vec![("raw", start_raw().await)];
        for side in sides.split(',').map(str::trim) {
            match side {
                "full" => servers.push(("full", start_full().await)),
                "sqlite" => servers.push(("sqlite", start_sqlite(&dir).await)),
                #[cfg(feature = "postgres")]
                "pg" => servers.push(("pg", start_pg(&schema).await)),
                #[cfg(not(feature = "postgres"))]
                "pg" => println!("pg: skipped (build with --features postgres)"),
                other => panic!("unknown LOAD_SIDES entry {other:?}"),
            }
        }
        for &(name, addr) in &servers {
            load(addr, conns, warmup).await;
            if only.as_deref().is_some_and(|o| o == name) {
                let before = sqlite_stats();
                let run = load(addr, conns, secs).await;
                report(name, &run);
                if name == "sqlite" {
                    sqlite_batches(before, &run).into_iter().for_each(|l| println!("{l}"));
                }
            }
        }
        if only.is_none() {
            rounds_of(&servers, conns, secs, rounds).await;
        }
        let _ = std::fs::remove_dir_all(&dir);
        #[cfg(feature = "postgres")]
        drop_pg(&schema).await;
        let _ = schema;
    });
}
