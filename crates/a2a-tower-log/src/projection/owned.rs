//! [`Projection::apply_owned`]: a record applied by moving its values into
//! the task instead of copying them, for a record nobody keeps.
//!
//! A record the log keeps is shared with its readers, so applying it copies
//! its message, artifact or metadata into the task: the wire values then
//! exist twice. When the record is dropped right after (the memory log's
//! append that ends a task nobody watches: the task is packed and its
//! records dropped), those values are moved instead, and the task is the
//! only copy. Either way the projection is the same, that of
//! [`Projection::replay`]:
//!
//! ```
//! use a2a_tower::log::{Projection, Record};
//! use a2a_tower::types::{Message, TaskState, TaskStatus};
//! let records = [
//!     Record::created("t", "c"),
//!     Record::MessageAdmitted { message: Message::user("m", "hi") },
//!     Record::status(TaskStatus::new(TaskState::Completed)),
//! ];
//! let copied = Projection::replay(&records).unwrap();
//! assert_eq!(copied.task().history[0].text(), "hi");
//! assert_eq!(copied.task().status.state, TaskState::Completed);
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use super::{Projection, set_status};
use crate::Record;
use crate::types::{Artifact, TaskState, TaskStatus};

impl Projection {
    /// Applies one record that [`check`](Self::check) accepted, as
    /// [`apply`](Self::apply) does, moving its values into the task.
    pub(crate) fn apply_owned(&mut self, record: Record) {
        match record {
            Record::Created {
                task_id,
                context_id,
                at,
                metadata,
            } => self.create(task_id, context_id, at, metadata),
            Record::MessageAdmitted { message } => self.admit(message),
            Record::StatusChanged { status } => set_status(&mut self.task, status),
            Record::Replied { message, at } => set_status(
                &mut self.task,
                TaskStatus {
                    state: TaskState::Completed,
                    message: Some(message),
                    timestamp: Some(at),
                },
            ),
            Record::ArtifactChunk {
                artifact, append, ..
            } => {
                self.apply_chunk_owned(artifact, append);
            }
            Record::PushConfigSet { config } => {
                match self.push_configs.iter_mut().find(|c| c.id == config.id) {
                    Some(c) => *c = config,
                    None => self.push_configs.push(config),
                }
            }
            Record::MetadataChanged { metadata } => {
                Arc::make_mut(&mut self.task).metadata = Some(metadata);
            }
            // Nothing to move: a flag, an id to delete, a shared host id, a
            // feature's hold or message (rare).
            other => self.apply(&other),
        }
    }

    /// [`apply_chunk`](Self::apply_chunk) of an artifact that is not kept:
    /// its parts are moved into the task. Returns what the task grew by.
    pub(crate) fn apply_chunk_owned(&mut self, artifact: Artifact, append: bool) -> usize {
        self.chunk(Cow::Owned(artifact), append)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, Part, TaskPushNotificationConfig, Timestamp};

    /// Every kind of record, in an order the projection accepts.
    fn records() -> Vec<Record> {
        let chunk = |text: &str, append| Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text(text)],
                ..Artifact::default()
            },
            append,
            last_chunk: false,
        };
        let config = |url: &str| Record::PushConfigSet {
            config: TaskPushNotificationConfig {
                id: "p".into(),
                url: url.into(),
                ..Default::default()
            },
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("k".into(), 1.into());
        vec![
            Record::created("t", "c"),
            Record::MessageAdmitted {
                message: Message::user("m1", "go"),
            },
            Record::ExecutionStarted { host: "h".into() },
            config("http://a"),
            config("http://b"),
            Record::status(TaskStatus {
                state: TaskState::InputRequired,
                message: Some(Message::agent("q", "which?")),
                timestamp: Some(Timestamp::now()),
            }),
            Record::MessageAdmitted {
                message: Message::user("m2", "this"),
            },
            chunk("x", false),
            chunk("y", true),
            Record::ArtifactChunk {
                artifact: Artifact {
                    artifact_id: "b".into(),
                    parts: vec![Part::data(serde_json::json!({"n": 1}))],
                    ..Artifact::default()
                },
                append: true,
                last_chunk: true,
            },
            chunk("z", false),
            Record::MetadataChanged { metadata },
            Record::PushConfigDeleted { id: "p".into() },
            Record::CancelRequested {
                at: Timestamp::now(),
            },
            Record::Replied {
                message: Message::agent("r", "done"),
                at: Timestamp::now(),
            },
        ]
    }

    #[test]
    fn moving_projects_what_copying_does() {
        let records = records();
        let copied = Projection::replay(&records).unwrap();
        let mut moved = Projection::default();
        for r in records {
            moved.apply_owned(r);
        }
        assert_eq!(moved, copied);
        assert_eq!(moved.task().artifacts[0].parts, vec![Part::text("z")]);
        assert_eq!(moved.task().history.len(), 3);
        assert_eq!(moved.host(), Some("h"));
    }

    #[test]
    fn a_moved_chunk_reports_what_a_copied_one_does() {
        let mut copied = Projection::replay([&Record::created("t", "c")]).unwrap();
        let mut moved = copied.clone();
        let art = |text: &str| Artifact {
            artifact_id: "a".into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        };
        for (text, append) in [("hello", false), (" world", true), ("hi", false)] {
            assert_eq!(
                moved.apply_chunk_owned(art(text), append),
                copied.apply_chunk(&art(text), append),
                "{text}"
            );
        }
        assert_eq!(moved, copied);
    }

    #[test]
    fn a_moved_message_is_not_copied() {
        let mut p = Projection::replay([&Record::created("t", "c")]).unwrap();
        let message = Message::user("m", "a long enough text to be on the heap");
        let text = message.parts[0].as_text().unwrap().as_ptr();
        p.apply_owned(Record::MessageAdmitted { message });
        let kept = p.task().history[0].parts[0].as_text().unwrap().as_ptr();
        assert_eq!(kept, text, "the same buffer");
    }
}
