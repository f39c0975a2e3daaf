//! [`Backoff`]: the wait before each retry of a push delivery, exponential
//! (base × 2ⁿ) up to a cap, with jitter; and the webhook's `Retry-After`,
//! honoured within the same cap.
//!
//! ```
//! use std::time::Duration;
//! use a2a_tower::push::Backoff;
//! let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1)).without_jitter();
//! assert_eq!(b.delay(0), Duration::from_millis(100));
//! assert_eq!(b.delay(2), Duration::from_millis(400));
//! assert_eq!(b.delay(9), Duration::from_secs(1)); // the cap
//! // With jitter (the default) a delay is between half and all of that.
//! let j = Backoff::new(Duration::from_millis(100), Duration::from_secs(1)).delay(2);
//! assert!(j >= Duration::from_millis(200) && j <= Duration::from_millis(400));
//! ```

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime};

use http::HeaderValue;

/// Exponential backoff with a cap and (by default) jitter. [`Default`] waits
/// 500 ms, 1 s, 2 s, … up to 10 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    jitter: bool,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Duration::from_millis(500), Duration::from_secs(10))
    }
}

impl Backoff {
    /// Waits `base` before the first retry, doubling each time up to `cap`
    /// (a `cap` below `base` is raised to `base`), with jitter.
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap: cap.max(base),
            jitter: true,
        }
    }

    /// Without jitter: the delays are exactly base × 2ⁿ, capped.
    pub fn without_jitter(mut self) -> Self {
        self.jitter = false;
        self
    }

    /// The longest wait.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// The wait before retry `n` (0 for the first retry). With jitter it is
    /// drawn uniformly from the upper half of the exponential delay, so that
    /// deliveries failing together do not retry together.
    pub fn delay(&self, n: u32) -> Duration {
        let exp = self
            .base
            .checked_mul(2u32.saturating_pow(n))
            .map_or(self.cap, |d| d.min(self.cap));
        if !self.jitter {
            return exp;
        }
        let half = exp / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        half + Duration::from_nanos(random() % nanos.saturating_add(1))
    }

    /// The wait before retry `n` when the webhook asked for `retry_after`:
    /// the longer of the two, never above the cap.
    pub(crate) fn delay_after(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let own = self.delay(n);
        retry_after.map_or(own, |r| own.max(r.min(self.cap)))
    }
}

/// A pseudo-random `u64`: std's per-instance random hash keys (seeded from
/// the OS), enough for jitter without a random-number crate.
fn random() -> u64 {
    RandomState::new().hash_one(0u8)
}

/// The wait a `Retry-After` header asks for (RFC 9110 §10.2.3): seconds, or
/// an HTTP date (a date in the past is no wait). `None` when malformed.
pub(crate) fn retry_after(value: &HeaderValue, now: SystemTime) -> Option<Duration> {
    let text = value.to_str().ok()?.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(text).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn exponential_and_capped() {
        let b = Backoff::new(10 * MS, 100 * MS).without_jitter();
        let got: Vec<_> = (0..6).map(|n| b.delay(n)).collect();
        assert_eq!(
            got,
            [10 * MS, 20 * MS, 40 * MS, 80 * MS, 100 * MS, 100 * MS]
        );
        assert_eq!(b.delay(u32::MAX), 100 * MS, "no overflow");
        assert_eq!(Backoff::new(50 * MS, MS).cap(), 50 * MS);
    }

    #[test]
    fn jitter_stays_in_the_upper_half_and_varies() {
        let b = Backoff::new(100 * MS, 10_000 * MS);
        let draws: Vec<_> = (0..64).map(|_| b.delay(3)).collect();
        assert!(draws.iter().all(|d| *d >= 400 * MS && *d <= 800 * MS));
        assert!(draws.iter().any(|d| *d != draws[0]), "{draws:?}");
        assert_eq!(
            Backoff::new(Duration::ZERO, Duration::ZERO).delay(3),
            Duration::ZERO
        );
    }

    #[test]
    fn retry_after_within_the_cap() {
        let b = Backoff::new(10 * MS, 1000 * MS).without_jitter();
        assert_eq!(b.delay_after(0, None), 10 * MS);
        assert_eq!(b.delay_after(0, Some(300 * MS)), 300 * MS);
        assert_eq!(b.delay_after(0, Some(Duration::from_secs(3600))), 1000 * MS);
        assert_eq!(
            b.delay_after(3, Some(MS)),
            80 * MS,
            "never shorter than backoff"
        );
    }

    #[test]
    fn parses_retry_after() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let h = |s: &str| retry_after(&HeaderValue::from_str(s).unwrap(), now);
        assert_eq!(h("2"), Some(Duration::from_secs(2)));
        assert_eq!(h(" 0 "), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(h(&later), Some(Duration::from_secs(30)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(h(&earlier), Some(Duration::ZERO));
        assert_eq!(h("-1"), None);
        assert_eq!(h("soon"), None);
        assert_eq!(h(""), None);
        assert_eq!(
            h("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
    }
}
