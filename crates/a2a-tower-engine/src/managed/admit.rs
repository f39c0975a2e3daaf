//! Starting a run and admitting an answer: what a SendMessage to a managed
//! service commits, before any work, or refuses with nothing written.

use std::sync::Arc;

use serde_json::Value;

use super::entry::{JournalEntry, MANAGED_FEATURE};
use super::input;
use super::journal::Journal;
use super::pending::{self, Names, WAIT_KEY};
use super::run::{Head, Run, drive};
use super::service::Inner;
use crate::engine::push_config::inline_record;
use crate::log::{AppendRequest, LogErrorKind, Record, Snapshot};
use crate::schema::Schema;
use crate::types::{Message, Role, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp};
use crate::{A2aError, ErrorKind};

fn not_found(id: &str) -> impl FnOnce(crate::log::LogError) -> A2aError + '_ {
    move |e| match e.kind() {
        LogErrorKind::NotFound => A2aError::task_not_found(id),
        _ => e.into(),
    }
}

/// Starts a run for `message` (no task id), or finds the one an earlier
/// attempt with the same ids and input started: the task id and the sequence
/// number to answer from.
pub(crate) async fn start(
    inner: &Arc<Inner>,
    authority: &str,
    mut message: Message,
    config: Option<TaskPushNotificationConfig>,
) -> Result<(String, u64), A2aError> {
    let program = &inner.program;
    let input = input::value(&message, program.input_schema(), "input")?;
    if message.context_id.is_empty() {
        message.context_id = crate::engine::id_text(uuid::Uuid::now_v7());
    }
    let task_id = input::task_id(
        &inner.service,
        authority,
        &message.context_id,
        &message.message_id,
    );
    message.task_id.clone_from(&task_id);
    message.role = Role::User;
    let names = Names {
        program: program.name(),
        root: &task_id,
        task_id: &task_id,
        context_id: &message.context_id,
    };
    let metadata = pending::metadata(&names, &Default::default(), "running", false);
    let mut records = vec![
        Record::Created {
            task_id: task_id.clone(),
            context_id: message.context_id.clone(),
            at: Timestamp::now(),
            metadata: Some(metadata),
        },
        Record::MessageAdmitted {
            message: message.clone(),
        },
        JournalEntry::RunStarted {
            program: program.name().to_owned(),
            root: task_id.clone(),
            input: input.clone(),
        }
        .record(),
        Record::ExecutionStarted {
            host: inner.host_id.clone(),
        },
    ];
    records.extend(inline_record(config, &task_id));
    records.push(Record::status(TaskStatus::new(TaskState::Working)));
    let context_id = message.context_id.clone();
    match inner
        .log
        .append(AppendRequest::create(authority, task_id.clone(), records))
        .await
    {
        Ok(appended) => {
            let head = Head {
                seq: appended.seq,
                epoch: 1,
                waits: Default::default(),
            };
            let run = Run::new(
                inner.log.clone(),
                authority.to_owned(),
                task_id.clone(),
                context_id,
                program.name().to_owned(),
                inner.policy,
                head,
                Journal::after(appended.seq),
                false,
            );
            spawn(inner, run, input, appended.seq);
            Ok((task_id, appended.seq))
        }
        Err(e) if e.kind() == LogErrorKind::Conflict => {
            // Started before (its acknowledgment may have been lost): the
            // same input reconciles with it; another input is refused.
            let snap = inner
                .log
                .snapshot(authority, &task_id)
                .await
                .map_err(not_found(&task_id))?;
            let same = snap.projection.held_by() == Some(MANAGED_FEATURE)
                && snap.task.history.first().is_some_and(|first| {
                    input::value(first, program.input_schema(), "input").ok() == Some(input)
                });
            if same {
                Ok((task_id, snap.seq))
            } else {
                Err(A2aError::invalid_params(
                    "message.messageId",
                    "was already used in this context with a different input",
                ))
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs `run` on this host until it ends, unless it runs here already.
pub(crate) fn spawn(inner: &Arc<Inner>, run: Arc<Run>, input: Value, watch_from: u64) -> bool {
    if !inner.runs.claim(&run) {
        return false;
    }
    let inner = inner.clone();
    tokio::spawn(async move {
        drive(run.clone(), inner.program.clone(), input, watch_from).await;
        inner.runs.remove(&run);
    });
    true
}

/// The wait an answer names in `scope.wait`, or the only one open.
fn address(message: &Message, waits: &pending::Waits) -> Result<(String, String), A2aError> {
    let named = message.metadata.as_ref().and_then(|m| m.get(WAIT_KEY));
    let field = "message.metadata.scope.wait";
    match named {
        Some(w) => {
            let part = |k: &str| w.get(k).and_then(Value::as_str).map(str::to_owned);
            match (part("process"), part("key")) {
                (Some(p), Some(k)) => Ok((p, k)),
                _ => Err(A2aError::invalid_params(
                    field,
                    "must be {\"process\": string, \"key\": string}",
                )),
            }
        }
        None if waits.len() == 1 => Ok(waits.keys().next().cloned().unwrap_or_default()),
        None if waits.is_empty() => Err(A2aError::new(ErrorKind::UnsupportedOperation)
            .with_message("The task is not waiting for an answer")),
        None => Err(A2aError::invalid_params(
            field,
            "must name the wait to answer: several are open",
        )),
    }
}

/// Admits `message` as the answer to one of the task's open waits, as any
/// host may: a conditional append on the task's head that does not take the
/// writer's epoch. A repeated answer (same message id) reconciles with the one
/// already admitted.
pub(crate) async fn answer(
    inner: &Arc<Inner>,
    authority: &str,
    mut message: Message,
    config: Option<TaskPushNotificationConfig>,
) -> Result<(String, u64), A2aError> {
    let task_id = message.task_id.clone();
    for _ in 0..16 {
        let snap: Snapshot = inner
            .log
            .snapshot(authority, &task_id)
            .await
            .map_err(not_found(&task_id))?;
        let task = &snap.task;
        if snap.projection.held_by() != Some(MANAGED_FEATURE) {
            return Err(A2aError::task_not_found(task_id));
        }
        if !message.context_id.is_empty() && message.context_id != task.context_id {
            return Err(A2aError::invalid_params(
                "message.contextId",
                "does not match the task's context",
            ));
        }
        if task
            .history
            .iter()
            .any(|m| m.message_id == message.message_id)
        {
            return Ok((task_id, snap.seq));
        }
        if task.status.state.is_terminal() {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message("The task is in a terminal state and accepts no more messages")
                .with_metadata("taskId", task_id));
        }
        crate::engine::push_config::bounded(&snap, config.as_ref())?;
        let waits = pending::waits_of(task.metadata.as_ref());
        let address = address(&message, &waits)?;
        let Some(wait) = waits.get(&address) else {
            return Err(A2aError::invalid_params(
                "message.metadata.scope.wait",
                "names no open wait of this task",
            ));
        };
        let schema = match &wait.schema {
            Some(s) => Schema::new(s.clone()).map_err(A2aError::internal)?,
            None => Schema::any(),
        };
        let value = input::value(&message, &schema, "answer")?;
        message.task_id.clone_from(&task.id);
        message.context_id.clone_from(&task.context_id);
        message.role = Role::User;
        let mut rest = waits.clone();
        rest.remove(&address);
        let meta = task.metadata.as_ref();
        let text = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (program, root) = (text(pending::PROGRAM_KEY), text(pending::ROOT_KEY));
        let names = Names {
            program: &program,
            root: &root,
            task_id: &task.id,
            context_id: &task.context_id,
        };
        let mut records = vec![JournalEntry::signal(
            address.0.clone(),
            address.1.clone(),
            value,
            message.clone(),
        )];
        records.extend(inline_record(config.clone(), &task_id));
        records.push(Record::MetadataChanged {
            metadata: pending::metadata(&names, &rest, pending::root_status(&rest), false),
        });
        records.push(Record::status(pending::status(&names, inner.policy, &rest)));
        let request = AppendRequest::new(authority, task_id.clone(), snap.seq, snap.epoch, records);
        match inner.log.append(request).await {
            Ok(a) => return Ok((task_id, a.seq)),
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
                tokio::task::yield_now().await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(A2aError::new(ErrorKind::Unavailable)
        .with_message("The task is changing too fast to answer; retry"))
}

/// Records a cancel request and returns the task as observed: only the
/// writer's terminal commit proves the run stopped.
pub(crate) async fn cancel(
    inner: &Arc<Inner>,
    authority: &str,
    task_id: &str,
) -> Result<Arc<crate::types::Task>, A2aError> {
    for _ in 0..16 {
        let snap = inner
            .log
            .snapshot(authority, task_id)
            .await
            .map_err(not_found(task_id))?;
        if snap.state().is_terminal() {
            return Err(
                A2aError::new(ErrorKind::TaskNotCancelable).with_metadata("taskId", task_id)
            );
        }
        if snap.projection.cancel_requested() {
            return Ok(snap.task);
        }
        let request = AppendRequest::new(
            authority,
            task_id,
            snap.seq,
            snap.epoch,
            vec![Record::CancelRequested {
                at: Timestamp::now(),
            }],
        );
        match inner.log.append(request).await {
            Ok(a) => return Ok(a.snapshot.task),
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
                tokio::task::yield_now().await;
            }
            Err(e) => return Err(not_found(task_id)(e)),
        }
    }
    Err(A2aError::new(ErrorKind::Unavailable)
        .with_message("The task is changing too fast to cancel; retry"))
}
