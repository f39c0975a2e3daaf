//! The delivery queue's tests: agents the test controls ([`Probe`], which
//! reports to a [`Lab`]), the three task logs a case runs on ([`Store`],
//! [`queue_cases!`]), a host that dies ([`die`]), the sends that drive a
//! `TeamService`, and reads of a context's queue stream.
//!
//! A probe's input text says what it does:
//! - `hold:K` waits until the test releases `K` (or the run is canceled);
//! - `chunks:K` streams the chunks `one` and `two`, then holds like `hold:K`;
//! - `fail` streams `one` and `two`, then fails (its executor errs);
//! - `listen` takes appended inputs until one says `done`;
//! - `ask` asks for input (INPUT_REQUIRED) and ends its run;
//! - anything else completes at once.
//!
//! A run that completes replies with one artifact: its reply function of
//! the input text (the text itself for [`Probe::echo`]).

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use a2a_tower::engine::{Execution, Executor, TaskLayer};
use a2a_tower::log::{MemoryTaskLog, Record, Sequenced, SqliteTaskLog, TaskBackend};
use a2a_tower::queue::{Entry, QUEUE_FEATURE, QueueRecord, Team, TeamService};
use a2a_tower::types::{
    AgentCard, Artifact, ListTasksRequest, Message, Part, SendMessageConfiguration,
    SendMessageRequest, Task,
};
use a2a_tower::{A2aError, BoxError, EventStream, Operation};
use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::sync::watch;

use super::calls::{send_with, stream};
use super::server::TempDir;
use super::tasks::GUARD;

/// The authority every case's tasks are stored under (the engine's default).
pub(crate) const AUTH: &str = "public";

// ------------------------------------------------------------------ the lab

/// One run a probe started: its agent, its input text, its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ran {
    pub(crate) agent: String,
    pub(crate) text: String,
    pub(crate) task_id: String,
}

/// What the probes did, in order.
#[derive(Debug, Default)]
pub(crate) struct Book {
    /// The runs, in the order they started.
    pub(crate) runs: Vec<Ran>,
    /// The appended inputs a `listen` run took: `(task id, text)`.
    pub(crate) appended: Vec<(String, String)>,
    released: HashSet<String>,
}

impl Book {
    /// The input texts of the runs of `agent`, in the order they started.
    pub(crate) fn texts(&self, agent: &str) -> Vec<String> {
        self.runs
            .iter()
            .filter(|r| r.agent == agent)
            .map(|r| r.text.clone())
            .collect()
    }

    /// The run of the input `text` (the first, if several).
    pub(crate) fn run_of(&self, text: &str) -> Option<&Ran> {
        self.runs.iter().find(|r| r.text == text)
    }
}

/// Where the probes report, and how the test releases their holds. Clones
/// share it.
#[derive(Clone)]
pub(crate) struct Lab {
    book: Arc<Mutex<Book>>,
    changed: Arc<watch::Sender<u64>>,
}

impl Default for Lab {
    fn default() -> Self {
        Self {
            book: Arc::default(),
            changed: Arc::new(watch::channel(0).0),
        }
    }
}

impl Lab {
    fn write(&self, f: impl FnOnce(&mut Book)) {
        f(&mut self.book.lock().unwrap());
        self.changed.send_modify(|n| *n += 1);
    }

    /// Reads the book.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Book) -> T) -> T {
        f(&self.book.lock().unwrap())
    }

    /// Lets the runs holding on `key` go on (now or when they get there).
    pub(crate) fn release(&self, key: &str) {
        self.write(|b| {
            b.released.insert(key.to_owned());
        });
    }

    /// Waits until `f` finds something in the book (within [`GUARD`]).
    pub(crate) async fn until<T>(&self, what: &str, f: impl Fn(&Book) -> Option<T>) -> T {
        let mut rx = self.changed.subscribe();
        let wait = async {
            loop {
                if let Some(found) = self.read(&f) {
                    return found;
                }
                rx.changed().await.expect("the lab lives");
            }
        };
        tokio::time::timeout(GUARD, wait).await.unwrap_or_else(|_| {
            panic!(
                "{what} within {GUARD:?}: {:?}",
                self.read(|b| b.runs.clone())
            )
        })
    }

    /// Waits until the run of the input `text` has started.
    pub(crate) async fn started(&self, text: &str) -> Ran {
        self.until(&format!("the run of {text:?}"), |b| b.run_of(text).cloned())
            .await
    }

    /// Waits until `n` runs have started; the runs then.
    pub(crate) async fn runs(&self, n: usize) -> Vec<Ran> {
        self.until(&format!("{n} runs"), |b| {
            (b.runs.len() >= n).then(|| b.runs.clone())
        })
        .await
    }

    async fn released(&self, key: &str) {
        let mut rx = self.changed.subscribe();
        while !self.read(|b| b.released.contains(key)) {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }
}

// --------------------------------------------------------------- the probe

/// An agent the test controls (see the [module docs](self)).
pub(crate) struct Probe {
    lab: Lab,
    agent: String,
    reply: fn(&str) -> String,
}

impl Probe {
    /// A probe named `agent` replying with its input text.
    pub(crate) fn echo(lab: &Lab, agent: &str) -> Self {
        Self::replying(lab, agent, str::to_owned)
    }

    /// A probe named `agent` replying with `reply` of its input text.
    pub(crate) fn replying(lab: &Lab, agent: &str, reply: fn(&str) -> String) -> Self {
        Self {
            lab: lab.clone(),
            agent: agent.to_owned(),
            reply,
        }
    }
}

fn artifact(text: &str) -> Artifact {
    Artifact {
        artifact_id: "out".into(),
        parts: vec![Part::text(text)],
        ..Artifact::default()
    }
}

impl Executor for Probe {
    async fn execute(&self, mut ex: Execution) -> Result<(), BoxError> {
        let text = ex.message.text();
        let task_id = ex.emit.task_id().to_owned();
        self.lab.write(|b| {
            b.runs.push(Ran {
                agent: self.agent.clone(),
                text: text.clone(),
                task_id: task_id.clone(),
            });
        });
        let emit = ex.emit.clone();
        if text == "ask" {
            emit.input_required("and then?").await?;
            return Ok(());
        }
        if let Some(key) = text.strip_prefix("ask then hold:") {
            // Says something (its first commit), asks, then goes on until
            // released, deaf to being stopped.
            emit.artifact(artifact("thinking"), false, true).await?;
            emit.input_required("and then?").await?;
            self.lab.released(key).await;
            return Ok(());
        }
        if text == "fail" || text.starts_with("chunks:") {
            emit.artifact(artifact("one"), false, false).await?;
            emit.artifact(artifact("two"), true, false).await?;
            if text == "fail" {
                return Err("the probe fails after two chunks".into());
            }
        }
        if let Some(key) = text
            .strip_prefix("hold:")
            .or_else(|| text.strip_prefix("chunks:"))
        {
            tokio::select! {
                () = self.lab.released(key) => {}
                () = emit.cancelled() => return Ok(()),
            }
        }
        if text == "listen" {
            while let Some(m) = ex.inputs.next().await {
                let said = m.text();
                self.lab
                    .write(|b| b.appended.push((task_id.clone(), said.clone())));
                if said == "done" {
                    break;
                }
            }
        }
        emit.artifact(artifact(&(self.reply)(&text)), false, true)
            .await?;
        emit.complete().await?;
        Ok(())
    }
}

/// A team of echo probes named `names`; the first is the default.
pub(crate) fn echoes(lab: &Lab, names: &[&str]) -> Team {
    names
        .iter()
        .fold(Team::builder(), |t, n| t.executor(*n, Probe::echo(lab, n)))
        .build()
        .unwrap()
}

// ---------------------------------------------------------------- the logs

/// Where a case's tasks are stored: one log per case.
pub(crate) enum Store {
    /// A memory log (default bounds: a finished task nobody watches is
    /// packed); every open shares it.
    Memory(Arc<MemoryTaskLog>),
    /// A SQLite file in a directory of its own; each open opens it anew.
    Sqlite(TempDir),
    /// A PostgreSQL schema of its own; each open connects anew.
    #[cfg(feature = "postgres")]
    Postgres(String),
}

impl Store {
    pub(crate) fn memory() -> Self {
        Self::Memory(Arc::new(MemoryTaskLog::new()))
    }

    pub(crate) fn sqlite() -> Self {
        Self::Sqlite(TempDir::new("queue"))
    }

    /// The log (for SQLite, no other open one may be alive).
    pub(crate) async fn open(&self) -> Arc<dyn TaskBackend> {
        match self {
            Self::Memory(log) => log.clone(),
            Self::Sqlite(dir) => Arc::new(SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap()),
            #[cfg(feature = "postgres")]
            Self::Postgres(schema) => Arc::new(super::postgres::connect(schema).await),
        }
    }

    /// The log, and the same log for retention (`log::Retention`).
    #[allow(dead_code)]
    pub(crate) async fn open_with_retention(
        &self,
    ) -> (Arc<dyn TaskBackend>, Arc<dyn a2a_tower::log::Retention>) {
        match self {
            Self::Memory(log) => (log.clone(), log.clone()),
            Self::Sqlite(dir) => {
                let log = Arc::new(SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap());
                (log.clone(), log)
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(schema) => {
                let log = Arc::new(super::postgres::connect(schema).await);
                (log.clone(), log)
            }
        }
    }
}

/// Instantiates queue cases (`async fn case(store: Store)`) as tests: the
/// `every` cases on memory, SQLite and PostgreSQL (modules `memory`,
/// `sqlite`, `postgres`), the `durable` ones on SQLite and PostgreSQL.
// Unused in the test binaries that run no queue cases (see `support/mod.rs`).
#[allow(unused_macros)]
macro_rules! queue_cases {
    (every: [$($case:ident),* $(,)?], durable: [$($durable:ident),* $(,)?] $(,)?) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::support::queue::Store::memory()).await;
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::support::queue::Store::sqlite()).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $durable() {
                    super::$durable($crate::support::queue::Store::sqlite()).await;
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    $crate::support::postgres::with_schema(|schema| async move {
                        super::$case($crate::support::queue::Store::Postgres(schema)).await;
                    })
                    .await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $durable() {
                    $crate::support::postgres::with_schema(|schema| async move {
                        super::$durable($crate::support::queue::Store::Postgres(schema)).await;
                    })
                    .await;
                }
            )*
        }
    };
}

#[allow(unused_imports)]
pub(crate) use queue_cases;

/// A host that dies: `host` runs over a log `store` opens, in a tokio
/// runtime of its own on a thread of its own; then the runtime is dropped
/// (nothing of the host runs any more, and every handle it held on the log
/// is gone). What `host` returned.
pub(crate) fn die<T, F, Fut>(store: &Store, host: F) -> T
where
    T: Send,
    F: FnOnce(Arc<dyn TaskBackend>) -> Fut + Send,
    Fut: Future<Output = T>,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let left = rt.block_on(async { host(store.open().await).await });
            drop(rt);
            left
        })
        .join()
        .expect("the host ran")
    })
}

// --------------------------------------------------------------- the calls

pub(crate) fn card() -> AgentCard {
    AgentCard::new("Team", "agents behind one endpoint", "1.0.0").with_streaming(true)
}

/// What a case works with: the lab, the log, a team of echo probes served
/// over it, and a new context.
pub(crate) struct Host {
    pub(crate) lab: Lab,
    pub(crate) log: Arc<dyn TaskBackend>,
    pub(crate) svc: TeamService,
    pub(crate) ctx: String,
}

/// Echo probes named `names` (the first the default) served over a log
/// `store` opens.
pub(crate) async fn host(store: &Store, names: &[&str]) -> Host {
    let lab = Lab::default();
    let log = store.open().await;
    let svc = serve(log.clone(), echoes(&lab, names)).await;
    Host {
        lab,
        log,
        svc,
        ctx: context(),
    }
}

/// Queues `hold:key` for `agent` in `ctx` and waits until it runs; its task.
pub(crate) async fn held(
    svc: &TeamService,
    lab: &Lab,
    ctx: &str,
    agent: &str,
    key: &str,
) -> String {
    let text = format!("hold:{key}");
    let id = queue_for(svc, ctx, agent, &text).await;
    lab.started(&text).await;
    id
}

/// `team` served over `log` (host id `local`), recovered.
pub(crate) async fn serve(log: Arc<dyn TaskBackend>, team: Team) -> TeamService {
    let svc = team.service(TaskLayer::new(card(), log).unwrap());
    svc.recover().await.unwrap();
    svc
}

/// A new input of the context `ctx` saying `text`, with the `queue.*`
/// metadata `meta` (key, value).
pub(crate) fn input(ctx: &str, text: &str, meta: &[(&str, &str)]) -> Message {
    let mut m = Message::user(uuid::Uuid::new_v4().to_string(), text);
    m.context_id = ctx.into();
    if !meta.is_empty() {
        m.metadata = Some(
            meta.iter()
                .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
                .collect(),
        );
    }
    m
}

/// A new context id.
pub(crate) fn context() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn request(message: Message, immediately: bool) -> SendMessageRequest {
    SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            return_immediately: immediately,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A blocking SendMessage: the task once its run ends.
pub(crate) async fn send(svc: &TeamService, message: Message) -> Result<Task, A2aError> {
    send_with(svc, request(message, false)).await
}

/// A SendMessage with `returnImmediately`: the task as queued.
pub(crate) async fn send_now(svc: &TeamService, message: Message) -> Result<Task, A2aError> {
    send_with(svc, request(message, true)).await
}

/// A SendStreamingMessage: its stream.
pub(crate) async fn send_stream(svc: &TeamService, message: Message) -> EventStream {
    let op = Operation::SendStreamingMessage(request(message, false));
    stream(svc, op).await.expect("a stream")
}

/// Queues `text` for `agent` in `ctx`; the queued task's id.
pub(crate) async fn queue_for(svc: &TeamService, ctx: &str, agent: &str, text: &str) -> String {
    let meta = [(a2a_tower::queue::TARGET_KEY, agent)];
    send_now(svc, input(ctx, text, &meta)).await.unwrap().id
}

/// The tasks of the context `ctx`.
pub(crate) async fn list(svc: &TeamService, ctx: &str) -> Vec<Task> {
    let req = ListTasksRequest {
        context_id: ctx.into(),
        ..Default::default()
    };
    super::calls::list(svc, req).await
}

/// The text of every artifact part of the task, in order.
pub(crate) fn output(task: &Task) -> Vec<String> {
    task.artifacts
        .iter()
        .flat_map(|a| {
            a.parts
                .iter()
                .filter_map(|p| p.as_text().map(str::to_owned))
        })
        .collect()
}

// -------------------------------------------------------- the queue stream

/// The authority and id of the queue stream of the context `ctx` (it must
/// exist), found as recovery finds it.
async fn stream_id(log: &dyn TaskBackend, ctx: &str) -> (String, String) {
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let page = log.live_tasks(key, 256).await.expect("live tasks");
        if let Some(t) = page
            .iter()
            .find(|t| t.stream().is_some_and(|(f, _)| f == QUEUE_FEATURE) && t.context_id == ctx)
        {
            return (t.authority.clone(), t.task_id.clone());
        }
        match page.last() {
            Some(last) if page.len() >= 256 => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => panic!("the context {ctx} has no queue stream"),
        }
    }
}

async fn read_stream(
    log: &dyn TaskBackend,
    (authority, id): &(String, String),
) -> Vec<QueueRecord> {
    log.read(authority, id, 0)
        .await
        .expect("read the queue stream")
        .into_iter()
        .filter_map(|s| QueueRecord::of(&s.record))
        .collect()
}

/// Every record of the context's queue stream so far.
pub(crate) async fn queue_records(log: &dyn TaskBackend, ctx: &str) -> Vec<QueueRecord> {
    read_stream(log, &stream_id(log, ctx).await).await
}

/// Waits, reading the context's queue stream every few milliseconds (a
/// stream has no watch: it is no task), until `done` holds for its records
/// (read whole each time, so a commit is seen whole); the records then.
pub(crate) async fn until_queue(
    log: &dyn TaskBackend,
    ctx: &str,
    what: &str,
    done: impl Fn(&[QueueRecord]) -> bool,
) -> Vec<QueueRecord> {
    let wait = async {
        let id = stream_id(log, ctx).await;
        loop {
            let all = read_stream(log, &id).await;
            if done(&all) {
                return all;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(GUARD, wait)
        .await
        .unwrap_or_else(|_| panic!("{what} within {GUARD:?}"))
}

/// The index of the first record of the stream that `is` picks.
pub(crate) fn position(records: &[QueueRecord], is: impl Fn(&QueueRecord) -> bool) -> usize {
    records
        .iter()
        .position(is)
        .unwrap_or_else(|| panic!("no such record in {records:?}"))
}

/// The record admits `task`.
pub(crate) fn admits(task: &str) -> impl Fn(&QueueRecord) -> bool + '_ {
    move |r| matches!(r, QueueRecord::Admitted { task_id, .. } if task_id == task)
}

/// The record settles `task`.
pub(crate) fn settles(task: &str) -> impl Fn(&QueueRecord) -> bool + '_ {
    move |r| matches!(r, QueueRecord::Settled { task_id, .. } if task_id == task)
}

/// How many of the records `is` picks.
pub(crate) fn how_many(records: &[QueueRecord], is: impl Fn(&QueueRecord) -> bool) -> usize {
    records.iter().filter(|r| is(r)).count()
}

/// Every record of the context's queue stream so far, with its sequence
/// number (an entry's arrival).
pub(crate) async fn queue_sequenced(log: &dyn TaskBackend, ctx: &str) -> Vec<Sequenced> {
    let (authority, id) = stream_id(log, ctx).await;
    log.read(&authority, &id, 0)
        .await
        .expect("read the queue stream")
}

/// Replays a queue stream and checks every admission against the rules: the
/// admitted task is the comparator's head ([`Entry::order`]) of the entries
/// waiting at that revision, its agent runs no other input of the context,
/// an input naming no agent waits for an idle context, and no task is
/// admitted twice. The admitted task ids, in order.
pub(crate) fn admissions(stream: &[Sequenced]) -> Vec<String> {
    let mut waiting: Vec<Entry> = Vec::new();
    let mut running: BTreeMap<String, String> = BTreeMap::new();
    let mut admitted = Vec::new();
    for r in stream {
        let Some(q) = QueueRecord::of(&r.record) else {
            continue;
        };
        match &q {
            QueueRecord::Entered {
                task_id,
                target,
                priority,
                position,
                hops,
            } => waiting.push(Entry {
                task_id: task_id.clone(),
                target: target.clone(),
                priority: *priority,
                position: *position,
                arrival: r.seq,
                hops: *hops,
            }),
            QueueRecord::Reordered { task_ids } => {
                for e in &mut waiting {
                    e.position = task_ids
                        .iter()
                        .position(|id| *id == e.task_id)
                        .map(|i| i as i64);
                }
            }
            QueueRecord::Admitted { task_id, agent, .. } => {
                let head = waiting.iter().min_by(|a, b| a.order(b)).unwrap_or_else(|| {
                    panic!("seq {}: {task_id} admitted from an empty queue", r.seq)
                });
                assert_eq!(
                    &head.task_id, task_id,
                    "seq {}: admitted other than the head {head:?}",
                    r.seq
                );
                if head.target.is_none() {
                    assert!(
                        running.is_empty(),
                        "seq {}: {task_id} names no agent but was admitted beside {running:?}",
                        r.seq
                    );
                }
                assert!(
                    !running.contains_key(agent),
                    "seq {}: {agent} admitted {task_id} while running {running:?}",
                    r.seq
                );
                assert!(
                    !admitted.contains(task_id),
                    "seq {}: {task_id} admitted twice",
                    r.seq
                );
                waiting.retain(|e| e.task_id != *task_id);
                running.insert(agent.clone(), task_id.clone());
                admitted.push(task_id.clone());
            }
            QueueRecord::Removed { task_id } => waiting.retain(|e| e.task_id != *task_id),
            QueueRecord::Settled { task_id, agent, .. } => {
                if running.get(agent) == Some(task_id) {
                    running.remove(agent);
                }
            }
            other => panic!("seq {}: unknown queue record {other:?}", r.seq),
        }
    }
    admitted
}

/// The task's records, checked to show one run: exactly one admitted
/// message, one execution started and one terminal record. The records.
pub(crate) async fn ran_once(log: &dyn TaskBackend, id: &str) -> Vec<Record> {
    let records = super::tasks::records(log, AUTH, id).await;
    let admitted = records
        .iter()
        .filter(|r| matches!(r, Record::MessageAdmitted { .. }))
        .count();
    assert_eq!(
        admitted, 1,
        "{id}: {admitted} admitted messages: {records:?}"
    );
    assert_eq!(host_runs(&records).len(), 1, "{id}: {records:?}");
    let ends = records.iter().filter(|r| r.is_terminal()).count();
    assert_eq!(ends, 1, "{id}: {ends} terminal records: {records:?}");
    records
}

/// The hosts of the task's executions (its `ExecutionStarted` records).
pub(crate) fn host_runs(records: &[Record]) -> Vec<&str> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::ExecutionStarted { host } => Some(&**host),
            _ => None,
        })
        .collect()
}
