//! The push-notification outbox: delivers every committed event of a task
//! to each of its push configs, in order per config, so that a committed
//! event is never silently lost.
//!
//! The [task log](crate::log) is the outbox: an event to deliver is a record
//! committed with the task, and the log keeps, per push config, a delivery
//! cursor (the last record delivered) and, per task, a delivery lease (see
//! the [log's rules](crate::log#push-delivery)). The [`Outbox`] drives
//! delivery:
//!
//! - **Triggers.** [`Outbox::store`] observes the log the engine writes to: after
//!   each commit of a task that has push configs, the task is driven at once
//!   (in the background: the writer never waits). [`Outbox::start`] sweeps
//!   the log at start-up and then periodically for tasks with pending
//!   deliveries: it retries after a crash and takes over from a dead host.
//! - **One host per task.** A drive first claims the task's lease and renews
//!   it while it delivers; a host that lost it cannot advance a cursor. On
//!   a shared PostgreSQL log, exactly one host delivers each event; another
//!   takes over once a dead host's lease expired.
//! - **Order per config, configs independent.** Each config's events go out
//!   one after another, each after the previous one's outcome; configs are
//!   delivered concurrently, so a slow webhook delays only its own config.
//! - **The events** are those SubscribeToTask streams (status and artifact
//!   updates), plus the task as created (SUBMITTED, with the message that
//!   created it) when the config was given with the
//!   message that created it.
//! - **At least once, exactly once in the normal case.** A cursor advances
//!   after each outcome ([`Delivery::Delivered`] or [`Delivery::GaveUp`]
//!   after the sender's own retries); an event whose outcome was not
//!   recorded (a crash, a lost lease mid-delivery) is delivered again, so
//!   receivers should be idempotent, as the specification says.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use a2a_tower::log::{AppendRequest, MemoryTaskLog, Record, TaskLog};
//! use a2a_tower::push::outbox::{Deliver, Delivery, Outbox};
//! use a2a_tower::types::{StreamResponse, TaskPushNotificationConfig, TaskState, TaskStatus};
//!
//! #[derive(Clone, Default)]
//! struct Recorder(Arc<Mutex<Vec<(String, StreamResponse)>>>);
//! impl Deliver for Recorder {
//!     async fn deliver(&self, config: &TaskPushNotificationConfig, event: &StreamResponse) -> Delivery {
//!         self.0.lock().unwrap().push((config.id.clone(), event.clone()));
//!         Delivery::Delivered
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let sent = Recorder::default();
//! let outbox = Outbox::builder(MemoryTaskLog::new(), sent.clone()).host_id("host-1").build().unwrap();
//! let _sweeper = outbox.start();
//! // The engine would be given `outbox.store()`; here we append to its records directly.
//! let store = outbox.store();
//! let log = store.records();
//! let config = TaskPushNotificationConfig { id: "p-1".into(), task_id: "t-1".into(), url: "https://example.com/hook".into(), ..Default::default() };
//! log.append(AppendRequest::create("public", "t-1", vec![
//!     Record::created("t-1", "c-1"),
//!     Record::PushConfigSet { config },
//! ])).await.unwrap();
//! log.append(AppendRequest::new("public", "t-1", 2, 1, vec![
//!     Record::status(TaskStatus::new(TaskState::Completed)),
//! ])).await.unwrap();
//! while sent.0.lock().unwrap().len() < 2 {
//!     tokio::time::sleep(std::time::Duration::from_millis(5)).await;
//! }
//! let sent = sent.0.lock().unwrap();
//! assert!(matches!(sent[0].1, StreamResponse::Task(_)));
//! assert!(matches!(&sent[1].1, StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Completed));
//! # });
//! ```

mod deliver;
mod drive;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

pub use self::deliver::{Deliver, Delivery};

use self::deliver::DynDeliver;
use crate::ConfigError;
use crate::log::{DeliveryLog, LiveTaskScan, LogError, TaskLog, TaskStore};

/// The push-notification delivery driver (see the [module docs](self)).
/// Cloning shares it.
#[derive(Clone)]
pub struct Outbox {
    inner: Arc<Inner>,
}

impl fmt::Debug for Outbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox")
            .field("host_id", &self.inner.holder)
            .field("lease", &self.inner.lease)
            .field("sweep_every", &self.inner.sweep_every)
            .finish_non_exhaustive()
    }
}

struct Inner {
    log: Arc<dyn TaskLog>,
    live: Arc<dyn LiveTaskScan>,
    deliveries: Arc<dyn DeliveryLog>,
    deliver: Box<dyn DynDeliver>,
    /// The lease holder: this host's id.
    holder: String,
    lease: Duration,
    sweep_every: Duration,
    page: usize,
    /// Tasks driven at once.
    drives: Arc<Semaphore>,
    /// The tasks being driven on this host.
    active: Mutex<HashMap<(String, String), Arc<Active>>>,
}

/// A task being driven: notified again while it runs.
#[derive(Debug, Default)]
struct Active {
    dirty: AtomicBool,
    wake: Notify,
}

/// The settings of an [`Outbox`].
#[must_use]
pub struct OutboxBuilder {
    store: TaskStore,
    deliver: Box<dyn DynDeliver>,
    host_id: String,
    lease: Duration,
    sweep_every: Duration,
    page: usize,
    concurrency: usize,
}

impl fmt::Debug for OutboxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboxBuilder")
            .field("host_id", &self.host_id)
            .finish_non_exhaustive()
    }
}

impl OutboxBuilder {
    /// This host's id, the holder of the leases it takes (default
    /// [`DEFAULT_HOST_ID`](crate::engine::DEFAULT_HOST_ID)). Hosts sharing a
    /// log need distinct ids; a restarted host that keeps its id resumes its
    /// own leases at once instead of waiting for them to expire.
    pub fn host_id(mut self, id: impl Into<String>) -> Self {
        self.host_id = id.into();
        self
    }

    /// How long a claimed task stays leased without renewal (default 30 s;
    /// renewed every third of it while delivering): how soon another host
    /// takes a dead host's deliveries over.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How often the log is swept for pending deliveries (default 5 s).
    pub fn sweep_every(mut self, every: Duration) -> Self {
        self.sweep_every = every;
        self
    }

    /// Pending tasks read per page when sweeping (default 256).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page = n;
        self
    }

    /// Tasks delivered at once on this host (default 256); the others wait.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n;
        self
    }

    /// The outbox; a [`ConfigError`] for an empty host id, or a zero lease,
    /// sweep period, page size or concurrency.
    pub fn build(self) -> Result<Outbox, ConfigError> {
        if self.host_id.is_empty() {
            return Err(ConfigError::new("the outbox's host id is empty"));
        }
        if self.lease < Duration::from_millis(3) || self.sweep_every.is_zero() {
            return Err(ConfigError::new(
                "the outbox's lease (at least 3 ms) and sweep period must not be zero",
            ));
        }
        if self.page == 0 || self.concurrency == 0 {
            return Err(ConfigError::new(
                "the outbox's page size and concurrency must not be zero",
            ));
        }
        Ok(Outbox {
            inner: Arc::new(Inner {
                log: self.store.records().clone(),
                live: self.store.live().clone(),
                deliveries: self.store.deliveries().clone(),
                deliver: self.deliver,
                holder: self.host_id,
                lease: self.lease,
                sweep_every: self.sweep_every,
                page: self.page,
                drives: Arc::new(Semaphore::new(self.concurrency)),
                active: Mutex::new(HashMap::new()),
            }),
        })
    }
}

/// The periodic sweep of [`Outbox::start`]; stops when dropped.
#[derive(Debug)]
#[must_use = "the sweep stops when the Sweeper is dropped"]
pub struct Sweeper(tokio::task::JoinHandle<()>);

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Outbox {
    /// An outbox delivering the events of `store` through `deliver`.
    pub fn builder<D: Deliver>(store: impl Into<TaskStore>, deliver: D) -> OutboxBuilder {
        OutboxBuilder {
            store: store.into(),
            deliver: Box::new(deliver),
            host_id: crate::engine::DEFAULT_HOST_ID.to_owned(),
            lease: Duration::from_secs(30),
            sweep_every: Duration::from_secs(5),
            page: 256,
            concurrency: 256,
        }
    }

    /// The store to give the engine (and anything else that commits
    /// tasks): the outbox's store, whose records are [observed](TaskStore::observe)
    /// so that a commit that leaves its task with push configs (from any
    /// writer: executions, cancels, recovery, the queue, the managed layer)
    /// drives the task's deliveries in the background. Commits by other
    /// processes are found by the sweep.
    pub fn store(&self) -> TaskStore {
        let outbox = self.clone();
        TaskStore::from_parts(
            self.inner.log.clone(),
            self.inner.live.clone(),
            self.inner.deliveries.clone(),
        )
        .observe(move |authority, appended| {
            if !appended.snapshot.projection.push_configs().is_empty() {
                outbox.notify(authority, &appended.snapshot.task.id);
            }
        })
    }

    /// Drives the task's pending deliveries in the background (coalesced
    /// with a drive already running on this host). Outside a Tokio runtime
    /// it does nothing (the sweep finds the task).
    pub fn notify(&self, authority: &str, task_id: &str) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let key = (authority.to_owned(), task_id.to_owned());
        let mut active = lock(&self.inner.active);
        if let Some(a) = active.get(&key) {
            a.dirty.store(true, Ordering::SeqCst);
            a.wake.notify_one();
            return;
        }
        let a = Arc::new(Active::default());
        active.insert(key.clone(), a.clone());
        drop(active);
        // A child of the commit's span (the call or execution that appended),
        // so the deliveries it makes carry that trace.
        let span = tracing::info_span!("a2a.push.drive", task_id = %key.1);
        rt.spawn(tracing::Instrument::instrument(
            drive::drive(self.inner.clone(), key, a),
            span,
        ));
    }

    /// One pass over the log: drives every task with pending deliveries;
    /// returns how many were found.
    pub async fn sweep(&self) -> Result<usize, LogError> {
        let mut after: Option<(String, String)> = None;
        let mut found = 0;
        loop {
            let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
            let page = self
                .inner
                .deliveries
                .pending_deliveries(key, self.inner.page)
                .await?;
            for p in &page {
                self.notify(&p.authority, &p.task_id);
            }
            found += page.len();
            match page.last() {
                Some(last) if page.len() >= self.inner.page => {
                    after = Some((last.authority.clone(), last.task_id.clone()));
                }
                _ => return Ok(found),
            }
        }
    }

    /// Sweeps now, then every [`sweep_every`](OutboxBuilder::sweep_every),
    /// until the returned [`Sweeper`] is dropped. A failed sweep is traced
    /// (its kind only) and tried again at the next period.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn start(&self) -> Sweeper {
        let outbox = self.clone();
        Sweeper(tokio::spawn(async move {
            let mut tick = Self::ticks(outbox.inner.sweep_every);
            loop {
                tick.tick().await;
                outbox.sweep_traced().await;
            }
        }))
    }

    /// Like [`start`](Self::start), but the sweep stops by itself once
    /// nothing uses the outbox any more (no clone of it and no
    /// [`store`](Self::store) of it left): for an outbox that lives as long as
    /// the engine it was given to.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn start_while_used(&self) {
        let inner = Arc::downgrade(&self.inner);
        let every = self.inner.sweep_every;
        tokio::spawn(async move {
            let mut tick = Self::ticks(every);
            loop {
                tick.tick().await;
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                Outbox { inner }.sweep_traced().await;
            }
        });
    }

    fn ticks(every: Duration) -> tokio::time::Interval {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick
    }

    async fn sweep_traced(&self) {
        if let Err(e) = self.sweep().await {
            tracing::warn!(target: "a2a_tower::push", kind = ?e.kind(), "outbox sweep failed");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::MemoryTaskLog;

    struct Nop;
    impl Deliver for Nop {
        async fn deliver(
            &self,
            _: &crate::types::TaskPushNotificationConfig,
            _: &crate::types::StreamResponse,
        ) -> Delivery {
            Delivery::Delivered
        }
    }

    #[test]
    fn bad_settings_are_config_errors() {
        let b = || Outbox::builder(MemoryTaskLog::new(), Nop);
        assert!(b().build().is_ok());
        assert!(b().host_id("").build().is_err());
        assert!(b().lease(Duration::ZERO).build().is_err());
        assert!(b().sweep_every(Duration::ZERO).build().is_err());
        assert!(b().page_size(0).build().is_err());
        assert!(b().concurrency(0).build().is_err());
    }

    #[tokio::test]
    async fn a_sweep_while_used_stops_with_the_outbox() {
        let outbox = Outbox::builder(MemoryTaskLog::new(), Nop)
            .sweep_every(Duration::from_millis(1))
            .build()
            .unwrap();
        let weak = Arc::downgrade(&outbox.inner);
        outbox.start_while_used();
        tokio::time::sleep(Duration::from_millis(5)).await;
        drop(outbox);
        for _ in 0..200 {
            if weak.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("the sweep kept the outbox alive");
    }

    #[test]
    fn notify_outside_a_runtime_does_nothing() {
        let outbox = Outbox::builder(MemoryTaskLog::new(), Nop).build().unwrap();
        outbox.notify("a", "t");
        assert!(lock(&outbox.inner.active).is_empty());
    }
}
