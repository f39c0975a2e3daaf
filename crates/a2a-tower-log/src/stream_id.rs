//! Streams: a feature's own sequences of records in the log, beside tasks.
//!
//! A feature built on the log (the delivery queue's per-context queues, say)
//! keeps its state as a *stream*: records numbered from 1 under an
//! authority, appended conditionally like a task's (the same
//! [`AppendRequest`](crate::AppendRequest), in the same
//! [`append_all`](crate::TaskLog::append_all) commit as the tasks it
//! changes), read back with [`TaskLog::read`](crate::TaskLog::read). A
//! stream is not a task: the task views of the log ([`snapshot`],
//! [`watch`], [`list`]) never show one ([`LogErrorKind::NotFound`] for its
//! id, never listed), and start-up recovery tells one apart by its id
//! ([`LiveTask::stream`](crate::LiveTask::stream)) without reading it.
//!
//! A stream's id is [`stream_id`]`(feature, name)`: it starts with
//! [`STREAM_MARK`] (U+0001), which no task id the engine makes contains, so
//! ids of streams and tasks never meet, and a caller who sends one as a task
//! id finds no task.
//!
//! [`snapshot`]: crate::TaskLog::snapshot
//! [`watch`]: crate::TaskLog::watch
//! [`list`]: crate::TaskLog::list
//! [`LogErrorKind::NotFound`]: crate::LogErrorKind::NotFound
//!
//! ```
//! use a2a_tower::log::{AppendRequest, LogErrorKind, MemoryTaskLog, Record, TaskLog, stream_id, stream_of};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log = MemoryTaskLog::new();
//! let id = stream_id("tally", "c-1");
//! assert_eq!(stream_of(&id), Some(("tally", "c-1")));
//! log.append(AppendRequest::create("alice", id.clone(), vec![Record::created(id.clone(), "c-1")]))
//!     .await
//!     .unwrap();
//! // Read as records, never seen as a task.
//! assert_eq!(log.read("alice", &id, 0).await.unwrap().len(), 1);
//! assert_eq!(log.snapshot("alice", &id).await.unwrap_err().kind(), LogErrorKind::NotFound);
//! # });
//! ```

use crate::{LogError, LogErrorKind};

/// The first character of every stream id (U+0001), and the separator of
/// its feature and name.
pub const STREAM_MARK: char = '\u{1}';

/// The id of `feature`'s stream `name`: `"\u{1}<feature>\u{1}<name>"`.
///
/// A stream is appended to like a task (its first record is
/// [`Record::Created`](crate::Record::Created) with this id) and read with
/// [`TaskLog::read`](crate::TaskLog::read); the task views
/// ([`snapshot`](crate::TaskLog::snapshot), [`watch`](crate::TaskLog::watch))
/// answer `NotFound` for it and [`list`](crate::TaskLog::list) never lists it.
/// `feature` must not contain [`STREAM_MARK`]; `name` may be anything, so a
/// feature names its streams as it likes (the queue by authority and
/// context).
pub fn stream_id(feature: &str, name: &str) -> String {
    debug_assert!(!feature.contains(STREAM_MARK));
    let mut id = String::with_capacity(feature.len() + name.len() + 2);
    id.push(STREAM_MARK);
    id.push_str(feature);
    id.push(STREAM_MARK);
    id.push_str(name);
    id
}

/// The feature and name of a stream id; `None` for a task id.
pub fn stream_of(id: &str) -> Option<(&str, &str)> {
    id.strip_prefix(STREAM_MARK)?.split_once(STREAM_MARK)
}

/// The id is a stream's, not a task's.
pub fn is_stream(id: &str) -> bool {
    id.starts_with(STREAM_MARK)
}

/// For the task views of a backend: `NotFound` when `id` is a stream's.
#[doc(hidden)]
pub fn task_view(id: &str) -> Result<(), LogError> {
    if is_stream(id) {
        Err(LogError::new(LogErrorKind::NotFound))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_never_task_ids() {
        let id = stream_id("queue", "5:alice:c\u{1}1");
        assert_eq!(stream_of(&id), Some(("queue", "5:alice:c\u{1}1")));
        assert!(is_stream(&id));
        assert_eq!(stream_of("0190-task"), None);
        assert!(!is_stream("queue:5:alice:c1"));
        assert!(task_view(&id).is_err());
        assert!(task_view("t-1").is_ok());
    }
}
