//! The single writer of one execution, its signals, and the registry of live
//! executions on this host.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::Notify;

use super::deferred::Deferred;
use super::executor::EmitError;
use super::ride::{self, Companion, Rider};
use crate::log::{AppendRequest, Appended, LogErrorKind, Record, TaskLog};
use crate::types::{Message, Task, TaskState, TaskStatus, Timestamp};

/// A one-shot, level-triggered signal.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    set: AtomicBool,
    notify: Notify,
}

impl Signal {
    pub(crate) fn fire(&self) {
        if !self.set.swap(true, Ordering::AcqRel) {
            self.notify.notify_waiters();
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// What [`Writer::take_admission`] answers: whether the commit carries the
/// admission, its companion, and the commit's records.
type Taken = (bool, Option<Box<dyn Companion>>, Vec<Record>);

/// How an execution's writer closed, for a SendMessage that waits for it.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// The task as the closing commit left it, with its ProtoJSON if the
    /// log wrote it (see [`Appended::task_json`](crate::log::Appended)).
    Task(Arc<Task>, Option<Bytes>),
    /// The execution replied with a direct message.
    Reply(Box<Message>),
    /// The task was never created: the commit that carried its admission
    /// failed with this error.
    NotAdmitted(EmitError),
}

/// Writes the records of one execution. All appends go through its lock, so
/// the executor's emissions, a cancel and the driver's final status are
/// serialized; the first terminal or interrupted status closes it.
///
/// A new task's admission may be deferred ([`Writer::defer_admission`]): its records
/// then go out with the execution's first commit, in one append, and the
/// driver commits them alone as soon as the execution waits for anything
/// else first.
pub(crate) struct Writer {
    log: Arc<dyn TaskLog>,
    pub(crate) authority: String,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// `(seq, epoch)`.
    state: tokio::sync::Mutex<(u64, u64)>,
    /// The admission not committed yet (taken under `state`).
    admission: Mutex<Option<Deferred>>,
    /// Set with the signal `closed`, or when the admission failed.
    outcome: Mutex<Option<Outcome>>,
    /// Someone waits for the outcome (a blocking SendMessage); otherwise the
    /// closing commit's task is not kept.
    pub(super) keeps_outcome: bool,
    /// The task as the closing commit left it (terminal or interrupted),
    /// for the end-of-execution hook.
    ended: Mutex<Option<Arc<Task>>>,
    /// Push configs may be appended by callers meanwhile: a conflict caused
    /// only by them is folded in and the commit made again (see
    /// [`commit`](Self::commit)); set by admission.
    pub(super) folds_configs: bool,
    /// What its closing commit may carry ([`ride`]).
    rider: Option<Arc<dyn Rider>>,
    /// A commit's records kept the closing commit from carrying anything.
    barred: AtomicBool,
    /// The closing commit carried the rider's append.
    carried: AtomicBool,
    open: AtomicBool,
    /// Asks the executor to stop.
    pub(crate) cancel: Signal,
    /// The writer accepts nothing more.
    pub(crate) closed: Signal,
    /// Another writer took the task over: calls waiting on this execution
    /// stop waiting.
    pub(crate) fenced: Signal,
    started: Instant,
    last_ms: AtomicU64,
    /// Where appended messages go (see [`Inputs`](super::Inputs)).
    inputs: Mutex<Option<tokio::sync::mpsc::Sender<Message>>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("task_id", &self.task_id)
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

impl Writer {
    pub(crate) fn new(
        log: Arc<dyn TaskLog>,
        authority: String,
        task_id: String,
        context_id: String,
        seq: u64,
        epoch: u64,
    ) -> Self {
        Self {
            log,
            authority,
            task_id,
            context_id,
            state: tokio::sync::Mutex::new((seq, epoch)),
            admission: Mutex::new(None),
            outcome: Mutex::new(None),
            keeps_outcome: false,
            ended: Mutex::new(None),
            folds_configs: false,
            rider: None,
            barred: AtomicBool::new(false),
            carried: AtomicBool::new(false),
            open: AtomicBool::new(true),
            cancel: Signal::default(),
            closed: Signal::default(),
            fenced: Signal::default(),
            started: Instant::now(),
            last_ms: AtomicU64::new(0),
            inputs: Mutex::new(None),
        }
    }

    /// Holds the admission of a new task back, to go out with the
    /// execution's first commit. Called before the execution starts.
    pub(crate) fn defer_admission(&self, admission: Deferred) {
        *lock(&self.admission) = Some(admission);
    }

    /// The admission is still waiting for a commit to carry it.
    pub(crate) fn admission_pending(&self) -> bool {
        lock(&self.admission).is_some()
    }

    /// Commits a deferred admission alone, if no commit has carried it yet.
    pub(crate) async fn commit_admission(&self) {
        if self.admission_pending() {
            // An empty batch: only the admission goes out. A failure is
            // recorded as the outcome (see `commit`).
            let _ = self.commit(Vec::new()).await;
        }
    }

    /// Keeps how the writer closes for [`take_outcome`](Self::take_outcome).
    pub(crate) fn keeping_outcome(mut self) -> Self {
        self.keeps_outcome = true;
        self
    }

    /// Lets `rider` add to the commit that ends the task ([`ride`]).
    pub(crate) fn riding(mut self, rider: Option<Arc<dyn Rider>>) -> Self {
        self.rider = rider;
        self
    }

    /// The commit that ended the task carried the rider's append.
    pub(crate) fn carried(&self) -> bool {
        self.carried.load(Ordering::Acquire)
    }

    /// Takes how the writer closed (see [`Outcome`]), once `closed` has
    /// fired, if it was [kept](Self::keeping_outcome); `None` afterwards.
    pub(crate) fn take_outcome(&self) -> Option<Outcome> {
        lock(&self.outcome).take()
    }

    /// The task as this writer's closing commit left it (terminal or
    /// interrupted); `None` while none has been committed.
    pub(crate) fn ended(&self) -> Option<Arc<Task>> {
        lock(&self.ended).clone()
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    fn touch(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// When the execution counts as inactive if nothing is emitted before.
    pub(crate) fn idle_deadline(&self, timeout: Duration) -> Instant {
        self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + timeout
    }

    /// Commits records. A terminal or interrupted state closes the writer; it
    /// is marked closed before the commit becomes visible, so whoever sees the
    /// commit also sees the writer closed.
    ///
    /// A deferred admission goes out first in the same append. If that
    /// append fails, the task does not exist: the writer closes, the
    /// execution is asked to stop, and the outcome is the error.
    pub(crate) async fn commit(&self, records: Vec<Record>) -> Result<Appended, EmitError> {
        let mut st = self.state.lock().await;
        if !self.is_open() {
            return Err(EmitError::Closed);
        }
        // Whether this append carries the deferred admission (and what
        // rides with it).
        let Some((admits, companion, records)) = self.take_admission(records) else {
            return Err(EmitError::Invalid);
        };
        let closes = records
            .iter()
            .filter_map(Record::state)
            .any(|s| s.is_terminal() || s.is_interrupted());
        // What this commit may carry: nothing once a commit's records barred
        // it; on a task that exists, only a closing commit's rider; on the
        // first, its companion (told whether the commit ends the task).
        let rider = self.rider.as_ref().filter(|r| {
            if !self.barred.load(Ordering::Relaxed) && r.bars(&records) {
                self.barred.store(true, Ordering::Relaxed);
            }
            !self.barred.load(Ordering::Relaxed)
        });
        let ends = rider.zip(ride::terminal(&records));
        let (ends, carries) = match admits {
            true => (None, ends.map(|(_, state)| state)),
            false => (ends, None),
        };
        let reply = (closes && self.keeps_outcome)
            .then(|| {
                records.iter().find_map(|r| match r {
                    Record::Replied { message, .. } => Some(Box::new(message.clone())),
                    _ => None,
                })
            })
            .flatten();
        if closes {
            self.open.store(false, Ordering::Release);
        }
        // Only the last is every execution's: the others (the delivery
        // queue's) are boxed where taken, so that the future of every
        // commit, and of every emission and driver awaiting one, stays small
        // (each is moved, whole, into the box of the future that awaits it).
        let result = match (companion, ends) {
            (Some(c), _) => Box::pin(self.append_with(c, carries, &st, records)).await,
            (None, Some((rider, state))) => {
                Box::pin(self.append_riding(&**rider, state, &mut st, records)).await
            }
            (None, None) => self.append(&mut st, records).await,
        };
        let err = match result {
            Ok(mut appended) => {
                st.0 = appended.seq;
                self.touch();
                if closes {
                    // The appended-input stream ends with the execution.
                    lock(&self.inputs).take();
                    *lock(&self.ended) = Some(appended.snapshot.task.clone());
                }
                if closes && self.keeps_outcome {
                    *lock(&self.outcome) = Some(match reply {
                        Some(message) => Outcome::Reply(message),
                        // The JSON is only the answer's (taken, not shared).
                        None => {
                            Outcome::Task(appended.snapshot.task.clone(), appended.task_json.take())
                        }
                    });
                    self.closed.fire();
                }
                return Ok(appended);
            }
            Err(e) => match e.kind() {
                LogErrorKind::Conflict | LogErrorKind::Fenced | LogErrorKind::NotFound => {
                    EmitError::Superseded
                }
                LogErrorKind::Invalid => EmitError::Invalid,
                kind => EmitError::Log(kind),
            },
        };
        if admits && self.keeps_outcome {
            // The task was never created: nothing can follow.
            *lock(&self.outcome) = Some(Outcome::NotAdmitted(err));
        }
        if admits || err == EmitError::Superseded {
            // Another writer owns the task now, or there is no task: stop
            // for good.
            self.open.store(false, Ordering::Release);
            if err == EmitError::Superseded {
                self.fenced.fire();
            }
            lock(&self.inputs).take();
            self.closed.fire();
            self.cancel.fire();
        } else if closes {
            self.open.store(true, Ordering::Release);
        }
        Err(err)
    }

    /// Takes the deferred admission, if any, into the records of the commit
    /// that carries it: whether it did, its companion, and the records
    /// (`None`: no admission and no records, nothing to commit). Apart from
    /// [`commit`](Self::commit) so that the admission is not kept in its
    /// future across the append.
    fn take_admission(&self, records: Vec<Record>) -> Option<Taken> {
        let admission = lock(&self.admission).take();
        match admission {
            Some(mut admission) => {
                let companion = admission.take_companion();
                Some((true, companion, admission.records_before(records)))
            }
            None if records.is_empty() => None,
            None => Some((false, None, records)),
        }
    }

    /// The append of `records` to this writer's task after `st`.
    fn request(&self, st: &(u64, u64), records: Vec<Record>) -> AppendRequest {
        AppendRequest::new(
            self.authority.clone(),
            self.task_id.clone(),
            st.0,
            st.1,
            records,
        )
    }

    /// Appends `records`, the task's first (its admission), with
    /// `companion`'s append (if it makes one), in one commit, made again
    /// while the companion asks (each attempt then sends a copy); `ends`:
    /// the terminal state they end the task in, if the companion may settle
    /// what it carries.
    async fn append_with(
        &self,
        mut companion: Box<dyn Companion>,
        ends: Option<TaskState>,
        st: &(u64, u64),
        records: Vec<Record>,
    ) -> Result<Appended, crate::log::LogError> {
        loop {
            let mut requests = Vec::with_capacity(2);
            requests.push(self.request(st, records.clone()));
            requests.extend(companion.request(ends));
            let e = match self.log.append_all(requests).await {
                Ok(mut out) if !out.is_empty() => {
                    let task = out.swap_remove(0);
                    companion.landed(&task);
                    if ends.is_some() {
                        self.carried.store(true, Ordering::Release);
                    }
                    return Ok(task);
                }
                Ok(_) => crate::log::LogError::backend("an append_all answered nothing"),
                Err(e) => e,
            };
            if !companion.refused(e.kind()).await {
                return Err(e);
            }
        }
    }

    /// Appends `records`, which end the task in `state`, after `st`, with
    /// what `rider` boards, in one commit. If it boards nothing, or that
    /// commit is refused (the rider's conditions may be the ones that
    /// failed), the records are appended alone.
    async fn append_riding(
        &self,
        rider: &dyn Rider,
        state: TaskState,
        st: &mut (u64, u64),
        records: Vec<Record>,
    ) -> Result<Appended, crate::log::LogError> {
        let Some(mut boarded) = rider.board(self, state).await else {
            return self.append(st, records).await;
        };
        let mut requests = Vec::with_capacity(3);
        requests.push(self.request(st, records.clone()));
        boarded.requests(&mut requests);
        match self.log.append_all(requests).await {
            Ok(mut out) if !out.is_empty() => {
                let task = out.remove(0);
                boarded.landed(out);
                self.carried.store(true, Ordering::Release);
                Ok(task)
            }
            _ => {
                drop(boarded);
                self.append(st, records).await
            }
        }
    }

    /// Appends `records` after `st`. When the writer folds configs, a
    /// conflict caused only by push configs appended by others moves `st`
    /// past them and the records are appended again (each attempt then
    /// sends a copy).
    async fn append(
        &self,
        st: &mut (u64, u64),
        records: Vec<Record>,
    ) -> Result<Appended, crate::log::LogError> {
        let request = |st: &(u64, u64), records| self.request(st, records);
        // A creation is never overtaken by push configs alone (its conflict
        // means the task exists already): its records are not copied.
        if !self.folds_configs || st.0 == 0 {
            return self.log.append(request(st, records)).await;
        }
        let mut attempts = 0;
        loop {
            match self.log.append(request(st, records.clone())).await {
                Err(e) if e.kind() == LogErrorKind::Conflict && attempts < 16 => {
                    attempts += 1;
                    let Ok(others) = self.log.read(&self.authority, &self.task_id, st.0).await
                    else {
                        return Err(e);
                    };
                    let configs_only = !others.is_empty()
                        && others.iter().all(|s| {
                            matches!(
                                &*s.record,
                                Record::PushConfigSet { .. } | Record::PushConfigDeleted { .. }
                            )
                        });
                    match others.last() {
                        Some(last) if configs_only => st.0 = last.seq,
                        _ => return Err(e),
                    }
                }
                result => return result,
            }
        }
    }

    /// Commits a final status if the writer is still open.
    pub(crate) async fn finish(&self, state: TaskState, text: Option<&str>) -> bool {
        // Nothing to build once a commit has closed the task (the common
        // end: the executor's own final status), which `commit` would refuse.
        // Not merely `!is_open()`: a closing commit in flight elsewhere
        // reopens the writer if it fails.
        if lock(&self.ended).is_some() {
            return false;
        }
        let message = text.map(|t| self.agent_message(Message::agent("", t)));
        let status = TaskStatus {
            state,
            message,
            timestamp: Some(Timestamp::now()),
        };
        self.commit(vec![Record::status(status)]).await.is_ok()
    }

    /// Cancels the execution: commits CANCELED and signals the executor.
    pub(crate) async fn cancel(&self) -> Option<Appended> {
        let records = Record::canceled();
        let out = self.commit(records).await.ok();
        if out.is_some() {
            self.cancel.fire();
        }
        out
    }

    /// The stream of appended messages for the execution (called once,
    /// before it starts).
    pub(crate) fn open_inputs(&self) -> super::Inputs {
        let (tx, inputs) = super::Inputs::channel();
        *lock(&self.inputs) = Some(tx);
        inputs
    }

    /// Appends a client message to the running execution: committed to the
    /// task's history in order with the execution's emissions, then handed
    /// to the executor. `Closed` when the execution is over or does not read
    /// appended input (it dropped the stream, or lets it fill up).
    pub(crate) async fn append_input(&self, message: Message) -> Result<Appended, EmitError> {
        let tx = lock(&self.inputs).clone().ok_or(EmitError::Closed)?;
        let permit = tx.try_reserve_owned().map_err(|_| EmitError::Closed)?;
        let appended = self
            .commit(vec![Record::MessageAdmitted {
                message: message.clone(),
            }])
            .await?;
        permit.send(message);
        Ok(appended)
    }

    /// Stamps an agent message with the task's ids, the agent role and an id.
    pub(crate) fn agent_message(&self, mut m: Message) -> Message {
        m.role = crate::types::Role::Agent;
        m.task_id.clone_from(&self.task_id);
        m.context_id.clone_from(&self.context_id);
        if m.message_id.is_empty() {
            m.message_id = super::id_text(uuid::Uuid::new_v4());
        }
        m
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The live executions of this host, by task id: a set of writers keyed
/// by their own task id, so registering one copies nothing. Hashed with
/// foldhash under a per-set random seed, as the memory log's shards are:
/// a SendMessage looks a task id up three times here.
#[derive(Debug, Default)]
pub(crate) struct Registry(Mutex<HashSet<ByTaskId, foldhash::fast::RandomState>>);

/// A writer, hashed and compared by its task id.
#[derive(Debug)]
struct ByTaskId(Arc<Writer>);

impl PartialEq for ByTaskId {
    fn eq(&self, other: &Self) -> bool {
        self.0.task_id == other.0.task_id
    }
}

impl Eq for ByTaskId {}

impl std::hash::Hash for ByTaskId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As `str` hashes: `Borrow<str>` requires the same hash.
        self.0.task_id.as_str().hash(state);
    }
}

impl std::borrow::Borrow<str> for ByTaskId {
    fn borrow(&self) -> &str {
        &self.0.task_id
    }
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<ByTaskId, foldhash::fast::RandomState>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a writer unless an open one already runs the task.
    pub(crate) fn claim(&self, writer: &Arc<Writer>) -> bool {
        let mut set = self.lock();
        match set.get(writer.task_id.as_str()) {
            Some(w) if w.0.is_open() => false,
            _ => {
                set.replace(ByTaskId(writer.clone()));
                true
            }
        }
    }

    pub(crate) fn get(&self, task_id: &str) -> Option<Arc<Writer>> {
        self.lock().get(task_id).map(|w| w.0.clone())
    }

    pub(crate) fn remove(&self, writer: &Arc<Writer>) {
        let mut set = self.lock();
        if set
            .get(writer.task_id.as_str())
            .is_some_and(|w| Arc::ptr_eq(&w.0, writer))
        {
            set.remove(writer.task_id.as_str());
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn signal_wakes_waiters_and_stays_set() {
        let s = Arc::new(Signal::default());
        let waiter = tokio::spawn({
            let s = s.clone();
            async move { s.wait().await }
        });
        tokio::task::yield_now().await;
        s.fire();
        waiter.await.unwrap();
        s.wait().await; // already set: returns at once
        assert!(s.is_set());
    }
}
