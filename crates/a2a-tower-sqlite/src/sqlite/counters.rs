//! The writer's counters: appends, transactions and how long it waited for
//! work (see [`SqliteStats`](crate::SqliteStats)).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the writer did so far.
#[derive(Debug)]
pub(crate) struct Counters {
    pub(crate) appends: AtomicU64,
    pub(crate) transactions: AtomicU64,
    born: Instant,
    /// Nanoseconds spent in finished waits for the first job of a batch.
    idle_nanos: AtomicU64,
    /// When the current wait began (nanoseconds since `born`, plus one);
    /// 0 while the writer works.
    waiting_since: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            appends: AtomicU64::new(0),
            transactions: AtomicU64::new(0),
            born: Instant::now(),
            idle_nanos: AtomicU64::new(0),
            waiting_since: AtomicU64::new(0),
        }
    }
}

impl Counters {
    fn now(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    pub(crate) fn wait_begins(&self) {
        self.waiting_since.store(self.now() + 1, Ordering::Relaxed);
    }

    pub(crate) fn wait_ends(&self) {
        let since = self.waiting_since.swap(0, Ordering::Relaxed);
        if since != 0 {
            let waited = self.now().saturating_sub(since - 1);
            self.idle_nanos.fetch_add(waited, Ordering::Relaxed);
        }
    }

    /// The writer's idle time so far, the wait in progress included.
    pub(crate) fn idle(&self) -> Duration {
        let since = self.waiting_since.load(Ordering::Relaxed);
        let current = if since == 0 {
            0
        } else {
            self.now().saturating_sub(since - 1)
        };
        Duration::from_nanos(self.idle_nanos.load(Ordering::Relaxed) + current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_counts_finished_waits_and_the_current_one() {
        let c = Counters::default();
        assert_eq!(c.idle(), Duration::ZERO);
        c.wait_begins();
        std::thread::sleep(Duration::from_millis(20));
        let during = c.idle();
        assert!(during >= Duration::from_millis(20), "{during:?}");
        c.wait_ends();
        let after = c.idle();
        assert!(after >= during, "{after:?} < {during:?}");
        // Working time is not idle time.
        std::thread::sleep(Duration::from_millis(20));
        assert!(c.idle() < after + Duration::from_millis(20));
    }
}
