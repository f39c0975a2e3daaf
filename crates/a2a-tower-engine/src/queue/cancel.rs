//! CancelTask on a team: a queued input is canceled and leaves its queue in
//! one commit (it never runs, and no reader sees it queued once canceled);
//! a run is stopped by the engine's cancel. Either way the context drains.

use std::sync::Arc;

use super::core::Core;
use super::drain::task;
use super::record::QueueRecord;
use crate::engine::ops::{self, view};
use crate::log::{AppendRequest, LogErrorKind, Record};
use crate::types::CancelTaskRequest;
use crate::{A2aError, A2aResponse, CallContext};

/// CancelTask.
pub(crate) async fn cancel(
    core: &Arc<Core>,
    req: CancelTaskRequest,
    context: &CallContext,
) -> Result<A2aResponse, A2aError> {
    let authority = core.shared.authority.resolve(context)?;
    for _ in 0..8 {
        let snap = core
            .shared
            .log
            .snapshot(&authority, &req.id)
            .await
            .map_err(|e| match e.kind() {
                LogErrorKind::NotFound => A2aError::task_not_found(req.id.clone()),
                _ => e.into(),
            })?;
        if !super::record::is_queued(&snap.projection) || snap.state().is_terminal() {
            break;
        }
        let slot = core.slots.get(&authority, &snap.task.context_id);
        let mut st = slot.state.lock().await;
        slot.catch_up(&*core.shared.log, &mut st).await?;
        // Read again under the queue's lock: the drain may have admitted it.
        let Some(snap) = task(core, &slot, &req.id).await? else {
            break;
        };
        if !super::record::is_queued(&snap.projection) || !st.contains(&req.id) {
            break;
        }
        let records = Record::canceled();
        let task = AppendRequest::new(
            authority.clone(),
            req.id.clone(),
            snap.seq,
            snap.epoch,
            records,
        );
        let removed = [QueueRecord::Removed {
            task_id: req.id.clone(),
        }];
        match core
            .shared
            .log
            .append_all(vec![task, slot.append(&st, &removed)])
            .await
        {
            Ok(out) => {
                super::stream::Slot::applied(&mut st, &removed);
                drop(st);
                core.notify(&authority, &snap.task.context_id);
                return Ok(A2aResponse::Task(view(&out[0].snapshot.task, None, true)));
            }
            Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let out = ops::cancel(&core.shared, req, context).await?;
    if let A2aResponse::Task(t) = &out {
        // A stopped run frees its agent: the head may be runnable now.
        core.notify(&authority, &t.context_id);
    }
    Ok(out)
}
