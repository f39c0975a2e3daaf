//! Projection: what a SendMessage result means for a tool call.
//!
//! | result | outcome |
//! |---|---|
//! | a Message | [`Outcome::Output`]: its text |
//! | a Task, COMPLETED | [`Outcome::Output`]: its artifacts' text, in order (the status message's text when there are no artifacts) |
//! | INPUT_REQUIRED | [`Outcome::InputRequired`]: the status message's text as the question (data parts as their JSON text), bound to the task (see `continuation`) |
//! | FAILED, CANCELED, REJECTED | [`Outcome::Failed`]: a [`RemoteAgentError`] and the text output so far |
//! | AUTH_REQUIRED | [`ToolErrorKind::Incomplete`]: the host must handle it |
//! | SUBMITTED, WORKING, unspecified | [`ToolErrorKind::Incomplete`]: the task may still advance |
//!
//! Output is text only: a data, raw or URL part in a message or an artifact
//! is [`ToolErrorKind::UnsupportedContent`], never silently dropped.
//!
//! A host tells a definite failure from the rest by its cause:
//!
//! ```
//! use a2a_tower::tool::{Failure, RemoteAgentError};
//! use a2a_tower::types::TaskState;
//! let cause = RemoteAgentError::new("t-1", "c-1", TaskState::Failed, Some("no stock".into()));
//! let failure = Failure::new(cause, Some("checked 3 of 5 warehouses".into()));
//! let remote = failure.cause().downcast_ref::<RemoteAgentError>().unwrap();
//! assert!(remote.is_definite());
//! assert_eq!(failure.partial(), Some("checked 3 of 5 warehouses"));
//! ```

use serde_json::Value;

use super::continuation::Bound;
use super::contract::{Failure, Outcome, ToolError, ToolErrorKind, ToolOutput};
use super::remote::RemoteAgentError;
use super::wait;
use crate::types::{Message, Part, PartContent, SendMessageResponse, Task, TaskState};

/// The text of `parts`, concatenated; a non-text part is UnsupportedContent.
pub(crate) fn text(parts: &[Part], what: &str) -> Result<String, ToolError> {
    let mut out = String::new();
    for p in parts {
        match &p.content {
            PartContent::Text(t) => out.push_str(t),
            other => {
                let kind = match other {
                    PartContent::Data(_) => "a data part",
                    PartContent::Raw(_) => "a raw (file bytes) part",
                    _ => "a URL part",
                };
                return Err(ToolError::new(
                    ToolErrorKind::UnsupportedContent,
                    format!("the remote agent's {what} holds {kind}; this tool returns text only"),
                ));
            }
        }
    }
    Ok(out)
}

/// The text parts of `parts` only (for partial output and error texts).
fn text_only(parts: &[Part]) -> String {
    parts.iter().filter_map(Part::as_text).collect()
}

/// The question a status message asks: its text, data parts as JSON text.
fn question(message: Option<&Message>) -> Result<String, ToolError> {
    let mut out = String::new();
    for p in message.map(|m| m.parts.as_slice()).unwrap_or_default() {
        match &p.content {
            PartContent::Text(t) => out.push_str(t),
            PartContent::Data(v) => out.push_str(&Value::to_string(v)),
            _ => text(std::slice::from_ref(p), "question").map(drop)?,
        }
    }
    Ok(out)
}

/// The outcome of a SendMessage result for the tool `bound`.
pub(crate) fn project(response: SendMessageResponse, bound: &Bound) -> Result<Outcome, ToolError> {
    match response {
        SendMessageResponse::Message(m) => {
            Ok(Outcome::Output(ToolOutput::new(text(&m.parts, "message")?)))
        }
        SendMessageResponse::Task(task) => project_task(task.into_inner(), bound),
    }
}

fn remote_error(task: &Task) -> RemoteAgentError {
    let status_text = task.status.message.as_ref().map(|m| text_only(&m.parts));
    RemoteAgentError::new(&task.id, &task.context_id, task.status.state, status_text)
}

fn project_task(task: Task, bound: &Bound) -> Result<Outcome, ToolError> {
    let status_message = task.status.message.as_ref();
    match task.status.state {
        TaskState::Completed if task.artifacts.is_empty() => {
            let parts = status_message
                .map(|m| m.parts.as_slice())
                .unwrap_or_default();
            Ok(Outcome::Output(ToolOutput::new(text(
                parts,
                "status message",
            )?)))
        }
        TaskState::Completed => {
            let mut out = String::new();
            for a in &task.artifacts {
                out.push_str(&text(&a.parts, "artifact")?);
            }
            Ok(Outcome::Output(ToolOutput::new(out)))
        }
        TaskState::InputRequired => {
            let (wait, question) = match wait::announced(status_message)? {
                Some(wait) => (Some(wait), question(status_message)?),
                // Several questions at once: the first, by its address.
                None => match wait::first_pending(task.metadata.as_ref()) {
                    Some((wait, question)) => (Some(wait), question),
                    None => (None, question(status_message)?),
                },
            };
            Ok(Outcome::InputRequired(bound.request(
                &task.id,
                &task.context_id,
                question,
                wait,
            )))
        }
        TaskState::Failed | TaskState::Canceled | TaskState::Rejected => {
            let partial: String = task.artifacts.iter().map(|a| text_only(&a.parts)).collect();
            let partial = (!partial.is_empty()).then_some(partial);
            Ok(Outcome::Failed(Failure::new(remote_error(&task), partial)))
        }
        TaskState::AuthRequired
        | TaskState::Submitted
        | TaskState::Working
        | TaskState::Unspecified => Err(ToolError::new(
            ToolErrorKind::Incomplete,
            remote_error(&task),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::continuation::{Binding, Identity};
    use crate::types::{Artifact, TaskStatus};
    use serde_json::json;

    fn bound() -> Bound {
        Bound {
            binding: Binding {
                card_url: "http://a/card".into(),
                interfaces: json!([]),
                tool: "a".into(),
            },
            identity: Identity::Instance("n".into()),
        }
    }

    fn task(
        state: TaskState,
        status: Option<Message>,
        artifacts: Vec<Vec<Part>>,
    ) -> SendMessageResponse {
        SendMessageResponse::Task(
            Task {
                id: "t-1".into(),
                context_id: "c-1".into(),
                status: TaskStatus {
                    state,
                    message: status,
                    timestamp: None,
                },
                artifacts: artifacts
                    .into_iter()
                    .enumerate()
                    .map(|(i, parts)| Artifact {
                        artifact_id: format!("a{i}"),
                        parts,
                        ..Artifact::default()
                    })
                    .collect(),
                ..Task::default()
            }
            .into(),
        )
    }

    fn output(r: Result<Outcome, ToolError>) -> String {
        match r {
            Ok(Outcome::Output(o)) => o.text,
            other => panic!("expected output, got {other:?}"),
        }
    }

    fn error(r: Result<Outcome, ToolError>) -> ToolError {
        match r {
            Err(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    fn non_text() -> [Part; 3] {
        [
            Part::data(json!({"a": 1})),
            Part::raw(vec![1u8, 2]),
            Part::url("https://example.com/f"),
        ]
    }

    #[test]
    fn messages_project_to_their_text() {
        let m = Message::agent("m", "hello");
        assert_eq!(
            output(project(SendMessageResponse::Message(m), &bound())),
            "hello"
        );
        for part in non_text() {
            let mut m = Message::agent("m", "x");
            m.parts.push(part);
            let e = error(project(SendMessageResponse::Message(m), &bound()));
            assert_eq!(e.kind(), ToolErrorKind::UnsupportedContent);
            assert!(e.to_string().contains("text only"), "{e}");
        }
    }

    #[test]
    fn completed_tasks_project_to_artifacts_then_status_text() {
        let arts = vec![
            vec![Part::text("a"), Part::text("b")],
            vec![Part::text("c")],
        ];
        let status = Some(Message::agent("s", "done"));
        assert_eq!(
            output(project(
                task(TaskState::Completed, status.clone(), arts),
                &bound()
            )),
            "abc"
        );
        assert_eq!(
            output(project(
                task(TaskState::Completed, status, vec![]),
                &bound()
            )),
            "done"
        );
        assert_eq!(
            output(project(task(TaskState::Completed, None, vec![]), &bound())),
            ""
        );
        for part in non_text() {
            let arts = vec![vec![Part::text("a")], vec![part.clone()]];
            let e = error(project(task(TaskState::Completed, None, arts), &bound()));
            assert_eq!(e.kind(), ToolErrorKind::UnsupportedContent);
            let mut status = Message::agent("s", "");
            status.parts = vec![part];
            let e = error(project(
                task(TaskState::Completed, Some(status), vec![]),
                &bound(),
            ));
            assert_eq!(e.kind(), ToolErrorKind::UnsupportedContent);
        }
    }

    #[test]
    fn failed_canceled_rejected_are_definite_failures_with_partial_output() {
        for state in [TaskState::Failed, TaskState::Canceled, TaskState::Rejected] {
            let arts = vec![
                vec![Part::text("half "), Part::data(json!(1))],
                vec![Part::text("done")],
            ];
            let r = project(
                task(state, Some(Message::agent("s", "broke")), arts),
                &bound(),
            );
            let Ok(Outcome::Failed(f)) = r else {
                panic!("{state:?}: {r:?}")
            };
            assert_eq!(f.partial(), Some("half done"));
            let cause = f.cause().downcast_ref::<RemoteAgentError>().unwrap();
            assert_eq!(cause.state(), state);
            assert_eq!((cause.task_id(), cause.context_id()), ("t-1", "c-1"));
            assert_eq!(cause.status_text(), Some("broke"));
            let r = project(task(state, None, vec![]), &bound());
            let Ok(Outcome::Failed(f)) = r else {
                panic!("{state:?}: {r:?}")
            };
            assert_eq!(f.partial(), None);
        }
    }

    #[test]
    fn unfinished_and_auth_required_tasks_are_incomplete() {
        for state in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Unspecified,
            TaskState::AuthRequired,
        ] {
            let e = error(project(
                task(state, Some(Message::agent("s", "wait")), vec![]),
                &bound(),
            ));
            assert_eq!(e.kind(), ToolErrorKind::Incomplete, "{state:?}");
            let cause = e.get_ref().downcast_ref::<RemoteAgentError>().unwrap();
            assert_eq!(cause.state(), state);
            assert_eq!(cause.status_text(), Some("wait"));
        }
        let e = error(project(
            task(TaskState::AuthRequired, None, vec![]),
            &bound(),
        ));
        assert!(e.to_string().contains("host must handle"), "{e}");
    }

    #[test]
    fn input_required_asks_the_status_question() {
        let r = project(
            task(
                TaskState::InputRequired,
                Some(Message::agent("s", "Which?")),
                vec![],
            ),
            &bound(),
        );
        let Ok(Outcome::InputRequired(req)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(req.question, "Which?");
        assert_eq!(req.continuation["taskId"], json!("t-1"));
        assert_eq!(req.answer_schema, None);
        // A managed task's question as a data part, with its wait.
        let mut m = Message::agent("s", "");
        m.parts = vec![Part::data(json!({"text": "Refund?"}))];
        m.metadata = serde_json::from_value(json!({
            "scope.wait": {"process": "r", "key": "approve"},
            "scope.answer_schema": {"type": "boolean"}
        }))
        .unwrap();
        let r = project(task(TaskState::InputRequired, Some(m), vec![]), &bound());
        let Ok(Outcome::InputRequired(req)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(req.question, r#"{"text":"Refund?"}"#);
        assert_eq!(req.answer_schema, Some(json!({"type": "boolean"})));
        let mut m = Message::agent("s", "");
        m.parts = vec![Part::raw(vec![0u8])];
        let e = error(project(
            task(TaskState::InputRequired, Some(m), vec![]),
            &bound(),
        ));
        assert_eq!(e.kind(), ToolErrorKind::UnsupportedContent);
    }
}
