//! A queued entry, its [`Priority`], and the one comparator that orders a
//! context's queue.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// How urgent an input is (`queue.priority` metadata: `"urgent"` or
/// `"normal"`, the default). Agent-originated inputs (handoffs) are always
/// normal.
///
/// ```
/// use a2a_tower::queue::Priority;
/// assert_eq!(Priority::parse("urgent"), Some(Priority::Urgent));
/// assert_eq!(Priority::parse("URGENT"), None);
/// assert!(Priority::Urgent < Priority::Normal, "urgent sorts first");
/// ```
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Before every normal entry.
    Urgent,
    /// Arrival order among normal entries.
    #[default]
    Normal,
}

impl Priority {
    /// The priority named by its metadata value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "urgent" => Some(Self::Urgent),
            "normal" => Some(Self::Normal),
            _ => None,
        }
    }

    /// The metadata value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Urgent => "urgent",
            Self::Normal => "normal",
        }
    }
}

/// One input waiting in a context's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The queued task.
    pub task_id: String,
    /// The named agent, if the sender named one.
    pub target: Option<String>,
    /// Its priority.
    pub priority: Priority,
    /// Its manual position, if it has one.
    pub position: Option<i64>,
    /// Its arrival: the sequence number of its `Entered` record.
    pub arrival: u64,
    /// How many handoffs led to it.
    pub hops: u32,
}

impl Entry {
    /// The comparator, and nothing else: manual position first (entries with
    /// one before entries without, lower first), then urgent before normal,
    /// then arrival order, then task id.
    pub fn order(&self, other: &Self) -> Ordering {
        let manual = |e: &Self| (e.position.is_none(), e.position.unwrap_or(0));
        manual(self)
            .cmp(&manual(other))
            .then(self.priority.cmp(&other.priority))
            .then(self.arrival.cmp(&other.arrival))
            .then_with(|| self.task_id.cmp(&other.task_id))
    }

    /// The entry's key in an ordered map (the comparator as a value).
    pub(crate) fn key(&self) -> Key {
        Key {
            unplaced: self.position.is_none(),
            position: self.position.unwrap_or(0),
            priority: self.priority,
            arrival: self.arrival,
            task_id: self.task_id.clone(),
        }
    }
}

/// [`Entry::order`] as a key: its derived order is the comparator's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    unplaced: bool,
    position: i64,
    priority: Priority,
    arrival: u64,
    task_id: String,
}

impl Key {
    /// The entry's task.
    pub(crate) fn task_id(&self) -> &str {
        &self.task_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, position: Option<i64>, priority: Priority, arrival: u64) -> Entry {
        Entry {
            task_id: id.into(),
            target: None,
            priority,
            position,
            arrival,
            hops: 0,
        }
    }

    #[test]
    fn the_key_orders_as_the_comparator() {
        use Priority::{Normal, Urgent};
        let entries = [
            entry("a", None, Normal, 1),
            entry("b", None, Urgent, 2),
            entry("c", Some(5), Normal, 3),
            entry("d", Some(-1), Normal, 4),
            entry("e", None, Normal, 1),
            entry("f", Some(5), Urgent, 9),
        ];
        for x in &entries {
            for y in &entries {
                assert_eq!(
                    x.order(y),
                    x.key().cmp(&y.key()),
                    "{} vs {}",
                    x.task_id,
                    y.task_id
                );
            }
        }
        let mut sorted = entries.to_vec();
        sorted.sort_by(Entry::order);
        let ids: Vec<_> = sorted.iter().map(|e| e.task_id.as_str()).collect();
        assert_eq!(ids, ["d", "f", "c", "b", "a", "e"]);
    }
}
