//! The per-context delivery queue on SQLite (default `synchronous=FULL`, in
//! a temporary directory), through `TeamService` with `oneshot`, no HTTP.
//!
//! `cargo bench --bench queue`
//!
//! 1. **Admission with a long queue behind the head.** In each of several
//!    contexts the agent `busy` runs an input that never ends and K inputs
//!    for it wait behind (K from `QUEUE_SIZES`, default `10,10000`, one
//!    context each, all in one log). A sample queues an urgent input for
//!    the idle agent `probe` (`returnImmediately`): the comparator puts it at
//!    the head, its agent is free, so it is admitted at once. Measured: the
//!    time from the call to the probe agent's run starting (the enqueue
//!    commit, the drain, the admission commit, the run's start), and the
//!    enqueue call alone (until its commit is acknowledged). Each sample's
//!    run ends and is settled before the next sample. The contexts take
//!    turns, round by round (`QUEUE_ROUNDS`, default 5, of `QUEUE_SAMPLES`
//!    samples, default 50); each round prints its median and p90, then the
//!    median of the round medians per K. Setting the queues up gives the
//!    enqueue rate into one context (enqueues of one context are serialized
//!    on this host, 64 callers at once).
//! 2. **Throughput of many contexts.** `QUEUE_CONTEXTS` contexts (default
//!    64) × `QUEUE_MESSAGES` messages each (default 16), every message a
//!    blocking SendMessage, all sent at once; messages per second until the
//!    last answer. The queue runs one input of a context at a time. Beside
//!    it, for scale, the same load through the engine alone (`TaskLayer`,
//!    no queue: the messages of a context run at once), its own log; the two
//!    alternate for `QUEUE_ROUNDS` rounds.
//!
//! `QUEUE_ONLY=latency` or `throughput` runs one part; `QUEUE_ONLY=queue`
//! or `engine` the throughput of that side alone (for profiling).

#[path = "common/proc.rs"]
mod proc;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_tower::engine::{Agent, AgentExecutor, AgentInput, TaskLayer};
use a2a_tower::log::{
    AppendRequest, Appended, ListPage, ListQuery, LogFuture, Sequenced, Snapshot, SqliteTaskLog,
    TaskBackend, TaskLog, TaskStore, Watch,
};
use a2a_tower::queue::{QUEUE_FEATURE, QueueRecord, Team, TeamService};
use a2a_tower::types::{
    AgentCard, Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, Task,
    TaskState,
};
use a2a_tower::{A2aRequest, A2aResponse, BoxError, Operation};
use futures_core::Stream;
use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tower::{Layer as _, Service, ServiceExt as _};

use proc::{cpu_time, env_or};

/// A run's start: its task id and when the agent was called.
type Started = (String, Instant);

/// Reports each run's start; `ends: false` runs never end.
struct Reporting {
    started: mpsc::UnboundedSender<Started>,
    ends: bool,
}

impl Agent for Reporting {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let _ = self.started.send((input.task_id, Instant::now()));
        let reply = futures_util::stream::iter([Ok("ok".to_owned())]);
        if self.ends {
            reply.boxed()
        } else {
            futures_util::stream::pending::<Result<String, BoxError>>().boxed()
        }
    }
}

/// Replies with its input.
struct Reply;

impl Agent for Reply {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

/// The log calls the queue side makes, counted.
#[derive(Default)]
struct Calls {
    /// Reads of a queue stream (catch-up).
    stream_reads: AtomicU64,
    /// Reads of a task's records.
    task_reads: AtomicU64,
    snapshots: AtomicU64,
    watches: AtomicU64,
    /// Commits: `append` (a run's own) and `append_all` calls.
    commits: AtomicU64,
    /// Appends of no record in them (a queue stream checked at its
    /// revision): counted by the log's statistics as appends, writing no row.
    checks: AtomicU64,
}

impl Calls {
    fn take(&self) -> [u64; 6] {
        [
            &self.stream_reads,
            &self.task_reads,
            &self.snapshots,
            &self.watches,
            &self.commits,
            &self.checks,
        ]
        .map(|c| c.swap(0, Ordering::Relaxed))
    }
}

/// A log that counts the calls made of it.
struct Counting {
    log: Arc<SqliteTaskLog>,
    calls: Arc<Calls>,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl TaskLog for Counting {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        bump(&self.calls.commits);
        self.log.append(request)
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        bump(&self.calls.commits);
        let checks = requests.iter().filter(|r| r.records.is_empty()).count();
        self.calls
            .checks
            .fetch_add(checks as u64, Ordering::Relaxed);
        self.log.append_all(requests)
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        bump(&self.calls.snapshots);
        self.log.snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        bump(if a2a_tower::log::is_stream(task_id) {
            &self.calls.stream_reads
        } else {
            &self.calls.task_reads
        });
        self.log.read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        bump(&self.calls.watches);
        self.log.watch(authority, task_id, after)
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        self.log.list(authority, query)
    }

    fn cached_head(&self, authority: &str, task_id: &str) -> Option<u64> {
        self.log.cached_head(authority, task_id)
    }
}

fn card() -> AgentCard {
    AgentCard::new("Bench", "The delivery queue", "1.0.0")
}

/// A fresh SQLite log in a temporary directory.
fn sqlite(tag: &str) -> Arc<SqliteTaskLog> {
    let dir = std::env::temp_dir().join(format!("a2a-bench-{tag}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    Arc::new(SqliteTaskLog::open(dir.join("tasks.db")).expect("open SQLite"))
}

/// A message for `context`, naming `target`, urgent or not.
fn message(context: &str, text: &str, target: Option<&str>, urgent: bool) -> Message {
    let mut m = Message::user(uuid::Uuid::new_v4().to_string(), text);
    m.context_id = context.to_owned();
    let mut meta = serde_json::Map::new();
    if let Some(t) = target {
        meta.insert(a2a_tower::queue::TARGET_KEY.into(), t.into());
    }
    if urgent {
        meta.insert(a2a_tower::queue::PRIORITY_KEY.into(), "urgent".into());
    }
    m.metadata = Some(meta);
    m
}

/// SendMessage through `svc`; `immediately`: answered once queued.
async fn send<S>(svc: &S, message: Message, immediately: bool) -> Task
where
    S: Service<A2aRequest, Response = A2aResponse> + Clone,
    S::Error: std::fmt::Debug,
{
    let configuration = immediately.then(|| SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let req = A2aRequest::new(Operation::SendMessage(SendMessageRequest {
        message,
        configuration,
        ..Default::default()
    }));
    match svc.clone().oneshot(req).await.expect("SendMessage") {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => t.into_inner(),
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The authority and id of the queue stream of `context`.
async fn stream_of(log: &dyn TaskBackend, context: &str) -> (String, String) {
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let page = log.live_tasks(key, 1024).await.expect("live tasks");
        if let Some(t) = page.iter().find(|t| {
            t.stream().is_some_and(|(f, _)| f == QUEUE_FEATURE) && t.context_id == context
        }) {
            return (t.authority.clone(), t.task_id.clone());
        }
        let last = page.last().expect("the context's queue stream");
        after = Some((last.authority.clone(), last.task_id.clone()));
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p90(v: &mut [Duration]) -> Duration {
    v.sort();
    v[(v.len() * 9 / 10).min(v.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// One context held by `busy` with `k` inputs queued behind its run.
struct Held {
    k: usize,
    context: String,
    /// The queue stream's authority and id.
    stream: (String, String),
    /// The queue stream's last record read.
    seen: u64,
    medians: Vec<Duration>,
    enqueue_medians: Vec<Duration>,
}

async fn hold(
    svc: &TeamService,
    log: &dyn TaskBackend,
    busy: &mut mpsc::UnboundedReceiver<Started>,
    k: usize,
) -> Held {
    let context = format!("ctx-{k}-{}", uuid::Uuid::new_v4());
    let run = send(svc, message(&context, "hold", Some("busy"), false), true).await;
    let (started, _) = busy.recv().await.expect("busy starts");
    assert_eq!(started, run.id);
    // In tenths, each with its rate: does an enqueue cost more as the
    // queue grows?
    let step = k.div_ceil(10).max(1);
    let t = Instant::now();
    let mut rates = Vec::new();
    for first in (0..k).step_by(step) {
        let part = Instant::now();
        let last = (first + step).min(k);
        futures_util::stream::iter(first..last)
            .map(|i| {
                let m = message(&context, &format!("queued {i}"), Some("busy"), false);
                async move {
                    let task = send(svc, m, true).await;
                    assert_eq!(task.status.state, TaskState::Submitted);
                }
            })
            .buffer_unordered(64)
            .collect::<()>()
            .await;
        rates.push(format!(
            "{:.0}",
            (last - first) as f64 / part.elapsed().as_secs_f64()
        ));
    }
    let took = t.elapsed();
    println!(
        "queued {k} inputs behind a run in one context in {:.2} s ({:.0} enqueues/s; by tenths: {})",
        took.as_secs_f64(),
        k as f64 / took.as_secs_f64(),
        rates.join(", ")
    );
    let stream = stream_of(log, &context).await;
    // Read once: a sample reads only what its probe added (a read of the
    // whole queue per sample would measure the reader, and leave its
    // allocations to be freed in the measured part).
    let seen = log
        .read(&stream.0, &stream.1, 0)
        .await
        .expect("read the queue")
        .last()
        .map_or(0, |r| r.seq);
    Held {
        k,
        context,
        stream,
        seen,
        medians: Vec::new(),
        enqueue_medians: Vec::new(),
    }
}

/// One sample: (call to run start, the enqueue call).
async fn sample(
    svc: &TeamService,
    log: &dyn TaskBackend,
    probe: &mut mpsc::UnboundedReceiver<Started>,
    held: &mut Held,
) -> (Duration, Duration) {
    let (authority, stream) = &held.stream;
    let mut seen = held.seen;
    let m = message(&held.context, "probe", Some("probe"), true);
    let t0 = Instant::now();
    let task = send(svc, m, true).await;
    let acked = t0.elapsed();
    let (started, at) = probe.recv().await.expect("probe starts");
    assert_eq!(started, task.id, "the probe runs next");
    // The run ends and its agent is free again before the next sample (a
    // stream has no watch: it is read until the settlement, after the
    // measured part).
    'settled: loop {
        for r in log
            .read(authority, stream, seen)
            .await
            .expect("read the queue")
        {
            seen = r.seq;
            if let Some(QueueRecord::Settled { task_id, .. }) = QueueRecord::of(&r.record)
                && task_id == task.id
            {
                break 'settled;
            }
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    held.seen = seen;
    (at - t0, acked)
}

async fn latency(rounds: usize) {
    let samples = env_or("QUEUE_SAMPLES", 50) as usize;
    let sizes: Vec<usize> = std::env::var("QUEUE_SIZES")
        .unwrap_or_else(|_| "10,10000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("QUEUE_SIZES: numbers"))
        .collect();
    let log = sqlite("queue-latency");
    let (busy_tx, mut busy) = mpsc::unbounded_channel();
    let (probe_tx, mut probe) = mpsc::unbounded_channel();
    let team = Team::builder()
        .agent(
            "busy",
            Reporting {
                started: busy_tx,
                ends: false,
            },
        )
        .agent(
            "probe",
            Reporting {
                started: probe_tx,
                ends: true,
            },
        )
        .default_agent("busy")
        .build()
        .expect("team");
    let svc = team.service(TaskLayer::new(card(), log.clone()).expect("engine"));
    svc.recover().await.expect("recover");

    let mut held = Vec::new();
    for &k in &sizes {
        held.push(hold(&svc, &*log, &mut busy, k).await);
    }
    for round in 1..=rounds {
        // Every other round the other way round: no size always goes first.
        held.reverse();
        for h in &mut held {
            let mut starts = Vec::with_capacity(samples);
            let mut acks = Vec::with_capacity(samples);
            for _ in 0..samples {
                let (start, ack) = sample(&svc, &*log, &mut probe, h).await;
                starts.push(start);
                acks.push(ack);
            }
            let (m, p) = (median(&mut starts), p90(&mut starts));
            let a = median(&mut acks);
            println!(
                "round {round}, {:>6} queued: call to run start median {}, p90 {}; enqueue call median {}",
                h.k,
                ms(m),
                ms(p),
                ms(a)
            );
            h.medians.push(m);
            h.enqueue_medians.push(a);
        }
    }
    held.sort_by_key(|h| h.k);
    for h in &mut held {
        println!(
            "{:>6} queued: median of {rounds} round medians: call to run start {}, enqueue call {}",
            h.k,
            ms(median(&mut h.medians)),
            ms(median(&mut h.enqueue_medians))
        );
    }
}

/// What one burst gave.
struct Burst {
    /// Messages per second until the last answer.
    rate: f64,
    /// Process CPU time per message (µs).
    cpu_us: f64,
    /// Appends to the log per message.
    appends: f64,
    /// Appends per SQLite transaction (group commit).
    batch: f64,
}

impl std::fmt::Display for Burst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.0} messages/s ({:.0} us CPU, {:.1} appends per message, mean batch {:.1})",
            self.rate, self.cpu_us, self.appends, self.batch
        )
    }
}

/// `contexts` × `n` blocking SendMessages at once through `svc` over `log`:
/// driven together in the bench's one task, or (`QUEUE_TASKS=1`) each in a
/// task of its own, as a server's connections are.
async fn burst<S>(svc: &S, log: &SqliteTaskLog, contexts: usize, n: usize) -> Burst
where
    S: Service<A2aRequest, Response = A2aResponse> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: std::fmt::Debug,
{
    let round = uuid::Uuid::new_v4();
    let own_tasks = env_or("QUEUE_TASKS", 0) == 1;
    let (stats, cpu) = (log.stats(), cpu_time());
    let t = Instant::now();
    let calls = (0..contexts * n).map(|i| {
        let m = message(
            &format!("ctx-{round}-{}", i % contexts),
            "hello",
            None,
            false,
        );
        let svc = svc.clone();
        let call = async move {
            let task = send(&svc, m, false).await;
            assert_eq!(task.status.state, TaskState::Completed);
        };
        async move {
            match own_tasks {
                true => tokio::spawn(call).await.expect("the call's task"),
                false => call.await,
            }
        }
    });
    futures_util::future::join_all(calls).await;
    let elapsed = t.elapsed();
    let messages = (contexts * n) as f64;
    let now = log.stats();
    let appends = (now.appends - stats.appends) as f64;
    Burst {
        rate: messages / elapsed.as_secs_f64(),
        cpu_us: cpu_time().saturating_sub(cpu).as_secs_f64() * 1e6 / messages,
        appends: appends / messages,
        batch: appends / (now.transactions - stats.transactions).max(1) as f64,
    }
}

/// Which side of the throughput part runs.
#[derive(Clone, Copy, PartialEq)]
enum Sides {
    Both,
    Queue,
    Engine,
}

async fn throughput(rounds: usize, sides: Sides) {
    let contexts = env_or("QUEUE_CONTEXTS", 64) as usize;
    let n = env_or("QUEUE_MESSAGES", 16) as usize;
    let team = Team::builder().agent("reply", Reply).build().expect("team");
    let (team_log, engine_log) = (sqlite("queue-team"), sqlite("queue-engine"));
    let calls = Arc::new(Calls::default());
    let counting = Counting {
        log: team_log.clone(),
        calls: calls.clone(),
    };
    let store = TaskStore::from(team_log.clone()).map_records(|_| counting);
    let queued = team.service(TaskLayer::new(card(), store).expect("engine"));
    queued.recover().await.expect("recover");
    let engine = TaskLayer::new(card(), engine_log.clone())
        .expect("engine")
        .layer(AgentExecutor::service(Reply));
    let (mut q, mut e) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        if sides == Sides::Engine {
            let b = burst(&engine, &engine_log, contexts, n).await;
            println!("round {round}: {contexts} contexts x {n} messages: engine alone {b}");
            continue;
        }
        calls.take();
        let a = burst(&queued, &team_log, contexts, n).await;
        let per = calls.take().map(|c| c as f64 / (contexts * n) as f64);
        println!(
            "          queue side, per message: {:.1} queue stream reads, {:.1} task reads, {:.1} snapshots, {:.1} watches, {:.1} commits, {:.1} of the appends checks (no row)",
            per[0], per[1], per[2], per[3], per[4], per[5]
        );
        if sides == Sides::Queue {
            println!("round {round}: {contexts} contexts x {n} messages: queue {a}");
            continue;
        }
        let b = burst(&engine, &engine_log, contexts, n).await;
        println!("round {round}: {contexts} contexts x {n} messages: queue {a}; engine alone {b}");
        q.push(a.rate);
        e.push(b.rate);
    }
    if sides != Sides::Both {
        return;
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "median of {rounds} rounds: queue {:.0} messages/s, engine alone {:.0} messages/s",
        med(&mut q),
        med(&mut e)
    );
}

#[tokio::main]
async fn main() {
    let rounds = env_or("QUEUE_ROUNDS", 5) as usize;
    let only = std::env::var("QUEUE_ONLY").unwrap_or_default();
    if !matches!(only.as_str(), "throughput" | "queue" | "engine") {
        latency(rounds).await;
    }
    if only != "latency" {
        let sides = match only.as_str() {
            "queue" => Sides::Queue,
            "engine" => Sides::Engine,
            _ => Sides::Both,
        };
        throughput(rounds, sides).await;
    }
}
