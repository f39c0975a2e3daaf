//! The machine's idle share, from the first line of `/proc/stat`: idle and
//! iowait ticks against all ticks, between two readings. Well above zero
//! during a run, the server under test was bound by waiting (fsync, a
//! lock, too few connections), not by CPU.
//!
//! ```
//! use a2a_tower_load::machine::CpuTicks;
//!
//! let before = CpuTicks::parse("cpu  100 0 50 800 50 0 0 0 0 0\n").unwrap();
//! let after = CpuTicks::parse("cpu  250 0 100 850 50 0 0 0 0 0\n").unwrap();
//! // 250 ticks went by, 50 of them idle.
//! assert_eq!(after.idle_share_since(&before), Some(0.2));
//! ```

/// Cumulative CPU ticks of the whole machine (all CPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTicks {
    /// Idle and iowait ticks.
    pub idle: u64,
    /// All ticks: user, nice, system, idle, iowait, irq, softirq, steal
    /// (guest time is already inside user).
    pub total: u64,
}

impl CpuTicks {
    /// Reads `/proc/stat` now; `None` where it cannot be read (not Linux).
    pub fn now() -> Option<CpuTicks> {
        CpuTicks::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Parses the text of `/proc/stat` (its first line, `cpu  user nice …`).
    pub fn parse(stat: &str) -> Option<CpuTicks> {
        let mut fields = stat.lines().next()?.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        let ticks: Vec<u64> = fields
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        Some(CpuTicks {
            idle: ticks.get(3)? + ticks.get(4)?,
            total: ticks.iter().sum(),
        })
    }

    /// The idle share (0 to 1) of the ticks since `earlier`; `None` when no
    /// tick went by.
    pub fn idle_share_since(&self, earlier: &CpuTicks) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total).filter(|&t| t > 0)?;
        let idle = self.idle.saturating_sub(earlier.idle);
        Some(idle as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::CpuTicks;

    #[test]
    fn parses_the_aggregate_line_only() {
        let stat = "cpu  10 1 5 100 4 2 3 7 9 0\ncpu0 5 0 2 50 2 1 1 3 0 0\nintr 1\n";
        let t = CpuTicks::parse(stat).unwrap();
        // guest (9) and guest_nice (0) are not added: user holds them.
        assert_eq!(
            t,
            CpuTicks {
                idle: 104,
                total: 132
            }
        );
    }

    #[test]
    fn refuses_what_is_not_proc_stat() {
        assert_eq!(CpuTicks::parse(""), None);
        assert_eq!(CpuTicks::parse("cpu0 1 2 3 4 5\n"), None);
        assert_eq!(CpuTicks::parse("cpu 1 2 x 4 5\n"), None);
        // Fewer than the five fields that hold idle and iowait.
        assert_eq!(CpuTicks::parse("cpu 1 2 3 4\n"), None);
    }

    #[test]
    fn idle_share_needs_ticks_in_between() {
        let t = CpuTicks {
            idle: 10,
            total: 20,
        };
        assert_eq!(t.idle_share_since(&t), None);
        let later = CpuTicks {
            idle: 10,
            total: 40,
        };
        assert_eq!(later.idle_share_since(&t), Some(0.0));
    }
}
