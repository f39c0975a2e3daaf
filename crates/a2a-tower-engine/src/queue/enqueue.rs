//! What a message asks of the queue (`queue.*` metadata), and the enqueue
//! commit: each queued task and its entry, together (and, for a blocking
//! send into an idle context, its admission); the inputs of a context that
//! wait for its queue together share one commit (`group`).

use std::sync::Arc;

use serde_json::Value;

use super::admit::resolve_agent;
use super::core::Core;
use super::entry::{Entry, Priority};
use super::record::{QueueRecord, QueuedInput};
use super::state::ContextQueue;
use super::stream::Slot;
use super::{MODE_KEY, PRIORITY_KEY, TARGET_KEY};
use crate::log::{AppendRequest, Appended, LogError, LogErrorKind, Record, Snapshot, Watch};
use crate::types::{Message, Metadata, Role, SendMessageRequest, TaskPushNotificationConfig};
use crate::{A2aError, ErrorKind};

/// How a message meets the queue (`queue.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A new input: queued (no mode given).
    Queue,
    /// Into the running execution of the message's task.
    Append,
    /// Cancel the target's live run in the context; this input runs next.
    Steer,
}

/// The `queue.*` metadata of a message, checked.
#[derive(Debug, Clone)]
pub(crate) struct Directives {
    pub(crate) target: Option<String>,
    pub(crate) priority: Priority,
    pub(crate) mode: Mode,
}

fn invalid(field: &str, why: &str) -> A2aError {
    A2aError::invalid_params(format!("message.metadata.{field}"), why)
}

fn text<'a>(message: &'a Message, key: &str) -> Result<Option<&'a str>, A2aError> {
    match message.metadata.as_ref().and_then(|m| m.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(key, "must be a string")),
    }
}

/// Reads and checks the message's `queue.*` metadata against the team,
/// before anything is written.
pub(crate) fn directives(core: &Core, message: &Message) -> Result<Directives, A2aError> {
    let target = text(message, TARGET_KEY)?;
    if let Some(t) = target
        && !core.team.has(t)
    {
        return Err(invalid(TARGET_KEY, "names no agent of this server"));
    }
    let priority = match text(message, PRIORITY_KEY)? {
        None => Priority::Normal,
        Some(p) => Priority::parse(p)
            .ok_or_else(|| invalid(PRIORITY_KEY, "must be \"urgent\" or \"normal\""))?,
    };
    let mode = match text(message, MODE_KEY)? {
        None => Mode::Queue,
        Some("append") => Mode::Append,
        Some("steer") => Mode::Steer,
        Some(_) => return Err(invalid(MODE_KEY, "must be \"append\" or \"steer\"")),
    };
    let continues = !message.task_id.is_empty();
    match mode {
        Mode::Append if !continues => {
            return Err(invalid(
                MODE_KEY,
                "\"append\" needs the running task's taskId",
            ));
        }
        Mode::Steer if continues => {
            return Err(invalid(MODE_KEY, "\"steer\" starts a new input: no taskId"));
        }
        Mode::Steer if target.is_none() => {
            return Err(invalid(MODE_KEY, "\"steer\" needs queue.target"));
        }
        _ => {}
    }
    Ok(Directives {
        target: target.map(str::to_owned),
        priority,
        mode,
    })
}

/// What an enqueue left.
pub(crate) struct Enqueued {
    /// The task as created: queued, or, admitted at once, as its run's
    /// first commit left it.
    pub(crate) snapshot: Snapshot,
    /// For a steer: the run of its target in the context when it was queued.
    pub(crate) steered: Option<String>,
    /// If asked for, the task's records after `snapshot`: registered before
    /// any drain of this host can admit the task, so its run cannot end
    /// first (and a memory log pack the task away before it is watched).
    pub(crate) watch: Option<Watch>,
    /// Admitted at once: the rest of its run, for the caller to drive. The
    /// queue is left empty and no drain has anything to do for it (its
    /// run's end drains the context).
    pub(crate) run: Option<super::at_once::Run>,
}

/// A new input, checked, on its way to its enqueue commit.
#[derive(Debug)]
pub(crate) struct Input {
    task_id: String,
    /// The message, with its task and context ids set.
    message: Message,
    /// The task's metadata (the request's).
    metadata: Option<Metadata>,
    push: Option<TaskPushNotificationConfig>,
    target: Option<String>,
    priority: Priority,
    steer: bool,
    /// Watch the task from its enqueue's commit on (a stream).
    watch: bool,
    /// A blocking send: may be admitted in its enqueue's commit.
    at_once: bool,
    /// Its context is new, made for it by this enqueue: no queue stream of
    /// it can exist yet.
    new_context: bool,
}

impl Input {
    /// The input's queue entry, at `position` (a steer's).
    fn entry(&self, position: Option<i64>) -> Entry {
        Entry {
            task_id: self.task_id.clone(),
            target: self.target.clone(),
            priority: self.priority,
            position,
            arrival: 0,
            hops: 0,
        }
    }

    /// A new task id for the input, whose task was never created.
    fn renew(&mut self) {
        self.task_id = crate::engine::id_text(uuid::Uuid::now_v7());
        self.message.task_id.clone_from(&self.task_id);
    }
}

/// Queues `req` (a message without a task id) as a new SUBMITTED task of
/// its context: the task and its queue entry in one commit (shared with the
/// other inputs of the context waiting for its queue); with `watch`, also a
/// watch of the task from then on.
///
/// With `at_once` (a blocking send, whose caller sees the task only once
/// its run ends or asks for input), an input without a push config,
/// committed alone, that would be the head of an empty queue with its agent
/// free is admitted at once, in its run's first commit (`at_once`): the
/// task is created WORKING for the agent with what the agent first emits,
/// and the queue stream records its entry and its admission beside it, as
/// a drain would have right after.
pub(crate) async fn enqueue(
    core: &Arc<Core>,
    authority: &str,
    req: SendMessageRequest,
    d: &Directives,
    watch: bool,
    at_once: bool,
) -> Result<Enqueued, A2aError> {
    let push = crate::engine::admit::validate(&core.shared, &req)?;
    let mut message = req.message;
    message.role = Role::User;
    let task_id = crate::engine::id_text(uuid::Uuid::now_v7());
    let new_context = message.context_id.is_empty();
    if new_context {
        message.context_id = crate::engine::id_text(uuid::Uuid::now_v7());
    }
    message.task_id.clone_from(&task_id);
    let slot = core.slots.get(authority, &message.context_id);
    let input = Input {
        task_id,
        message,
        metadata: req.metadata,
        push,
        target: d.target.clone(),
        priority: d.priority,
        steer: d.mode == Mode::Steer,
        watch,
        at_once,
        new_context,
    };
    super::group::submit(core, &slot, input).await
}

/// Commits `batch`, inputs of `slot`'s context in arrival order, in one
/// commit at the view's revision (`st`, locked): each task with its entry.
/// The outcome of each, in order. A batch of several that the log refuses
/// for another reason than a lost race is committed again input by input,
/// so that each gets its own answer (one input too large for a bounded log
/// fails alone).
pub(crate) async fn commit(
    core: &Arc<Core>,
    slot: &Arc<Slot>,
    st: &mut ContextQueue,
    batch: Vec<Input>,
) -> Vec<Result<Enqueued, A2aError>> {
    let several = batch.len() > 1;
    match commit_all(core, slot, st, batch).await {
        Ok(out) => out,
        Err((e, _)) if !several => vec![Err(e)],
        Err((_, batch)) => {
            let mut out = Vec::with_capacity(batch.len());
            for input in batch {
                match commit_all(core, slot, st, vec![input]).await {
                    Ok(one) => out.extend(one),
                    Err((e, _)) => out.push(Err(e)),
                }
            }
            out
        }
    }
}

/// One commit of every input of `batch`, its race with other writers of the
/// queue lost and retried at most 64 times; `batch` back on a refusal.
async fn commit_all(
    core: &Arc<Core>,
    slot: &Arc<Slot>,
    st: &mut ContextQueue,
    batch: Vec<Input>,
) -> Result<Vec<Result<Enqueued, A2aError>>, (A2aError, Vec<Input>)> {
    let log = &*core.shared.log;
    let mut batch = batch;
    for attempt in 0..64 {
        // A context made by this enqueue has no stream to read (nobody else
        // knows its id before it is answered).
        let new = attempt == 0 && st.seq == 0 && matches!(&batch[..], [i] if i.new_context);
        if !new && let Err(e) = slot.catch_up(log, st).await {
            return Err((e.into(), batch));
        }
        if let Some((entry, agent)) = at_once(core, st, &batch) {
            let input = &mut batch[0];
            let message = (input.message.clone(), input.metadata.as_ref());
            let streamless = input.new_context;
            match super::at_once::admit(core, slot, st, message, &entry, agent, streamless).await {
                Ok((snapshot, run)) => {
                    return Ok(vec![Ok(Enqueued {
                        snapshot,
                        steered: None,
                        watch: None,
                        run: Some(run),
                    })]);
                }
                // Nothing was created, and the admission no longer stands
                // (another host changed the queue): enqueued again, under a
                // new id (the stopped run's writer may hold its id yet). The
                // agent saw that run start, as an engine's deferred admission
                // that fails lets it.
                Err(LogErrorKind::Conflict | LogErrorKind::Fenced) => input.renew(),
                Err(kind) => return Err((refusal(LogError::new(kind)), batch)),
            }
            continue;
        }
        let (requests, records) = plan(slot, st, &batch);
        match log.append_all(requests).await {
            Ok(out) => return Ok(committed(core, slot, st, batch, &records, out).await),
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {}
            Err(e) => return Err((refusal(e), batch)),
        }
    }
    let busy = A2aError::new(ErrorKind::Unavailable)
        .with_message("The context's queue is changing too fast; retry");
    Err((busy, batch))
}

fn refusal(e: LogError) -> A2aError {
    match e.kind() {
        LogErrorKind::Full => A2aError::new(ErrorKind::Unavailable),
        _ => e.into(),
    }
}

/// The input admitted in its run's first commit (`at_once`), if `batch` is
/// one: a blocking send without a push config (an inline config's receiver
/// sees the task from its creation on: SUBMITTED first, as queued), alone
/// into an empty queue (the drain would admit it next), its agent free.
/// Its entry, and its agent.
fn at_once(core: &Core, st: &ContextQueue, batch: &[Input]) -> Option<(Entry, String)> {
    let [input] = batch else { return None };
    if !input.at_once || input.push.is_some() || st.len() > 0 {
        return None;
    }
    let entry = input.entry(input.steer.then(|| st.front()));
    let agent = resolve_agent(core, st, &entry).ok()?;
    Some((entry, agent))
}

/// Whether `input`, first of several waiting inputs, would be admitted at
/// once if committed alone (see [`at_once`]), on the view `st` caught up
/// (a log error: no, the group's commit meets it).
pub(crate) async fn leads_at_once(
    core: &Core,
    slot: &Slot,
    st: &mut ContextQueue,
    input: &Input,
) -> bool {
    input.at_once
        && slot.catch_up(&*core.shared.log, st).await.is_ok()
        && at_once(core, st, std::slice::from_ref(input)).is_some()
}

/// The record that enters `entry` into the queue.
fn entered(entry: Entry) -> QueueRecord {
    QueueRecord::Entered {
        task_id: entry.task_id,
        target: entry.target,
        priority: entry.priority,
        position: entry.position,
        hops: entry.hops,
    }
}

/// The appends of `batch`'s commit on the view `st`: each task, then the
/// queue stream's records.
fn plan(slot: &Slot, st: &ContextQueue, batch: &[Input]) -> (Vec<AppendRequest>, Vec<QueueRecord>) {
    let mut requests = Vec::with_capacity(batch.len() + 1);
    let mut records = Vec::with_capacity(batch.len());
    let mut front = st.front();
    for input in batch {
        // Each steer before every entry, the batch's earlier ones included.
        let position = input.steer.then(|| {
            let p = front;
            front = p.saturating_sub(1);
            p
        });
        let mut created = Record::created(input.task_id.clone(), slot.context_id.clone());
        if let Record::Created { metadata, .. } = &mut created {
            metadata.clone_from(&input.metadata);
        }
        let queued = QueuedInput::Message {
            message: input.message.clone(),
        };
        let mut task = vec![created, queued.record()];
        task.extend(crate::engine::push_config::inline_record(
            input.push.clone(),
            &input.task_id,
        ));
        requests.push(AppendRequest::create(
            slot.authority.clone(),
            input.task_id.clone(),
            task,
        ));
        records.push(entered(input.entry(position)));
    }
    requests.push(slot.append(st, &records));
    (requests, records)
}

/// After the commit of `batch` (`out`: each task, then the stream): the view
/// at this commit, and for each input its task and message kept for its
/// admission (none is read back), and its watch.
async fn committed(
    core: &Arc<Core>,
    slot: &Arc<Slot>,
    st: &mut ContextQueue,
    batch: Vec<Input>,
    records: &[QueueRecord],
    out: Vec<Appended>,
) -> Vec<Result<Enqueued, A2aError>> {
    Slot::applied(st, records);
    let mut answers = Vec::with_capacity(batch.len());
    for (input, appended) in batch.into_iter().zip(out) {
        let snapshot = appended.snapshot;
        st.keep_input(input.message, snapshot.clone());
        // Still under `st`, which every drain pass of this host holds.
        let watch = match input.watch {
            true => {
                let log = &core.shared.log;
                match log
                    .watch(&slot.authority, &input.task_id, Some(snapshot.seq))
                    .await
                {
                    Ok(w) => Some(w),
                    Err(e) => {
                        answers.push(Err(e.into()));
                        continue;
                    }
                }
            }
            false => None,
        };
        let steered = input
            .target
            .as_ref()
            .filter(|_| input.steer)
            .and_then(|t| st.active().get(t))
            .map(|run| run.task_id.clone());
        answers.push(Ok(Enqueued {
            snapshot,
            steered,
            watch,
            run: None,
        }));
    }
    answers
}
