//! The types of push delivery progress (see the
//! [log's rules](super#push-delivery)) and what backends share to keep it.

use super::{AppendRequest, Record};

/// How far one push config of a task was delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryCursor {
    /// The config id.
    pub config_id: String,
    /// The sequence number of the last record delivered (or given up on).
    pub seq: u64,
}

/// A task with a push config not delivered up to the task's head, listed by
/// [`TaskLog::pending_deliveries`](super::TaskLog::pending_deliveries) across
/// all authorities in `(authority, task_id)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelivery {
    /// The task's authority.
    pub authority: String,
    /// The task id.
    pub task_id: String,
}

impl PendingDelivery {
    /// The position after this task, for the next page.
    pub fn key(&self) -> (&str, &str) {
        (&self.authority, &self.task_id)
    }
}

/// A conditional move of one config's cursor, by the holder of the task's
/// delivery lease (see
/// [`TaskLog::advance_delivery`](super::TaskLog::advance_delivery)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advance {
    /// The task's authority.
    pub authority: String,
    /// The task id.
    pub task_id: String,
    /// The config id.
    pub config_id: String,
    /// The lease holder.
    pub holder: String,
    /// The cursor the caller read.
    pub from: u64,
    /// The new cursor (at most the task's head).
    pub to: u64,
}

/// What one record of an append does to the cursors.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) enum CursorChange<'a> {
    /// Create the config's cursor at the append's `expected`, unless it
    /// exists.
    Set(&'a str),
    /// Remove the config's cursor.
    Delete(&'a str),
}

/// The cursor changes of `req`, in order (none for most appends).
pub(crate) fn cursor_changes(req: &AppendRequest) -> impl Iterator<Item = CursorChange<'_>> {
    req.records.iter().filter_map(|r| match r {
        Record::PushConfigSet { config } => Some(CursorChange::Set(&config.id)),
        Record::PushConfigDeleted { id } => Some(CursorChange::Delete(id)),
        _ => None,
    })
}

/// `req` changes cursors.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn changes_cursors(req: &AppendRequest) -> bool {
    cursor_changes(req).next().is_some()
}

/// The terminal states' numbers, as an SQL list (checked by a test).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) const TERMINAL_STATES_SQL: &str = "(3, 4, 5, 7)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TaskState;

    #[test]
    fn terminal_states_sql_lists_exactly_the_terminal_states() {
        let mut numbers = Vec::new();
        for n in 0..16 {
            if let Some(s) = TaskState::from_number(n)
                && s.is_terminal()
            {
                numbers.push(n.to_string());
            }
        }
        assert_eq!(TERMINAL_STATES_SQL, format!("({})", numbers.join(", ")));
    }

    #[test]
    fn changes_are_read_in_order() {
        let config = crate::types::TaskPushNotificationConfig {
            id: "p".into(),
            ..Default::default()
        };
        let req = AppendRequest::new(
            "a",
            "t",
            1,
            1,
            vec![
                Record::PushConfigSet { config },
                Record::PushConfigDeleted { id: "q".into() },
            ],
        );
        let got: Vec<_> = cursor_changes(&req)
            .map(|c| match c {
                CursorChange::Set(id) => format!("+{id}"),
                CursorChange::Delete(id) => format!("-{id}"),
            })
            .collect();
        assert_eq!(got, ["+p", "-q"]);
        assert!(changes_cursors(&req));
    }
}
