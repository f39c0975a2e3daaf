//! Closed loop, like `wrk -t1 -cN`: N keep-alive connections on one thread,
//! each sending its next SendMessage as soon as the last one is answered,
//! spread round-robin over the URLs. With `--contexts M`, connection `i`
//! sends every message into context `i % M` (so `--conns 1024 --contexts
//! 64` keeps 16 messages in flight in each of 64 contexts, the delivery
//! queue's 64 × 16 load); without it every message opens a context of its
//! own. Every connection connects and warms
//! up first; measurement starts once all of them are idle, so warm-up
//! requests are neither counted nor in flight when it starts.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use a2a_tower_load::machine::CpuTicks;
use a2a_tower_load::{Latencies, arg, args, own_cpu_time, report};
use tokio::sync::Barrier;

use crate::procs;
use crate::request::{self, Conn, Failure, Target};

/// What one connection measured.
#[derive(Default)]
struct Counts {
    latencies: Latencies,
    errors: u64,
}

/// `loadgen closed --url URL... --conns N --secs S [--warmup S] [--contexts M] [--pid PID...]`
pub fn run() -> Result<(), String> {
    let targets = args("--url")
        .iter()
        .map(|u| Target::parse(u))
        .collect::<Result<Vec<_>, _>>()?;
    if targets.is_empty() {
        return Err("closed: give at least one --url".into());
    }
    let conns: usize = arg("--conns", 32);
    let secs = Duration::from_secs_f64(arg("--secs", 10.0));
    let warmup = Duration::from_secs_f64(arg("--warmup", 1.0));
    let contexts: usize = arg("--contexts", 0);
    let pids = procs::pids();
    crate::on_one_thread(async move {
        let warmed = Rc::new(Barrier::new(conns + 1));
        let go = Rc::new(Barrier::new(conns + 1));
        let end = Rc::new(Cell::new(Instant::now()));
        let tasks: Vec<_> = (0..conns)
            .map(|i| {
                let mut target = targets[i % targets.len()].clone();
                if contexts > 0 {
                    target = target.in_context(i % contexts);
                }
                let (warmed, go, end) = (warmed.clone(), go.clone(), end.clone());
                tokio::task::spawn_local(async move {
                    let mut conn = request::connect(&target).await.ok();
                    let warm_end = Instant::now() + warmup;
                    let mut ignored = Counts::default();
                    while Instant::now() < warm_end {
                        one(&mut conn, &target, &mut ignored).await;
                    }
                    warmed.wait().await;
                    go.wait().await;
                    let mut counts = Counts::default();
                    while Instant::now() < end.get() {
                        one(&mut conn, &target, &mut counts).await;
                    }
                    counts
                })
            })
            .collect();
        warmed.wait().await;
        let (cpu0, own0, ticks0) = (procs::cpu(&pids), own_cpu_time(), CpuTicks::now());
        let start = Instant::now();
        end.set(start + secs);
        go.wait().await;
        let mut total = Counts::default();
        for t in tasks {
            let c = t.await.expect("connection task");
            total.latencies.merge(c.latencies);
            total.errors += c.errors;
        }
        let elapsed = start.elapsed();
        let (cpu1, own1, ticks1) = (procs::cpu(&pids), own_cpu_time(), CpuTicks::now());
        let ok = total.latencies.len() as u64;
        let idle = ticks0
            .zip(ticks1)
            .and_then(|(a, b)| b.idle_share_since(&a))
            .map(|i| format!("{:.0}", 100.0 * i));
        let l = &mut total.latencies;
        let mut fields = vec![
            ("conns", conns.to_string()),
            ("secs", format!("{:.2}", elapsed.as_secs_f64())),
            ("requests", ok.to_string()),
            ("errors", total.errors.to_string()),
            ("rps", format!("{:.0}", ok as f64 / elapsed.as_secs_f64())),
            ("p50_us", l.percentile_us(50.0).to_string()),
            ("p90_us", l.percentile_us(90.0).to_string()),
            ("p99_us", l.percentile_us(99.0).to_string()),
            ("max_us", l.max_us().to_string()),
            ("server_cpu_us", procs::per_request_us(cpu0, cpu1, ok)),
            ("gen_cpu_us", procs::per_request_us(own0, own1, ok)),
            ("idle_pct", procs::or_dash(idle)),
            ("rss_kib", procs::or_dash(procs::rss(&pids).map(|(r, _)| r))),
        ];
        if contexts > 0 {
            fields.insert(1, ("contexts", contexts.to_string()));
        }
        report("closed", &fields);
    })
}

/// One request on `conn`, reconnecting first if it is gone; a failed
/// connection is dropped (the next call reconnects).
async fn one(conn: &mut Option<Conn>, target: &Target, counts: &mut Counts) {
    let c = match conn {
        Some(c) => c,
        None => match request::connect(target).await {
            Ok(c) => conn.insert(c),
            Err(e) => {
                counts.errors += 1;
                request::note_error(&Failure::Transport(e));
                // Do not spin against a server that is gone.
                tokio::time::sleep(Duration::from_millis(10)).await;
                return;
            }
        },
    };
    let start = Instant::now();
    match request::send(c, target).await {
        Ok(()) => counts.latencies.record(start.elapsed()),
        Err(f) => {
            counts.errors += 1;
            request::note_error(&f);
            if matches!(f, Failure::Transport(_)) {
                *conn = None;
            }
        }
    }
}
