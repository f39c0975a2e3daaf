//! [`Deferred`]: a new task's admission held back for its execution's first
//! commit (a blocking SendMessage that creates the task; see
//! [`Answer::Outcome`](super::admit::Answer::Outcome)).
//!
//! The execution is handed the task as admission leaves it; the log gets the
//! admission as records (`Created`, `MessageAdmitted`, …). Both carry the
//! same ids and message, so only the task is built at admission: the
//! records are taken from it when the first commit carries them, moved out
//! of it if the execution has dropped it by then (a text agent drops it at
//! once), copied otherwise. The message is then copied once per
//! SendMessage (the execution's and the task's), not twice.

use std::mem::take;
use std::sync::Arc;

use super::ride::Companion;
use crate::log::Record;
use crate::types::{Message, Metadata, Task, TaskState, TaskStatus, Timestamp};

/// The admission of a new task that rides with the execution's first
/// commit.
pub(crate) struct Deferred {
    /// The task as admission leaves it: SUBMITTED, the message its history.
    task: Arc<Task>,
    /// The inline push config's record, if the message had one (boxed:
    /// rare, and a record inline would make every admission, and the
    /// writer that holds it, several hundred bytes larger).
    config: Option<Box<Record>>,
    /// The execution's host, for its `ExecutionStarted`.
    host: Arc<str>,
    /// The task is WORKING from its admission on (a status of its own).
    working: bool,
    /// What the first commit carries beside the task.
    companion: Option<Box<dyn Companion>>,
}

impl Deferred {
    /// The admission of `message` (its ids set) creating the task `task_id`
    /// in `context_id` with `metadata`, then `config` and the execution's
    /// start on `host`.
    pub(crate) fn new(
        task_id: String,
        context_id: String,
        metadata: Option<Metadata>,
        message: Message,
        config: Option<Record>,
        host: Arc<str>,
    ) -> Self {
        // What `Projection` makes of `Created` then `MessageAdmitted`.
        let task = Task {
            id: task_id,
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(Timestamp::now()),
            },
            history: vec![message],
            metadata,
            ..Task::default()
        };
        Self {
            task: Arc::new(task),
            config: config.map(Box::new),
            host,
            working: false,
            companion: None,
        }
    }

    /// The admission makes the task WORKING (a status after its message):
    /// the delivery queue's admission, which names the agent it runs for.
    pub(crate) fn working(mut self) -> Self {
        if let Some(task) = Arc::get_mut(&mut self.task) {
            task.status = TaskStatus {
                state: TaskState::Working,
                message: None,
                timestamp: Some(Timestamp::now()),
            };
            self.working = true;
        }
        self
    }

    /// `companion`'s append is committed with the admission, atomically.
    pub(crate) fn with_companion(mut self, companion: Box<dyn Companion>) -> Self {
        self.companion = Some(companion);
        self
    }

    /// Takes what the first commit carries beside the task.
    pub(crate) fn take_companion(&mut self) -> Option<Box<dyn Companion>> {
        self.companion.take()
    }

    /// The task for the execution (shared).
    pub(crate) fn task(&self) -> Arc<Task> {
        self.task.clone()
    }

    /// The admission's records, then `records`: `Created` and
    /// `MessageAdmitted` are taken from the task (moved if nobody else holds
    /// it any more, copied if the execution still does).
    pub(crate) fn records_before(self, records: Vec<Record>) -> Vec<Record> {
        // Its values taken where they are (the task is not moved out of
        // its `Arc` whole first: ≈ 450 bytes copied for nothing).
        let mut task = self.task;
        let task = Arc::make_mut(&mut task);
        let (id, context_id) = (take(&mut task.id), take(&mut task.context_id));
        let (status, metadata) = (take(&mut task.status), task.metadata.take());
        let message = task.history.pop();
        let extra = usize::from(self.config.is_some()) + usize::from(self.working);
        let mut all = Vec::with_capacity(3 + extra + records.len());
        all.push(Record::Created {
            task_id: id,
            context_id,
            at: status.timestamp.unwrap_or_else(Timestamp::now),
            metadata,
        });
        all.extend(message.map(|message| Record::MessageAdmitted { message }));
        if self.working {
            all.push(Record::status(status));
        }
        all.extend(self.config.map(|config| *config));
        all.push(Record::ExecutionStarted { host: self.host });
        all.extend(records);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Projection;
    use crate::types::TaskPushNotificationConfig;

    fn deferred() -> Deferred {
        let mut message = Message::user("m", "hi");
        message.task_id = "t".into();
        message.context_id = "c".into();
        let mut metadata = Metadata::new();
        metadata.insert("k".into(), 1.into());
        let config = TaskPushNotificationConfig {
            id: "p".into(),
            task_id: "t".into(),
            url: "https://example.com/hook".into(),
            ..Default::default()
        };
        Deferred::new(
            "t".into(),
            "c".into(),
            Some(metadata),
            message,
            Some(Record::PushConfigSet { config }),
            "h".into(),
        )
    }

    /// Each record's name (its serde tag).
    fn names(records: &[Record]) -> Vec<String> {
        records
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .map(|v| v.as_object().unwrap().keys().next().unwrap().clone())
            .collect()
    }

    // The writer holds its admission inline, and both are moved whole
    // (into the writer's `Arc`, in and out of its lock): a record inline
    // (272 bytes and more) would make each move several hundred bytes.
    #[test]
    fn an_admission_holds_no_record_inline() {
        assert!(size_of::<Deferred>() <= 64, "{}", size_of::<Deferred>());
    }

    // The task the execution gets is what the log makes of the records.
    #[test]
    fn the_task_is_the_projection_of_the_records() {
        let d = deferred();
        let task = d.task();
        let working = Record::status(TaskStatus::new(TaskState::Working));
        let records = d.records_before(vec![working.clone()]);
        let names = names(&records);
        assert_eq!(
            names,
            [
                "created",
                "messageAdmitted",
                "pushConfigSet",
                "executionStarted",
                "statusChanged"
            ]
        );
        assert_eq!(records[4], working);
        let p = Projection::replay(&records[..4]).unwrap();
        assert_eq!(**p.task(), *task, "held by the execution: copied");
    }

    // The queue's admission: WORKING from the first record on.
    #[test]
    fn a_working_admission_is_a_status_after_the_message() {
        let d = deferred().working();
        let task = d.task();
        assert_eq!(task.status.state, TaskState::Working);
        let records = d.records_before(Vec::new());
        let names = names(&records);
        assert_eq!(
            names,
            [
                "created",
                "messageAdmitted",
                "statusChanged",
                "pushConfigSet",
                "executionStarted"
            ]
        );
        let p = Projection::replay(&records).unwrap();
        assert_eq!(**p.task(), *task);
    }

    // Dropped by the execution, the task gives its values to the records.
    #[test]
    fn a_dropped_task_is_moved_into_the_records() {
        let d = deferred();
        let expected = (*d.task()).clone();
        let text = d.task.history[0].parts[0].as_text().unwrap().as_ptr();
        let records = d.records_before(Vec::new());
        let Record::MessageAdmitted { message } = &records[1] else {
            panic!("{:?}", records[1]);
        };
        assert_eq!(message.parts[0].as_text().unwrap().as_ptr(), text);
        let p = Projection::replay(&records).unwrap();
        assert_eq!(**p.task(), expected);
    }
}
