//! [`Projection`]: records → [`Task`], the one place that decides what a
//! sequence of records means.

mod owned;

use std::borrow::Cow;
use std::fmt;
use std::mem::size_of;
use std::sync::Arc;

use serde_json::Value;

use super::{Hold, Record};
use crate::types::{
    Artifact, Message, Part, PartContent, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
};

/// The state of a task projected from its records: the [`Task`] (shared,
/// copy-on-write) plus per-task state that is not part of the wire task.
///
/// Rules:
/// - `Created` must come first and only once: SUBMITTED at its timestamp;
/// - an admitted message moves the current status message into the history,
///   then joins the history;
/// - a status change moves the previous status message into the history;
/// - an artifact chunk replaces the artifact with its id, or extends it when
///   `append` is set (a chunk appended to an unknown id starts it); an
///   appended text part continues the artifact's last text part when
///   neither has metadata and their media type and file name agree (the
///   texts are concatenated: a streamed text is one part, however many
///   chunks carried it; streams and push deliveries still carry each chunk
///   as sent);
/// - a reply completes the task with the reply as its status message;
/// - nothing may follow a terminal status.
///
/// ```
/// use a2a_tower::log::{Projection, Record};
/// use a2a_tower::types::{Message, TaskState, TaskStatus};
/// let p = Projection::replay([
///     &Record::created("t", "c"),
///     &Record::MessageAdmitted { message: Message::user("m", "hi") },
///     &Record::status(TaskStatus::new(TaskState::Completed)),
/// ]).unwrap();
/// assert_eq!(p.task().status.state, TaskState::Completed);
/// assert_eq!(p.task().history.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    task: Arc<Task>,
    created: bool,
    cancel_requested: bool,
    push_configs: Vec<TaskPushNotificationConfig>,
    /// Shared with the records that name it (see [`Record::ExecutionStarted`]).
    host: Option<Arc<str>>,
    /// Boxed: most tasks have none, and a projection is kept per task.
    hold: Option<Arc<Hold>>,
}

impl Default for Projection {
    /// The projection before `Created`: shares one empty task, so creating
    /// (or checking a batch against) an empty projection allocates nothing.
    fn default() -> Self {
        static EMPTY: std::sync::OnceLock<Arc<Task>> = std::sync::OnceLock::new();
        Self {
            task: EMPTY.get_or_init(Arc::default).clone(),
            created: false,
            cancel_requested: false,
            push_configs: Vec::new(),
            host: None,
            hold: None,
        }
    }
}

/// A record that cannot follow the records before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectionError {
    /// The first record is not `Created`.
    NotCreated,
    /// A second `Created`.
    AlreadyCreated,
    /// A record after a terminal status (other than one that
    /// [may follow it](Record::may_follow_terminal)).
    AfterTerminal,
    /// A status with the unspecified state.
    UnspecifiedState,
    /// An artifact without id or parts.
    EmptyArtifact,
}

impl fmt::Display for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotCreated => "the first record must be Created",
            Self::AlreadyCreated => "the task is already created",
            Self::AfterTerminal => "the task is terminal",
            Self::UnspecifiedState => "a status needs a state",
            Self::EmptyArtifact => "an artifact needs an id and at least one part",
        })
    }
}

impl std::error::Error for ProjectionError {}

impl Projection {
    /// Projects a whole record sequence.
    pub fn replay<'a>(
        records: impl IntoIterator<Item = &'a Record>,
    ) -> Result<Self, ProjectionError> {
        let mut p = Self::default();
        for r in records {
            p.check(std::slice::from_ref(r))?;
            p.apply(r);
        }
        Ok(p)
    }

    /// The projected task (empty before `Created`).
    pub fn task(&self) -> &Arc<Task> {
        &self.task
    }

    /// A `Created` record has been applied.
    pub fn is_created(&self) -> bool {
        self.created
    }

    /// The task is in a terminal state.
    pub fn is_terminal(&self) -> bool {
        self.created && self.task.status.state.is_terminal()
    }

    /// Some host must be running the task: it is neither terminal nor
    /// waiting for the client, or a feature [holds](Self::hold) it (a
    /// managed run, which a host resumes even while it waits). Start-up
    /// recovery looks only at live tasks.
    pub fn is_live(&self) -> bool {
        let state = self.task.status.state;
        self.created
            && (super::LiveTask::is_live(state) || (!state.is_terminal() && self.hold.is_some()))
    }

    /// The hold of the feature whose record last held the task (see
    /// [`FeatureRecord::holding`](super::FeatureRecord::holding)), unless
    /// it lasted until a message was admitted and one was.
    pub fn hold(&self) -> Option<&Hold> {
        self.hold.as_deref()
    }

    /// The feature holding the task, if any.
    pub fn held_by(&self) -> Option<&str> {
        self.hold.as_ref().map(|h| h.by.as_str())
    }

    /// A client asked to cancel the task.
    pub fn cancel_requested(&self) -> bool {
        self.cancel_requested
    }

    /// The host that started the task's latest execution
    /// ([`Record::ExecutionStarted`]), if one was recorded.
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// [`host`](Self::host), shared.
    pub(crate) fn shared_host(&self) -> Option<&Arc<str>> {
        self.host.as_ref()
    }

    /// The task's push-notification configs.
    pub fn push_configs(&self) -> &[TaskPushNotificationConfig] {
        &self.push_configs
    }

    /// The push-notification configs to change in place (the push-secret
    /// sealing wrapper opens them).
    #[cfg(feature = "seal")]
    pub(crate) fn push_configs_mut(&mut self) -> &mut [TaskPushNotificationConfig] {
        &mut self.push_configs
    }

    /// Checks that `batch` may follow the records projected so far, without
    /// changing anything.
    pub fn check(&self, batch: &[Record]) -> Result<(), ProjectionError> {
        let mut created = self.created;
        let mut terminal = self.is_terminal();
        for r in batch {
            if terminal && !r.may_follow_terminal() {
                return Err(ProjectionError::AfterTerminal);
            }
            match r {
                Record::Created { .. } if created => return Err(ProjectionError::AlreadyCreated),
                Record::Created { .. } => created = true,
                _ if !created => return Err(ProjectionError::NotCreated),
                Record::StatusChanged { status } if status.state == TaskState::Unspecified => {
                    return Err(ProjectionError::UnspecifiedState);
                }
                Record::ArtifactChunk { artifact, .. }
                    if artifact.artifact_id.is_empty() || artifact.parts.is_empty() =>
                {
                    return Err(ProjectionError::EmptyArtifact);
                }
                _ => {}
            }
            terminal = terminal || r.is_terminal();
        }
        Ok(())
    }

    /// Applies one record that [`check`](Self::check) accepted. Copies the
    /// task only if a reader still holds the previous snapshot.
    pub fn apply(&mut self, record: &Record) {
        match record {
            Record::Created {
                task_id,
                context_id,
                at,
                metadata,
            } => self.create(task_id.clone(), context_id.clone(), *at, metadata.clone()),
            Record::MessageAdmitted { message } => self.admit(message.clone()),
            Record::StatusChanged { status } => set_status(&mut self.task, status.clone()),
            Record::Replied { message, at } => set_status(
                &mut self.task,
                TaskStatus {
                    state: TaskState::Completed,
                    message: Some(message.clone()),
                    timestamp: Some(*at),
                },
            ),
            Record::ArtifactChunk {
                artifact, append, ..
            } => {
                self.apply_chunk(artifact, *append);
            }
            Record::CancelRequested { .. } => self.cancel_requested = true,
            Record::PushConfigSet { config } => {
                match self.push_configs.iter_mut().find(|c| c.id == config.id) {
                    Some(c) => *c = config.clone(),
                    None => self.push_configs.push(config.clone()),
                }
            }
            Record::PushConfigDeleted { id } => self.push_configs.retain(|c| &c.id != id),
            Record::ExecutionStarted { host } => self.started_on(host),
            Record::MetadataChanged { metadata } => {
                Arc::make_mut(&mut self.task).metadata = Some(metadata.clone());
            }
            Record::Feature(f) => {
                if let Some(hold) = f.hold()
                    && self.hold.as_deref() != Some(hold)
                {
                    self.hold = Some(Arc::new(hold.clone()));
                }
                if let Some(message) = f.message() {
                    self.admit(message.clone());
                }
            }
        }
    }

    /// Applies an artifact chunk (see the rules above) and returns about
    /// the bytes the task grew by, as [`approx_task_bytes`] counts them (a
    /// replaced artifact that shrank counts 0): what the memory log charges
    /// its bound for the task, with no walk over the task.
    ///
    /// An appended chunk's text part continues the artifact's last part
    /// when both are text parts without metadata, of the same media type
    /// and file name: its text is concatenated to that part's, so a long
    /// streamed text is one part of its length, not a part per chunk.
    /// Other parts are added as they come.
    pub(crate) fn apply_chunk(&mut self, artifact: &Artifact, append: bool) -> usize {
        self.chunk(Cow::Borrowed(artifact), append)
    }

    /// [`apply_chunk`](Self::apply_chunk) of a borrowed artifact (its parts
    /// copied) or an owned one (moved).
    fn chunk(&mut self, artifact: Cow<'_, Artifact>, append: bool) -> usize {
        let task = Arc::make_mut(&mut self.task);
        match task
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(existing) if append => match artifact {
                Cow::Borrowed(a) => {
                    extend_parts(&mut existing.parts, a.parts.iter().map(Cow::Borrowed))
                }
                Cow::Owned(a) => {
                    extend_parts(&mut existing.parts, a.parts.into_iter().map(Cow::Owned))
                }
            },
            Some(existing) => {
                let grew = artifact_bytes(&artifact).saturating_sub(artifact_bytes(existing));
                *existing = artifact.into_owned();
                grew
            }
            None => {
                let grew = artifact_bytes(&artifact);
                task.artifacts.push(artifact.into_owned());
                grew
            }
        }
    }

    /// An execution started on `host`.
    fn started_on(&mut self, host: &Arc<str>) {
        if self.host.as_ref() != Some(host) {
            self.host = Some(host.clone());
        }
    }

    /// The task `Created` starts: SUBMITTED at `at`.
    fn create(
        &mut self,
        id: String,
        context_id: String,
        at: crate::types::Timestamp,
        metadata: Option<crate::types::Metadata>,
    ) {
        self.created = true;
        self.task = Arc::new(Task {
            id,
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(at),
            },
            metadata,
            ..Task::default()
        });
    }

    /// A message joins the history (after the status message it answers),
    /// ending a hold that lasted until then.
    fn admit(&mut self, message: Message) {
        if self.hold.as_ref().is_some_and(|h| h.until_admitted) {
            self.hold = None;
        }
        let task = Arc::make_mut(&mut self.task);
        if let Some(m) = task.status.message.take() {
            task.history.push(m);
        }
        task.history.push(message);
    }

    /// The projection of a created task from its parts (the memory log's
    /// packed terminal tasks).
    pub(crate) fn restore(
        task: Arc<Task>,
        cancel_requested: bool,
        push_configs: Vec<TaskPushNotificationConfig>,
        host: Option<Arc<str>>,
        hold: Option<Hold>,
    ) -> Self {
        Self {
            task,
            created: true,
            cancel_requested,
            push_configs,
            host,
            hold: hold.map(Arc::new),
        }
    }

    /// Releases spare capacity (for tasks that will not change any more).
    pub fn shrink(&mut self) {
        if let Some(task) = Arc::get_mut(&mut self.task) {
            task.history.shrink_to_fit();
            task.artifacts.shrink_to_fit();
            for a in &mut task.artifacts {
                a.parts.shrink_to_fit();
            }
        }
        self.push_configs.shrink_to_fit();
    }
}

/// Appends `more` to an artifact's `parts`: a text part that may continue
/// the last part (see [`continues`]) is concatenated to it, any other part is
/// pushed (moved if owned, copied if borrowed). Returns the bytes added, as
/// [`part_bytes`] counts them.
fn extend_parts<'a>(parts: &mut Vec<Part>, more: impl Iterator<Item = Cow<'a, Part>>) -> usize {
    let mut added = 0;
    for part in more {
        if let Some(last) = parts.last_mut()
            && continues(last, &part)
            && let (PartContent::Text(text), PartContent::Text(next)) =
                (&mut last.content, &part.content)
        {
            text.push_str(next);
            added += next.len();
        } else {
            added += part_bytes(&part);
            parts.push(part.into_owned());
        }
    }
    added
}

/// `next` may continue `last` as one text: both are text parts without
/// metadata, with the same media type and file name. Part metadata is kept
/// per part, so a part that has any is never merged.
fn continues(last: &Part, next: &Part) -> bool {
    matches!(
        (&last.content, &next.content),
        (PartContent::Text(_), PartContent::Text(_))
    ) && last.metadata.is_none()
        && next.metadata.is_none()
        && last.media_type == next.media_type
        && last.filename == next.filename
}

fn set_status(task: &mut Arc<Task>, status: TaskStatus) {
    let task = Arc::make_mut(task);
    if let Some(m) = task.status.message.take() {
        task.history.push(m);
    }
    task.status = status;
}

/// An estimate of the heap and inline bytes a task occupies, used by memory
/// bounds (cheap: no serialization).
pub(crate) fn approx_task_bytes(task: &Task) -> usize {
    size_of::<Task>()
        + task.id.len()
        + task.context_id.len()
        + task.status.message.as_ref().map_or(0, message_bytes)
        + task.history.iter().map(message_bytes).sum::<usize>()
        + task.artifacts.iter().map(artifact_bytes).sum::<usize>()
        + task.metadata.as_ref().map_or(0, map_bytes)
}

pub(crate) fn message_bytes(m: &Message) -> usize {
    size_of::<Message>()
        + m.message_id.len()
        + m.context_id.len()
        + m.task_id.len()
        + m.parts.iter().map(part_bytes).sum::<usize>()
        + m.metadata.as_ref().map_or(0, map_bytes)
        + m.extensions.iter().map(String::len).sum::<usize>()
        + m.reference_task_ids.iter().map(String::len).sum::<usize>()
}

pub(crate) fn artifact_bytes(a: &Artifact) -> usize {
    size_of::<Artifact>()
        + a.artifact_id.len()
        + a.name.len()
        + a.description.len()
        + a.parts.iter().map(part_bytes).sum::<usize>()
        + a.metadata.as_ref().map_or(0, map_bytes)
}

fn part_bytes(p: &Part) -> usize {
    size_of::<Part>()
        + p.media_type.len()
        + p.filename.len()
        + p.metadata.as_ref().map_or(0, map_bytes)
        + match &p.content {
            PartContent::Text(t) | PartContent::Url(t) => t.len(),
            PartContent::Raw(b) => b.len(),
            PartContent::Data(v) => value_bytes(v),
        }
}

pub(crate) fn map_bytes(m: &serde_json::Map<String, Value>) -> usize {
    m.iter()
        .map(|(k, v)| k.len() + size_of::<Value>() + value_bytes(v))
        .sum()
}

pub(crate) fn value_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Number(n) => n.as_str().len(),
        Value::Array(a) => a.iter().map(|v| size_of::<Value>() + value_bytes(v)).sum(),
        Value::Object(m) => map_bytes(m),
        Value::Null | Value::Bool(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Timestamp;

    fn chunk(id: &str, text: &str, append: bool) -> Record {
        Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: id.into(),
                parts: vec![Part::text(text)],
                ..Artifact::default()
            },
            append,
            last_chunk: false,
        }
    }

    #[test]
    fn artifacts_append_and_replace() {
        let p = Projection::replay([
            &Record::created("t", "c"),
            &chunk("a", "1", false),
            &chunk("a", "2", true),
            &chunk("b", "x", true),
            &chunk("b", "y", false),
        ])
        .unwrap();
        let arts = &p.task().artifacts;
        assert_eq!(arts.len(), 2);
        assert_eq!(
            arts[0].parts,
            vec![Part::text("12")],
            "appended text continues"
        );
        assert_eq!(arts[1].parts, vec![Part::text("y")]);
    }

    #[test]
    fn only_plain_text_of_one_kind_is_concatenated() {
        let with = |part: Part| Record::ArtifactChunk {
            artifact: Artifact {
                artifact_id: "a".into(),
                parts: vec![part],
                ..Artifact::default()
            },
            append: true,
            last_chunk: false,
        };
        let mut tagged = Part::text("m");
        tagged.metadata = Some(serde_json::from_str(r#"{"k":1}"#).unwrap());
        let mut markdown = Part::text("# t");
        markdown.media_type = "text/markdown".into();
        let mut more_markdown = Part::text(" u");
        more_markdown.media_type = "text/markdown".into();
        let data = Part::data(serde_json::json!({"n": 1}));
        let p = Projection::replay([
            &Record::created("t", "c"),
            &chunk("a", "x", false),
            &chunk("a", "y", true),
            &with(tagged.clone()),
            &chunk("a", "z", true),
            &with(markdown),
            &with(more_markdown),
            &with(data.clone()),
            &chunk("a", "w", true),
        ])
        .unwrap();
        let mut md = Part::text("# t u");
        md.media_type = "text/markdown".into();
        assert_eq!(
            p.task().artifacts[0].parts,
            vec![
                Part::text("xy"),
                tagged,
                Part::text("z"),
                md,
                data,
                Part::text("w")
            ]
        );
    }

    #[test]
    fn a_chunk_reports_what_the_task_grew_by() {
        let mut p = Projection::replay([&Record::created("t", "c")]).unwrap();
        let first = Artifact {
            artifact_id: "a".into(),
            parts: vec![Part::text("hello")],
            ..Artifact::default()
        };
        let before = approx_task_bytes(p.task());
        assert_eq!(p.apply_chunk(&first, false), artifact_bytes(&first));
        let more = Artifact {
            parts: vec![Part::text(" world")],
            ..first.clone()
        };
        assert_eq!(p.apply_chunk(&more, true), 6, "the text only");
        assert_eq!(
            approx_task_bytes(p.task()),
            before + artifact_bytes(&first) + 6
        );
        // A replacement by a smaller artifact grows nothing.
        assert_eq!(p.apply_chunk(&first, false), 0);
        assert_eq!(p.task().artifacts[0].parts, vec![Part::text("hello")]);
    }

    #[test]
    fn status_messages_move_into_history_in_order() {
        let q = Message::agent("q", "which?");
        let p = Projection::replay([
            &Record::created("t", "c"),
            &Record::MessageAdmitted {
                message: Message::user("m1", "go"),
            },
            &Record::status(TaskStatus {
                state: TaskState::InputRequired,
                message: Some(q.clone()),
                timestamp: Some(Timestamp::now()),
            }),
            &Record::MessageAdmitted {
                message: Message::user("m2", "this"),
            },
        ])
        .unwrap();
        let ids: Vec<_> = p
            .task()
            .history
            .iter()
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(ids, ["m1", "q", "m2"]);
        assert_eq!(p.task().status.message, None);
    }

    #[test]
    fn invalid_sequences_are_rejected() {
        let p = Projection::default();
        assert_eq!(
            p.check(&[Record::CancelRequested {
                at: Timestamp::now()
            }]),
            Err(ProjectionError::NotCreated)
        );
        let done = Projection::replay([
            &Record::created("t", "c"),
            &Record::status(TaskStatus::new(TaskState::Failed)),
        ])
        .unwrap();
        assert!(done.is_terminal());
        assert_eq!(
            done.check(&[Record::status(TaskStatus::new(TaskState::Working))]),
            Err(ProjectionError::AfterTerminal)
        );
        // A push config may follow; still nothing else after it.
        let config = Record::PushConfigSet {
            config: Default::default(),
        };
        assert_eq!(done.check(std::slice::from_ref(&config)), Ok(()));
        assert_eq!(
            done.check(&[config, Record::status(TaskStatus::new(TaskState::Working))]),
            Err(ProjectionError::AfterTerminal)
        );
        assert_eq!(
            Projection::default().check(&[Record::created("t", "c"), Record::created("t", "c")]),
            Err(ProjectionError::AlreadyCreated)
        );
        assert_eq!(
            Projection::default().check(&[Record::created("t", "c"), chunk("", "x", false)]),
            Err(ProjectionError::EmptyArtifact)
        );
    }

    #[test]
    fn apply_copies_only_when_shared() {
        let mut p = Projection::replay([&Record::created("t", "c")]).unwrap();
        let before = Arc::as_ptr(p.task());
        p.apply(&Record::status(TaskStatus::new(TaskState::Working)));
        assert_eq!(before, Arc::as_ptr(p.task()), "unshared: updated in place");
        let reader = p.task().clone();
        p.apply(&Record::status(TaskStatus::new(TaskState::Completed)));
        assert_eq!(
            reader.status.state,
            TaskState::Working,
            "reader keeps its snapshot"
        );
        assert_eq!(p.task().status.state, TaskState::Completed);
    }
}
