//! The delivery-queue extension's two operations: read a context's queue
//! (its entries in comparator order, the runs going, and a revision), and
//! reorder it by submitting the complete visible order with that revision.
//! A stale revision or an incomplete order fails closed: nothing changes.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::core::Core;
use super::record::QueueRecord;
use super::state::ContextQueue;
use crate::log::LogErrorKind;
use crate::{A2aError, CallContext, ErrorKind};

/// The JSON-RPC method (and operation name) that reads a context's queue;
/// over HTTP+JSON `GET /contexts/{contextId}/queue`.
pub const GET_QUEUE_METHOD: &str = "GetContextQueue";
/// The JSON-RPC method (and operation name) that reorders a context's queue;
/// over HTTP+JSON `POST /contexts/{contextId}/queue:reorder`.
pub const REORDER_QUEUE_METHOD: &str = "ReorderContextQueue";

/// The extension's two operations as the bindings register them.
///
/// ```
/// let methods = a2a_tower::queue::extension_methods();
/// assert_eq!(methods.len(), 2);
/// ```
pub fn extension_methods() -> [crate::ExtensionMethod; 2] {
    [
        crate::ExtensionMethod::new(GET_QUEUE_METHOD)
            .route(http::Method::GET, "/contexts/{contextId}/queue"),
        crate::ExtensionMethod::new(REORDER_QUEUE_METHOD)
            .route(http::Method::POST, "/contexts/{contextId}/queue:reorder"),
    ]
}

fn string<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, A2aError> {
    match params.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(A2aError::invalid_params(key, "must be a non-empty string")),
    }
}

/// The queue as the extension shows it.
fn view(context_id: &str, st: &ContextQueue) -> Value {
    let entries: Vec<Value> = st
        .entries()
        .map(|e| {
            let mut v = json!({"taskId": e.task_id, "priority": e.priority.as_str()});
            if let Some(t) = &e.target {
                v["target"] = t.clone().into();
            }
            if let Some(p) = e.position {
                v["position"] = p.into();
            }
            v
        })
        .collect();
    let running: Vec<Value> = st
        .active()
        .iter()
        .map(|(agent, run)| json!({"agent": agent, "taskId": run.task_id}))
        .collect();
    json!({
        "contextId": context_id,
        "revision": st.seq.to_string(),
        "entries": entries,
        "running": running,
    })
}

/// GetContextQueue: `{contextId}` → `{contextId, revision, entries, running}`.
pub(crate) async fn get(
    core: &Core,
    params: &Map<String, Value>,
    context: &CallContext,
) -> Result<Value, A2aError> {
    let context_id = string(params, "contextId")?;
    let authority = core.shared.authority.resolve(context)?;
    let slot = core.slots.get(&authority, context_id);
    let mut st = slot.state.lock().await;
    slot.catch_up(&*core.shared.log, &mut st).await?;
    Ok(view(context_id, &st))
}

fn stale() -> A2aError {
    A2aError::new(ErrorKind::UnsupportedOperation)
        .with_message("The queue changed since that revision; read it again")
        .with_metadata("queue.error", "STALE_REVISION")
}

/// ReorderContextQueue: `{contextId, revision, taskIds}` → the queue after.
pub(crate) async fn reorder(
    core: &Arc<Core>,
    params: &Map<String, Value>,
    context: &CallContext,
) -> Result<Value, A2aError> {
    let context_id = string(params, "contextId")?;
    let revision = string(params, "revision")?;
    let Some(Value::Array(ids)) = params.get("taskIds") else {
        return Err(A2aError::invalid_params(
            "taskIds",
            "must be an array of task ids",
        ));
    };
    let ids: Vec<String> = ids
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| A2aError::invalid_params("taskIds", "must be an array of task ids"))?;
    let authority = core.shared.authority.resolve(context)?;
    let slot = core.slots.get(&authority, context_id);
    let mut st = slot.state.lock().await;
    slot.catch_up(&*core.shared.log, &mut st).await?;
    if revision != st.seq.to_string() {
        return Err(stale());
    }
    let unique: HashSet<&str> = ids.iter().map(String::as_str).collect();
    if unique.len() != ids.len() || ids.len() != st.len() || !ids.iter().all(|id| st.contains(id)) {
        return Err(A2aError::invalid_params(
            "taskIds",
            "must list every queued task of the context exactly once",
        ));
    }
    let reordered = QueueRecord::Reordered { task_ids: ids };
    match core
        .shared
        .log
        .append_all(vec![slot.append(&st, std::slice::from_ref(&reordered))])
        .await
    {
        Ok(_) => {}
        Err(e) if matches!(e.kind(), LogErrorKind::Conflict | LogErrorKind::Fenced) => {
            return Err(stale());
        }
        Err(e) => return Err(e.into()),
    }
    slot.catch_up(&*core.shared.log, &mut st).await?;
    let out = view(context_id, &st);
    drop(st);
    core.notify(&authority, context_id);
    Ok(out)
}
