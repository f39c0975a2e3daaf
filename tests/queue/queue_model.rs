//! Model checking of the delivery queue's event-driven drain: an exhaustive
//! exploration of every interleaving of enqueue, a run's end, reorder,
//! cancel, steer, start-up and the drain's own steps, over a faithful model
//! of one context (two agents, one or two hosts sharing the log).
//!
//! The invariant: the context never rests (no drain running or pending, no
//! event between its commit and its `notify`) with a non-empty queue whose
//! head a pass would act on. Along every path: an agent never has two active
//! runs in the context, each admission is of the comparator's head, no entry
//! is admitted twice, a canceled queued entry never runs, a target is never
//! given to another agent, and a host never runs two drains of the context.
//!
//! The model uses the crate's own [`DrainGate`] (as a black box: its state
//! is told apart by its answers, and rebuilt by replaying calls) and the
//! crate's comparator [`Entry::order`]. The rest is the code of the queue
//! (`crates/a2a-tower-engine/src/queue/`) as steps: each step is one atomic commit or read of the
//! real code, and a step is merged with the next only where no other actor
//! can observe the difference (a read of a value that can no longer change,
//! or a read and commit made under the context's lock with the revision
//! checked). States that no step can tell apart are merged (see
//! [`State::canonical`]). Negative controls run the same explorer with
//! broken gates and must find a context left stuck.
//!
//! Log faults: the drain's log calls may fail (up to the scenario's number
//! of faults along a path). A read or a commit fails before its effect; a
//! settlement's or a removal's commit may also fail after it (the commit
//! was made, the answer lost: a PostgreSQL connection dropped at COMMIT).
//! Either way the pass ends with the lock released and, as `core.rs` does,
//! is passed again after a backoff without `finish_pass` and without
//! another event. A negative control gives up instead (the pass's error
//! ends it like a pass that found nothing, the code before the retry) and
//! must be caught. The retry is also tested on the real code with injected
//! commit failures (`queue_faults.rs`).
//!
//! Compaction (`log::restate_stream` with `queue::QueueStreams`): a sweeper,
//! up to the scenario's number of compactions along a path, reads the queue
//! when it is idle (nothing queued, nothing running) and, as a step of its
//! own, restates it at the revision it read (the revision moves, the last
//! replier stays), between any two steps of the other actors; the records
//! before the restatement are then dropped, which the model need not show
//! (a catch-up copies the whole queue: a view behind a restatement is
//! replaced, as `ContextQueue::apply` of `Restated` does). A negative
//! control restates whatever the queue became since the read and must be
//! caught (an input lost from the queue: rule of rest `LOST`).
//!
//! Taken as given, as the code's contracts say: a commit of several appends
//! (`TaskLog::append_all`) is atomic; the log calls of the other actors do
//! not fail (an enqueue, a cancel or a reorder whose commit fails answers an
//! error and changes nothing, as if it had not been made); an admission
//! whose commit fails fails before its effect; a run asking for input
//! keeps its agent until it is canceled (continuations are the engine's).
//!
//! The model of one step, against the code:
//! - enqueue (`enqueue.rs`): under the lock, catch up and commit the task
//!   with its `Entered` record (a steer takes the position before the head
//!   and notes its target's active run); a blocking send into an empty
//!   queue whose agent is free (as `resolve_agent` decides on the view) is
//!   admitted in that same commit, its `Admitted` record after its
//!   `Entered` and its run started (and no `notify`: the queue is empty,
//!   and the run's end notifies); then, lock released, a steer cancels
//!   that run; then `notify`. Inputs that wait for the lock together share
//!   one commit (`group.rs`), made under one lock hold as their steps one
//!   after another with nothing between would be (which the model explores
//!   among the other interleavings); only an input committed alone is
//!   admitted at once. An admission at once is committed by its run's
//!   first commit (`at_once.rs`), the lock held from the decision until
//!   that commit is made: the step is still one commit under the lock.
//!   When the run's first commit also ends it, the commit carries its
//!   settlement too (the queue is still empty, and the lock still held):
//!   the run's end follows its admission with nothing between, one path
//!   among those the model explores. (A context the message opens itself
//!   then keeps no stream at all: the queue is left idle with the run's
//!   agent as its last replier, which is what a view of a context with no
//!   stream reads from the context's tasks and what the stream created
//!   next starts with; only the revision differs, and a revision is only
//!   compared by the next conditional append, at 0 a creation, so the
//!   model's step is the same. Likewise a quick run whose commit leaves
//!   the queue as it found it, its agent the last replier already or its
//!   run failed, appends no record and only checks the stream's revision,
//!   which then stays: a view at that revision is the queue as it is, so a
//!   conditional append on it that the model refuses and makes again on
//!   the caught-up view, the same queue, decides the same.) A refused commit created nothing
//!   (the enqueue is made again under a new task id): as if the step had
//!   not been taken.
//! - CancelTask (`cancel.rs`): a read of the task; a queued one is then,
//!   under the lock, caught up, read again and, still queued, canceled and
//!   removed from the queue in one commit; any other goes to the engine's
//!   cancel (`ops::cancel`: one conditional commit of CANCELED, not under
//!   the lock, through the run's writer when the run is on this host, which
//!   closes the writer); then `notify`. A task that is terminal or unknown
//!   answers an error and notifies nothing.
//! - reorder (`ext.rs`): GetContextQueue (under the lock, reads the
//!   revision), later ReorderContextQueue (under the lock: catch up, refuse
//!   a stale revision, commit `Reordered`), then `notify`.
//! - a run (`run.rs`): its terminal commit on the task (none if a cancel
//!   got there first; its writer closed first), then the end-of-execution
//!   hook, which keeps the task the run ended with and `notify`s. A
//!   COMPLETED reply without a handoff, or a FAILED end, waits for its
//!   host's lock, catches up and carries the run's settlement in the same
//!   commit (`closing.rs`), with what the head does next, decided on the
//!   queue with the run settled: a canceled head's removal, or the head's
//!   admission (its run started) when its agent is free; then, if the new
//!   head could run, `notify`; its end hook then notifies nothing. A cancel
//!   through the writer of a run on the cancel's host (`ops::cancel`)
//!   carries it the same way.
//! - the drain (`core.rs`, `drain.rs`, `admit.rs`): the gate's loop; a pass
//!   takes the lock and catches up, looks at the active runs one by one
//!   until one has ended (a run of its own host whose writer is open is
//!   going, nothing read; any other's task is read, or taken from what its
//!   end hook kept: the same terminal task), then reads the head's task (or
//!   takes it as its own enqueue committed it: a queued task changes only in
//!   a commit that also takes it out of the queue, so the two are the same
//!   here; a canceled head is removed; a waiting head ends the pass) and
//!   admits it in a commit
//!   conditional on the task's version and the queue's revision; an ended
//!   run is settled in the same commit as what the head does next, decided
//!   on the queue with the run settled (a settlement that hands off is
//!   committed alone); every commit is followed by a catch-up; the lock is
//!   released at the pass's end and `finish_pass` decides about another.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::marker::PhantomData;

use a2a_tower::queue::{DrainGate, Entry, Priority};

/// The agents of the team; the first is the default one.
const AGENTS: [&str; 2] = ["a", "b"];
/// How many handoffs the model lets lead to one input.
const MAX_HOPS: u8 = 1;

type Agent = u8;
type Tid = u8;

// ---------------------------------------------------------------- the gate

/// One call on a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Call {
    Notify,
    FinishPass,
}

/// What the drain loop needs of a gate: the real [`DrainGate`], or a broken
/// one for the negative controls.
trait Gate: Default {
    fn notify(&self) -> bool;
    fn finish_pass(&self) -> bool;

    fn call(&self, call: Call) -> bool {
        match call {
            Call::Notify => self.notify(),
            Call::FinishPass => self.finish_pass(),
        }
    }
}

impl Gate for DrainGate {
    fn notify(&self) -> bool {
        DrainGate::notify(self)
    }
    fn finish_pass(&self) -> bool {
        DrainGate::finish_pass(self)
    }
}

/// Broken: a pass's end drops the dirty bit (the event that came in during
/// the pass is lost).
#[derive(Default)]
struct Forgetful(DrainGate);

impl Gate for Forgetful {
    fn notify(&self) -> bool {
        self.0.notify()
    }
    fn finish_pass(&self) -> bool {
        if self.0.finish_pass() {
            self.0.finish_pass();
        }
        false
    }
}

/// Broken: an event during a drain is ignored instead of marking it dirty.
#[derive(Default)]
struct Deaf(DrainGate);

impl Gate for Deaf {
    fn notify(&self) -> bool {
        // Only an idle gate hears the event (and starts the drain).
        !self.0.is_running() && self.0.notify()
    }
    fn finish_pass(&self) -> bool {
        self.0.finish_pass()
    }
}

/// The gate's states as the explorer keeps them (a number in each model
/// state): each is the first call history seen to reach it from
/// `G::default()`, two histories being one state when gates replayed through
/// them answer every probe (each sequence of up to three calls) alike. A
/// state's gate is rebuilt by replaying its history; answers are memoised
/// per state and call, the gate being deterministic.
struct Gates<G> {
    histories: Vec<Vec<Call>>,
    by_answers: HashMap<Vec<bool>, u8>,
    memo: HashMap<(u8, Call), (bool, u8)>,
    gate: PhantomData<G>,
}

impl<G: Gate> Gates<G> {
    fn new() -> Self {
        let mut gates = Self {
            histories: Vec::new(),
            by_answers: HashMap::new(),
            memo: HashMap::new(),
            gate: PhantomData,
        };
        assert_eq!(gates.state_of(Vec::new()), 0, "the default gate is state 0");
        gates
    }

    /// A gate after `history`.
    fn replay(history: &[Call]) -> G {
        let gate = G::default();
        for &call in history {
            gate.call(call);
        }
        gate
    }

    fn state_of(&mut self, history: Vec<Call>) -> u8 {
        let calls = [Call::Notify, Call::FinishPass];
        let mut answers = Vec::new();
        for len in 1..=3 {
            for n in 0..(1usize << len) {
                let gate = Self::replay(&history);
                answers.extend((0..len).map(|i| gate.call(calls[(n >> i) & 1])));
            }
        }
        if let Some(&id) = self.by_answers.get(&answers) {
            return id;
        }
        let id = u8::try_from(self.histories.len()).expect("few gate states");
        self.histories.push(history);
        self.by_answers.insert(answers, id);
        id
    }

    /// `call` on a gate in `state`: its answer and the state after.
    fn call(&mut self, state: u8, call: Call) -> (bool, u8) {
        if let Some(&out) = self.memo.get(&(state, call)) {
            return out;
        }
        let mut history = self.histories[usize::from(state)].clone();
        let answer = Self::replay(&history).call(call);
        history.push(call);
        let out = (answer, self.state_of(history));
        self.memo.insert((state, call), out);
        out
    }
}

// ---------------------------------------------------------------- the log

/// A task as the log holds it (its snapshot's state, its version for
/// conditional commits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TaskState {
    /// Not created yet (its enqueue has not committed).
    Unborn,
    /// SUBMITTED, its input queued.
    Queued,
    /// Admitted for the agent, WORKING.
    Working(Agent),
    /// Its run ended waiting for input: not terminal, the agent stays busy.
    InputRequired(Agent),
    /// COMPLETED; `true` if its reply names the other agent (a handoff).
    Completed(bool),
    Failed,
    Canceled,
}

impl TaskState {
    fn terminal(self) -> bool {
        matches!(self, Self::Completed(_) | Self::Failed | Self::Canceled)
    }

    /// The agent it occupies in the context: admitted and not terminal.
    fn busy(self) -> Option<Agent> {
        match self {
            Self::Working(a) | Self::InputRequired(a) => Some(a),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Task {
    state: TaskState,
    version: u8,
    admitted: bool,
}

impl Task {
    const UNBORN: Self = Self {
        state: TaskState::Unborn,
        version: 0,
        admitted: false,
    };

    fn commit(&mut self, state: TaskState) {
        self.state = state;
        self.version += 1;
    }
}

/// A queue entry in the model; [`QEntry::entry`] is the crate's [`Entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct QEntry {
    tid: Tid,
    target: Option<Agent>,
    priority: Priority,
    position: Option<i8>,
    arrival: u8,
    hops: u8,
}

impl QEntry {
    fn entry(&self) -> Entry {
        Entry {
            task_id: format!("t{}", self.tid),
            target: self.target.map(|a| AGENTS[usize::from(a)].to_owned()),
            priority: self.priority,
            position: self.position.map(i64::from),
            arrival: u64::from(self.arrival),
            hops: u32::from(self.hops),
        }
    }
}

/// The projection of the queue stream (`ContextQueue`): the log's, or a
/// host's view of it as of its last catch-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct Queue {
    /// The revision.
    rev: u8,
    /// In comparator order.
    entries: Vec<QEntry>,
    /// `(agent, task, hops)` by agent.
    active: Vec<(Agent, Tid, u8)>,
    last_replier: Option<Agent>,
}

impl Queue {
    fn sort(&mut self) {
        self.entries.sort_by(|x, y| x.entry().order(&y.entry()));
    }

    /// An `Entered` record in the commit that makes revision `self.rev`.
    fn enter(
        &mut self,
        tid: Tid,
        target: Option<Agent>,
        priority: Priority,
        position: Option<i8>,
        hops: u8,
    ) {
        self.entries.retain(|e| e.tid != tid);
        self.entries.push(QEntry {
            tid,
            target,
            priority,
            position,
            arrival: self.rev,
            hops,
        });
        self.sort();
    }

    fn remove(&mut self, tid: Tid) -> Option<QEntry> {
        let i = self.entries.iter().position(|e| e.tid == tid)?;
        Some(self.entries.remove(i))
    }

    /// The position a steer takes: before the head.
    fn front(&self) -> i8 {
        match self.entries.first().and_then(|e| e.position) {
            Some(p) => p - 1,
            None => 0,
        }
    }

    fn running(&self, agent: Agent) -> Option<Tid> {
        self.active.iter().find(|r| r.0 == agent).map(|r| r.1)
    }

    /// `resolve_agent`: the agent to admit `head` for, or `None` (wait).
    fn resolve(&self, head: &QEntry) -> Option<Agent> {
        let agent = match head.target {
            Some(t) => t,
            None if !self.active.is_empty() => return None,
            None => self.last_replier.unwrap_or(0),
        };
        self.running(agent).is_none().then_some(agent)
    }
}

// ---------------------------------------------------------------- actors

/// A script's event.
#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A new input (task `tid`); `steer` puts it first and cancels its
    /// target's run; `at_once` (a blocking send) admits it in its enqueue's
    /// commit when the queue is empty and its agent free.
    Enqueue {
        tid: Tid,
        target: Option<Agent>,
        urgent: bool,
        steer: bool,
        at_once: bool,
    },
    /// CancelTask on `tid` (queued, running, waiting for input, or done).
    Cancel(Tid),
    /// GetContextQueue, then ReorderContextQueue with a permutation of it.
    Reorder,
}

/// Where a client is in its current event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Phase {
    Ready,
    /// A steer's cancel of its target's run.
    SteerCancel(Tid),
    /// CancelTask read the task queued: the queue's cancel is next.
    CancelQueued(Tid),
    /// CancelTask of a task not queued: the engine's cancel is next.
    CancelEngine(Tid),
    /// Committed; the `notify` is next.
    Notify,
    /// Read the queue at `rev`; submits `order`.
    Submit {
        rev: u8,
        order: Vec<Tid>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Client {
    pc: u8,
    phase: Phase,
}

/// A drain task's next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Drainer {
    /// Take the lock and catch up.
    Acquire,
    /// In a pass, after a commit: catch up.
    CatchUp,
    /// In a pass: read the `i`-th active run's task, or past them the head's.
    Look(u8),
    /// In a pass: the admission commit of the head read at `version`, with
    /// the settlement of `(agent, task)`'s ended run it follows, if any.
    Admit {
        tid: Tid,
        agent: Agent,
        version: u8,
        settles: Option<(Agent, Tid)>,
    },
    /// The pass ended (lock released): `finish_pass`.
    AfterPass,
    /// The pass failed on a log error (lock released): after a backoff,
    /// another pass, the gate untouched.
    Backoff,
}

impl Drainer {
    fn holds_lock(self) -> bool {
        matches!(self, Self::CatchUp | Self::Look(_) | Self::Admit { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Host {
    view: Queue,
    gate: u8,
    drainers: Vec<Drainer>,
    /// Start-up recovery's `notify` is still to come.
    startup: bool,
}

impl Host {
    fn locked(&self) -> bool {
        self.drainers.iter().any(|d| d.holds_lock())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Run {
    tid: Tid,
    host: u8,
    /// Its task is committed (or was canceled): the end hook is next.
    ended: bool,
    /// Its writer is closed: the run ended, or a cancel on its host went
    /// through the writer. While it is open, its host's drain reads nothing
    /// of the task (`run_is` in `drain.rs`).
    closed: bool,
    /// Its writer's closing commit settled it (`closing.rs`): the end hook
    /// notifies nothing.
    settled: bool,
}

/// How a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completed,
    /// Completed with a reply naming the other agent.
    Handoff,
    Failed,
    InputRequired,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    tasks: Vec<Task>,
    log: Queue,
    hosts: Vec<Host>,
    clients: Vec<Client>,
    runs: Vec<Run>,
    /// Log faults the drain may still meet along this path.
    faults: u8,
    /// Compactions the sweeper may still make along this path.
    compactions: u8,
    /// The sweeper read the queue idle at this revision (with this last
    /// replier): its restatement is next.
    sweeper: Option<(u8, Option<Agent>)>,
}

impl State {
    /// The state with what no step can tell apart made equal, so that
    /// interleavings that differ only there meet: a view no lock holder
    /// reads (each use catches up first) is dropped; revisions and arrivals,
    /// only ever compared with each other and with fresh ones above them all,
    /// become their ranks; task versions, only compared with the version an
    /// admission read, become 0 (current) and 255 (stale).
    fn canonical(&mut self) {
        for host in &mut self.hosts {
            let live = host
                .drainers
                .iter()
                .any(|d| matches!(d, Drainer::Look(_) | Drainer::Admit { .. }));
            if !live {
                host.view = Queue::default();
            }
        }
        let mut revs = vec![0];
        let queues = std::iter::once(&self.log).chain(self.hosts.iter().map(|h| &h.view));
        for q in queues {
            revs.push(q.rev);
            revs.extend(q.entries.iter().map(|e| e.arrival));
        }
        for c in &self.clients {
            if let Phase::Submit { rev, .. } = c.phase {
                revs.push(rev);
            }
        }
        if let Some((rev, _)) = self.sweeper {
            revs.push(rev);
        }
        revs.sort_unstable();
        revs.dedup();
        let rank = |r: &mut u8| *r = u8::try_from(revs.binary_search(r).unwrap()).unwrap();
        let queues =
            std::iter::once(&mut self.log).chain(self.hosts.iter_mut().map(|h| &mut h.view));
        for q in queues {
            rank(&mut q.rev);
            q.entries.iter_mut().for_each(|e| rank(&mut e.arrival));
        }
        for c in &mut self.clients {
            if let Phase::Submit { rev, .. } = &mut c.phase {
                rank(rev);
            }
        }
        if let Some((rev, _)) = &mut self.sweeper {
            rank(rev);
        }
        for d in self.hosts.iter_mut().flat_map(|h| &mut h.drainers) {
            if let Drainer::Admit { tid, version, .. } = d {
                let current = self.tasks[usize::from(*tid)].version;
                *version = if *version == current { 0 } else { 255 };
            }
        }
        for t in &mut self.tasks {
            t.version = 0;
        }
    }
}

/// One step of one actor.
#[derive(Debug, Clone, Copy)]
enum Step {
    Startup(u8),
    Drain(u8, usize),
    Client(usize, usize),
    Run(usize, Outcome),
    RunEnd(usize),
    /// The drainer's next log call fails; `after`: a commit made before the
    /// error (a settlement's or a removal's).
    Fault(u8, usize, bool),
    /// The retention sweep: reads the queue stream (idle: nothing queued,
    /// nothing running), or restates it at the revision it read.
    Sweep,
}

// ---------------------------------------------------------------- scenarios

struct Scenario {
    name: &'static str,
    hosts: u8,
    /// Each client's host and script.
    clients: Vec<(u8, Vec<Ev>)>,
    /// How runs may end.
    outcomes: &'static [Outcome],
    /// What the log holds at start-up (every host then notifies).
    recovered: Option<fn(&mut State)>,
    /// How many of the drain's log calls may fail along one path.
    faults: u8,
    /// How many times the queue stream may be compacted along one path.
    compactions: u8,
}

impl Scenario {
    fn initial(&self) -> State {
        let tids = self
            .clients
            .iter()
            .flat_map(|(_, s)| s)
            .filter_map(|e| match e {
                Ev::Enqueue { tid, .. } | Ev::Cancel(tid) => Some(usize::from(*tid) + 1),
                Ev::Reorder => None,
            })
            .max()
            .unwrap_or(0);
        let mut s = State {
            tasks: vec![Task::UNBORN; tids],
            log: Queue::default(),
            hosts: (0..self.hosts)
                .map(|_| Host {
                    view: Queue::default(),
                    gate: 0,
                    drainers: Vec::new(),
                    startup: self.recovered.is_some(),
                })
                .collect(),
            clients: self
                .clients
                .iter()
                .map(|_| Client {
                    pc: 0,
                    phase: Phase::Ready,
                })
                .collect(),
            runs: Vec::new(),
            faults: self.faults,
            compactions: self.compactions,
            sweeper: None,
        };
        if let Some(recovered) = self.recovered {
            recovered(&mut s);
        }
        s
    }
}

// ---------------------------------------------------------------- explorer

/// A rule broken, with what led there.
#[derive(Debug)]
struct Violation {
    rule: &'static str,
    detail: String,
    trace: Vec<String>,
}

/// A rule broken, with the steps that led there.
#[derive(Debug)]
struct Broken {
    rule: &'static str,
    detail: String,
    trace: Vec<Step>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {}", self.rule, self.detail)?;
        for (i, step) in self.trace.iter().enumerate() {
            writeln!(f, "  {i:3} {step}")?;
        }
        Ok(())
    }
}

const STUCK: &str =
    "rests with a non-empty queue, an executable head, no active run and no drain pending";
const HEAD_IGNORED: &str = "rests with a head a pass would admit or remove";
const UNSETTLED: &str = "rests with an ended run unsettled";
const TWO_DRAINS: &str = "two drains of the context on one host";
const TWO_RUNS: &str = "an agent gets a second active run in the context";
const NOT_HEAD: &str = "an admission is not of the comparator's head";
const NOT_QUEUED: &str = "an admitted task is not a queued, never-admitted input";
const LOST: &str = "rests with a queued input missing from the queue";
const WRONG_AGENT: &str =
    "an input goes to an agent it does not name, or a targetless one runs beside another";

#[derive(Debug, Default)]
struct Stats {
    /// Distinct states.
    states: usize,
    /// States where the context rests (every rule of rest checked).
    rests: usize,
    /// States where nothing more can happen.
    ends: usize,
    /// Admission commits made (on every edge explored).
    admissions: usize,
    /// Commits lost to another writer's (a cancel, another host).
    lost: usize,
    /// Passes run again because an event came in during one.
    repasses: usize,
    /// Log faults met by the drain (on every edge explored).
    faults: usize,
    /// Restatements committed by the sweeper (on every edge explored).
    compactions: usize,
    /// The longest path.
    max_depth: usize,
}

/// What the model runs: the queue's code, or one part of it broken (a
/// negative control).
#[derive(Debug, Clone, Copy, Default)]
struct Code {
    fault: OnFault,
    compact: OnCompact,
    ride: OnRide,
}

/// What a closing commit that admitted the head does about the head behind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum OnRide {
    /// Wakes the drain if that head could run (`closing.rs`).
    #[default]
    Wakes,
    /// Broken: nothing (that head waits for the next event).
    Silent,
}

/// How the sweeper restates the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum OnCompact {
    /// Conditionally on the revision it read (`log::restate_stream`).
    #[default]
    Conditional,
    /// Broken: whatever the queue became since it read it.
    Blind,
}

/// What a drain does with a pass that failed on a log error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum OnFault {
    /// Passes again after a backoff (`core.rs`).
    #[default]
    Retry,
    /// Broken: ends the pass as if it had found nothing (`finish_pass`).
    GiveUp,
}

struct Explorer<'a, G> {
    sc: &'a Scenario,
    gates: Gates<G>,
    /// Each state seen, as its bytes.
    visited: HashSet<Box<[u8]>, BuildHasherDefault<Fx>>,
    path: Vec<Step>,
    stats: Stats,
    /// The rules of a resting context that are checked.
    rest_rules: &'static [&'static str],
    code: Code,
}

/// Every rule of a resting context.
const REST_RULES: &[&str] = &[STUCK, HEAD_IGNORED, UNSETTLED, LOST];

/// Explores every interleaving of `sc` with gate `G`, checking the rules of
/// every path and `rest_rules`.
fn explore<G: Gate>(
    sc: &Scenario,
    rest_rules: &'static [&'static str],
    code: Code,
) -> Result<Stats, Violation> {
    let mut ex = Explorer {
        sc,
        gates: Gates::<G>::new(),
        visited: HashSet::default(),
        path: Vec::new(),
        stats: Stats::default(),
        rest_rules,
        code,
    };
    if let Err(broken) = ex.dfs(sc.initial()) {
        return Err(Violation {
            rule: broken.rule,
            detail: broken.detail,
            trace: ex.describe(&broken.trace),
        });
    }
    ex.stats.states = ex.visited.len();
    Ok(ex.stats)
}

impl<G: Gate> Explorer<'_, G> {
    fn fail(&self, rule: &'static str, detail: String) -> Broken {
        Broken {
            rule,
            detail,
            trace: self.path.clone(),
        }
    }

    /// What each step of `trace` did, replayed from the start.
    fn describe(&mut self, trace: &[Step]) -> Vec<String> {
        let mut s = self.sc.initial();
        let mut out = Vec::new();
        for &step in trace {
            s.canonical();
            let what = match step {
                Step::Startup(h) => format!("host {h}: start-up notify"),
                Step::Drain(h, i) => {
                    let host = &s.hosts[usize::from(h)];
                    format!(
                        "host {h}: drain {:?}, queue {:?}",
                        host.drainers[i],
                        s.log.entries.iter().map(|e| e.tid).collect::<Vec<_>>()
                    )
                }
                Step::Client(c, _) => {
                    let (h, script) = &self.sc.clients[c];
                    let client = &s.clients[c];
                    format!(
                        "client {c} on host {h}: {:?} {:?}",
                        script[usize::from(client.pc)],
                        client.phase
                    )
                }
                Step::Run(i, o) => format!("run t{}: {o:?}", s.runs[i].tid),
                Step::RunEnd(i) => format!(
                    "run t{}: end hook notifies host {}",
                    s.runs[i].tid, s.runs[i].host
                ),
                Step::Fault(h, i, after) => format!(
                    "host {h}: drain {:?} fails on a log error{}",
                    s.hosts[usize::from(h)].drainers[i],
                    if after { " after its commit" } else { "" }
                ),
                Step::Sweep => match s.sweeper {
                    None => format!("sweeper: reads the queue idle at {}", s.log.rev),
                    Some((rev, _)) => format!("sweeper: restates the queue read at {rev}"),
                },
            };
            out.push(what);
            match self.apply(&s, step) {
                Ok(next) => s = next,
                // The step that broke a rule of its own.
                Err(_) => break,
            }
        }
        out
    }

    fn dfs(&mut self, mut s: State) -> Result<(), Broken> {
        s.canonical();
        if !self.visited.insert(encode(&s)) {
            return Ok(());
        }
        self.stats.max_depth = self.stats.max_depth.max(self.path.len());
        let steps = self.steps(&s);
        self.check(&s, steps.is_empty())?;
        for step in steps {
            self.path.push(step);
            let next = self.apply(&s, step)?;
            self.dfs(next)?;
            self.path.pop();
        }
        Ok(())
    }

    /// The rules of a state. At rest, a head is executable when a pass
    /// would act on it: admit it, or remove it (canceled).
    fn check(&mut self, s: &State, end: bool) -> Result<(), Broken> {
        if let Some(h) = s.hosts.iter().position(|h| h.drainers.len() > 1) {
            return Err(self.fail(TWO_DRAINS, format!("host {h}")));
        }
        let rests = s.hosts.iter().all(|h| h.drainers.is_empty() && !h.startup)
            && s.clients
                .iter()
                .all(|c| matches!(c.phase, Phase::Ready | Phase::Submit { .. }))
            && s.runs.iter().all(|r| !r.ended);
        if !rests {
            return Ok(());
        }
        self.stats.rests += 1;
        self.stats.ends += usize::from(end);
        let q = &s.log;
        let any_run = s.tasks.iter().any(|t| t.state.busy().is_some());
        if let Some(head) = q.entries.first() {
            let canceled = s.tasks[usize::from(head.tid)].state != TaskState::Queued;
            let rule = if any_run { HEAD_IGNORED } else { STUCK };
            if (canceled || q.resolve(head).is_some()) && self.rest_rules.contains(&rule) {
                let detail = format!("head t{} (canceled: {canceled}), queue {q:?}", head.tid);
                return Err(self.fail(rule, detail));
            }
        }
        let lost = (0..s.tasks.len()).find(|&t| {
            s.tasks[t].state == TaskState::Queued
                && !q.entries.iter().any(|e| usize::from(e.tid) == t)
        });
        if let Some(t) = lost.filter(|_| self.rest_rules.contains(&LOST)) {
            return Err(self.fail(LOST, format!("t{t}, queue {q:?}")));
        }
        let ended = q
            .active
            .iter()
            .find(|r| s.tasks[usize::from(r.1)].state.terminal());
        if let Some(r) = ended.filter(|_| self.rest_rules.contains(&UNSETTLED)) {
            return Err(self.fail(UNSETTLED, format!("run t{} of agent {}", r.1, r.0)));
        }
        Ok(())
    }

    fn steps(&self, s: &State) -> Vec<Step> {
        let mut out = Vec::new();
        for (h, host) in s.hosts.iter().enumerate() {
            let h = u8::try_from(h).unwrap();
            if host.startup {
                out.push(Step::Startup(h));
            }
            for (i, d) in host.drainers.iter().enumerate() {
                if *d != Drainer::Acquire || !host.locked() {
                    out.push(Step::Drain(h, i));
                    if s.faults > 0 && !matches!(d, Drainer::AfterPass | Drainer::Backoff) {
                        out.push(Step::Fault(h, i, false));
                    }
                    if s.faults > 0 && matches!(d, Drainer::Look(_)) {
                        out.push(Step::Fault(h, i, true));
                    }
                }
            }
        }
        for (c, client) in s.clients.iter().enumerate() {
            let (host, script) = &self.sc.clients[c];
            let locked = s.hosts[usize::from(*host)].locked();
            match &client.phase {
                Phase::Ready => match script.get(usize::from(client.pc)) {
                    None => {}
                    Some(Ev::Enqueue { .. }) if !locked => out.push(Step::Client(c, 0)),
                    Some(Ev::Cancel(_)) => out.push(Step::Client(c, 0)),
                    Some(Ev::Reorder) if !locked => {
                        let n = permutations(s.log.entries.len()).len();
                        out.extend((0..n).map(|k| Step::Client(c, k)));
                    }
                    Some(_) => {}
                },
                // A cancel through an open writer of this host may carry the
                // settlement: it waits for the lock.
                Phase::SteerCancel(tid) | Phase::CancelEngine(tid) => {
                    let ends = !s.tasks[usize::from(*tid)].state.terminal();
                    if !locked || !ends || !open_here(&s.runs, *tid, *host) {
                        out.push(Step::Client(c, 0));
                    }
                }
                Phase::Notify => out.push(Step::Client(c, 0)),
                Phase::CancelQueued(_) if !locked => out.push(Step::Client(c, 0)),
                Phase::CancelQueued(_) => {}
                Phase::Submit { .. } if !locked => out.push(Step::Client(c, 0)),
                Phase::Submit { .. } => {}
            }
        }
        // The sweep, between any two steps: a read of an idle queue, then
        // the restatement (which needs no idle queue any more).
        // A stream exists (something was committed to it).
        let idle = s.log.rev > 0 && s.log.entries.is_empty() && s.log.active.is_empty();
        if s.sweeper.is_some() || (s.compactions > 0 && idle) {
            out.push(Step::Sweep);
        }
        for (i, run) in s.runs.iter().enumerate() {
            if run.ended {
                out.push(Step::RunEnd(i));
            } else {
                let hops = self.hops_of(s, run.tid) < MAX_HOPS;
                // A closing commit that may carry the settlement waits for
                // its host's lock.
                let locked = s.hosts[usize::from(run.host)].locked() && !run.closed;
                for &o in self.sc.outcomes {
                    let rides = matches!(o, Outcome::Completed | Outcome::Failed);
                    if (o != Outcome::Handoff || hops) && !(rides && locked) {
                        out.push(Step::Run(i, o));
                    }
                }
            }
        }
        out
    }

    fn hops_of(&self, s: &State, tid: Tid) -> u8 {
        s.log.active.iter().find(|r| r.1 == tid).map_or(0, |r| r.2)
    }

    fn notify(&mut self, s: &mut State, h: u8) {
        let host = &mut s.hosts[usize::from(h)];
        let (start, gate) = self.gates.call(host.gate, Call::Notify);
        host.gate = gate;
        if start {
            host.drainers.push(Drainer::Acquire);
            host.drainers.sort();
        }
    }

    fn apply(&mut self, s: &State, step: Step) -> Result<State, Broken> {
        let mut n = s.clone();
        match step {
            Step::Startup(h) => {
                n.hosts[usize::from(h)].startup = false;
                self.notify(&mut n, h);
            }
            Step::Drain(h, i) => self.drain(&mut n, h, i)?,
            Step::Sweep => self.sweep(&mut n),
            Step::Client(c, k) => self.client(&mut n, c, k)?,
            Step::Run(i, outcome) => {
                let run = n.runs[i];
                n.runs[i].ended = true;
                n.runs[i].closed = true;
                let task = &mut n.tasks[usize::from(run.tid)];
                // The run's terminal commit, unless a cancel came first (its
                // writer is then closed: nothing is committed).
                if let (TaskState::Working(agent), false) = (task.state, run.closed) {
                    task.commit(match outcome {
                        Outcome::Completed => TaskState::Completed(false),
                        Outcome::Handoff => TaskState::Completed(true),
                        Outcome::Failed => TaskState::Failed,
                        Outcome::InputRequired => TaskState::InputRequired(agent),
                    });
                    if matches!(outcome, Outcome::Completed | Outcome::Failed) {
                        // The ride may admit (and start) a run: `i` may
                        // no longer be this one's index.
                        let settled = self.ride(&mut n, run.host, run.tid)?;
                        for r in n.runs.iter_mut().filter(|r| r.tid == run.tid) {
                            r.settled = settled;
                        }
                    }
                }
            }
            Step::RunEnd(i) => {
                // The end-of-execution hook: nothing to drain after a
                // closing commit that settled the run.
                let run = n.runs.remove(i);
                if !run.settled {
                    self.notify(&mut n, run.host);
                }
            }
            Step::Fault(h, i, after) => {
                n.faults -= 1;
                self.stats.faults += 1;
                if after {
                    // The look and the commit it makes; only the answer is
                    // lost (one drainer per host: `i` stays its index).
                    self.drain(&mut n, h, i)?;
                }
                let host = &mut n.hosts[usize::from(h)];
                host.drainers[i] = match self.code.fault {
                    OnFault::Retry => Drainer::Backoff,
                    OnFault::GiveUp => Drainer::AfterPass,
                };
                host.drainers.sort();
            }
        }
        Ok(n)
    }

    fn client(&mut self, n: &mut State, c: usize, k: usize) -> Result<(), Broken> {
        let (h, script) = &self.sc.clients[c];
        let (h, hu) = (*h, usize::from(*h));
        let client = &mut n.clients[c];
        let done = |client: &mut Client| {
            client.pc += 1;
            client.phase = Phase::Ready;
        };
        match std::mem::replace(&mut client.phase, Phase::Ready) {
            Phase::Ready => match script[usize::from(client.pc)] {
                Ev::Enqueue {
                    tid,
                    target,
                    urgent,
                    steer,
                    at_once,
                } => {
                    // Under the lock: catch up, commit task and entry.
                    n.hosts[hu].view = n.log.clone();
                    let view = &n.hosts[hu].view;
                    let position = steer.then(|| view.front());
                    let steered = target.filter(|_| steer).and_then(|t| view.running(t));
                    let priority = if urgent {
                        Priority::Urgent
                    } else {
                        Priority::Normal
                    };
                    n.tasks[usize::from(tid)] = Task {
                        state: TaskState::Queued,
                        version: 0,
                        admitted: false,
                    };
                    let empty = n.log.entries.is_empty();
                    n.log.rev += 1;
                    n.log.enter(tid, target, priority, position, 0);
                    // A blocking send into an empty queue whose agent is
                    // free: its admission is in the same commit (the
                    // stream's `Admitted` after its `Entered`).
                    let head = n.log.entries[0];
                    let agent = n.log.resolve(&head).filter(|_| at_once && empty);
                    if let Some(agent) = agent {
                        // Nothing left for a drain: no `notify`.
                        self.admit(n, h, tid, agent)?;
                        done(&mut n.clients[c]);
                        return Ok(());
                    }
                    n.clients[c].phase = match steered {
                        Some(run) => Phase::SteerCancel(run),
                        None => Phase::Notify,
                    };
                }
                Ev::Cancel(tid) => {
                    client.phase = match n.tasks[usize::from(tid)].state {
                        TaskState::Queued => Phase::CancelQueued(tid),
                        TaskState::Unborn => {
                            // TaskNotFound: no notify.
                            done(client);
                            return Ok(());
                        }
                        _ => Phase::CancelEngine(tid),
                    }
                }
                Ev::Reorder => {
                    // GetContextQueue: under the lock, catch up and read.
                    n.hosts[hu].view = n.log.clone();
                    let ids: Vec<Tid> = n.log.entries.iter().map(|e| e.tid).collect();
                    let order = permutations(ids.len())[k].iter().map(|&i| ids[i]).collect();
                    n.clients[c].phase = Phase::Submit {
                        rev: n.log.rev,
                        order,
                    };
                }
            },
            Phase::CancelQueued(tid) => {
                // Under the lock: catch up, read the task again; a lost
                // commit reads again (the step is that last, winning try).
                n.hosts[hu].view = n.log.clone();
                let task = &mut n.tasks[usize::from(tid)];
                if task.state == TaskState::Queued && n.log.remove(tid).is_some() {
                    task.commit(TaskState::Canceled);
                    n.log.rev += 1;
                    client.phase = Phase::Notify;
                } else {
                    // Admitted meanwhile: the engine's cancel.
                    client.phase = Phase::CancelEngine(tid);
                }
            }
            Phase::CancelEngine(tid) => {
                let task = &mut n.tasks[usize::from(tid)];
                if task.state.terminal() {
                    // TaskNotCancelable: no notify.
                    done(client);
                } else {
                    task.commit(TaskState::Canceled);
                    self.cancel_here(n, tid, h)?;
                    n.clients[c].phase = Phase::Notify;
                }
            }
            Phase::SteerCancel(run) => {
                let task = &mut n.tasks[usize::from(run)];
                if !task.state.terminal() {
                    task.commit(TaskState::Canceled);
                    self.cancel_here(n, run, h)?;
                }
                n.clients[c].phase = Phase::Notify;
            }
            Phase::Notify => {
                done(client);
                self.notify(n, h);
            }
            Phase::Submit { rev, order } => {
                // Under the lock: catch up; a stale revision changes nothing.
                n.hosts[hu].view = n.log.clone();
                if rev == n.log.rev {
                    n.log.rev += 1;
                    for (i, tid) in order.iter().enumerate() {
                        let e = n.log.entries.iter_mut().find(|e| e.tid == *tid);
                        e.expect("same revision, same entries").position = Some(i as i8);
                    }
                    n.log.sort();
                    n.hosts[hu].view = n.log.clone();
                    n.clients[c].phase = Phase::Notify;
                } else {
                    done(&mut n.clients[c]);
                }
            }
        }
        Ok(())
    }

    fn drain(&mut self, n: &mut State, h: u8, i: usize) -> Result<(), Broken> {
        let hu = usize::from(h);
        let drainer = n.hosts[hu].drainers[i];
        let next = match drainer {
            Drainer::Acquire | Drainer::CatchUp => {
                n.hosts[hu].view = n.log.clone();
                Drainer::Look(0)
            }
            Drainer::Look(k) => self.look(n, h, k),
            Drainer::Admit {
                tid,
                agent,
                version,
                settles,
            } => {
                let fresh = n.tasks[usize::from(tid)].version == version
                    && n.hosts[hu].view.rev == n.log.rev;
                if fresh {
                    if let Some((agent, run)) = settles {
                        let state = n.tasks[usize::from(run)].state;
                        settle(&mut n.log, agent, run, state);
                    }
                    self.admit(n, h, tid, agent)?;
                } else {
                    self.stats.lost += 1;
                }
                Drainer::CatchUp
            }
            Drainer::AfterPass => {
                let (again, gate) = self.gates.call(n.hosts[hu].gate, Call::FinishPass);
                n.hosts[hu].gate = gate;
                if !again {
                    n.hosts[hu].drainers.remove(i);
                    return Ok(());
                }
                self.stats.repasses += 1;
                Drainer::Acquire
            }
            Drainer::Backoff => Drainer::Acquire,
        };
        let next = match next {
            // One host: only its lock holders write the queue stream, so
            // the catch-up after a commit reads the same whenever it runs.
            Drainer::CatchUp if self.sc.hosts == 1 => {
                n.hosts[hu].view = n.log.clone();
                Drainer::Look(0)
            }
            next => next,
        };
        n.hosts[hu].drainers[i] = next;
        n.hosts[hu].drainers.sort();
        Ok(())
    }

    /// `settle`, then `head`: one read of a task and what it decides. An
    /// ended run's task stays terminal, so reading it, reading the head's
    /// task and committing the settlement with the head's removal (or
    /// alone) are one step; an admission's commit is a step of its own.
    fn look(&mut self, n: &mut State, h: u8, k: u8) -> Drainer {
        let view = &n.hosts[usize::from(h)].view;
        let fresh = view.rev == n.log.rev;
        let mut settles = None;
        let mut view = std::borrow::Cow::Borrowed(view);
        if let Some(&(agent, tid, hops)) = view.active.get(usize::from(k)) {
            // A run of this host whose writer is open is going: nothing read.
            let open_here = n
                .runs
                .iter()
                .any(|r| r.tid == tid && r.host == h && !r.closed);
            let state = n.tasks[usize::from(tid)].state;
            if open_here || !state.terminal() {
                return Drainer::Look(k + 1);
            }
            if state == TaskState::Completed(true) && hops < MAX_HOPS {
                // A handoff: the settlement and its new entry are committed
                // alone. A lost commit looks again.
                if fresh {
                    let new = Tid::try_from(n.tasks.len()).unwrap();
                    n.tasks.push(Task {
                        state: TaskState::Queued,
                        version: 0,
                        admitted: false,
                    });
                    let log = &mut n.log;
                    log.rev += 1;
                    settle(log, agent, tid, state);
                    log.enter(new, Some(1 - agent), Priority::Normal, None, hops + 1);
                } else {
                    self.stats.lost += 1;
                }
                return Drainer::CatchUp;
            }
            // Ended: the head is decided on the queue with the run settled.
            settle(view.to_mut(), agent, tid, state);
            settles = Some((agent, tid));
        }
        let head = view.entries.first().copied();
        let admit = head.and_then(|head| {
            let task = n.tasks[usize::from(head.tid)];
            if task.state != TaskState::Queued {
                return None;
            }
            view.resolve(&head).map(|agent| Drainer::Admit {
                tid: head.tid,
                agent,
                version: task.version,
                settles,
            })
        });
        if let Some(admit) = admit {
            return admit;
        }
        let canceled = head.filter(|h| n.tasks[usize::from(h.tid)].state != TaskState::Queued);
        if settles.is_none() && canceled.is_none() {
            // Nothing to commit: the head waits, or nothing is queued.
            return Drainer::AfterPass;
        }
        // The settlement, the canceled head's removal, or both, in one
        // commit (a canceled task stays canceled: one step).
        if fresh {
            n.log.rev += 1;
            if let Some((agent, tid)) = settles {
                let state = n.tasks[usize::from(tid)].state;
                settle(&mut n.log, agent, tid, state);
            }
            if let Some(head) = canceled {
                n.log.remove(head.tid);
            }
        } else {
            self.stats.lost += 1;
        }
        Drainer::CatchUp
    }

    /// The sweeper's step: read the queue (idle), or restate it as read,
    /// conditionally on the revision read (or not: the broken sweeper). A
    /// restatement is one record: the revision moves, nothing queued,
    /// nothing running, the last replier kept; what follows is read from
    /// it (a host's catch-up copies the queue, so a view behind it is
    /// replaced whole, as `ContextQueue::apply` of `Restated` does).
    fn sweep(&mut self, n: &mut State) {
        match n.sweeper.take() {
            None => {
                n.compactions -= 1;
                n.sweeper = Some((n.log.rev, n.log.last_replier));
            }
            Some((rev, last_replier)) => {
                if rev == n.log.rev || self.code.compact == OnCompact::Blind {
                    self.stats.compactions += 1;
                    n.log = Queue {
                        rev: n.log.rev + 1,
                        entries: Vec::new(),
                        active: Vec::new(),
                        last_replier,
                    };
                } else {
                    self.stats.lost += 1;
                }
            }
        }
    }

    /// The engine's cancel on host `h` of `tid`'s run there goes through
    /// its writer, which closes (`ops::cancel`), its CANCELED commit
    /// carrying the settlement when it can (`ride`); a run on another host
    /// keeps its writer open.
    fn cancel_here(&mut self, n: &mut State, tid: Tid, h: u8) -> Result<(), Broken> {
        if !open_here(&n.runs, tid, h) {
            return Ok(());
        }
        let settled = self.ride(n, h, tid)?;
        for r in n.runs.iter_mut().filter(|r| r.tid == tid && r.host == h) {
            r.closed = true;
            r.settled = settled;
        }
        Ok(())
    }

    /// The closing commit of `tid`'s run on host `h`, just committed (its
    /// task terminal, no handoff), carries the run's settlement when, under
    /// the host's lock (free: the caller's step waits for it) and caught
    /// up, the run is active (`closing.rs`); with it, what the head does
    /// next, decided on the queue with the run settled as a drain's look
    /// decides it: a canceled head's removal, or the head's admission if
    /// its agent is free. A head that could run behind it is then the
    /// drain's (`notify`). Whether it settled.
    fn ride(&mut self, n: &mut State, h: u8, tid: Tid) -> Result<bool, Broken> {
        let hu = usize::from(h);
        debug_assert!(!n.hosts[hu].locked());
        let state = n.tasks[usize::from(tid)].state;
        let run = n.log.active.iter().find(|r| r.1 == tid).copied();
        let Some((agent, _, _)) = run else {
            n.hosts[hu].view = n.log.clone();
            return Ok(false);
        };
        settle(&mut n.log, agent, tid, state);
        let head = n.log.entries.first().copied();
        let queued = |e: &QEntry| n.tasks[usize::from(e.tid)].state == TaskState::Queued;
        match head {
            Some(e) if !queued(&e) => {
                n.log.rev += 1;
                n.log.remove(e.tid);
            }
            Some(e) => match n.log.resolve(&e) {
                Some(next) => self.admit(n, h, e.tid, next)?,
                None => n.log.rev += 1,
            },
            None => n.log.rev += 1,
        }
        n.hosts[hu].view = n.log.clone();
        let runnable = n
            .log
            .entries
            .first()
            .is_some_and(|e| n.log.resolve(e).is_some());
        if runnable && self.code.ride == OnRide::Wakes {
            self.notify(n, h);
        }
        Ok(true)
    }

    /// The admission commit, and the rules it must keep.
    fn admit(&mut self, n: &mut State, h: u8, tid: Tid, agent: Agent) -> Result<(), Broken> {
        self.stats.admissions += 1;
        let task = n.tasks[usize::from(tid)];
        if task.state != TaskState::Queued || task.admitted {
            return Err(self.fail(NOT_QUEUED, format!("t{tid}: {task:?}")));
        }
        let head = n
            .log
            .entries
            .iter()
            .min_by(|x, y| x.entry().order(&y.entry()))
            .copied();
        if head.map(|e| e.tid) != Some(tid) {
            return Err(self.fail(NOT_HEAD, format!("t{tid}, queue {:?}", n.log.entries)));
        }
        let head = head.unwrap();
        let busy: Vec<Agent> = n.tasks.iter().filter_map(|t| t.state.busy()).collect();
        if busy.contains(&agent) {
            return Err(self.fail(TWO_RUNS, format!("t{tid} for agent {agent}")));
        }
        if head.target.is_some_and(|t| t != agent) || (head.target.is_none() && !busy.is_empty()) {
            return Err(self.fail(WRONG_AGENT, format!("t{tid} {head:?} for {agent}")));
        }
        let task = &mut n.tasks[usize::from(tid)];
        task.commit(TaskState::Working(agent));
        task.admitted = true;
        n.log.rev += 1;
        n.log.remove(tid);
        n.log.active.push((agent, tid, head.hops));
        n.log.active.sort();
        n.runs.push(Run {
            tid,
            host: h,
            ended: false,
            closed: false,
            settled: false,
        });
        n.runs.sort();
        Ok(())
    }
}

/// A run of `tid` on host `h` has its writer open.
fn open_here(runs: &[Run], tid: Tid, h: u8) -> bool {
    runs.iter()
        .any(|r| r.tid == tid && r.host == h && !r.closed)
}

/// A `Settled` record of `agent`'s run of `tid`, ended in `state`, applied
/// to `q` (not its handoff: the caller enters that).
fn settle(q: &mut Queue, agent: Agent, tid: Tid, state: TaskState) {
    q.active.retain(|r| !(r.0 == agent && r.1 == tid));
    if let TaskState::Completed(_) = state {
        q.last_replier = Some(agent);
    }
}

/// A state as bytes: its derived `Hash` writes every field, with each
/// sequence's length and each enum's variant first, so two states are equal
/// exactly when their bytes are.
fn encode(s: &State) -> Box<[u8]> {
    let mut out = Encoder(Vec::with_capacity(128));
    s.hash(&mut out);
    out.0.into_boxed_slice()
}

struct Encoder(Vec<u8>);

impl Hasher for Encoder {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn write_u8(&mut self, x: u8) {
        self.0.push(x);
    }
    /// Lengths: every sequence of the model is short.
    fn write_usize(&mut self, x: usize) {
        self.0.push(u8::try_from(x).expect("a short sequence"));
    }
    /// Enum variants.
    fn write_isize(&mut self, x: isize) {
        self.0.push(u8::try_from(x).expect("a small variant index"));
    }
    fn finish(&self) -> u64 {
        unreachable!("an encoder, not a hasher")
    }
}

/// A quick hash for the set of encoded states (FxHash's step).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The orders a reorder may submit for `n` entries: every permutation.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for len in 1..=n {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..len).map(move |at| {
                    let mut q = p.clone();
                    q.insert(at, len - 1);
                    q
                })
            })
            .collect();
    }
    out
}

// ---------------------------------------------------------------- the tests

const A: Option<Agent> = Some(0);
const B: Option<Agent> = Some(1);
const ANY: Option<Agent> = None;

fn enq(tid: Tid, target: Option<Agent>) -> Ev {
    Ev::Enqueue {
        tid,
        target,
        urgent: false,
        steer: false,
        at_once: false,
    }
}

fn urgent(tid: Tid, target: Option<Agent>) -> Ev {
    Ev::Enqueue {
        tid,
        target,
        urgent: true,
        steer: false,
        at_once: false,
    }
}

fn steer(tid: Tid, target: Option<Agent>) -> Ev {
    Ev::Enqueue {
        tid,
        target,
        urgent: false,
        steer: true,
        at_once: false,
    }
}

/// `ev` sent blocking: admitted in its enqueue's commit when it can be.
fn blocking(ev: Ev) -> Ev {
    match ev {
        Ev::Enqueue {
            tid,
            target,
            urgent,
            steer,
            ..
        } => Ev::Enqueue {
            tid,
            target,
            urgent,
            steer,
            at_once: true,
        },
        other => other,
    }
}

/// Explores `sc` with gate `G` on a thread with room for a deep search.
fn run<G: Gate>(
    sc: Scenario,
    rest_rules: &'static [&'static str],
    code: Code,
) -> Result<Stats, Violation> {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || explore::<G>(&sc, rest_rules, code))
        .unwrap()
        .join()
        .unwrap()
}

/// Every interleaving of `sc` keeps every rule, with the real gate.
fn verify(sc: Scenario) {
    let name = sc.name;
    match run::<DrainGate>(sc, REST_RULES, Code::default()) {
        Ok(stats) => println!("{name}: {stats:?}"),
        Err(v) => panic!("{name}: {v}"),
    }
}

/// With gate `G`, the explorer finds the context resting with a non-empty
/// queue, an executable head, no active run and no drain pending (the
/// other rules of rest are left out, so that it is this one that fails).
fn refute<G: Gate>(sc: Scenario) {
    let name = sc.name;
    let v = run::<G>(sc, &[STUCK], Code::default()).expect_err("a broken gate must be caught");
    println!("{name} with {}: caught\n{v}", std::any::type_name::<G>());
    assert_eq!(v.rule, STUCK, "{name}: {v}");
}

fn strict_head() -> Scenario {
    Scenario {
        name: "strict_head",
        hosts: 1,
        clients: vec![
            (0, vec![enq(0, A), enq(1, ANY)]),
            (0, vec![urgent(2, B), enq(3, A)]),
        ],
        outcomes: &[Outcome::Completed, Outcome::Failed],
        recovered: None,
        faults: 0,
        compactions: 0,
    }
}

#[test]
fn strict_head_and_two_agents() {
    verify(strict_head());
}

#[test]
fn cancels_of_queued_and_running_inputs() {
    verify(Scenario {
        name: "cancels",
        hosts: 1,
        clients: vec![
            (0, vec![enq(0, A), enq(1, A), enq(2, B), enq(3, ANY)]),
            (0, vec![Ev::Cancel(1), Ev::Cancel(0)]),
        ],
        outcomes: &[Outcome::Completed],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn reorders_racing_the_drain() {
    verify(Scenario {
        name: "reorder",
        hosts: 1,
        clients: vec![
            (0, vec![enq(0, A), enq(1, A), enq(2, B)]),
            (0, vec![Ev::Reorder, Ev::Cancel(1)]),
        ],
        outcomes: &[Outcome::Completed, Outcome::Failed],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn steers_and_runs_waiting_for_input() {
    verify(Scenario {
        name: "steer",
        hosts: 1,
        clients: vec![
            (0, vec![enq(0, A), enq(1, ANY)]),
            (0, vec![steer(2, A)]),
            (0, vec![Ev::Cancel(0)]),
        ],
        outcomes: &[Outcome::Completed, Outcome::InputRequired],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn handoffs_and_input_required() {
    verify(Scenario {
        name: "handoff",
        hosts: 1,
        clients: vec![(0, vec![enq(0, A), enq(1, ANY), enq(2, B)])],
        outcomes: &[Outcome::Handoff, Outcome::Failed, Outcome::InputRequired],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

/// What a host finds at start-up: a head canceled while it was down, two
/// queued inputs, and a run of `b` closed by recovery but not settled.
fn recovered(s: &mut State) {
    let queued = Task {
        state: TaskState::Queued,
        version: 0,
        admitted: false,
    };
    s.tasks.resize(5, Task::UNBORN);
    s.tasks[0] = Task {
        state: TaskState::Canceled,
        version: 1,
        admitted: false,
    };
    s.tasks[1] = queued;
    s.tasks[2] = queued;
    s.tasks[3] = Task {
        state: TaskState::Failed,
        version: 2,
        admitted: true,
    };
    for (tid, target) in [(0, A), (1, A), (2, ANY)] {
        s.log.rev += 1;
        s.log.enter(tid, target, Priority::Normal, None, 0);
    }
    s.log.rev += 1;
    s.log.active.push((1, 3, 0));
}

#[test]
fn start_up_drains_what_it_finds() {
    verify(Scenario {
        name: "startup",
        hosts: 1,
        clients: vec![(0, vec![enq(4, B)]), (0, vec![Ev::Cancel(1)])],
        outcomes: &[Outcome::Completed, Outcome::Failed],
        recovered: Some(recovered),
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn two_hosts_enqueue_into_one_context() {
    verify(Scenario {
        name: "two_hosts_enqueue",
        hosts: 2,
        clients: vec![(0, vec![enq(0, A), enq(1, ANY)]), (1, vec![enq(2, A)])],
        outcomes: &[Outcome::Completed],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn two_hosts_reorder_and_cancel() {
    verify(Scenario {
        name: "two_hosts_reorder_cancel",
        hosts: 2,
        clients: vec![
            (0, vec![enq(0, A), enq(1, ANY)]),
            (1, vec![Ev::Reorder, Ev::Cancel(0)]),
        ],
        outcomes: &[Outcome::Completed],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn a_gate_that_forgets_the_dirty_bit_is_caught() {
    refute::<Forgetful>(strict_head());
}

#[test]
fn a_gate_deaf_during_a_drain_is_caught() {
    refute::<Deaf>(strict_head());
}

/// A scenario with `faults` of the drain's log calls failing along every
/// path: every rule still holds, since a failed pass is passed again.
fn with_faults(mut sc: Scenario, faults: u8) -> Scenario {
    sc.faults = faults;
    sc
}

#[test]
fn log_faults_in_the_drain_are_passed_again() {
    verify(with_faults(strict_head(), 2));
}

#[test]
fn log_faults_with_cancels_handoffs_and_start_up() {
    verify(with_faults(
        Scenario {
            name: "startup_faults",
            hosts: 1,
            clients: vec![(0, vec![Ev::Cancel(1)])],
            outcomes: &[Outcome::Completed, Outcome::Handoff],
            recovered: Some(recovered),
            faults: 0,
            compactions: 0,
        },
        2,
    ));
}

#[test]
fn log_faults_on_two_hosts() {
    verify(with_faults(
        Scenario {
            name: "two_hosts_faults",
            hosts: 2,
            clients: vec![(0, vec![enq(0, A), enq(1, ANY)]), (1, vec![enq(2, A)])],
            outcomes: &[Outcome::Completed],
            recovered: None,
            faults: 0,
            compactions: 0,
        },
        1,
    ));
}

#[test]
fn a_drain_that_gives_up_on_a_log_error_is_caught() {
    let sc = with_faults(strict_head(), 1);
    let v = run::<DrainGate>(
        sc,
        &[STUCK],
        Code {
            fault: OnFault::GiveUp,
            ..Code::default()
        },
    )
    .expect_err("a drain that gives up must be caught");
    println!("strict_head giving up on a fault: caught\n{v}");
    assert_eq!(v.rule, STUCK, "{v}");
}

/// A scenario whose queue stream may be compacted `n` times along every
/// path, the sweep's read and its restatement each a step of their own,
/// between any two steps of the other actors.
fn with_compactions(mut sc: Scenario, n: u8) -> Scenario {
    sc.compactions = n;
    sc
}

#[test]
fn compactions_between_drains() {
    verify(with_compactions(strict_head(), 1));
}

#[test]
fn compactions_with_cancels_handoffs_and_input_required() {
    verify(with_compactions(
        Scenario {
            name: "handoff_compactions",
            hosts: 1,
            clients: vec![(0, vec![enq(0, A), enq(1, ANY)]), (0, vec![Ev::Cancel(1)])],
            outcomes: &[Outcome::Handoff, Outcome::Failed, Outcome::InputRequired],
            recovered: None,
            faults: 0,
            compactions: 0,
        },
        2,
    ));
}

#[test]
fn compactions_on_two_hosts() {
    verify(with_compactions(
        Scenario {
            name: "two_hosts_compactions",
            hosts: 2,
            clients: vec![(0, vec![enq(0, A), enq(1, ANY)]), (1, vec![enq(2, ANY)])],
            outcomes: &[Outcome::Completed],
            recovered: None,
            faults: 0,
            compactions: 0,
        },
        1,
    ));
}

#[test]
fn a_restatement_not_conditional_on_the_revision_is_caught() {
    let sc = with_compactions(strict_head(), 1);
    let v = run::<DrainGate>(
        sc,
        &[LOST],
        Code {
            compact: OnCompact::Blind,
            ..Code::default()
        },
    )
    .expect_err("a blind restatement must be caught");
    println!("strict_head with a blind sweeper: caught\n{v}");
    assert!([LOST, TWO_RUNS, NOT_HEAD].contains(&v.rule), "{v}");
}

#[test]
fn a_closing_admission_that_wakes_nothing_is_caught() {
    let sc = strict_head();
    let silent = Code {
        ride: OnRide::Silent,
        ..Code::default()
    };
    let v = run::<DrainGate>(sc, &[HEAD_IGNORED], silent)
        .expect_err("a runnable head left behind a closing admission must be caught");
    println!("strict_head with a silent ride: caught\n{v}");
    assert_eq!(v.rule, HEAD_IGNORED, "{v}");
}

/// Blocking sends beside queued ones: an input into an empty queue whose
/// agent is free is admitted in its enqueue's commit.
fn at_once() -> Scenario {
    Scenario {
        name: "at_once",
        hosts: 1,
        clients: vec![
            (0, vec![blocking(enq(0, A)), blocking(enq(1, ANY))]),
            (0, vec![blocking(urgent(2, B)), enq(3, A)]),
        ],
        outcomes: &[Outcome::Completed, Outcome::Failed],
        recovered: None,
        faults: 0,
        compactions: 0,
    }
}

#[test]
fn blocking_inputs_into_an_idle_context_are_admitted_at_once() {
    verify(at_once());
}

#[test]
fn blocking_inputs_with_cancels_steers_and_input_required() {
    verify(Scenario {
        name: "at_once_steer",
        hosts: 1,
        clients: vec![
            (0, vec![blocking(enq(0, A)), blocking(enq(1, ANY))]),
            (0, vec![blocking(steer(2, A))]),
            (0, vec![Ev::Cancel(0)]),
        ],
        outcomes: &[Outcome::Completed, Outcome::InputRequired],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn blocking_inputs_on_two_hosts() {
    verify(Scenario {
        name: "at_once_two_hosts",
        hosts: 2,
        clients: vec![
            (0, vec![blocking(enq(0, A)), blocking(enq(1, ANY))]),
            (1, vec![blocking(enq(2, A))]),
        ],
        outcomes: &[Outcome::Completed],
        recovered: None,
        faults: 0,
        compactions: 0,
    });
}

#[test]
fn a_gate_that_forgets_the_dirty_bit_is_caught_with_blocking_inputs() {
    refute::<Forgetful>(at_once());
}
