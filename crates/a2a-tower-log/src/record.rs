//! [`Record`]: one committed fact about a task.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::FeatureRecord;
use crate::types::{
    Artifact, Message, Metadata, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};

/// One committed fact about a task. Serialized as JSON by durable backends
/// (externally tagged, camelCase: `{"statusChanged":{"status":{…}}}`).
///
/// ```
/// use a2a_tower::log::Record;
/// use a2a_tower::types::{TaskState, TaskStatus};
/// let r = Record::status(TaskStatus { state: TaskState::Working, ..Default::default() });
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"statusChanged":{"status":{"state":"TASK_STATE_WORKING"}}}"#);
/// assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), r);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Record {
    /// The task exists (always the first record): SUBMITTED at `at`.
    #[serde(rename_all = "camelCase")]
    Created {
        /// The task id.
        task_id: String,
        /// The context id.
        context_id: String,
        /// When the task was created (its first status timestamp).
        at: Timestamp,
        /// Task metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Metadata>,
    },
    /// A client message was admitted to the task (appended to the history).
    MessageAdmitted {
        /// The message, with its task and context ids set.
        message: Message,
    },
    /// The status changed.
    StatusChanged {
        /// The new status.
        status: TaskStatus,
    },
    /// An artifact, or a chunk of one.
    #[serde(rename_all = "camelCase")]
    ArtifactChunk {
        /// The artifact (or the parts of this chunk).
        artifact: Artifact,
        /// Add the parts to the artifact with the same id.
        #[serde(default)]
        append: bool,
        /// This is the artifact's final chunk.
        #[serde(default)]
        last_chunk: bool,
    },
    /// The executor replied with a direct message: the task is COMPLETED
    /// with this message as its status message.
    Replied {
        /// The reply.
        message: Message,
        /// When it was recorded.
        at: Timestamp,
    },
    /// A client asked to cancel the task (the writer decides the outcome).
    CancelRequested {
        /// When it was asked.
        at: Timestamp,
    },
    /// A push-notification config was created or replaced (by id).
    PushConfigSet {
        /// The config.
        config: TaskPushNotificationConfig,
    },
    /// A push-notification config was deleted.
    PushConfigDeleted {
        /// The config id.
        id: String,
    },
    /// An execution of the task started on `host` (the engine's
    /// [`host_id`](https://docs.rs/a2a-tower/latest/a2a_tower/engine/struct.TaskLayer.html#method.host_id)): start-up recovery
    /// closes only the live tasks of its own host. No event, no state change.
    ExecutionStarted {
        /// The id of the host running the execution (shared: a host writes
        /// its one id into every task it runs, and the projection and the
        /// snapshots keep it without a copy).
        #[serde(with = "arc_str")]
        host: Arc<str>,
    },
    /// The task's metadata was replaced (a managed run publishes its
    /// questions and process status this way).
    MetadataChanged {
        /// The new metadata, whole.
        metadata: Metadata,
    },
    /// A record of a feature built on the log (managed runs, the delivery
    /// queue, a host's own): stored, read back and numbered like every
    /// record, and read by the log only for the message it admits and the
    /// hold it sets (see [`FeatureRecord`]).
    #[serde(skip)]
    Feature(FeatureRecord),
}

impl Record {
    /// The names of the log's own records; any other name is a feature's.
    pub(super) const CORE: [&'static str; 10] = [
        "created",
        "messageAdmitted",
        "statusChanged",
        "artifactChunk",
        "replied",
        "cancelRequested",
        "pushConfigSet",
        "pushConfigDeleted",
        "executionStarted",
        "metadataChanged",
    ];

    /// The derived form of the log's own records.
    pub(super) fn serialize_core<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Record::serialize(self, s)
    }

    /// The derived form of the log's own records (`d` is one of
    /// [`CORE`](Self::CORE), tagged).
    pub(super) fn deserialize_core<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Record::deserialize(d)
    }

    /// A `Created` record stamped now.
    pub fn created(task_id: impl Into<String>, context_id: impl Into<String>) -> Self {
        Self::Created {
            task_id: task_id.into(),
            context_id: context_id.into(),
            at: Timestamp::now(),
            metadata: None,
        }
    }

    /// A `StatusChanged` record.
    pub fn status(status: TaskStatus) -> Self {
        Self::StatusChanged { status }
    }

    /// What a cancel commits when its writer decides it: the request, then
    /// CANCELED, both stamped now.
    pub fn canceled() -> Vec<Self> {
        vec![
            Self::CancelRequested {
                at: Timestamp::now(),
            },
            Self::status(TaskStatus::new(TaskState::Canceled)),
        ]
    }

    /// The state this record moves the task to, if any.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Created { .. } => Some(TaskState::Submitted),
            Self::StatusChanged { status } => Some(status.state),
            Self::Replied { .. } => Some(TaskState::Completed),
            _ => None,
        }
    }

    /// The record ends the task: nothing may follow it but records that
    /// [may follow a terminal one](Self::may_follow_terminal).
    pub fn is_terminal(&self) -> bool {
        self.state().is_some_and(TaskState::is_terminal)
    }

    /// The record may follow a terminal record: a push-notification config
    /// set or deleted, which changes nothing of the task itself (a config
    /// set on a terminal task gets no delivery cursor: it receives nothing).
    pub fn may_follow_terminal(&self) -> bool {
        matches!(
            self,
            Self::PushConfigSet { .. } | Self::PushConfigDeleted { .. }
        )
    }
}

/// The serde form of an `Arc<str>`: a string.
mod arc_str {
    use std::sync::Arc;

    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(s: &Arc<str>, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
        d.deserialize_str(ArcStr)
    }

    /// Reads the string where it lies (no `String` first): one allocation,
    /// the `Arc`'s.
    struct ArcStr;

    impl serde::de::Visitor<'_> for ArcStr {
        type Value = Arc<str>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Arc<str>, E> {
            Ok(Arc::from(v))
        }
    }
}

/// A record with its sequence number (shared: reading never deep-copies it).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequenced {
    /// The sequence number, from 1.
    pub seq: u64,
    /// The task's last sequence number when the record was read (≥ `seq`):
    /// how far behind the log a reader is.
    pub head: u64,
    /// The record.
    pub record: Arc<Record>,
}
