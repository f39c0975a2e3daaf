//! [`Quiet`]: whether a run on this host is quiescent, every process
//! waiting for an answer (or for its children) or exited, so that a blocking
//! SendMessage that starts a run answers with every question the run asks at
//! once, not with the first one committed.
//!
//! The run counts what is at work: each process body that is not parked
//! (the root from the run's creation, a child from its start until it
//! exits), each commit in flight and each step's work. A process parks while
//! it waits for an answer ([`Process::wait`](super::Process::wait)) or for a
//! child ([`Process::child`](super::Process::child)); with several of these
//! at once (joined futures) it is parked while any is. A child is counted
//! before its parent parks and uncounted after its parent unparks, and a
//! commit is counted until it is done, so the count never touches zero while
//! something is still to be committed. Code a program runs outside steps
//! between two awaits is not counted (programs do their work in steps).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::watch;

/// How many things of a run are at work; quiescent at zero.
pub(crate) struct Quiet {
    busy: watch::Sender<usize>,
}

impl Quiet {
    /// The count of a run whose root process is about to start.
    pub(crate) fn new() -> Self {
        Self {
            busy: watch::Sender::new(1),
        }
    }

    /// Counts one more thing at work until the guard is dropped.
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.busy.send_modify(|n| *n += 1);
        Busy(self)
    }

    /// Every process is waiting or exited.
    #[cfg(test)]
    pub(crate) fn is_quiet(&self) -> bool {
        *self.busy.borrow() == 0
    }

    /// Completes once the run is quiescent.
    pub(crate) async fn wait(&self) {
        let mut rx = self.busy.subscribe();
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|n| *n == 0).await;
    }

    fn done(&self) {
        self.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// One thing at work (see [`Quiet::busy`]).
pub(crate) struct Busy<'a>(&'a Quiet);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.done();
    }
}

/// One process's parking: how many of its calls wait at once.
#[derive(Clone, Default)]
pub(crate) struct Parking(Arc<AtomicUsize>);

impl Parking {
    /// Parks the process on `quiet` until the guard is dropped: the first
    /// of its calls to park uncounts it, the last to return counts it again.
    pub(crate) fn park<'a>(&'a self, quiet: &'a Quiet) -> Parked<'a> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            quiet.done();
        }
        Parked {
            parking: self,
            quiet,
        }
    }
}

/// A parked call of a process (see [`Parking::park`]).
pub(crate) struct Parked<'a> {
    parking: &'a Parking,
    quiet: &'a Quiet,
}

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        if self.parking.0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.quiet.busy.send_modify(|n| *n += 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_keeps_its_parked_parent_busy_until_it_parks() {
        let quiet = Quiet::new();
        let (root, child) = (Parking::default(), Parking::default());
        // The root waits for an answer and, joined, for a child.
        let answer = root.park(&quiet);
        assert!(quiet.is_quiet());
        let body = quiet.busy();
        let for_child = root.park(&quiet);
        assert!(!quiet.is_quiet(), "the child is at work");
        let commit = quiet.busy();
        let score = child.park(&quiet);
        assert!(!quiet.is_quiet(), "its commit is in flight");
        drop(commit);
        assert!(quiet.is_quiet());
        // The child is answered: at work again until it exits.
        drop(score);
        assert!(!quiet.is_quiet());
        drop(for_child);
        drop(body);
        assert!(quiet.is_quiet(), "the child exited; the root still waits");
        drop(answer);
        assert!(!quiet.is_quiet());
    }
}
