//! [`DrainGate`]: the dirty bit that makes a context's drain event-driven
//! and impossible to lose.
//!
//! Every event that may change a context's head (an enqueue, a removal or
//! reorder, a run's end, a start-up that finds work) calls
//! [`notify`](DrainGate::notify); the one caller told to start runs drain
//! passes until [`finish_pass`](DrainGate::finish_pass) says no event came
//! in meanwhile. An event during a pass never starts a second drain; it
//! forces one more pass of the running one. So once events stop, a pass
//! that began after the last of them has run to its end: the context cannot
//! rest with an executable head, no active run and no drain pending (see the
//! model test in `tests/queue/queue_model.rs`). No timers, no polling.

use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No drain runs.
    Idle,
    /// A drain runs; no event since its pass began.
    Running,
    /// A drain runs, and an event came in during its pass.
    Dirty,
}

/// The drain state of one context: the dirty bit that makes a context's
/// drain event-driven and impossible to lose (see [`queue`](crate::queue)).
#[derive(Debug)]
pub struct DrainGate {
    state: Mutex<State>,
}

impl Default for DrainGate {
    fn default() -> Self {
        Self {
            state: Mutex::new(State::Idle),
        }
    }
}

impl DrainGate {
    /// An event happened. `true`: no drain was running and the caller must
    /// start one now; `false`: the running drain will make one more pass.
    ///
    /// ```
    /// use a2a_tower::queue::DrainGate;
    /// let gate = DrainGate::default();
    /// assert!(gate.notify(), "the first event starts the drain");
    /// assert!(!gate.notify(), "later events only mark it dirty");
    /// assert!(gate.finish_pass(), "an event came in: pass again");
    /// assert!(!gate.finish_pass(), "nothing new: the drain ends");
    /// assert!(gate.notify(), "and the next event starts one again");
    /// ```
    pub fn notify(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *st {
            State::Idle => {
                *st = State::Running;
                true
            }
            State::Running | State::Dirty => {
                *st = State::Dirty;
                false
            }
        }
    }

    /// The running drain finished a pass. `true`: an event came in during
    /// it, run another pass; `false`: the drain is over (the gate is idle).
    pub fn finish_pass(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *st {
            State::Dirty => {
                *st = State::Running;
                true
            }
            State::Running | State::Idle => {
                *st = State::Idle;
                false
            }
        }
    }

    /// A drain is running.
    pub fn is_running(&self) -> bool {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) != State::Idle
    }
}
