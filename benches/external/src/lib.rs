//! Shared pieces of the external load tools: latency summaries, the
//! `key=value` report line the scripts parse, process readings from
//! `/proc` (CPU time and resident memory of a server by its pid) and the
//! open-file limit; the subscriber tools' JSON-RPC calls and SSE reading
//! ([`a2a`]) and their check of an echo task's stream ([`events`]).
//!
//! ```
//! let mut l = a2a_tower_load::Latencies::default();
//! for us in [100, 200, 300, 400] {
//!     l.record_us(us);
//! }
//! assert_eq!(l.percentile_us(50.0), 200);
//! assert_eq!(l.max_us(), 400);
//! ```

use std::time::Duration;

pub mod a2a;
pub mod events;
pub mod machine;

/// Request latencies in microseconds, summarised by percentiles.
#[derive(Default, Clone, Debug)]
pub struct Latencies {
    us: Vec<u64>,
    sorted: bool,
}

impl Latencies {
    /// Records one latency.
    pub fn record(&mut self, d: Duration) {
        self.record_us(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    }

    /// Records one latency given in microseconds.
    pub fn record_us(&mut self, us: u64) {
        self.us.push(us);
        self.sorted = false;
    }

    /// Adds every latency of `other`.
    pub fn merge(&mut self, other: Latencies) {
        self.us.extend(other.us);
        self.sorted = false;
    }

    /// How many latencies were recorded.
    pub fn len(&self) -> usize {
        self.us.len()
    }

    /// Whether none were recorded.
    pub fn is_empty(&self) -> bool {
        self.us.is_empty()
    }

    /// The `p`-th percentile (nearest rank), 0 when empty.
    pub fn percentile_us(&mut self, p: f64) -> u64 {
        if self.us.is_empty() {
            return 0;
        }
        if !self.sorted {
            self.us.sort_unstable();
            self.sorted = true;
        }
        // Nearest rank: p × n / 100 rounded up, where a value within float
        // error of a whole number counts as whole ((99.9 / 100) × 1000 is
        // 999.0000000000001, which gave rank 1000 of 1000 for p99.9).
        let exact = p * self.us.len() as f64 / 100.0;
        let rank = if (exact - exact.round()).abs() < 1e-9 {
            exact.round()
        } else {
            exact.ceil()
        } as usize;
        self.us[rank.clamp(1, self.us.len()) - 1]
    }

    /// The largest latency, 0 when empty.
    pub fn max_us(&self) -> u64 {
        self.us.iter().copied().max().unwrap_or(0)
    }

    /// How many latencies exceeded `limit`.
    pub fn over(&self, limit: Duration) -> usize {
        let limit = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX);
        self.us.iter().filter(|&&us| us > limit).count()
    }
}

/// A process's CPU time so far (user + system, all threads), from
/// `/proc/PID/stat`; `None` if it cannot be read.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields are counted after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line (11, 12 here).
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(ticks as f64 / clock_ticks()))
}

/// This process's own CPU time (see [`cpu_time`]).
pub fn own_cpu_time() -> Option<Duration> {
    cpu_time(std::process::id())
}

/// A process's resident set (`VmRSS`) and peak (`VmHWM`) in KiB.
pub fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn clock_ticks() -> f64 {
    // USER_HZ is 100 on every Linux this runs on; `getconf CLK_TCK` says so.
    100.0
}

/// One report line: `label key=value key=value …`, what the scripts parse.
pub fn report(label: &str, pairs: &[(&str, String)]) {
    let mut line = label.to_owned();
    for (k, v) in pairs {
        line.push(' ');
        line.push_str(k);
        line.push('=');
        line.push_str(v);
    }
    println!("{line}");
}

/// Reads `--name value` from the command line, or `default`.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: cannot parse {v:?}"))
        })
        .unwrap_or(default)
}

/// Every value given for `--name` (repeatable), e.g. several server URLs.
pub fn args(name: &str) -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2)
        .filter(|w| w[0] == name)
        .map(|w| w[1].clone())
        .collect()
}

/// Raises this process's open-file limit (`RLIMIT_NOFILE`) to its hard
/// limit, for tools holding thousands of connections; returns the new soft
/// limit.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for the call to fill in and read.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: as above.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(lim.rlim_cur)
}
