//! SendMessage and SendStreamingMessage on a team: a new input is queued
//! (or steers), `queue.mode: "append"` goes into the running execution, and
//! a message to a task waiting for input continues it as the engine does.

use std::sync::Arc;

use futures_util::StreamExt as _;

use super::core::Core;
use super::enqueue::{Mode, directives, enqueue};
use super::team::Dispatch;
use crate::engine::ops::view;
use crate::engine::subscribe::{Reopen, Start, event_stream};
use crate::log::Snapshot;
use crate::types::{CancelTaskRequest, Role, SendMessageRequest, SendMessageResponse};
use crate::{A2aError, A2aResponse, CallContext, ErrorKind};

/// SendMessage (`stream`: false) or SendStreamingMessage.
pub(crate) async fn send(
    core: &Arc<Core>,
    req: SendMessageRequest,
    context: CallContext,
    stream: bool,
) -> Result<A2aResponse, A2aError> {
    let d = directives(core, &req.message)?;
    let authority = core.shared.authority.resolve(&context)?;
    if d.mode == Mode::Append {
        return append(core, &authority, req, stream).await;
    }
    if !req.message.task_id.is_empty() {
        // A continuation of a task waiting for input: the engine's path.
        let shared = core.shared.clone();
        let inner = Dispatch {
            team: core.team.clone(),
        };
        return if stream {
            crate::engine::send::stream(shared, inner, req, context).await
        } else {
            crate::engine::send::send(shared, inner, req, context).await
        };
    }
    let (immediately, history) = req
        .configuration
        .as_ref()
        .map_or((false, None), |c| (c.return_immediately, c.history_length));
    // A blocking send's caller sees its task only when the run ends or
    // asks for input: into an idle context, it is admitted at once.
    let at_once = !stream && !immediately;
    let queued = enqueue(core, &authority, req, &d, stream, at_once).await?;
    let snapshot = queued.snapshot;
    if let Some(run) = queued.steered {
        // The steer is queued first, so the cancel's end admits it next.
        let cancel = CancelTaskRequest {
            id: run,
            ..Default::default()
        };
        let _ = crate::engine::ops::cancel(&core.shared, cancel, &context).await;
    }
    let Some(run) = queued.run else {
        core.notify(&authority, &snapshot.task.context_id);
        return answer(
            core,
            &authority,
            snapshot,
            queued.watch,
            immediately,
            history,
        )
        .await;
    };
    // Admitted at once: the run goes on in this future (dropped, in a task
    // of its own) until it ends or asks for input.
    let ended = match ends(snapshot.state()) {
        true => Ok(snapshot.task),
        false => {
            drop(snapshot);
            run.finish().await
        }
    };
    let task = match ended {
        Ok(task) => task,
        // Its writer was superseded (another host took the task over): the
        // task as the log has it once it ends.
        Err(task_id) => settled(core.shared.log.as_ref(), &authority, &task_id).await?,
    };
    Ok(task_response(view(&task, history, true)))
}

/// The answer to a queued input: the stream of its task from SUBMITTED on
/// (`stream`, the watch the enqueue registered), the task as queued
/// (`returnImmediately`), or the task once its run ends or asks for input
/// (admitted in the enqueue's commit if its context was idle).
async fn answer(
    core: &Core,
    authority: &str,
    snapshot: Snapshot,
    stream: Option<crate::log::Watch>,
    immediately: bool,
    history: Option<i32>,
) -> Result<A2aResponse, A2aError> {
    let log = &core.shared.log;
    if let Some(watch) = stream {
        let reopen = Reopen {
            log: log.clone(),
            authority: authority.to_owned(),
            task_id: snapshot.task.id.clone(),
        };
        let watch = crate::log::Watch {
            snapshot,
            records: watch.records,
        };
        return Ok(A2aResponse::Stream(event_stream(
            watch,
            Start::Snapshot,
            core.shared.subscriber_buffer,
            Some(reopen),
        )));
    }
    if immediately {
        return Ok(task_response(view(&snapshot.task, history, true)));
    }
    let task_id = snapshot.task.id.clone();
    // Not held while the run goes on: its commits update the task in place.
    drop(snapshot);
    let task = settled(log.as_ref(), authority, &task_id).await?;
    Ok(task_response(view(&task, history, true)))
}

/// The state ends a blocking send's wait: terminal, or waiting for input.
fn ends(state: crate::types::TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// The task once it is terminal or waits for input, as the watch's
/// records make it (no read at the end). A watch cut off for lagging is
/// opened again from the task's current state.
async fn settled(
    log: &dyn crate::log::TaskLog,
    authority: &str,
    task_id: &str,
) -> Result<Arc<crate::types::Task>, A2aError> {
    loop {
        let watch = log.watch(authority, task_id, None).await?;
        if ends(watch.snapshot.state()) {
            return Ok(watch.snapshot.task);
        }
        let Snapshot {
            seq: mut at,
            mut projection,
            ..
        } = watch.snapshot;
        let mut records = watch.records;
        while let Some(Ok(r)) = records.next().await {
            if r.seq <= at {
                continue;
            }
            if r.seq != at + 1 {
                // Not the next record (never so from a watch): watch again
                // from the task's current state rather than skip one.
                break;
            }
            projection.apply(&r.record);
            at = r.seq;
            if r.record.state().is_some_and(ends) {
                return Ok(projection.task().clone());
            }
        }
    }
}

fn task_response(task: crate::types::Task) -> A2aResponse {
    A2aResponse::SendMessage(SendMessageResponse::Task(task.into()))
}

/// `queue.mode: "append"`: the message joins the running execution of its
/// task on this host (committed to the history, then handed to the
/// executor); no new run.
async fn append(
    core: &Core,
    authority: &str,
    req: SendMessageRequest,
    stream: bool,
) -> Result<A2aResponse, A2aError> {
    if crate::engine::admit::validate(&core.shared, &req)?.is_some() {
        return Err(A2aError::new(ErrorKind::UnsupportedOperation).with_message(
            "An appended input takes no push config; create one with CreateTaskPushNotificationConfig",
        ));
    }
    let mut message = req.message;
    let snap = crate::engine::admit::addressed_task(&core.shared, authority, &mut message).await?;
    message.role = Role::User;
    let not_running = || {
        A2aError::new(ErrorKind::UnsupportedOperation)
            .with_message("The task has no running execution here that takes appended input")
            .with_metadata("taskId", snap.task.id.clone())
    };
    let writer = core
        .shared
        .registry
        .get(&snap.task.id)
        .filter(|w| w.is_open() && w.authority == authority)
        .ok_or_else(not_running)?;
    // A stream's watch is registered before the append: a run that ends at
    // once cannot leave the task compacted before it is watched.
    let watch = match stream {
        true => Some(
            core.shared
                .log
                .watch(authority, &snap.task.id, None)
                .await?,
        ),
        false => None,
    };
    let appended = writer
        .append_input(message)
        .await
        .map_err(|_| not_running())?;
    if let Some(watch) = watch {
        let reopen = Reopen {
            log: core.shared.log.clone(),
            authority: authority.to_owned(),
            task_id: snap.task.id.clone(),
        };
        return Ok(A2aResponse::Stream(event_stream(
            watch,
            Start::Snapshot,
            core.shared.subscriber_buffer,
            Some(reopen),
        )));
    }
    Ok(task_response(view(&appended.snapshot.task, None, true)))
}
