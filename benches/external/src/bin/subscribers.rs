//! Many concurrent SubscribeToTask streams against the echo example
//! (issue 18, item 4): every event must reach every subscriber, the server's
//! memory must stay bounded, and a stalled subscriber must not delay the
//! others.
//!
//! ```text
//! subscribers --url URL --tasks 1000 --per-task 10 --words 20 --sleep 5 \
//!     [--pid PID] [--stalled K] [--timeout SECS] [--connect-parallel P] \
//!     [--create-conns C] [--stall-rcvbuf BYTES]
//! ```
//!
//! 1. Creates `--tasks` tasks with SendMessage (`returnImmediately`, over
//!    `--create-conns` keep-alive connections), each with the text
//!    `sleep S w1 … wN`: the echo agent stays WORKING for S seconds, then
//!    streams the text back as N + 2 artifact chunks (`sleep `, `S `,
//!    `w1 `, …, `wN`) and completes.
//! 2. Opens `--per-task` subscribers per task, each SubscribeToTask on an
//!    HTTP/1.1 connection of its own, at most `--connect-parallel` (default
//!    100) waiting for their first event at once: the echo example listens
//!    with a backlog of 128, and a connection refused by a full backlog is
//!    retried by the kernel only after a second, which would show as a
//!    subscribe time of seconds; and
//!    `--stalled` more per task that read the response head and never read
//!    again (a raw socket whose receive buffer is `--stall-rcvbuf` bytes,
//!    default 4096, kept open until the others are done).
//! 3. Once every subscriber got its first event (the task snapshot) and every
//!    stalled one its response head, reads the server's RSS (`--pid`).
//! 4. Reads every stream to its end and checks it
//!    ([`a2a_tower_load::events::Check`]): the whole text in order, then
//!    COMPLETED, nothing else.
//!
//! The report line (`subscribers key=value …`): `tasks`, `subscribers` (not
//! stalled), `stalled` (opened / asked), `ok` (complete streams), `missing`
//! (streams lacking a chunk or the final COMPLETED, or wrong), `errors`
//! (streams that failed, stalled ones included: connect, HTTP, SSE, a
//! JSON-RPC error event, the timeout), `late` (snapshots that already held
//! part of the answer: the sleep ended before that subscription, so raise
//! `--sleep`), `create_s` and `subscribe_s` (the two phases' wall times),
//! `run_s` (from the first subscription to the end of the last stream),
//! `rss_before_mib` (the server before subscribing), `rss_mib` (when all
//! were subscribed), `hwm_mib` (its peak, VmHWM, at the end),
//! `spread_p50_ms`, `spread_p99_ms`, `spread_max_ms` (below), `events`
//! (received by all), `server_cpu_s` (during the subscribe and stream
//! phases) and `tool_cpu_s` (this process, the same phases: when close to
//! `run_s` minus the sleep, the tool was the bound, not the server).
//!
//! Delivery spread: per task, t0 is the first arrival of an artifact chunk
//! on any of its subscribers (the end of the sleep as the clients see it);
//! a complete subscriber's spread is its last event's arrival minus t0. It
//! includes a subscriber that started late as well as one that streamed
//! slowly, so runs with and without `--stalled` compare whether a stalled
//! reader delays the others.
//!
//! The runtime is tokio's `current_thread`: the tool does little per event
//! (an SSE line, one JSON decode), so one thread keeps up, leaves the other
//! cores to the server it measures, and timestamps are not skewed by work
//! moving between threads. Arrival times are taken when the runtime polls a
//! stream, so the tool's own backlog shows in them: `tool_cpu_s` says
//! whether there was one.
//!
//! The process needs an open file per connection: it raises its own
//! `RLIMIT_NOFILE` soft limit to the hard limit and warns if that is below
//! what the run needs; the server needs as many (`ulimit -n` before
//! starting it, as `benches/subscribers.sh` does).

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tower_load::a2a::{Endpoint, connect, create_task, read_events, stalled_subscribe};
use a2a_tower_load::events::{Check, Event, echo_text};
use a2a_tower_load::{Latencies, arg, cpu_time, own_cpu_time, raise_nofile_limit, report, rss_kib};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, mpsc};

/// One non-stalled subscriber's stream.
struct Outcome {
    task: usize,
    check: Check,
    /// The arrival of its first artifact chunk.
    first_chunk: Option<Instant>,
    last: Option<Instant>,
    error: Option<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url: String = arg("--url", String::new());
    let tasks: usize = arg("--tasks", 1000);
    let per_task: usize = arg("--per-task", 10);
    let words: usize = arg("--words", 20);
    let sleep: f64 = arg("--sleep", 5.0);
    let pid: u32 = arg("--pid", 0);
    let stalled: usize = arg("--stalled", 0);
    let timeout = Duration::from_secs_f64(arg("--timeout", sleep + 120.0));
    let connect_parallel: usize = arg("--connect-parallel", 100);
    let create_conns: usize = arg("--create-conns", 8);
    let stall_rcvbuf: u32 = arg("--stall-rcvbuf", 4096);
    let ep = Endpoint::parse(&url).unwrap_or_else(|e| fail(&e));
    let pid = (pid != 0).then_some(pid);

    let need = tasks * (per_task + stalled) + 64;
    match raise_nofile_limit() {
        Ok(n) if n < need as u64 => {
            eprintln!("subscribers: open-file limit {n} is below the {need} this run needs")
        }
        Ok(_) => {}
        Err(e) => eprintln!("subscribers: cannot raise the open-file limit: {e}"),
    }

    let text: Arc<str> = echo_text(sleep, words).into();
    let started = Instant::now();
    let ids = create_tasks(&ep, &text, tasks, create_conns)
        .await
        .unwrap_or_else(|e| fail(&e));
    let create_s = started.elapsed().as_secs_f64();
    let rss_before = pid.and_then(rss_kib).map(|(rss, _)| rss);
    let server_cpu0 = pid.and_then(cpu_time);
    let tool_cpu0 = own_cpu_time();

    // Subscribe: each subscriber says once whether it got its first event
    // (a stalled one: its response head).
    let deadline = tokio::time::Instant::now() + timeout;
    let gate = Arc::new(Semaphore::new(connect_parallel.max(1)));
    let (signal, mut signals) = mpsc::unbounded_channel::<()>();
    let subscribe_start = Instant::now();
    let mut normal = Vec::with_capacity(tasks * per_task);
    let mut stalls = Vec::with_capacity(tasks * stalled);
    for (task, id) in ids.iter().enumerate() {
        for _ in 0..per_task {
            let (ep, id, text) = (ep.clone(), id.clone(), text.clone());
            let (gate, signal) = (gate.clone(), signal.clone());
            normal.push(tokio::spawn(async move {
                subscriber(&ep, &id, text, task, gate, signal, deadline).await
            }));
        }
        for _ in 0..stalled {
            let (ep, id, gate, signal) = (ep.clone(), id.clone(), gate.clone(), signal.clone());
            stalls.push(tokio::spawn(async move {
                let _permit = gate.acquire_owned().await;
                let r =
                    tokio::time::timeout_at(deadline, stalled_subscribe(&ep, &id, stall_rcvbuf))
                        .await
                        .unwrap_or_else(|_| Err("timed out".into()));
                let _ = signal.send(());
                r
            }));
        }
    }
    drop(signal);
    let total = normal.len() + stalls.len();
    let mut signalled = 0;
    while signalled < total {
        match tokio::time::timeout_at(deadline, signals.recv()).await {
            Ok(Some(())) => signalled += 1,
            _ => break,
        }
    }
    let subscribe_s = subscribe_start.elapsed().as_secs_f64();
    let rss_subscribed = pid.and_then(rss_kib).map(|(rss, _)| rss);

    // Every non-stalled stream to its end; the stalled sockets stay open
    // meanwhile (they are the tasks' outputs, held until dropped below).
    let mut outcomes = Vec::with_capacity(normal.len());
    for h in normal {
        outcomes.push(h.await.expect("a subscriber task panicked"));
    }
    let mut stalled_open: Vec<TcpStream> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for h in stalls {
        match h.await.expect("a stalled subscriber task panicked") {
            Ok(s) => stalled_open.push(s),
            Err(e) => errors.push(format!("stalled: {e}")),
        }
    }
    let server_cpu = server_cpu0
        .zip(pid.and_then(cpu_time))
        .map(|(a, b)| (b - a).as_secs_f64());
    let tool_cpu = tool_cpu0
        .zip(own_cpu_time())
        .map(|(a, b)| (b - a).as_secs_f64());
    let hwm = pid.and_then(rss_kib).map(|(_, hwm)| hwm);
    let run_s = subscribe_start.elapsed().as_secs_f64();
    let stalled_opened = stalled_open.len();
    let stalled_failed = errors.len();
    drop(stalled_open);

    let summary = summarize(&outcomes, tasks);
    let mut spread = summary.spread;
    for o in &outcomes {
        if let Some(e) = &o.error {
            errors.push(e.clone());
        } else if let Some(m) = o.check.missing() {
            errors.push(format!("missing: {m}"));
        }
    }
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    print_samples(&errors);
    if summary.late > 0 {
        eprintln!(
            "subscribers: {} subscriptions came after their task's sleep ended: raise --sleep",
            summary.late
        );
    }
    let mib = |k: Option<u64>| k.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0));
    let ms = |us: u64| format!("{:.1}", us as f64 / 1000.0);
    let secs = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.2}"));
    report(
        "subscribers",
        &[
            ("tasks", tasks.to_string()),
            ("subscribers", outcomes.len().to_string()),
            ("stalled", format!("{stalled_opened}/{}", tasks * stalled)),
            ("ok", summary.ok.to_string()),
            ("missing", (outcomes.len() - summary.ok).to_string()),
            ("errors", (failed + stalled_failed).to_string()),
            ("late", summary.late.to_string()),
            ("create_s", format!("{create_s:.2}")),
            ("subscribe_s", format!("{subscribe_s:.2}")),
            ("run_s", format!("{run_s:.2}")),
            ("rss_before_mib", mib(rss_before)),
            ("rss_mib", mib(rss_subscribed)),
            ("hwm_mib", mib(hwm)),
            ("spread_p50_ms", ms(spread.percentile_us(50.0))),
            ("spread_p99_ms", ms(spread.percentile_us(99.0))),
            ("spread_max_ms", ms(spread.max_us())),
            ("events", summary.events.to_string()),
            ("server_cpu_s", secs(server_cpu)),
            ("tool_cpu_s", secs(tool_cpu)),
        ],
    );
}

fn fail(e: &str) -> ! {
    eprintln!("subscribers: {e}");
    std::process::exit(1)
}

/// Creates `n` tasks answering `text` over `conns` connections; their ids
/// in order.
async fn create_tasks(
    ep: &Endpoint,
    text: &str,
    n: usize,
    conns: usize,
) -> Result<Vec<String>, String> {
    let conns = conns.clamp(1, n.max(1));
    let mut handles = Vec::new();
    for c in 0..conns {
        let (ep, text) = (ep.clone(), text.to_owned());
        let count = n / conns + usize::from(c < n % conns);
        handles.push(tokio::spawn(async move {
            let mut sender = connect(&ep).await?;
            let mut ids = Vec::with_capacity(count);
            for _ in 0..count {
                ids.push(create_task(&mut sender, &ep, &text).await?);
            }
            Ok::<_, String>(ids)
        }));
    }
    let mut ids = Vec::with_capacity(n);
    for h in handles {
        ids.extend(h.await.expect("a create task panicked")?);
    }
    Ok(ids)
}

/// One subscriber: subscribes (holding a `gate` permit until its first
/// event), signals its first event (or its failure), reads to the end.
async fn subscriber(
    ep: &Endpoint,
    task_id: &str,
    text: Arc<str>,
    task: usize,
    gate: Arc<Semaphore>,
    signal: mpsc::UnboundedSender<()>,
    deadline: tokio::time::Instant,
) -> Outcome {
    let mut out = Outcome {
        task,
        check: Check::new(text),
        first_chunk: None,
        last: None,
        error: None,
    };
    let mut permit = Some(gate.acquire_owned().await);
    let mut signal = Some(signal);
    let subscribe = a2a_tower_load::a2a::subscribe(ep, task_id);
    let res = match tokio::time::timeout_at(deadline, subscribe).await {
        Ok(Ok(res)) => res,
        Ok(Err(e)) => {
            let _ = signal.take().map(|s| s.send(()));
            out.error = Some(e);
            return out;
        }
        Err(_) => {
            let _ = signal.take().map(|s| s.send(()));
            out.error = Some("timed out".into());
            return out;
        }
    };
    let read = read_events(res, |at, ev| {
        if out.check.events() == 0 {
            permit.take();
            let _ = signal.take().map(|s| s.send(()));
        } else if out.first_chunk.is_none() && matches!(ev, Event::Chunk(_)) {
            out.first_chunk = Some(at);
        }
        out.last = Some(at);
        out.check.apply(&ev);
    });
    let read = tokio::time::timeout_at(deadline, read)
        .await
        .unwrap_or_else(|_| Err("timed out".into()));
    if let Some(s) = signal.take() {
        let _ = s.send(());
    }
    out.error = read.err();
    out
}

/// What the outcomes add up to.
struct Summary {
    ok: usize,
    late: usize,
    events: usize,
    spread: Latencies,
}

/// Counts complete and late streams and events, and the delivery spread of
/// the complete streams (see the module docs).
fn summarize(outcomes: &[Outcome], tasks: usize) -> Summary {
    let mut t0: Vec<Option<Instant>> = vec![None; tasks];
    for o in outcomes {
        if let (Some(slot), Some(at)) = (t0.get_mut(o.task), o.first_chunk) {
            *slot = Some(slot.map_or(at, |t: Instant| t.min(at)));
        }
    }
    let mut s = Summary {
        ok: 0,
        late: 0,
        events: 0,
        spread: Latencies::default(),
    };
    for o in outcomes {
        s.events += o.check.events();
        s.late += usize::from(o.check.late());
        let complete = o.error.is_none() && o.check.complete();
        if !complete {
            continue;
        }
        s.ok += 1;
        if let (Some(Some(t0)), Some(last)) = (t0.get(o.task), o.last) {
            s.spread.record(last.saturating_duration_since(*t0));
        }
    }
    s
}

/// Prints the first few distinct errors, with how often each occurred.
fn print_samples(errors: &[String]) {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for e in errors {
        match seen.iter_mut().find(|(s, _)| *s == e) {
            Some((_, n)) => *n += 1,
            None => seen.push((e, 1)),
        }
    }
    for (e, n) in seen.iter().take(5) {
        eprintln!("subscribers: {n}× {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_tower::types::TaskState;

    /// A subscriber of `task` whose first chunk and last event arrived at
    /// `first` and `last` ms after `t`, complete or cut short.
    fn outcome(t: Instant, task: usize, first: u64, last: u64, complete: bool) -> Outcome {
        let text: Arc<str> = "w1".into();
        let mut check = Check::new(text);
        check.apply(&Event::Snapshot {
            state: TaskState::Working,
            text: String::new(),
        });
        check.apply(&Event::Chunk("w1".into()));
        if complete {
            check.apply(&Event::Status(TaskState::Completed));
        }
        let ms = |n| Some(t + Duration::from_millis(n));
        Outcome {
            task,
            check,
            first_chunk: ms(first),
            last: ms(last),
            error: None,
        }
    }

    #[test]
    fn spread_runs_from_the_tasks_first_chunk() {
        let t = Instant::now();
        let outcomes = [
            outcome(t, 0, 10, 20, true),
            outcome(t, 0, 15, 40, true),
            outcome(t, 1, 100, 105, true),
            // Cut short: counted as missing, not in the spread, but its
            // first chunk still sets its task's t0.
            outcome(t, 1, 90, 500, false),
        ];
        let mut s = summarize(&outcomes, 2);
        assert_eq!((s.ok, s.late, s.events), (3, 0, 11));
        assert_eq!(s.spread.len(), 3);
        // Task 0: 20 − 10 and 40 − 10; task 1: 105 − 90.
        assert_eq!(s.spread.percentile_us(0.0), 10_000);
        assert_eq!(s.spread.percentile_us(50.0), 15_000);
        assert_eq!(s.spread.max_us(), 30_000);
    }
}
