//! The delivery queue seen from outside, for the tests that drive the team
//! example as a process: queued inputs over JSON-RPC, waiting for a task's
//! state, and the checks on what the log holds afterwards — a context's
//! queue stream replayed against the comparator, and a task's records
//! showing it ran once.
//!
//! The record checks use `support::managed`'s record helpers, so this module
//! needs the `managed` feature as well.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use a2a_tower::log::{Record, Sequenced, TaskLog};
use a2a_tower::queue::{Entry, PRIORITY_KEY, Priority, QUEUE_AUTHORITY, QueueRecord, TARGET_KEY};
use serde_json::{Value, json};

use super::http::{HttpClient, message, rpc};
use super::managed::{count, records, terminals};

/// The authority every caller of the examples shares.
pub(crate) const AUTHORITY: &str = "public";

/// How long a task may take to reach a state the test waits for: far more
/// than it needs; reaching it later fails the test.
pub(crate) const GUARD: Duration = Duration::from_secs(90);

/// A user message for `context` naming `target` (or none) at `priority`.
pub(crate) fn input(
    id: &str,
    text: &str,
    context: &str,
    target: Option<&str>,
    priority: Priority,
) -> Value {
    let mut m = message(id, text);
    m["contextId"] = context.into();
    let mut meta = json!({PRIORITY_KEY: priority.as_str()});
    if let Some(t) = target {
        meta[TARGET_KEY] = t.into();
    }
    m["metadata"] = meta;
    m
}

/// Queues `message` with `returnImmediately` at `base`: the task as
/// acknowledged (its enqueue committed).
pub(crate) async fn enqueue(c: &HttpClient, base: &str, message: Value) -> Value {
    let params = json!({"message": message, "configuration": {"returnImmediately": true}});
    let task = rpc(c, base, "SendMessage", params).await["task"].clone();
    assert!(task["id"].is_string(), "{task}");
    task
}

/// The task's state (`TASK_STATE_…`).
pub(crate) fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// Reads the task at `base` until `done` holds for it (within [`GUARD`]);
/// the task then. `what` names the awaited condition in a failure.
pub(crate) async fn until(
    c: &HttpClient,
    base: &str,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + GUARD;
    loop {
        let task = rpc(c, base, "GetTask", json!({"id": id})).await;
        if done(&task) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} is not {what} within {GUARD:?}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the task is terminal; the task then.
pub(crate) async fn until_terminal(c: &HttpClient, base: &str, id: &str) -> Value {
    until(c, base, id, "terminal", |t| {
        matches!(
            state(t),
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
        )
    })
    .await
}

/// The text of the task's artifacts, concatenated.
pub(crate) fn artifact_text(task: &Value) -> String {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

/// The task's status timestamp (RFC 3339 with milliseconds, UTC: ordered
/// as text).
pub(crate) fn stamp(task: &Value) -> String {
    task["status"]["timestamp"]
        .as_str()
        .unwrap_or_else(|| panic!("no status timestamp: {task}"))
        .to_owned()
}

/// Every record of the queue stream of `context` (found among the live
/// streams of the queue's authority).
pub(crate) async fn queue_stream(log: &dyn TaskLog, context: &str) -> Vec<Sequenced> {
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let page = log.live_tasks(key, 256).await.expect("live tasks");
        if let Some(stream) = page
            .iter()
            .find(|t| t.authority == QUEUE_AUTHORITY && t.context_id == context)
        {
            return log
                .read(QUEUE_AUTHORITY, &stream.task_id, 0)
                .await
                .expect("read the queue stream");
        }
        match page.last() {
            Some(last) if page.len() == 256 => {
                after = Some((last.authority.clone(), last.task_id.clone()));
            }
            _ => panic!("no queue stream for context {context}"),
        }
    }
}

/// Replays a queue stream and checks every admission against the rules: the
/// admitted task is the comparator's head ([`Entry::order`]) of the entries
/// waiting at that revision, its agent runs no other input of the context,
/// an input naming no agent waits for an idle context, and no task is
/// admitted twice. The admitted task ids, in order.
pub(crate) fn admissions(stream: &[Sequenced]) -> Vec<String> {
    let mut waiting: Vec<Entry> = Vec::new();
    let mut running: BTreeMap<String, String> = BTreeMap::new();
    let mut admitted = Vec::new();
    for r in stream {
        let Record::Queue(q) = &*r.record else {
            continue;
        };
        match q {
            QueueRecord::Entered {
                task_id,
                target,
                priority,
                position,
                hops,
            } => waiting.push(Entry {
                task_id: task_id.clone(),
                target: target.clone(),
                priority: *priority,
                position: *position,
                arrival: r.seq,
                hops: *hops,
            }),
            QueueRecord::Reordered { task_ids } => {
                for e in &mut waiting {
                    e.position = task_ids
                        .iter()
                        .position(|id| *id == e.task_id)
                        .map(|i| i as i64);
                }
            }
            QueueRecord::Admitted { task_id, agent, .. } => {
                let head = waiting.iter().min_by(|a, b| a.order(b)).unwrap_or_else(|| {
                    panic!("seq {}: {task_id} admitted from an empty queue", r.seq)
                });
                assert_eq!(
                    &head.task_id, task_id,
                    "seq {}: admitted other than the head {head:?}",
                    r.seq
                );
                if head.target.is_none() {
                    assert!(
                        running.is_empty(),
                        "seq {}: {task_id} names no agent but was admitted beside {running:?}",
                        r.seq
                    );
                }
                assert!(
                    !running.contains_key(agent),
                    "seq {}: {agent} admitted {task_id} while running {running:?}",
                    r.seq
                );
                assert!(
                    !admitted.contains(task_id),
                    "seq {}: {task_id} admitted twice",
                    r.seq
                );
                waiting.retain(|e| e.task_id != *task_id);
                running.insert(agent.clone(), task_id.clone());
                admitted.push(task_id.clone());
            }
            QueueRecord::Removed { task_id } => waiting.retain(|e| e.task_id != *task_id),
            QueueRecord::Settled { task_id, agent, .. } => {
                if running.get(agent) == Some(task_id) {
                    running.remove(agent);
                }
            }
            other => panic!("seq {}: unknown queue record {other:?}", r.seq),
        }
    }
    admitted
}

/// The task's records, checked to show one run: exactly one admitted
/// message, one execution started and one terminal record. The records.
pub(crate) async fn ran_once(log: &dyn TaskLog, id: &str) -> Vec<Record> {
    let records = records(log, AUTHORITY, id).await;
    let admitted = count(&records, |r| matches!(r, Record::MessageAdmitted { .. }));
    let started = count(&records, |r| matches!(r, Record::ExecutionStarted { .. }));
    assert_eq!(
        admitted, 1,
        "{id}: {admitted} admitted messages: {records:?}"
    );
    assert_eq!(started, 1, "{id}: {started} executions: {records:?}");
    assert_eq!(terminals(&records), 1, "{id}: {records:?}");
    records
}

/// The host that ran the task (its `ExecutionStarted` record).
pub(crate) fn host(records: &[Record]) -> &str {
    records
        .iter()
        .find_map(|r| match r {
            Record::ExecutionStarted { host } => Some(host.as_str()),
            _ => None,
        })
        .expect("an execution")
}
