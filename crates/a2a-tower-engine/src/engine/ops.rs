//! GetTask, ListTasks, CancelTask, SubscribeToTask and GetExtendedAgentCard,
//! answered from the task log (a2a-spec.md §4.3–§4.6, §2.5).

use super::layer::Shared;
use super::service::record_ids;
use super::subscribe::{Reopen, Start, event_stream};
use crate::log::{AppendRequest, ListQuery, LogError, LogErrorKind, PageCursor, Record};
use crate::types::{
    CancelTaskRequest, Encoded, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SubscribeToTaskRequest, Task, TaskState,
};
use crate::{A2aError, A2aResponse, CallContext, ErrorKind, LastEventId};

/// How many of `len` messages a `historyLength` keeps: all when unset, the
/// most recent `n` otherwise (a negative value was refused at dispatch).
fn kept(history: Option<i32>, len: usize) -> usize {
    history.map_or(len, |n| usize::try_from(n).unwrap_or(0).min(len))
}

/// The task as returned to a client: at most `history` most recent messages
/// (all when unset, none for 0), artifacts only if `artifacts`.
pub(crate) fn view(task: &Task, history: Option<i32>, artifacts: bool) -> Task {
    let keep = kept(history, task.history.len());
    Task {
        id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        artifacts: if artifacts {
            task.artifacts.clone()
        } else {
            Vec::new()
        },
        history: task.history[task.history.len() - keep..].to_vec(),
        metadata: task.metadata.clone(),
    }
}

/// [`view`] of a shared task, moving it instead of copying when this is the
/// last reference (SendMessage's answer, once the log has packed the task).
pub(crate) fn view_owned(
    task: std::sync::Arc<Task>,
    history: Option<i32>,
    artifacts: bool,
) -> Task {
    match std::sync::Arc::try_unwrap(task) {
        Ok(mut t) => {
            let keep = kept(history, t.history.len());
            t.history.drain(..t.history.len() - keep);
            if !artifacts {
                t.artifacts = Vec::new();
            }
            t
        }
        Err(shared) => view(&shared, history, artifacts),
    }
}

/// [`view_owned`], with the task's ProtoJSON (which the memory log wrote
/// when it packed it) kept for the binding when the view is the whole task.
pub(crate) fn view_encoded(
    task: std::sync::Arc<Task>,
    json: Option<bytes::Bytes>,
    history: Option<i32>,
    artifacts: bool,
) -> Encoded<Task> {
    let whole = kept(history, task.history.len()) == task.history.len()
        && (artifacts || task.artifacts.is_empty());
    let view = view_owned(task, history, artifacts);
    match json {
        Some(json) if whole => Encoded::with_json(view, json),
        _ => view.into(),
    }
}

/// A log error of a call naming the task `id`: not found is TaskNotFound.
pub(crate) fn not_found(id: &str) -> impl FnOnce(LogError) -> A2aError + '_ {
    move |e| match e.kind() {
        LogErrorKind::NotFound => A2aError::task_not_found(id),
        _ => e.into(),
    }
}

pub(crate) async fn get(
    shared: &Shared,
    req: GetTaskRequest,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    let snap = shared
        .log
        .snapshot(&authority, &req.id)
        .await
        .map_err(not_found(&req.id))?;
    record_ids(&snap.task.id, &snap.task.context_id);
    Ok(A2aResponse::Task(view(
        &snap.task,
        req.history_length,
        true,
    )))
}

pub(crate) async fn list(
    shared: &Shared,
    req: ListTasksRequest,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    // In 1..=100 when set: checked at dispatch (a2a-spec.md §4.4).
    let page_size = req.page_size.unwrap_or(50);
    let after =
        match req.page_token.as_str() {
            "" => None,
            token => Some(PageCursor::from_token(token).ok_or_else(|| {
                A2aError::invalid_params("pageToken", "is not a valid page token")
            })?),
        };
    let authority = shared.authority.resolve(ctx)?;
    let query = ListQuery {
        context_id: (!req.context_id.is_empty()).then(|| req.context_id.clone()),
        state: (req.status != TaskState::Unspecified).then_some(req.status),
        status_after: req.status_timestamp_after,
        page_size: usize::try_from(page_size).unwrap_or(50),
        after,
    };
    let page = shared.log.list(&authority, &query).await?;
    let artifacts = req.include_artifacts == Some(true);
    Ok(A2aResponse::Tasks(ListTasksResponse {
        tasks: page
            .tasks
            .iter()
            .map(|t| view(t, req.history_length, artifacts))
            .collect(),
        next_page_token: page.next.map(|c| c.to_token()).unwrap_or_default(),
        page_size,
        total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
    }))
}

fn not_cancelable(id: &str) -> A2aError {
    A2aError::new(ErrorKind::TaskNotCancelable).with_metadata("taskId", id)
}

pub(crate) async fn cancel(
    shared: &Shared,
    req: CancelTaskRequest,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    // Re-read and retry when another writer moves the task meanwhile.
    for _ in 0..8 {
        let snap = shared
            .log
            .snapshot(&authority, &req.id)
            .await
            .map_err(not_found(&req.id))?;
        record_ids(&snap.task.id, &snap.task.context_id);
        if snap.state().is_terminal() {
            return Err(not_cancelable(&req.id));
        }
        if let Some(writer) = shared.registry.get(&req.id).filter(|w| w.is_open()) {
            // A live execution on this host: its writer commits CANCELED and
            // signals the executor.
            if let Some(done) = writer.cancel().await {
                return Ok(A2aResponse::Task(view(&done.snapshot.task, None, true)));
            }
            continue;
        }
        // No live execution (the task waits for input): cancel it in the log.
        let records = Record::canceled();
        let req_append = AppendRequest::new(
            authority.clone(),
            req.id.clone(),
            snap.seq,
            snap.epoch,
            records,
        );
        match shared.log.append(req_append).await {
            Ok(done) => return Ok(A2aResponse::Task(view(&done.snapshot.task, None, true))),
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
                tokio::task::yield_now().await;
            }
            Err(e) => return Err(not_found(&req.id)(e)),
        }
    }
    Err(A2aError::new(ErrorKind::Unavailable)
        .with_message("The task is changing too fast to cancel; retry"))
}

pub(crate) async fn subscribe(
    shared: &Shared,
    req: SubscribeToTaskRequest,
    ctx: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = shared.authority.resolve(ctx)?;
    if let Some(after) = resume_cursor(ctx)? {
        // A resume: exactly the events after the cursor, then the live tail
        // (a terminal task's replay ends with its terminal event).
        match shared.log.watch(&authority, &req.id, Some(after)).await {
            Ok(watch) if after <= watch.snapshot.seq => {
                record_ids(&watch.snapshot.task.id, &watch.snapshot.task.context_id);
                if after < watch.snapshot.seq || !watch.snapshot.state().is_terminal() {
                    return Ok(A2aResponse::Stream(event_stream(
                        watch,
                        Start::Resume,
                        shared.subscriber_buffer,
                        Some(reopen(shared, &authority, &req.id)),
                    )));
                }
                // Nothing after the cursor of a terminal task: the client
                // has seen its end; the specification's answer below.
            }
            Ok(_) => {
                return Err(A2aError::new(ErrorKind::InvalidParams)
                    .with_message("Last-Event-ID names no event of this task")
                    .with_metadata("taskId", req.id));
            }
            // Records older than the log keeps (see `TaskLog::read`): the
            // stream starts from the snapshot instead, below.
            Err(e) if e.kind() == LogErrorKind::Compacted => {
                let watch = shared
                    .log
                    .watch(&authority, &req.id, None)
                    .await
                    .map_err(not_found(&req.id))?;
                record_ids(&watch.snapshot.task.id, &watch.snapshot.task.context_id);
                return Ok(A2aResponse::Stream(event_stream(
                    watch,
                    Start::Snapshot,
                    shared.subscriber_buffer,
                    Some(reopen(shared, &authority, &req.id)),
                )));
            }
            Err(e) => return Err(not_found(&req.id)(e)),
        }
    }
    let watch = shared
        .log
        .watch(&authority, &req.id, None)
        .await
        .map_err(not_found(&req.id))?;
    record_ids(&watch.snapshot.task.id, &watch.snapshot.task.context_id);
    if watch.snapshot.state().is_terminal() {
        // a2a-spec.md §4.6: a terminal task cannot be subscribed to.
        return Err(A2aError::new(ErrorKind::UnsupportedOperation)
            .with_message("The task is in a terminal state")
            .with_metadata("taskId", req.id));
    }
    Ok(A2aResponse::Stream(event_stream(
        watch,
        Start::Snapshot,
        shared.subscriber_buffer,
        Some(reopen(shared, &authority, &req.id)),
    )))
}

fn reopen(shared: &Shared, authority: &str, task_id: &str) -> Reopen {
    Reopen {
        log: shared.log.clone(),
        authority: authority.to_owned(),
        task_id: task_id.to_owned(),
    }
}

/// The cursor of a resumed SubscribeToTask: its `Last-Event-ID` header, an
/// id this engine sent (a record's sequence number).
fn resume_cursor(ctx: &CallContext) -> Result<Option<u64>, A2aError> {
    let Some(id) = LastEventId::from_headers(&ctx.headers) else {
        return Ok(None);
    };
    id.seq().map(Some).ok_or_else(|| {
        A2aError::new(ErrorKind::InvalidParams)
            .with_message("Last-Event-ID is not an id of this agent")
    })
}

/// GetExtendedAgentCard reaching a core: the card declares the capability
/// (checked at dispatch) but no [`ExtendedCardLayer`](https://docs.rs/a2a-tower/latest/a2a_tower/card/struct.ExtendedCardLayer.html)
/// in front of the core answered it.
pub(crate) fn extended_card() -> Result<A2aResponse, A2aError> {
    Err(A2aError::new(ErrorKind::ExtendedAgentCardNotConfigured))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;

    #[test]
    fn history_length_semantics() {
        let task = Task {
            history: (0..5).map(|i| Message::user(i.to_string(), "x")).collect(),
            ..Task::default()
        };
        assert_eq!(view(&task, None, true).history.len(), 5);
        assert_eq!(view(&task, Some(0), true).history.len(), 0);
        let two = view(&task, Some(2), true);
        assert_eq!(two.history[0].message_id, "3", "most recent");
        assert_eq!(view(&task, Some(50), true).history.len(), 5);
    }

    // Moving the last reference gives exactly what copying gives.
    #[test]
    fn view_owned_equals_view() {
        let task = Task {
            history: (0..5).map(|i| Message::user(i.to_string(), "x")).collect(),
            artifacts: vec![crate::types::Artifact {
                artifact_id: "a".into(),
                parts: vec![crate::types::Part::text("y")],
                ..Default::default()
            }],
            ..Task::default()
        };
        for history in [None, Some(0), Some(2), Some(50)] {
            for artifacts in [true, false] {
                let expected = view(&task, history, artifacts);
                let unique = std::sync::Arc::new(task.clone());
                assert_eq!(view_owned(unique, history, artifacts), expected);
                let shared = std::sync::Arc::new(task.clone());
                let other = shared.clone();
                assert_eq!(view_owned(shared, history, artifacts), expected);
                assert_eq!(*other, task);
                // The task's JSON is kept only for a view of the whole task.
                let json = bytes::Bytes::from(a2a_tower_core::json::to_vec(&task).unwrap());
                let encoded = view_encoded(
                    std::sync::Arc::new(task.clone()),
                    Some(json),
                    history,
                    artifacts,
                );
                assert_eq!(encoded, expected);
                let whole = !matches!(history, Some(0 | 2)) && artifacts;
                assert_eq!(encoded.json().is_some(), whole, "{history:?} {artifacts}");
            }
        }
    }
}
