//! The types of push delivery progress (see the
//! [log's rules](super#push-delivery)) and what backends share to keep it.

use super::{AppendRequest, LogFuture, Record};

/// The push outbox's part of a backend (see
/// [push delivery](super#push-delivery)): per push config how far it was
/// delivered, and per task a delivery lease, so that one host at a time
/// delivers a task's events. The cursors follow the task's records (a
/// [`Record::PushConfigSet`] creates one in its own commit), so the backend
/// that stores the records keeps them.
pub trait DeliveryLog: Send + Sync + 'static {
    /// The delivery cursors of the task's push configs, in config id order;
    /// empty for a task without cursors (none set, or all cleaned up) or of
    /// another authority.
    fn delivery_cursors<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> LogFuture<'a, Vec<DeliveryCursor>>;

    /// At most `limit` tasks of every authority with a delivery cursor below
    /// the task's head, in `(authority, task_id)` order, strictly after
    /// `after` (a previous page's last [`PendingDelivery::key`]).
    fn pending_deliveries<'a>(
        &'a self,
        after: Option<(&'a str, &'a str)>,
        limit: usize,
    ) -> LogFuture<'a, Vec<PendingDelivery>>;

    /// Claims (or, by its holder, renews) the task's delivery lease for
    /// `ttl`: `true` when `holder` holds it now; `false` when another holder
    /// holds an unexpired lease, or the task has no delivery cursor.
    fn claim_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> LogFuture<'a, bool>;

    /// Gives the task's delivery lease up if `holder` holds it.
    fn release_deliveries<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        holder: &'a str,
    ) -> LogFuture<'a, ()>;

    /// Moves a cursor from `advance.from` to `advance.to` if it is at
    /// `from`, `to` is neither before `from` nor beyond the task's head, and
    /// `advance.holder` holds the task's unexpired lease: `true` when it
    /// moved. A terminal task whose cursors all reach its head loses its
    /// cursors and lease.
    fn advance_delivery<'a>(&'a self, advance: &'a Advance) -> LogFuture<'a, bool>;
}

/// How far one push config of a task was delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryCursor {
    /// The config id.
    pub config_id: String,
    /// The sequence number of the last record delivered (or given up on).
    pub seq: u64,
}

/// A task with a push config not delivered up to the task's head, listed by
/// [`DeliveryLog::pending_deliveries`] across
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
/// [`DeliveryLog::advance_delivery`]).
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
pub enum CursorChange<'a> {
    /// Create the config's cursor at the append's `expected`, unless it
    /// exists.
    Set(&'a str),
    /// Remove the config's cursor.
    Delete(&'a str),
}

/// The cursor changes of `req`, in order (none for most appends).
/// `ended`: the task was terminal before `req`, so a config it sets
/// receives nothing and gets no cursor.
pub fn cursor_changes(req: &AppendRequest, ended: bool) -> impl Iterator<Item = CursorChange<'_>> {
    req.records.iter().filter_map(move |r| match r {
        Record::PushConfigSet { .. } if ended => None,
        Record::PushConfigSet { config } => Some(CursorChange::Set(&config.id)),
        Record::PushConfigDeleted { id } => Some(CursorChange::Delete(id)),
        _ => None,
    })
}

/// `req` changes cursors.
pub fn changes_cursors(req: &AppendRequest) -> bool {
    cursor_changes(req, false).next().is_some()
}

/// The terminal states' numbers, as an SQL list (checked by a test).
pub const TERMINAL_STATES_SQL: &str = "(3, 4, 5, 7)";

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
        let ended: Vec<_> = cursor_changes(&req, true)
            .map(|c| matches!(c, CursorChange::Delete(_)))
            .collect();
        assert_eq!(ended, [true], "a terminal task's new config gets no cursor");
        let got: Vec<_> = cursor_changes(&req, false)
            .map(|c| match c {
                CursorChange::Set(id) => format!("+{id}"),
                CursorChange::Delete(id) => format!("-{id}"),
            })
            .collect();
        assert_eq!(got, ["+p", "-q"]);
        assert!(changes_cursors(&req));
    }
}
