//! The facts the delivery queue commits: [`QueueRecord`]s on a context's
//! queue stream and the [`QueuedInput`] of a queued task, kept by the log
//! as [feature records](crate::log::FeatureRecord) (`queue` and
//! `inputQueued`).

use serde::{Deserialize, Serialize};

use super::entry::Priority;
use crate::log::{FeatureRecord, Hold, Projection, Record};
use crate::types::Message;

/// The name of the queue's [`Hold`] on queued tasks and on its streams.
pub const QUEUE_FEATURE: &str = "queue";

/// The name of a queue stream's records.
const QUEUE_RECORD: &str = "queue";

/// The name of a queued task's input record.
const INPUT_RECORD: &str = "inputQueued";

/// The body of an input record.
#[derive(Serialize, Deserialize)]
struct Queued<I> {
    input: I,
}

/// One committed fact about a context's queue, recorded in the context's
/// queue stream (see [`queue`](super)): an entry entered, the order was
/// replaced, the head was admitted as a run, an entry was removed, or a run
/// was settled after its task ended.
///
/// ```
/// use a2a_tower::queue::{Priority, QueueRecord};
/// let r = QueueRecord::Entered {
///     task_id: "t-1".into(),
///     target: Some("upper".into()),
///     priority: Priority::Urgent,
///     position: None,
///     hops: 0,
/// };
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"entered":{"taskId":"t-1","target":"upper","priority":"urgent","hops":0}}"#);
/// assert_eq!(serde_json::from_str::<QueueRecord>(&json).unwrap(), r);
/// // In the log: a `queue` record.
/// let stored = serde_json::to_string(&r.record()).unwrap();
/// assert_eq!(stored, format!(r#"{{"queue":{json}}}"#));
/// assert_eq!(QueueRecord::of(&r.record()), Some(r));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum QueueRecord {
    /// A queued task joined the queue; its arrival order is the sequence
    /// number of this record.
    #[serde(rename_all = "camelCase")]
    Entered {
        /// The queued task.
        task_id: String,
        /// The agent the sender named (`queue.target`); `None`: the fallback
        /// decides when the entry reaches the head.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<String>,
        /// The entry's priority.
        priority: Priority,
        /// A manual position (a steer puts its input before every other).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<i64>,
        /// How many handoffs led to this input (0: a client's input).
        hops: u32,
    },
    /// The whole visible order was replaced: the listed entries take the
    /// positions 0, 1, 2… in this order.
    #[serde(rename_all = "camelCase")]
    Reordered {
        /// Every queued task, in the new order.
        task_ids: Vec<String>,
    },
    /// The head was admitted: its task now runs on `agent`.
    #[serde(rename_all = "camelCase")]
    Admitted {
        /// The admitted task.
        task_id: String,
        /// The agent running it.
        agent: String,
        /// The entry's handoff count.
        hops: u32,
    },
    /// An entry left the queue without running (its task was canceled or
    /// failed visibly).
    #[serde(rename_all = "camelCase")]
    Removed {
        /// The task.
        task_id: String,
    },
    /// A run's task ended and the queue took note: the agent is free in the
    /// context; `completed` makes it the context's last replier.
    #[serde(rename_all = "camelCase")]
    Settled {
        /// The run's task.
        task_id: String,
        /// The agent that ran it.
        agent: String,
        /// The task ended COMPLETED.
        completed: bool,
    },
    /// The whole queue as it stood when nothing was queued and nothing ran
    /// (made by stream compaction, [`QueueStreams`](super::QueueStreams)):
    /// it replaces what the records before it made, which may then be
    /// dropped. It holds the stream for the queue, as its first record does.
    #[serde(rename_all = "camelCase")]
    Restated {
        /// The agent an input naming none goes to (the last replier).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_replier: Option<String>,
    },
}

/// The input a queued task waits with: its own message, or a reference to
/// the reply of another task of the context (a handoff), resolved when the
/// task is admitted. Not part of the task's history until then.
///
/// ```
/// use a2a_tower::queue::QueuedInput;
/// let r = QueuedInput::Handoff { task_id: "t-1".into() };
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"handoff":{"taskId":"t-1"}}"#);
/// // In the log: an `inputQueued` record, which holds its task for the queue
/// // until its message is admitted.
/// assert_eq!(
///     serde_json::to_string(&r.record()).unwrap(),
///     r#"{"inputQueued":{"hold":{"by":"queue","untilAdmitted":true},"input":{"handoff":{"taskId":"t-1"}}}}"#
/// );
/// assert_eq!(QueuedInput::of(&r.record()), Some(r));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum QueuedInput {
    /// The sender's message.
    Message {
        /// The message, with its task and context ids set.
        message: Message,
    },
    /// The completed reply of another task of the context.
    #[serde(rename_all = "camelCase")]
    Handoff {
        /// The task whose reply this input is.
        task_id: String,
    },
}

impl QueueRecord {
    /// The record as a record of the log's queue stream (a restatement
    /// with the queue's hold on the stream).
    ///
    /// ```
    /// use a2a_tower::queue::QueueRecord;
    /// let r = QueueRecord::Restated { last_replier: Some("upper".into()) };
    /// assert_eq!(
    ///     serde_json::to_string(&r.record()).unwrap(),
    ///     r#"{"queue":{"hold":{"by":"queue"},"restated":{"lastReplier":"upper"}}}"#
    /// );
    /// assert_eq!(QueueRecord::of(&r.record()), Some(r));
    /// ```
    pub fn record(&self) -> Record {
        let f = FeatureRecord::new(QUEUE_RECORD, self).expect("a queue record is an object");
        Record::Feature(match self {
            Self::Restated { .. } => f.holding(Hold::always(QUEUE_FEATURE)),
            _ => f,
        })
    }

    /// The first record of a queue stream: it holds the stream for the
    /// queue, so that no recovery but the queue's takes it for a task.
    pub(crate) fn first_record(&self) -> Record {
        let f = FeatureRecord::new(QUEUE_RECORD, self).expect("a queue record is an object");
        Record::Feature(f.holding(Hold::always(QUEUE_FEATURE)))
    }

    /// The record is a queue record, whether or not this version reads it.
    pub(crate) fn is_queue(record: &Record) -> bool {
        matches!(record, Record::Feature(f) if f.name() == QUEUE_RECORD)
    }

    /// The queue record a record is, if it is one.
    pub fn of(record: &Record) -> Option<Self> {
        match record {
            Record::Feature(f) if f.name() == QUEUE_RECORD => f.decode().ok(),
            _ => None,
        }
    }
}

impl QueuedInput {
    /// The record of a task queued with this input: it holds the task for
    /// the queue until its message is admitted.
    pub fn record(&self) -> Record {
        let f = FeatureRecord::new(INPUT_RECORD, &Queued { input: self })
            .expect("a queued input is an object");
        Record::Feature(f.holding(Hold::until_admitted(QUEUE_FEATURE)))
    }

    /// The queued input a record is, if it is one.
    pub fn of(record: &Record) -> Option<Self> {
        match record {
            Record::Feature(f) if f.name() == INPUT_RECORD => {
                f.decode::<Queued<Self>>().ok().map(|q| q.input)
            }
            _ => None,
        }
    }
}

/// The task waits in its context's queue: the queue holds it and no message
/// of it has been admitted since.
pub(crate) fn is_queued(p: &Projection) -> bool {
    p.hold()
        .is_some_and(|h| h.by == QUEUE_FEATURE && h.until_admitted)
}
