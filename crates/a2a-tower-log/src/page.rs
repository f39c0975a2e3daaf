//! [`PageCursor`]: the stable, opaque position behind a ListTasks page token.

use std::cmp::Ordering;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::types::{Task, Timestamp};

/// A position in the ListTasks order (status timestamp newest first, then
/// task id ascending). Pages continue strictly after the cursor, so a page
/// token stays valid while tasks are added (keyset pagination).
///
/// ```
/// use a2a_tower::log::PageCursor;
/// use a2a_tower::types::Timestamp;
/// let c = PageCursor::new(Timestamp::from_unix_millis(1_700_000_000_000), "t-9");
/// let token = c.to_token();
/// assert_eq!(PageCursor::from_token(&token), Some(c));
/// assert_eq!(PageCursor::from_token("not a token"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageCursor {
    /// Status timestamp in nanoseconds since the epoch (`i128::MIN` if unset).
    pub timestamp_nanos: i128,
    /// Task id.
    pub task_id: String,
}

const PREFIX: &str = "v1.";

impl PageCursor {
    /// A cursor at the given timestamp and task id.
    pub fn new(timestamp: Timestamp, task_id: impl Into<String>) -> Self {
        Self {
            timestamp_nanos: timestamp.unix_nanos(),
            task_id: task_id.into(),
        }
    }

    /// The cursor of a task (its status timestamp and id).
    pub fn of(task: &Task) -> Self {
        Self {
            timestamp_nanos: sort_nanos(task),
            task_id: task.id.clone(),
        }
    }

    /// The opaque page token.
    pub fn to_token(&self) -> String {
        let raw = format!("{}:{}", self.timestamp_nanos, self.task_id);
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
    }

    /// Decodes a page token; `None` if it is not one of ours.
    pub fn from_token(token: &str) -> Option<Self> {
        let body = token.strip_prefix(PREFIX)?;
        let raw = URL_SAFE_NO_PAD.decode(body).ok()?;
        let raw = String::from_utf8(raw).ok()?;
        let (ts, id) = raw.split_once(':')?;
        Some(Self {
            timestamp_nanos: ts.parse().ok()?,
            task_id: id.to_owned(),
        })
    }

    /// Compares two positions in list order (`Less` comes first).
    pub fn cmp_order(a: (i128, &str), b: (i128, &str)) -> Ordering {
        b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1))
    }

    /// The task comes strictly after this cursor in list order.
    pub fn precedes(&self, task: &Task) -> bool {
        Self::cmp_order(
            (self.timestamp_nanos, &self.task_id),
            (sort_nanos(task), &task.id),
        ) == Ordering::Less
    }
}

/// The sort key of a task: its status timestamp (unset sorts last).
pub(crate) fn sort_nanos(task: &Task) -> i128 {
    task.status
        .timestamp
        .map_or(i128::MIN, Timestamp::unix_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{TaskState, TaskStatus};

    fn task(id: &str, ms: i64) -> Task {
        Task {
            id: id.into(),
            status: TaskStatus {
                state: TaskState::Working,
                message: None,
                timestamp: Some(Timestamp::from_unix_millis(ms)),
            },
            ..Task::default()
        }
    }

    #[test]
    fn order_is_newest_first_then_id() {
        let c = PageCursor::of(&task("b", 10));
        assert!(c.precedes(&task("a", 9)));
        assert!(c.precedes(&task("c", 10)));
        assert!(!c.precedes(&task("a", 10)));
        assert!(!c.precedes(&task("b", 10)));
        assert!(!c.precedes(&task("z", 11)));
    }

    #[test]
    fn rejects_foreign_tokens() {
        for t in ["", "v1.", "v1.!!!", "v2.MTox", "v1.bm9jb2xvbg"] {
            assert_eq!(PageCursor::from_token(t), None, "{t}");
        }
        let weird = PageCursor {
            timestamp_nanos: -5,
            task_id: "a:b".into(),
        };
        assert_eq!(PageCursor::from_token(&weird.to_token()), Some(weird));
    }
}
