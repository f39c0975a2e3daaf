//! The open loop's schedule: request `i` is due at `start + i / rate`,
//! whatever happened to the requests before it (computed from `i`, so
//! rounding does not add up over a long run). How late the generator sends
//! a request after its due time is its lag.

use std::time::Duration;

/// Requests at a fixed rate for a fixed time.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    rate: f64,
    total: u64,
}

impl Schedule {
    /// `rate` requests per second for `secs` seconds.
    pub fn new(rate: f64, secs: f64) -> Result<Schedule, String> {
        if !(rate > 0.0 && rate.is_finite() && secs > 0.0 && secs.is_finite()) {
            return Err(format!(
                "open: --rate {rate} and --secs {secs} must be positive"
            ));
        }
        Ok(Schedule {
            rate,
            total: (rate * secs).round() as u64,
        })
    }

    /// How many requests are due in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// When request `i` is due, after the start (computed from `i`, so
    /// rounding does not add up over a long run).
    pub fn offset(&self, i: u64) -> Duration {
        Duration::from_secs_f64(i as f64 / self.rate)
    }
}

/// Whether a generator that fell behind its schedule by at most `max_lag`
/// kept up; past `limit`, the latencies it measured are its own delay as
/// much as the server's, and the run is invalid.
pub fn kept_up(max_lag: Duration, limit: Duration) -> bool {
    max_lag <= limit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_evenly_spaced_from_the_start() {
        let s = Schedule::new(4.0, 2.5).unwrap();
        assert_eq!(s.total(), 10);
        assert_eq!(s.offset(0), Duration::ZERO);
        assert_eq!(s.offset(1), Duration::from_millis(250));
        assert_eq!(s.offset(9), Duration::from_millis(2250));
    }

    #[test]
    fn no_drift_over_a_long_run() {
        let s = Schedule::new(5000.0, 3600.0).unwrap();
        assert_eq!(s.total(), 18_000_000);
        assert_eq!(s.offset(17_999_999 + 1), Duration::from_secs(3600));
        assert_eq!(
            s.offset(5_000 * 1_234 + 1),
            Duration::from_micros(1_234_000_200)
        );
    }

    #[test]
    fn refuses_rates_and_times_that_are_not_positive() {
        assert!(Schedule::new(0.0, 10.0).is_err());
        assert!(Schedule::new(100.0, -1.0).is_err());
        assert!(Schedule::new(f64::NAN, 10.0).is_err());
    }

    #[test]
    fn lag_limit() {
        let ms = Duration::from_millis;
        assert!(kept_up(ms(10), ms(10)));
        assert!(!kept_up(ms(11), ms(10)));
    }
}
