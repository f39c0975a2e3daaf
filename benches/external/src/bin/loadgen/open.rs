//! Open loop: requests due at a fixed rate from the start, each sent at its
//! due time whatever the server's speed, its latency measured from that due
//! time (no coordinated omission: a stalled server shows as slow requests,
//! not as fewer requests). One line per second, a summary at the end, and
//! a verdict on whether the generator itself kept to its schedule.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use a2a_tower_load::{arg, args, own_cpu_time, report, rss_kib};

use crate::pool::Pool;
use crate::procs::{self, or_dash};
use crate::request::Target;
use crate::schedule::{self, Schedule};
use crate::stats::Stats;
use crate::timer::Timer;

/// RSS readings of the server (KiB): after 10 s, at the midpoint, at the end.
#[derive(Default)]
struct Rss {
    at_10s: Option<u64>,
    mid: Option<u64>,
}

/// `loadgen open --url URL --rate R --secs S [--pid PID] [--max-conns N]
/// [--max-lag-ms MS] [--drain-secs S]`
pub fn run() -> Result<(), String> {
    let url = match args("--url").as_slice() {
        [u] => u.clone(),
        _ => return Err("open: give exactly one --url".into()),
    };
    let target = Target::parse(&url)?;
    let secs: f64 = arg("--secs", 60.0);
    let rate: f64 = arg("--rate", 5000.0);
    let schedule = Schedule::new(rate, secs)?;
    let max_conns: usize = arg("--max-conns", 512);
    let lag_limit = Duration::from_secs_f64(arg("--max-lag-ms", 10.0) / 1e3);
    let drain = Duration::from_secs_f64(arg("--drain-secs", 10.0));
    let pid = procs::pids().first().copied();
    crate::on_one_thread(async move {
        let stats = Rc::new(RefCell::new(Stats::default()));
        let pool = Pool::new(target, max_conns, stats.clone());
        let rss = Rc::new(RefCell::new(Rss::default()));
        let pids: Vec<u32> = pid.into_iter().collect();
        let (cpu0, own0) = (procs::cpu(&pids), own_cpu_time());
        let runq0 = procs::runqueue_wait(std::process::id());
        let timer = Timer::new().map_err(|e| format!("timerfd: {e}"))?;
        // A little ahead, so that the first due times are not already past.
        let start = Instant::now() + Duration::from_millis(20);
        let ticker = tokio::task::spawn_local(tick(start, secs, pid, stats.clone(), rss.clone()));
        for i in 0..schedule.total() {
            let due = start + schedule.offset(i);
            let waited = timer
                .sleep_until(due)
                .await
                .map_err(|e| format!("timerfd: {e}"))?;
            stats.borrow_mut().sent(due.elapsed());
            pool.dispatch(due);
            if !waited {
                // Behind schedule: catch up, but let answers be read too.
                tokio::task::yield_now().await;
            }
        }
        let deadline = Instant::now() + drain;
        while stats.borrow().in_flight > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let elapsed = start.elapsed();
        ticker.abort();
        let (cpu1, own1) = (procs::cpu(&pids), own_cpu_time());
        let runq = runq0
            .zip(procs::runqueue_wait(std::process::id()))
            .map(|(a, b)| format!("{:.1}", b.saturating_sub(a).as_secs_f64() * 1e3));
        let end_rss = pid.and_then(rss_kib);
        let mut s = stats.borrow_mut();
        let last = s.take_second();
        if last != Default::default() {
            println!("{}", second_line(elapsed, &last, end_rss.map(|r| r.0)));
        }
        let t = s.total;
        let unfinished = s.in_flight;
        let max_lag = Duration::from_micros(s.lags.max_us());
        let kept_up = schedule::kept_up(max_lag, lag_limit);
        let rss = rss.borrow();
        let l = &mut s.latencies;
        report(
            "open",
            &[
                ("rate", rate.to_string()),
                ("secs", format!("{:.2}", elapsed.as_secs_f64())),
                ("due", schedule.total().to_string()),
                ("sent", t.sent.to_string()),
                ("done", t.done.to_string()),
                ("errors", t.errors.to_string()),
                ("unfinished", unfinished.to_string()),
                (
                    "rate_rps",
                    format!("{:.0}", t.done as f64 / elapsed.as_secs_f64()),
                ),
                ("p50_us", l.percentile_us(50.0).to_string()),
                ("p99_us", l.percentile_us(99.0).to_string()),
                ("p999_us", l.percentile_us(99.9).to_string()),
                ("max_us", l.max_us().to_string()),
                ("over100ms", t.over.to_string()),
                ("conns", pool.peak().to_string()),
                ("waited", s.waited.to_string()),
                ("lag_p99_us", s.lags.percentile_us(99.0).to_string()),
                ("lag_max_us", max_lag.as_micros().to_string()),
                ("rss_10s_kib", or_dash(rss.at_10s)),
                ("rss_mid_kib", or_dash(rss.mid)),
                ("rss_end_kib", or_dash(end_rss.map(|r| r.0))),
                ("hwm_kib", or_dash(end_rss.map(|r| r.1))),
                ("server_cpu_us", procs::per_request_us(cpu0, cpu1, t.done)),
                ("gen_cpu_us", procs::per_request_us(own0, own1, t.sent)),
                ("gen_runq_ms", or_dash(runq.as_deref())),
                (
                    "generator",
                    if kept_up { "kept-up" } else { "BEHIND" }.to_owned(),
                ),
            ],
        );
        if !kept_up {
            println!(
                "open: INVALID RUN: the generator fell behind its schedule by up to {:.1} ms (limit {:.1} ms); it waited {} ms in all for a CPU",
                max_lag.as_secs_f64() * 1e3,
                lag_limit.as_secs_f64() * 1e3,
                or_dash(runq.as_deref()),
            );
        }
        Ok(())
    })?
}

/// Prints one `open-second` line at each whole second from `start`, and
/// notes the server's RSS at 10 s and at the midpoint of `secs`.
async fn tick(
    start: Instant,
    secs: f64,
    pid: Option<u32>,
    stats: Rc<RefCell<Stats>>,
    rss: Rc<RefCell<Rss>>,
) {
    let mid = ((secs / 2.0).round() as u64).max(1);
    for k in 1u64.. {
        tokio::time::sleep_until((start + Duration::from_secs(k)).into()).await;
        let now = pid.and_then(rss_kib).map(|r| r.0);
        let mut r = rss.borrow_mut();
        if k == 10 {
            r.at_10s = now;
        }
        if k == mid {
            r.mid = now;
        }
        let w = stats.borrow_mut().take_second();
        println!("{}", second_line(start.elapsed(), &w, now));
    }
}

fn second_line(t: Duration, w: &crate::stats::Window, rss: Option<u64>) -> String {
    format!(
        "open-second t={:.2} sent={} done={} errors={} max_us={} over100ms={} rss_kib={}",
        t.as_secs_f64(),
        w.sent,
        w.done,
        w.errors,
        w.max_us,
        w.over,
        or_dash(rss)
    )
}
