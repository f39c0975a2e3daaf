//! [`TaskLayer`]: configuration of the task engine.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use super::authority::Authority;
use super::service::TaskService;
use super::writer::Registry;
use crate::ConfigError;
use crate::log::{LiveTaskScan, TaskLog, TaskStore};
use crate::types::AgentCard;

/// Everything the engine's services share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) card: Arc<AgentCard>,
    pub(crate) log: Arc<dyn TaskLog>,
    /// The recovery scan of the log's backend.
    pub(crate) live: Arc<dyn LiveTaskScan>,
    pub(crate) authority: Authority,
    pub(crate) inactivity_timeout: Option<Duration>,
    /// The lag limit a host set explicitly; `None`: never cut a reader.
    pub(crate) subscriber_buffer: Option<usize>,
    pub(crate) shutdown_grace: Duration,
    pub(crate) registry: Arc<Registry>,
    /// Declared input modes (card defaults and skills); empty: any.
    pub(crate) input_modes: Vec<String>,
    /// Declared output modes (card defaults and skills); empty: any.
    pub(crate) output_modes: Vec<String>,
    /// The id recorded with every execution of this host.
    pub(crate) host_id: Arc<str>,
    /// Called when an execution of this host is over (its final status
    /// committed, or none to commit), with its writer, once the registry
    /// has let it go: the delivery queue settles its run and drains its
    /// context.
    pub(crate) on_end: Option<Arc<EndHook>>,
    /// Executions take appended messages (a team): each gets an input
    /// channel; otherwise none is made.
    pub(crate) appends: bool,
}

/// See [`Shared::on_end`]: the ended execution's writer.
pub(crate) type EndHook = dyn Fn(&super::writer::Writer) + Send + Sync;

/// The task engine as a [`Layer`]: wraps an inner `Service<Execution>` (the
/// executor, see [`ExecutorService`](super::ExecutorService) and
/// [`AgentExecutor`](super::AgentExecutor)) into a [`TaskService`], a complete
/// `Service<A2aRequest>`.
///
/// The card decides the capabilities the engine serves: `streaming`
/// (SendStreamingMessage, SubscribeToTask), `extendedAgentCard`, and the
/// input/output modes checked on every send, and `pushNotifications` (the
/// four push-config operations and SendMessage's inline config, stored with
/// the task: see the [module docs](super#push-notification-configs)). The
/// engine stores configs; delivering them is the job of the push outbox over
/// its log, which is why [`A2aServer`](https://docs.rs/a2a-tower/latest/a2a_tower/server/struct.A2aServer.html) accepts such
/// a card only with `push_notifications(sender)`. `extendedAgentCard` is
/// answered by an [`ExtendedCardLayer`](https://docs.rs/a2a-tower/latest/a2a_tower/card/struct.ExtendedCardLayer.html) in
/// front of the engine (without one: ExtendedAgentCardNotConfigured).
///
/// Defaults: authority [`Authority::public`] (one shared authority: for
/// unauthenticated examples only), no inactivity timeout, no subscriber lag
/// limit (a slow reader continues from the log at its cursor), a shutdown
/// grace of 5 s.
#[derive(Clone)]
#[must_use]
pub struct TaskLayer {
    shared: Shared,
}

impl fmt::Debug for TaskLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLayer")
            .field("agent", &self.shared.card.name)
            .field("inactivity_timeout", &self.shared.inactivity_timeout)
            .field("subscriber_buffer", &self.shared.subscriber_buffer)
            .field("host_id", &self.shared.host_id)
            .finish_non_exhaustive()
    }
}

fn modes(
    card: &AgentCard,
    pick: impl Fn(&crate::types::AgentSkill) -> &Vec<String>,
) -> Vec<String> {
    let mut all = Vec::new();
    for m in card.skills.iter().flat_map(pick) {
        if !all.contains(m) {
            all.push(m.clone());
        }
    }
    all
}

impl TaskLayer {
    /// The engine for `card`, storing tasks in `store` (any built-in log,
    /// or a [`TaskStore`] whose records a host wrapped).
    pub fn new(card: AgentCard, store: impl Into<TaskStore>) -> Result<Self, ConfigError> {
        let store = store.into();
        let mut input_modes = card.default_input_modes.clone();
        for m in modes(&card, |s| &s.input_modes) {
            if !input_modes.contains(&m) {
                input_modes.push(m);
            }
        }
        let mut output_modes = card.default_output_modes.clone();
        for m in modes(&card, |s| &s.output_modes) {
            if !output_modes.contains(&m) {
                output_modes.push(m);
            }
        }
        Ok(Self {
            shared: Shared {
                card: Arc::new(card),
                log: store.records().clone(),
                live: store.live().clone(),
                authority: Authority::public(),
                inactivity_timeout: None,
                subscriber_buffer: None,
                shutdown_grace: Duration::from_secs(5),
                registry: Arc::new(Registry::default()),
                input_modes,
                output_modes,
                host_id: Arc::from(super::recovery::DEFAULT_HOST_ID),
                on_end: None,
                appends: false,
            },
        })
    }

    /// The engine's shared state, for a core built beside the engine.
    pub(crate) fn into_shared(self) -> Shared {
        self.shared
    }

    /// The id of this host (default [`DEFAULT_HOST_ID`](super::DEFAULT_HOST_ID)),
    /// recorded with every execution it starts. Hosts sharing a log (several
    /// processes over one PostgreSQL database) need distinct, stable ids:
    /// [`recover`](Self::recover) closes only the live tasks of its own id.
    /// A restarted host must keep its id to recover its tasks.
    pub fn host_id(mut self, id: impl Into<String>) -> Result<Self, ConfigError> {
        let id = id.into();
        if id.is_empty() {
            return Err(ConfigError::new("host id must not be empty"));
        }
        self.shared.host_id = Arc::from(id);
        Ok(self)
    }

    /// Start-up recovery: closes as FAILED (with
    /// [`RESTARTED_MESSAGE`](super::RESTARTED_MESSAGE)) every task this host
    /// id was running when its process died. Call it once before serving;
    /// executions running in this engine are never touched, so a later call
    /// is harmless. Each task is closed exactly once even when several hosts
    /// of the same id recover at once; tasks waiting for input and tasks of
    /// other hosts are left alone. See [the recovery rules](super#restart-recovery).
    pub async fn recover(&self) -> Result<super::Recovered, crate::log::LogError> {
        super::recovery::recover(&self.shared).await
    }

    /// How the authority of a call is derived (default [`Authority::public`]).
    pub fn authority(mut self, authority: Authority) -> Self {
        self.shared.authority = authority;
        self
    }

    /// Fails (and cancels) an execution that emits nothing for this long.
    pub fn inactivity_timeout(mut self, timeout: Duration) -> Result<Self, ConfigError> {
        if timeout.is_zero() {
            return Err(ConfigError::new("inactivity timeout must be positive"));
        }
        self.shared.inactivity_timeout = Some(timeout);
        Ok(self)
    }

    /// Cuts off a subscriber that falls more than `events` records behind the
    /// task's head, with an `Unavailable` error event (by default there is no
    /// limit). Subscribers read the log at their own pace, page by page, so
    /// a slow one costs about a page of memory and delays nobody; this limit
    /// is for a host that wants lagging readers gone anyway.
    pub fn subscriber_buffer(mut self, events: usize) -> Result<Self, ConfigError> {
        if events == 0 {
            return Err(ConfigError::new("subscriber buffer must be at least 1"));
        }
        self.shared.subscriber_buffer = Some(events);
        Ok(self)
    }

    /// How long an executor may keep running after its task closed
    /// (terminal, interrupted, canceled) before it is aborted (default 5 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shared.shutdown_grace = grace;
        self
    }
}

impl<S> Layer<S> for TaskLayer {
    type Service = TaskService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        TaskService::new(Arc::new(self.shared.clone()), inner)
    }
}
