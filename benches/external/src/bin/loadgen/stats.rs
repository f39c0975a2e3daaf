//! The open loop's counts: per second (one `open-second` line each) and for
//! the whole run, latencies measured from each request's due time, and the
//! generator's lag behind its schedule.

use std::time::Duration;

use a2a_tower_load::Latencies;

/// A request slower than this counts in `over100ms`.
pub const SLOW: Duration = Duration::from_millis(100);

/// Counts over a span of time (one second, or the whole run).
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Requests handed to a connection (or queued for one).
    pub sent: u64,
    /// Requests answered with a result.
    pub done: u64,
    /// Requests that failed (transport, status, JSON-RPC error).
    pub errors: u64,
    /// The slowest answered request, µs from its due time.
    pub max_us: u64,
    /// Answered requests slower than [`SLOW`].
    pub over: u64,
}

/// Everything the open loop counts.
#[derive(Default)]
pub struct Stats {
    /// The current second, reset by [`Stats::take_second`].
    pub second: Window,
    /// The whole run.
    pub total: Window,
    /// Latencies of answered requests from their due time.
    pub latencies: Latencies,
    /// How late each request was picked up by the runtime.
    pub lags: Latencies,
    /// Requests that had to wait for a connection (all `--max-conns` busy).
    pub waited: u64,
    /// Requests sent and neither answered nor failed yet.
    pub in_flight: u64,
}

impl Stats {
    /// A request picked up `lag` after its due time.
    pub fn sent(&mut self, lag: Duration) {
        self.lags.record(lag);
        self.in_flight += 1;
        self.second.sent += 1;
        self.total.sent += 1;
    }

    /// A request answered `latency` after its due time.
    pub fn done(&mut self, latency: Duration) {
        self.latencies.record(latency);
        self.in_flight -= 1;
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let slow = u64::from(latency > SLOW);
        for w in [&mut self.second, &mut self.total] {
            w.done += 1;
            w.max_us = w.max_us.max(us);
            w.over += slow;
        }
    }

    /// A request that failed.
    pub fn failed(&mut self) {
        self.in_flight -= 1;
        self.second.errors += 1;
        self.total.errors += 1;
    }

    /// The counts of the second just ended; the next one starts at zero.
    pub fn take_second(&mut self) -> Window {
        std::mem::take(&mut self.second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_totals() {
        let mut s = Stats::default();
        let ms = Duration::from_millis;
        s.sent(ms(0));
        s.sent(ms(2));
        s.sent(ms(1));
        s.done(ms(150));
        s.failed();
        let first = s.take_second();
        assert_eq!(
            first,
            Window {
                sent: 3,
                done: 1,
                errors: 1,
                max_us: 150_000,
                over: 1
            }
        );
        s.done(ms(3));
        assert_eq!(
            s.take_second(),
            Window {
                sent: 0,
                done: 1,
                errors: 0,
                max_us: 3_000,
                over: 0
            }
        );
        assert_eq!(
            s.total,
            Window {
                sent: 3,
                done: 2,
                errors: 1,
                max_us: 150_000,
                over: 1
            }
        );
        assert_eq!(
            (s.in_flight, s.lags.max_us(), s.latencies.len()),
            (0, 2_000, 2)
        );
    }
}
