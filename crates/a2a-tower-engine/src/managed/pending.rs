//! What a managed task publishes about its run: the metadata keys (the open
//! questions under `scope.pending`, the root's status) and the status whose
//! message renders the questions. The writer and a host admitting an answer
//! compute them with the same functions, from the same committed waits.

use std::collections::BTreeMap;

use serde_json::{Value, json};

pub use crate::external_wait::{ANSWER_SCHEMA_KEY, EXTERNAL_WAIT_EXTENSION, WAIT_KEY};

use super::input::question_id;
use super::policy::OutputPolicy;
use crate::types::{Message, Metadata, Role, TaskState, TaskStatus, Timestamp};

/// Task metadata: the open questions.
pub const PENDING_KEY: &str = "scope.pending";
/// Task metadata: the program's name.
pub const PROGRAM_KEY: &str = "scope.program";
/// Task metadata: the root process id.
pub const ROOT_KEY: &str = "scope.root_id";
/// Task metadata: the root process status (`running`, `waiting`,
/// `completed`, `failed`, `canceled`).
pub const ROOT_STATUS_KEY: &str = "scope.root_status";
/// Task metadata: why the root exited (`completed`, `failed`, `canceled`),
/// once it has.
pub const TERMINATION_KEY: &str = "scope.termination";
/// A wait whose opening is committed and whose answer is not.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenWait {
    pub(crate) question: Option<Value>,
    pub(crate) schema: Option<Value>,
}

/// The open waits by address `(process, key)`, in address order.
pub(crate) type Waits = BTreeMap<(String, String), OpenWait>;

/// The ids a run's projection names.
pub(crate) struct Names<'a> {
    pub(crate) program: &'a str,
    pub(crate) root: &'a str,
    pub(crate) task_id: &'a str,
    pub(crate) context_id: &'a str,
}

/// The task metadata of a run in `status`, with `waits` open.
pub(crate) fn metadata(names: &Names<'_>, waits: &Waits, status: &str, ended: bool) -> Metadata {
    let pending: Vec<Value> = waits
        .iter()
        .map(|((process, key), w)| {
            json!({
                "id": question_id(names.root, process, key),
                "owner": process,
                "key": key,
                "question": w.question.clone().unwrap_or(Value::Null),
                "schema": w.schema.clone().unwrap_or(Value::Bool(true)),
            })
        })
        .collect();
    let mut m = Metadata::new();
    m.insert(PROGRAM_KEY.into(), json!(names.program));
    m.insert(ROOT_KEY.into(), json!(names.root));
    m.insert(ROOT_STATUS_KEY.into(), json!(status));
    m.insert(PENDING_KEY.into(), Value::Array(pending));
    if ended {
        m.insert(TERMINATION_KEY.into(), json!(status));
    }
    m
}

/// The open waits a task's metadata lists (what the writer last committed).
pub(crate) fn waits_of(metadata: Option<&Metadata>) -> Waits {
    let mut waits = Waits::new();
    let entries = metadata
        .and_then(|m| m.get(PENDING_KEY))
        .and_then(Value::as_array);
    for e in entries.into_iter().flatten() {
        let (Some(owner), Some(key)) = (
            e.get("owner").and_then(Value::as_str),
            e.get("key").and_then(Value::as_str),
        ) else {
            continue;
        };
        let question = e.get("question").filter(|q| !q.is_null()).cloned();
        let schema = e
            .get("schema")
            .filter(|s| **s != Value::Bool(true))
            .cloned();
        waits.insert((owner.into(), key.into()), OpenWait { question, schema });
    }
    waits
}

/// The status of a running (not ended) run with `waits` open: WORKING, or
/// INPUT_REQUIRED with a message rendering every question by `policy`.
pub(crate) fn status(names: &Names<'_>, policy: OutputPolicy, waits: &Waits) -> TaskStatus {
    if waits.is_empty() {
        return TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: Some(Timestamp::now()),
        };
    }
    let mut message = agent_message(names);
    message.parts = waits
        .values()
        .map(|w| policy.part(w.question.as_ref().unwrap_or(&Value::Null)))
        .collect();
    if let [((process, key), w)] = waits.iter().collect::<Vec<_>>().as_slice() {
        let mut m = Metadata::new();
        m.insert(WAIT_KEY.into(), json!({"process": process, "key": key}));
        m.insert(
            ANSWER_SCHEMA_KEY.into(),
            w.schema.clone().unwrap_or(Value::Bool(true)),
        );
        message.metadata = Some(m);
    }
    TaskStatus {
        state: TaskState::InputRequired,
        message: Some(message),
        timestamp: Some(Timestamp::now()),
    }
}

/// The root status a run with `waits` open reports.
pub(crate) fn root_status(waits: &Waits) -> &'static str {
    if waits.is_empty() {
        "running"
    } else {
        "waiting"
    }
}

/// An agent message of the task with a fresh id and no parts.
pub(crate) fn agent_message(names: &Names<'_>) -> Message {
    let mut m = Message::agent(crate::engine::id_text(uuid::Uuid::new_v4()), "");
    m.parts.clear();
    m.role = Role::Agent;
    m.task_id = names.task_id.to_owned();
    m.context_id = names.context_id.to_owned();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names<'static> {
        Names {
            program: "p",
            root: "r",
            task_id: "t",
            context_id: "c",
        }
    }

    #[test]
    fn metadata_round_trips_the_waits() {
        let mut waits = Waits::new();
        waits.insert(
            ("r".into(), "approve".into()),
            OpenWait {
                question: Some(json!({"text": "ok?"})),
                schema: None,
            },
        );
        waits.insert(
            ("r/child".into(), "score".into()),
            OpenWait {
                question: None,
                schema: Some(json!({"type": "integer"})),
            },
        );
        let m = metadata(&names(), &waits, "waiting", false);
        assert_eq!(m[PENDING_KEY][0]["schema"], json!(true));
        assert_eq!(m[PENDING_KEY][1]["question"], Value::Null);
        assert_eq!(
            m[PENDING_KEY][0]["id"],
            json!(question_id("r", "r", "approve"))
        );
        assert!(!m.contains_key(TERMINATION_KEY));
        assert_eq!(waits_of(Some(&m)), waits);
    }

    #[test]
    fn one_open_wait_names_itself_on_the_status() {
        let mut waits = Waits::new();
        let s = status(&names(), OutputPolicy::Json, &waits);
        assert_eq!(s.state, TaskState::Working);
        waits.insert(
            ("r".into(), "k".into()),
            OpenWait {
                question: Some(json!("why?")),
                schema: Some(json!({"type": "string"})),
            },
        );
        let s = status(&names(), OutputPolicy::Text, &waits);
        assert_eq!(s.state, TaskState::InputRequired);
        let m = s.message.unwrap();
        assert_eq!(m.parts[0].as_text(), Some("why?"));
        let meta = m.metadata.unwrap();
        assert_eq!(meta[WAIT_KEY], json!({"process": "r", "key": "k"}));
        assert_eq!(meta[ANSWER_SCHEMA_KEY], json!({"type": "string"}));
    }
}
