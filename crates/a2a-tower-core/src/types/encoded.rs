//! A wire value with the ProtoJSON its producer has already written.
//!
//! The memory log writes a terminal task's ProtoJSON when it packs it, and
//! the answer to the SendMessage that completed the task is that same task:
//! [`Encoded`] carries those bytes beside the value, so that the JSON-RPC and
//! HTTP+JSON bindings write them instead of serializing the task again.
//!
//! The bytes can never disagree with the value: reads go through `Deref`,
//! and every way to change the value (`DerefMut`, [`Encoded::into_inner`])
//! drops them first. A layer that redacts a part in place has its
//! redaction on the wire; only a value nobody touched is written from its
//! bytes. Serialization through serde always writes the value.
//!
//! ```
//! use a2a_tower::types::{Encoded, Task};
//! let task = Task { id: "t-1".into(), context_id: "c-1".into(), ..Default::default() };
//! let json = serde_json::to_vec(&task).unwrap();
//! let mut e = Encoded::with_json(task, json.into());
//! assert_eq!(e.id, "t-1"); // a read keeps the bytes
//! assert!(e.json().is_some());
//! e.metadata = None; // a write drops them, even one that changes nothing
//! assert!(e.json().is_none());
//! assert_eq!(
//!     serde_json::to_string(&e).unwrap(),
//!     r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_UNSPECIFIED"}}"#
//! );
//! ```

use std::fmt;
use std::ops::{Deref, DerefMut};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A value and, when its producer had them at hand, its ProtoJSON bytes,
/// which the JSON bindings write in place of serializing the value. Reads
/// go through `Deref`; any mutable access or [`into_inner`](Self::into_inner)
/// drops the bytes, so they always repeat the value as it is.
///
/// ```
/// use a2a_tower::types::{Encoded, Task};
/// let mut task: Encoded<Task> = Task::default().into();
/// assert!(task.json().is_none()); // built without its JSON
/// task.id = "t-1".into();
/// assert_eq!(task.into_inner().id, "t-1");
/// ```
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Encoded<T> {
    value: T,
    #[serde(skip)]
    json: Option<Bytes>,
}

impl<T: Serialize> Encoded<T> {
    /// `value` with `json`, which must be its ProtoJSON exactly as
    /// `a2a_tower_core::json::to_vec(&value)` writes it (checked in debug
    /// builds): a binding writes these bytes in place of the value.
    pub fn with_json(value: T, json: Bytes) -> Self {
        debug_assert!(
            crate::json::to_vec(&value).is_ok_and(|v| v == json[..]),
            "the bytes given to Encoded::with_json are not the value's JSON"
        );
        Self {
            value,
            json: Some(json),
        }
    }
}

impl<T> Encoded<T> {
    /// The value's ProtoJSON, unless the value was built without it or has
    /// been open to change since.
    pub fn json(&self) -> Option<&Bytes> {
        self.json.as_ref()
    }

    /// The value (its bytes are dropped).
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> From<T> for Encoded<T> {
    fn from(value: T) -> Self {
        Self { value, json: None }
    }
}

impl<T> Deref for Encoded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Encoded<T> {
    /// The value, open to change: its bytes are dropped.
    fn deref_mut(&mut self) -> &mut T {
        self.json = None;
        &mut self.value
    }
}

/// Equal when the values are (the bytes only repeat the value).
impl<T: PartialEq> PartialEq for Encoded<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: PartialEq> PartialEq<T> for Encoded<T> {
    fn eq(&self, other: &T) -> bool {
        self.value == *other
    }
}

/// The value's `Debug` (the bytes only repeat it).
impl<T: fmt::Debug> fmt::Debug for Encoded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Part, Task, TaskState};

    fn task() -> Task {
        let mut t = Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            ..Default::default()
        };
        t.status.state = TaskState::Completed;
        t
    }

    fn encoded() -> Encoded<Task> {
        let t = task();
        let json = crate::json::to_vec(&t).unwrap();
        Encoded::with_json(t, json.into())
    }

    #[test]
    fn reads_keep_the_bytes_and_every_change_drops_them() {
        let e = encoded();
        assert_eq!(e.status.state, TaskState::Completed);
        let copy = e.clone();
        assert!(e.json().is_some() && copy.json().is_some());

        let mut changed = e.clone();
        changed.artifacts.push(Default::default());
        assert!(changed.json().is_none());

        let mut redacted = e.clone();
        if let Some(m) = redacted.history.first_mut() {
            m.parts = vec![Part::text("redacted")];
        }
        assert!(redacted.json().is_none(), "a mutable borrow is a change");

        let moved: Task = e.into_inner();
        assert_eq!(Encoded::from(moved).json(), None);
    }

    #[test]
    fn the_wire_is_the_value_s() {
        let e = encoded();
        let via_serde = serde_json::to_vec(&e).unwrap();
        assert_eq!(via_serde, serde_json::to_vec(&task()).unwrap());
        assert_eq!(e.json().unwrap()[..], via_serde[..]);
        let back: Encoded<Task> = serde_json::from_slice(&via_serde).unwrap();
        assert_eq!(back, e);
        assert_eq!(back, task());
        assert!(back.json().is_none(), "decoded values carry no bytes");
        assert_eq!(format!("{e:?}"), format!("{:?}", task()));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not the value's JSON")]
    fn bytes_of_another_value_are_refused_in_debug_builds() {
        let _ = Encoded::with_json(task(), Bytes::from_static(b"{}"));
    }
}
