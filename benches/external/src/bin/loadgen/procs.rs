//! Readings of the servers under test, by the pids given with `--pid`:
//! CPU time and resident memory summed over them, and per-request CPU.

use std::time::Duration;

use a2a_tower_load::{cpu_time, rss_kib};

/// The pids of `--pid` (repeatable).
pub fn pids() -> Vec<u32> {
    a2a_tower_load::args("--pid")
        .iter()
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("--pid: cannot parse {p:?}"))
        })
        .collect()
}

/// CPU time of all `pids` so far; `None` without pids or if one is gone.
pub fn cpu(pids: &[u32]) -> Option<Duration> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&p| cpu_time(p)).sum()
}

/// `VmRSS` and `VmHWM` of all `pids`, summed, in KiB; `None` as for [`cpu`].
pub fn rss(pids: &[u32]) -> Option<(u64, u64)> {
    if pids.is_empty() {
        return None;
    }
    pids.iter()
        .map(|&p| rss_kib(p))
        .try_fold((0, 0), |(r, h), x| x.map(|(xr, xh)| (r + xr, h + xh)))
}

/// How long a process's main thread has waited for a CPU while runnable
/// (`/proc/PID/schedstat`); a generator that falls behind while this grows
/// was short of CPU, not slow.
pub fn runqueue_wait(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    let ns = stat.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// CPU between two readings per request, in µs, formatted; `-` when a
/// reading is missing or no request succeeded.
pub fn per_request_us(before: Option<Duration>, after: Option<Duration>, requests: u64) -> String {
    match (before, after) {
        (Some(b), Some(a)) if requests > 0 => {
            format!(
                "{:.1}",
                a.saturating_sub(b).as_secs_f64() * 1e6 / requests as f64
            )
        }
        _ => "-".to_owned(),
    }
}

/// A reading formatted for a report, `-` when missing.
pub fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_request_needs_both_readings_and_requests() {
        let s = |ms| Some(Duration::from_millis(ms));
        assert_eq!(per_request_us(s(100), s(300), 4000), "50.0");
        assert_eq!(per_request_us(None, s(300), 4000), "-");
        assert_eq!(per_request_us(s(100), s(300), 0), "-");
        assert_eq!(or_dash(None::<u64>), "-");
    }

    #[test]
    fn readings_of_this_process() {
        let me = [std::process::id()];
        assert!(cpu(&me).is_some());
        let (rss_kib, hwm_kib) = rss(&me).unwrap();
        assert!(rss_kib > 0 && hwm_kib >= rss_kib);
        assert!(runqueue_wait(me[0]).is_some());
        assert_eq!(cpu(&[]), None);
        assert_eq!(rss(&[]), None);
    }
}
