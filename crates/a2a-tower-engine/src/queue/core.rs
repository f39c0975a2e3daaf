//! [`Core`]: what the queue's services share, and how a drain is started.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::closing::Settle;
use super::drain;
use super::stream::{Slot, Slots};
use super::team::Team;
use crate::engine::Shared;
use crate::engine::ride::Rider;
use crate::engine::writer::Writer;

/// The engine's shared state, the team, and this host's contexts.
pub(crate) struct Core {
    pub(crate) shared: Arc<Shared>,
    pub(crate) team: Team,
    pub(crate) slots: Slots,
    /// What the closing commits of the runs the queue admits carry.
    pub(crate) rider: Arc<dyn Rider>,
}

impl Core {
    /// The core over the engine's `shared` state; every execution's end
    /// keeps the task it ended with (if terminal) for its settlement, then
    /// drains its context, unless its closing commit settled it (`closing`:
    /// that commit did what the head could do next).
    pub(crate) fn new(mut shared: Shared, team: Team) -> Arc<Self> {
        Arc::new_cyclic(|me: &Weak<Self>| {
            let rider = Arc::new(Settle { core: me.clone() });
            let me = me.clone();
            shared.appends = true;
            shared.on_end = Some(Arc::new(move |writer: &Writer| {
                if writer.carried() {
                    return;
                }
                if let Some(core) = me.upgrade() {
                    let slot = core.slots.get(&writer.authority, &writer.context_id);
                    if let Some(task) = writer.ended().filter(|t| t.status.state.is_terminal()) {
                        slot.run_ended(task);
                    }
                    core.wake(slot);
                }
            }));
            Self {
                shared: Arc::new(shared),
                team,
                slots: Slots::default(),
                rider,
            }
        })
    }

    /// The head of the context may have changed: drain it, or make the
    /// running drain pass once more.
    ///
    /// A pass that fails (a log error: a PostgreSQL connection lost, a busy
    /// SQLite file, or more lost races than a pass allows) is run again after
    /// a backoff ([`RETRY_FIRST`] doubling to [`RETRY_MAX`]) until one
    /// succeeds, whether or not another event comes: a transient error never
    /// leaves a context resting with an executable head and no run. The
    /// retries end with the team (the drain holds it only while it passes).
    pub(crate) fn notify(self: &Arc<Self>, authority: &str, context_id: &str) {
        self.wake(self.slots.get(authority, context_id));
    }

    /// [`notify`](Self::notify) for a context's slot.
    pub(crate) fn wake(self: &Arc<Self>, slot: Arc<Slot>) {
        if !slot.gate.notify() {
            return;
        }
        let core = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut backoff = RETRY_FIRST;
            loop {
                let Some(strong) = core.upgrade() else {
                    return;
                };
                let passed = drain::pass(&strong, &slot).await;
                drop(strong);
                if let Err(e) = passed {
                    tracing::warn!(
                        error.kind = %e.kind(),
                        retry_ms = backoff.as_millis() as u64,
                        "delivery queue drain failed; passing again"
                    );
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(RETRY_MAX);
                    continue;
                }
                backoff = RETRY_FIRST;
                if !slot.gate.finish_pass() {
                    break;
                }
            }
        });
    }
}

/// The wait before a failed drain pass is run again the first time.
pub(crate) const RETRY_FIRST: Duration = Duration::from_millis(10);

/// The longest wait between two failed drain passes.
pub(crate) const RETRY_MAX: Duration = Duration::from_secs(5);
