//! [`TaskStore`]: the three parts of a backend (records, recovery scan,
//! push deliveries) as the engine and its cores are given them.

use std::fmt;
use std::sync::Arc;

use super::{Appended, DeliveryLog, LiveTaskScan, Observed, TaskLog};

/// A backend's [`TaskLog`], [`LiveTaskScan`] and [`DeliveryLog`], shared.
///
/// Every built-in backend is all three, so `TaskStore::from(log)` (or any
/// API taking `impl Into<TaskStore>`) takes it whole. A wrapper of the
/// records alone replaces them with [`map_records`](Self::map_records): it
/// implements the six record methods and nothing else, and recovery and
/// push deliveries still reach the backend (recovery's closing appends go
/// through the wrapper, as every write does). A wrapper that only watches
/// commits is a closure, [`observe`](Self::observe).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let commits = Arc::new(AtomicUsize::new(0));
/// let seen = commits.clone();
/// let store = TaskStore::from(MemoryTaskLog::new())
///     .observe(move |_authority, _appended| {
///         seen.fetch_add(1, Ordering::Relaxed);
///     });
/// store
///     .records()
///     .append(AppendRequest::create("public", "t-1", vec![Record::created("t-1", "c-1")]))
///     .await
///     .unwrap();
/// assert_eq!(commits.load(Ordering::Relaxed), 1);
/// // Recovery sees the same backend.
/// assert_eq!(store.live().live_tasks(None, 10).await.unwrap().len(), 1);
/// # });
/// ```
#[derive(Clone)]
pub struct TaskStore {
    records: Arc<dyn TaskLog>,
    live: Arc<dyn LiveTaskScan>,
    deliveries: Arc<dyn DeliveryLog>,
}

impl fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskStore").finish_non_exhaustive()
    }
}

/// A whole backend: its [`TaskLog`], [`LiveTaskScan`] and [`DeliveryLog`]
/// in one object, for a host that picks its backend at run time
/// (`Arc<dyn TaskBackend>`) or a test suite run against every backend.
/// Every type that is all three is one.
///
/// ```
/// use std::sync::Arc;
/// use a2a_tower::log::{MemoryTaskLog, TaskBackend, TaskStore};
/// let backend: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
/// let store = TaskStore::from(backend);
/// # let _ = store;
/// ```
pub trait TaskBackend: TaskLog + LiveTaskScan + DeliveryLog {}

impl<L: TaskLog + LiveTaskScan + DeliveryLog + ?Sized> TaskBackend for L {}

impl<L: TaskLog + LiveTaskScan + DeliveryLog> From<L> for TaskStore {
    fn from(log: L) -> Self {
        let log = Arc::new(log);
        Self {
            records: log.clone(),
            live: log.clone(),
            deliveries: log,
        }
    }
}

impl TaskStore {
    /// A store of three parts (usually views of one backend).
    pub fn from_parts(
        records: Arc<dyn TaskLog>,
        live: Arc<dyn LiveTaskScan>,
        deliveries: Arc<dyn DeliveryLog>,
    ) -> Self {
        Self {
            records,
            live,
            deliveries,
        }
    }

    /// The task records.
    pub fn records(&self) -> &Arc<dyn TaskLog> {
        &self.records
    }

    /// The recovery scan.
    pub fn live(&self) -> &Arc<dyn LiveTaskScan> {
        &self.live
    }

    /// The push deliveries' cursors and leases.
    pub fn deliveries(&self) -> &Arc<dyn DeliveryLog> {
        &self.deliveries
    }

    /// The store with its records wrapped by `wrap` (given the current
    /// records); the scan and the deliveries stay.
    #[must_use]
    pub fn map_records<L: TaskLog>(mut self, wrap: impl FnOnce(Arc<dyn TaskLog>) -> L) -> Self {
        self.records = Arc::new(wrap(self.records));
        self
    }

    /// The store with `on_commit` called after each committed append (see
    /// [`Observed`]).
    #[must_use]
    pub fn observe(self, on_commit: impl Fn(&str, &Appended) + Send + Sync + 'static) -> Self {
        self.map_records(|records| Observed::new(records, on_commit))
    }

    /// The store with the secrets of every push config (`token`,
    /// `authentication.credentials`) sealed by `key` in the backend and
    /// opened when read (see [`seal`](crate::seal)). Put it in before
    /// anything that reads configs (the push outbox, the engine).
    #[cfg(feature = "seal")]
    #[cfg_attr(docsrs, doc(cfg(feature = "seal")))]
    #[must_use]
    pub fn seal_push_secrets(self, key: crate::PushSecretKey) -> Self {
        self.map_records(|records| crate::SealedPushSecrets::new(records, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppendRequest, MemoryTaskLog, Record};

    #[tokio::test]
    async fn mapped_records_keep_the_backends_scan_and_deliveries() {
        let memory = Arc::new(MemoryTaskLog::new());
        let store = TaskStore::from(memory.clone())
            .map_records(|records| Observed::new(records, |_, _| {}));
        store
            .records()
            .append(AppendRequest::create(
                "a",
                "t",
                vec![Record::created("t", "c")],
            ))
            .await
            .unwrap();
        assert_eq!(store.live().live_tasks(None, 5).await.unwrap().len(), 1);
        assert!(
            store
                .deliveries()
                .pending_deliveries(None, 5)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(memory.snapshot("a", "t").await.is_ok());
    }
}
