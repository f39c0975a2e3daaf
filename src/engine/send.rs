//! SendMessage and SendStreamingMessage: validation, admission, and the
//! blocking / streaming answers (a2a-spec.md §4.1, §4.2).

use std::sync::Arc;

use tower_service::Service;

use super::executor::{Emitter, Execution};
use super::layer::Shared;
use super::ops::{history_length, view, view_owned};
use super::service::record_ids;
use super::subscribe::{Start, event_stream, until_then_catch_up};
use super::writer::{Outcome, Writer};
use super::{EmitError, run};
use crate::log::{LogErrorKind, Projection, Record, RecordStream, Snapshot, Watch};
use crate::types::{Part, PartContent, Role, SendMessageRequest, SendMessageResponse, Task};
use crate::{A2aError, A2aResponse, BoxError, CallContext, ErrorKind};

/// The media type of a part: its `mediaType` without parameters, else the
/// type its content implies.
fn media_type(part: &Part) -> &str {
    if !part.media_type.is_empty() {
        return part.media_type.split(';').next().unwrap_or("").trim();
    }
    match part.content {
        PartContent::Text(_) => "text/plain",
        PartContent::Data(_) => "application/json",
        PartContent::Raw(_) | PartContent::Url(_) => "application/octet-stream",
    }
}

/// `pattern` (possibly `*/*` or `type/*`) covers `media`.
fn covers(pattern: &str, media: &str) -> bool {
    let pattern = pattern.split(';').next().unwrap_or("").trim();
    if pattern == "*/*" || pattern.eq_ignore_ascii_case(media) {
        return true;
    }
    match (pattern.strip_suffix("/*"), media.split_once('/')) {
        (Some(ty), Some((mty, _))) => ty.eq_ignore_ascii_case(mty),
        _ => false,
    }
}

fn content_type_error(what: &'static str) -> A2aError {
    A2aError::new(ErrorKind::ContentTypeNotSupported).with_message(what)
}

/// Everything that can be checked before any lookup or write.
fn validate(shared: &Shared, req: &SendMessageRequest) -> Result<(), A2aError> {
    let m = &req.message;
    if m.message_id.is_empty() {
        return Err(A2aError::invalid_params("message.messageId", "is required"));
    }
    if m.parts.is_empty() {
        return Err(A2aError::invalid_params(
            "message.parts",
            "needs at least one part",
        ));
    }
    if m.role == Role::Agent {
        return Err(A2aError::invalid_params(
            "message.role",
            "must be ROLE_USER",
        ));
    }
    if let Some(cfg) = &req.configuration {
        history_length(cfg.history_length, "configuration.historyLength")?;
        if cfg.task_push_notification_config.is_some() {
            return Err(A2aError::new(ErrorKind::PushNotificationNotSupported));
        }
        let accepted = &cfg.accepted_output_modes;
        if !accepted.is_empty()
            && !shared.output_modes.is_empty()
            && !accepted.iter().any(|a| {
                shared
                    .output_modes
                    .iter()
                    .any(|o| covers(a, o) || covers(o, a))
            })
        {
            return Err(content_type_error(
                "None of the accepted output modes is produced by this agent",
            ));
        }
    }
    if !shared.input_modes.is_empty() {
        for part in &m.parts {
            let media = media_type(part);
            if !shared.input_modes.iter().any(|mode| covers(mode, media)) {
                return Err(content_type_error(
                    "A message part has a media type this agent does not accept",
                ));
            }
        }
    }
    Ok(())
}

fn busy(task_id: &str) -> A2aError {
    A2aError::new(ErrorKind::UnsupportedOperation)
        .with_message("The task is still running; send the next message when it asks for input")
        .with_metadata("taskId", task_id)
}

fn emit_error(e: EmitError) -> A2aError {
    match e {
        EmitError::Log(LogErrorKind::Full) => A2aError::new(ErrorKind::Unavailable),
        other => A2aError::internal(other),
    }
}

/// Which snapshot of the task [`admit`] keeps for its caller.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// None: SendMessage waits for the writer's outcome. A new task's
    /// admission then goes out with the execution's first commit.
    Nothing,
    /// The snapshot of the admission commit (SendMessage returnImmediately).
    Admission,
    /// The snapshot the watch starts from (SendStreamingMessage).
    Watch,
}

/// An admitted message: the task after admission, its execution (not
/// running yet) and, for a stream, a watch registered before it runs.
struct Admitted {
    authority: String,
    task_id: String,
    /// The sequence number of the admission commit (0 if deferred); the
    /// watch's records follow it.
    admitted: u64,
    /// The task after admission, if the caller asked to keep it. Otherwise
    /// it is dropped before the execution starts, so that the execution's
    /// first commit updates the task in place instead of copying it.
    snapshot: Option<Snapshot>,
    /// The watch's records ([`Keep::Watch`] only).
    records: Option<RecordStream>,
    writer: Arc<Writer>,
    /// Detached by the caller, or driven in its future.
    driver: run::Driver,
}

async fn admit<S>(
    shared: Arc<Shared>,
    inner: S,
    req: SendMessageRequest,
    context: CallContext,
    keep: Keep,
) -> Result<Admitted, A2aError>
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    validate(&shared, &req)?;
    let authority = shared.authority.resolve(&context)?;
    let mut message = req.message;
    message.role = Role::User;
    let is_new = message.task_id.is_empty();
    let (task_id, context_id, base) = if is_new {
        // Time-ordered (UUIDv7): a durable log's keys and indexes then grow
        // at their end instead of touching a random page per new task.
        let task_id = super::id_text(uuid::Uuid::now_v7());
        if message.context_id.is_empty() {
            message.context_id = super::id_text(uuid::Uuid::now_v7());
        }
        message.task_id.clone_from(&task_id);
        let context_id = message.context_id.clone();
        (task_id, context_id, None)
    } else {
        // A continuation (a2a-spec.md §4.1): the task must exist for this
        // authority, accept messages, and share the message's context.
        let snap = shared
            .log
            .snapshot(&authority, &message.task_id)
            .await
            .map_err(|e| match e.kind() {
                LogErrorKind::NotFound => A2aError::task_not_found(message.task_id.clone()),
                _ => e.into(),
            })?;
        let task = &snap.task;
        if !message.context_id.is_empty() && message.context_id != task.context_id {
            return Err(A2aError::invalid_params(
                "message.contextId",
                "does not match the task's context",
            ));
        }
        if task.status.state.is_terminal() {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message("The task is in a terminal state and accepts no more messages")
                .with_metadata("taskId", task.id.clone()));
        }
        if !task.status.state.is_interrupted() {
            return Err(busy(&task.id));
        }
        message.context_id.clone_from(&task.context_id);
        // A higher epoch fences any older writer of this task.
        (
            task.id.clone(),
            task.context_id.clone(),
            Some((snap.seq, snap.epoch + 1)),
        )
    };
    record_ids(&task_id, &context_id);
    let mut records = Vec::with_capacity(3);
    if base.is_none() {
        let mut created = Record::created(task_id.clone(), context_id.clone());
        if let Record::Created { metadata, .. } = &mut created {
            metadata.clone_from(&req.metadata);
        }
        records.push(created);
    }
    records.push(Record::MessageAdmitted {
        message: message.clone(),
    });
    records.push(Record::ExecutionStarted {
        host: shared.host_id.to_string(),
    });
    let log = shared.log.clone();
    // Nobody can know a new task before its blocking SendMessage answers,
    // so its admission may ride with the execution's first commit: one
    // append per task when the executor answers without waiting.
    let deferred = base.is_none() && keep == Keep::Nothing;
    // The task as its admission leaves it, for the execution.
    let admitted_task = if deferred {
        let p = Projection::replay(&records).map_err(|_| A2aError::new(ErrorKind::Internal))?;
        Some(p.task().clone())
    } else {
        None
    };
    let (seq, epoch) = base.unwrap_or((0, 1));
    let writer = Writer::new(log, authority, task_id, context_id, seq, epoch);
    let writer = Arc::new(if keep == Keep::Nothing {
        writer.keeping_outcome()
    } else {
        writer
    });
    if !shared.registry.claim(&writer) {
        return Err(busy(&writer.task_id));
    }
    let (task, admitted, snapshot, records) = if let Some(task) = admitted_task {
        writer.defer_admission(records);
        (task, 0, None, None)
    } else {
        admit_now(&shared, &writer, keep, records).await?
    };
    let execution = Execution {
        message,
        task,
        context,
        emit: Emitter::new(writer.clone()),
    };
    let driver = run::Driver::new(shared, inner, execution, writer.clone());
    Ok(Admitted {
        authority: writer.authority.clone(),
        task_id: writer.task_id.clone(),
        admitted,
        snapshot,
        records,
        writer,
        driver,
    })
}

/// Commits the admission `records` before the execution starts, and
/// registers the watch of a stream: the task for the execution, the
/// admission's sequence number, and what the caller keeps.
async fn admit_now(
    shared: &Shared,
    writer: &Arc<Writer>,
    keep: Keep,
    records: Vec<Record>,
) -> Result<(Arc<Task>, u64, Option<Snapshot>, Option<RecordStream>), A2aError> {
    let appended = match writer.commit(records).await {
        Ok(a) => a,
        Err(e) => {
            shared.registry.remove(writer);
            return Err(match e {
                // Someone else advanced the task between our read and write.
                EmitError::Superseded => busy(&writer.task_id),
                other => emit_error(other),
            });
        }
    };
    let admitted = appended.seq;
    let admission = appended.snapshot;
    // Only the execution's `task` and what the caller keeps may still hold
    // the task when the execution starts.
    Ok(match keep {
        Keep::Nothing => (admission.task, admitted, None, None),
        Keep::Admission => (admission.task.clone(), admitted, Some(admission), None),
        Keep::Watch => {
            // Registered before the execution can commit anything.
            let watched = shared
                .log
                .watch(&writer.authority, &writer.task_id, Some(admitted))
                .await;
            let Watch { snapshot, records } = match watched {
                Ok(w) => w,
                Err(e) => {
                    writer
                        .finish(crate::types::TaskState::Failed, Some(run::EXECUTOR_FAILED))
                        .await;
                    shared.registry.remove(writer);
                    return Err(e.into());
                }
            };
            (admission.task, admitted, Some(snapshot), Some(records))
        }
    })
}

/// SendMessage: blocks until the task is terminal or interrupted, unless
/// `returnImmediately`.
pub(crate) async fn send<S>(
    shared: Arc<Shared>,
    inner: S,
    req: SendMessageRequest,
    context: CallContext,
) -> Result<A2aResponse, A2aError>
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    // Only two scalars of the configuration matter here; `admit` takes the rest.
    let (return_immediately, history_length) = req
        .configuration
        .as_ref()
        .map_or((false, None), |c| (c.return_immediately, c.history_length));
    let log = shared.log.clone();
    let Admitted {
        authority,
        task_id,
        snapshot,
        writer,
        mut driver,
        ..
    } = admit(
        shared,
        inner,
        req,
        context,
        if return_immediately {
            Keep::Admission
        } else {
            Keep::Nothing
        },
    )
    .await?;
    if let Some(snapshot) = snapshot {
        driver.detach();
        return Ok(respond(view(&snapshot.task, history_length, true)));
    }
    // Run the execution here until it closes the task (terminal or
    // interrupted), another writer fences it, or it ends without closing
    // it. An executor still running after it closed the task (or this call
    // dropped before) goes on in a task of its own.
    tokio::select! {
        biased;
        () = driver.drive() => {}
        () = writer.closed.wait() => {}
    }
    driver.detach();
    let task = match writer.take_outcome() {
        Some(Outcome::Reply(message)) => {
            return Ok(A2aResponse::SendMessage(SendMessageResponse::Message(
                *message,
            )));
        }
        Some(Outcome::NotAdmitted(EmitError::Superseded)) => return Err(busy(&task_id)),
        Some(Outcome::NotAdmitted(e)) => return Err(emit_error(e)),
        Some(Outcome::Task(task)) => task,
        // Fenced, or the execution ended without closing the task: answer
        // with the task as the log has it.
        None => log.snapshot(&authority, &task_id).await?.task,
    };
    drop(writer);
    Ok(respond(view_owned(task, history_length, true)))
}

fn respond(task: Task) -> A2aResponse {
    A2aResponse::SendMessage(SendMessageResponse::Task(task))
}

/// SendStreamingMessage: the Task (or a lone Message), then updates until a
/// terminal or interrupted state.
pub(crate) async fn stream<S>(
    shared: Arc<Shared>,
    inner: S,
    req: SendMessageRequest,
    context: CallContext,
) -> Result<A2aResponse, A2aError>
where
    S: Service<Execution, Response = ()> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let buffer = shared.subscriber_buffer;
    let log = shared.log.clone();
    let Admitted {
        authority,
        task_id,
        admitted,
        snapshot,
        records,
        writer,
        driver,
    } = admit(shared, inner, req, context, Keep::Watch).await?;
    driver.detach();
    let (Some(snapshot), Some(records)) = (snapshot, records) else {
        return Err(A2aError::new(ErrorKind::Internal));
    };
    // A fenced execution stops: the stream ends with what the log holds when
    // it is fenced (what fenced it included), not only with what its watch
    // had been woken for.
    let fenced = async move { writer.fenced.wait().await };
    let records = until_then_catch_up(records, fenced, log, authority, task_id, admitted);
    Ok(A2aResponse::Stream(event_stream(
        Watch { snapshot, records },
        Start::FirstEmission,
        buffer,
    )))
}
