//! Admission of a SendMessage: the checks that need the engine, the task it
//! creates or continues, the claim of its one execution, and the commit that
//! turns the message into the task's admitted input (a2a-spec.md §4.1).

use std::future::Future;
use std::sync::Arc;

use tower_service::Service;

use super::deferred::Deferred;
use super::executor::{Emitter, Execution};
use super::layer::Shared;
use super::service::record_ids;
use super::writer::Writer;
use super::{EmitError, media, push_config, run};
use crate::log::{LogErrorKind, Record, Snapshot, Watch};
use crate::types::{Role, SendMessageRequest, Task, TaskPushNotificationConfig};
use crate::{A2aError, BoxError, CallContext, ErrorKind};

/// How the caller of [`admit`] answers, which decides what admission keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// SendMessage waits for the writer's outcome. A new task's admission
    /// then goes out with the execution's first commit.
    Outcome,
    /// SendMessage `returnImmediately`: the task as admission left it.
    Immediately,
    /// SendStreamingMessage: a watch registered before the execution runs.
    Stream,
}

/// What admission left for the caller besides the execution.
pub(crate) enum Admission {
    /// A new task whose admission rides with the execution's first commit
    /// ([`Answer::Outcome`] only).
    Deferred,
    /// Committed; the caller waits for the writer's outcome.
    Committed,
    /// Committed; the snapshot of the admission commit.
    Snapshot(Snapshot),
    /// Committed; the watch of the task from the admission commit on.
    Watch {
        /// The sequence number of the admission commit; the watch's records
        /// follow it.
        seq: u64,
        /// The snapshot it starts from and the records after it.
        watch: Watch,
    },
}

/// An admitted message: its writer, its execution (not running yet) and what
/// the caller keeps.
pub(crate) struct Admitted {
    pub(crate) writer: Arc<Writer>,
    /// Detached by the caller, or driven in its future.
    pub(crate) driver: run::Driver,
    pub(crate) admission: Admission,
}

fn busy(task_id: &str) -> A2aError {
    A2aError::new(ErrorKind::UnsupportedOperation)
        .with_message("The task is still running; send the next message when it asks for input")
        .with_metadata("taskId", task_id)
}

pub(crate) fn emit_error(e: EmitError) -> A2aError {
    match e {
        EmitError::Log(LogErrorKind::Full) => A2aError::new(ErrorKind::Unavailable),
        other => A2aError::internal(other),
    }
}

/// The error for an admission that another writer overtook, or that could not
/// be committed.
pub(crate) fn not_admitted(task_id: &str, e: EmitError) -> A2aError {
    match e {
        // Someone else advanced the task between our read and write.
        EmitError::Superseded => busy(task_id),
        other => emit_error(other),
    }
}

/// What the engine checks of a message before any lookup or write (the
/// protocol's own rules ran at dispatch), with its inline push config
/// checked and given an id (for the delivery queue, which queues the
/// message before it is admitted).
pub(crate) fn validate(
    shared: &Shared,
    req: &SendMessageRequest,
) -> Result<Option<TaskPushNotificationConfig>, A2aError> {
    checked(shared, req)
}

/// [`validate`].
fn checked(
    shared: &Shared,
    req: &SendMessageRequest,
) -> Result<Option<TaskPushNotificationConfig>, A2aError> {
    if req.message.role == Role::Agent {
        return Err(A2aError::invalid_params(
            "message.role",
            "must be ROLE_USER",
        ));
    }
    let config = req
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.as_ref());
    let config = push_config::inline(shared, config)?;
    media::check(req, &shared.input_modes, &shared.output_modes)?;
    Ok(config)
}

/// The id, context and log position a message is admitted at: a new task, or
/// a continuation of an interrupted one.
struct Target {
    task_id: String,
    context_id: String,
    /// The task's last sequence number and the writer epoch that fences any
    /// older writer; `None` for a new task.
    base: Option<(u64, u64)>,
}

/// The target of a message that names no task: a new one (and a new
/// context, unless it names one).
fn new_target(message: &mut crate::types::Message) -> Target {
    // Time-ordered (UUIDv7): a durable log's keys and indexes then grow
    // at their end instead of touching a random page per new task.
    let task_id = super::id_text(uuid::Uuid::now_v7());
    if message.context_id.is_empty() {
        message.context_id = super::id_text(uuid::Uuid::now_v7());
    }
    message.task_id.clone_from(&task_id);
    let context_id = message.context_id.clone();
    Target {
        task_id,
        context_id,
        base: None,
    }
}

/// The target of a continuation (a2a-spec.md §4.1): the task must exist for
/// this authority, accept messages, and share the message's context.
async fn continued(
    shared: &Shared,
    authority: &str,
    message: &mut crate::types::Message,
    push: Option<&TaskPushNotificationConfig>,
) -> Result<Target, A2aError> {
    let snap = addressed_task(shared, authority, message).await?;
    let task = &snap.task;
    if task.status.state.is_terminal() {
        return Err(A2aError::new(ErrorKind::UnsupportedOperation)
            .with_message("The task is in a terminal state and accepts no more messages")
            .with_metadata("taskId", task.id.clone()));
    }
    if !task.status.state.is_interrupted() {
        return Err(busy(&task.id));
    }
    push_config::bounded(&snap, push)?;
    Ok(Target {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        // A higher epoch fences any older writer of this task.
        base: Some((snap.seq, snap.epoch + 1)),
    })
}

/// The task a message names (`message.taskId`) for `authority`: not found
/// as TaskNotFound; a `message.contextId` other than the task's is
/// InvalidParams; an empty one is set to the task's.
pub(crate) async fn addressed_task(
    shared: &Shared,
    authority: &str,
    message: &mut crate::types::Message,
) -> Result<Snapshot, A2aError> {
    let snap = shared
        .log
        .snapshot(authority, &message.task_id)
        .await
        .map_err(|e| match e.kind() {
            LogErrorKind::NotFound => A2aError::task_not_found(message.task_id.clone()),
            _ => e.into(),
        })?;
    if !message.context_id.is_empty() && message.context_id != snap.task.context_id {
        return Err(A2aError::invalid_params(
            "message.contextId",
            "does not match the task's context",
        ));
    }
    message.context_id.clone_from(&snap.task.context_id);
    Ok(snap)
}

/// Admits `req`: checks it, claims the task's one execution, and commits the
/// admission (or defers it, see [`Admission::Deferred`]).
///
/// The request and the call's context are the caller's, taken from as
/// needed: the caller's future holds them already, and this one is moved
/// whole into the box of the call that awaits it. For the same reason its
/// log reads and commits are boxed where they are awaited (a blocking
/// SendMessage for a new task, the usual one, awaits neither), and it is an
/// `async` block: an `async fn` keeps a second copy of its arguments.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn keeps a second copy of its arguments"
)]
pub(crate) fn admit<'a, S>(
    shared: Arc<Shared>,
    inner: S,
    req: &'a mut SendMessageRequest,
    context: &'a mut CallContext,
    answer: Answer,
) -> impl Future<Output = Result<Admitted, A2aError>> + Send + 'a
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    async move {
        let push = checked(&shared, req)?;
        let authority = shared.authority.resolve(context)?;
        let mut message = std::mem::take(&mut req.message);
        message.role = Role::User;
        let Target {
            task_id,
            context_id,
            base,
        } = if message.task_id.is_empty() {
            new_target(&mut message)
        } else {
            Box::pin(continued(&shared, &authority, &mut message, push.as_ref())).await?
        };
        record_ids(&task_id, &context_id);
        let config = push_config::inline_record(push, &task_id);
        let (seq, epoch) = base.unwrap_or((0, 1));
        let mut writer = Writer::new(
            shared.log.clone(),
            authority,
            task_id,
            context_id,
            seq,
            epoch,
        );
        // Set in place, not through the by-value builders: a writer is
        // about 460 bytes, and each builder call moves it whole.
        // Configs may be appended while the execution writes.
        writer.folds_configs = shared.card.capabilities.push_notifications();
        writer.keeps_outcome = answer == Answer::Outcome;
        let writer = Arc::new(writer);
        if !shared.registry.claim(&writer) {
            return Err(busy(&writer.task_id));
        }
        // Nobody can know a new task before its blocking SendMessage
        // answers, so its admission may ride with the execution's first
        // commit: one append per task when the executor answers without
        // waiting.
        let (task, admission) = if base.is_none() && answer == Answer::Outcome {
            let deferred = Deferred::new(
                writer.task_id.clone(),
                writer.context_id.clone(),
                req.metadata.take(),
                message.clone(),
                config,
                shared.host_id.clone(),
            );
            let task = deferred.task();
            writer.defer_admission(deferred);
            (task, Admission::Deferred)
        } else {
            let mut records = Vec::with_capacity(4);
            if base.is_none() {
                let mut created =
                    Record::created(writer.task_id.clone(), writer.context_id.clone());
                if let Record::Created { metadata, .. } = &mut created {
                    *metadata = req.metadata.take();
                }
                records.push(created);
            }
            records.push(Record::MessageAdmitted {
                message: message.clone(),
            });
            records.extend(config);
            records.push(Record::ExecutionStarted {
                host: shared.host_id.clone(),
            });
            Box::pin(commit(&shared, &writer, answer, records)).await?
        };
        let execution = Execution {
            message,
            task,
            context: std::mem::take(context),
            inputs: if shared.appends {
                writer.open_inputs()
            } else {
                super::Inputs::none()
            },
            emit: Emitter::new(writer.clone()),
        };
        let driver = run::Driver::new(shared, inner, execution, writer.clone());
        Ok(Admitted {
            writer,
            driver,
            admission,
        })
    }
}

/// Commits the admission `records` before the execution starts, and
/// registers the watch of a stream: the task for the execution and what the
/// caller keeps. Only those two may still hold the task when the execution
/// starts, so that its first commit updates the task in place.
async fn commit(
    shared: &Shared,
    writer: &Arc<Writer>,
    answer: Answer,
    records: Vec<Record>,
) -> Result<(Arc<Task>, Admission), A2aError> {
    let appended = match writer.commit(records).await {
        Ok(a) => a,
        Err(e) => {
            shared.registry.remove(writer);
            return Err(not_admitted(&writer.task_id, e));
        }
    };
    let seq = appended.seq;
    let admission = appended.snapshot;
    Ok(match answer {
        Answer::Outcome => (admission.task, Admission::Committed),
        Answer::Immediately => (admission.task.clone(), Admission::Snapshot(admission)),
        Answer::Stream => {
            // Registered before the execution can commit anything.
            let watched = shared
                .log
                .watch(&writer.authority, &writer.task_id, Some(seq))
                .await;
            let watch = match watched {
                Ok(w) => w,
                Err(e) => {
                    writer
                        .finish(crate::types::TaskState::Failed, Some(run::EXECUTOR_FAILED))
                        .await;
                    shared.registry.remove(writer);
                    return Err(e.into());
                }
            };
            (admission.task, Admission::Watch { seq, watch })
        }
    })
}
