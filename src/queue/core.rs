//! [`Core`]: what the queue's services share, and how a drain is started.

use std::sync::{Arc, Weak};

use super::drain;
use super::stream::Slots;
use super::team::Team;
use crate::engine::Shared;

/// The engine's shared state, the team, and this host's contexts.
pub(crate) struct Core {
    pub(crate) shared: Arc<Shared>,
    pub(crate) team: Team,
    pub(crate) slots: Slots,
}

impl Core {
    /// The core over the engine's `shared` state; every execution's end
    /// drains its context.
    pub(crate) fn new(mut shared: Shared, team: Team) -> Arc<Self> {
        Arc::new_cyclic(|me: &Weak<Self>| {
            let me = me.clone();
            shared.appends = true;
            shared.on_end = Some(Arc::new(move |authority: &str, context: &str| {
                if let Some(core) = me.upgrade() {
                    core.notify(authority, context);
                }
            }));
            Self {
                shared: Arc::new(shared),
                team,
                slots: Slots::default(),
            }
        })
    }

    /// The head of the context may have changed: drain it, or make the
    /// running drain pass once more.
    pub(crate) fn notify(self: &Arc<Self>, authority: &str, context_id: &str) {
        let slot = self.slots.get(authority, context_id);
        if !slot.gate.notify() {
            return;
        }
        let core = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = drain::pass(&core, &slot).await {
                    // The next event drains the context again.
                    tracing::warn!(error.kind = %e.kind(), "delivery queue drain failed");
                }
                if !slot.gate.finish_pass() {
                    break;
                }
            }
        });
    }
}
