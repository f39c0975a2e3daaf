//! Cross-host event latency on PostgreSQL (issue 18, item 5): an event
//! written on one echo host reaching a subscriber on another host sharing
//! the same database (goal: p99 ≤ 50 ms under load).
//!
//! ```text
//! xhost --writer URL_A --reader URL_B --tasks 200 --words 20 \
//!     [--concurrency 4] [--sleep 0.3] [--timeout SECS]
//! ```
//!
//! Each of `--concurrency` workers, in turn for its share of `--tasks`,
//! creates a task on host A (SendMessage, `returnImmediately`, text
//! `sleep S w1 … wN`, S = `--sleep`), then subscribes to it on A and on B at
//! once (SubscribeToTask, a connection each). A runs the agent, which after
//! the sleep appends the N + 2 artifact chunks and COMPLETED. For each
//! chunk, the latency is its arrival on B's stream minus its arrival on A's:
//! A's subscriber is woken by A's own commit, B's only once B learned of it
//! from the database, so the difference is the cross-host delay (both
//! streams' own costs, alike on both hosts, cancel out). Chunks are matched
//! by their place in the text. Both streams are checked whole
//! ([`a2a_tower_load::events::Check`]).
//!
//! How B learns of A's appends (`crates/a2a-tower-postgres/src/postgres/listen.rs`,
//! `crates/a2a-tower-postgres/src/postgres/write.rs`): LISTEN/NOTIFY, no polling. After each
//! commit of an append the writing log wakes its own watchers at once, then
//! sends `NOTIFY` on the log's channel with the payload
//! `<instance>:<task id>`, in a transaction of its own on the same pooled
//! connection (a round trip after the commit). Every log holds one
//! dedicated connection that LISTENs on that channel; for a payload from
//! another instance it wakes the watchers of that task, which then read the
//! new records back by sequence number (a query on a pooled connection),
//! so a record is never skipped between notifications. After a lost
//! listener connection it reconnects and wakes every watcher. So the
//! cross-host delay is about the NOTIFY round trip plus PostgreSQL's
//! delivery to the listener, all of which queue behind a loaded database
//! or pool. A's own watchers, too, read the records back from the database
//! after their wake-up (as B's do), so both streams pay one query; when the
//! two arrive within the same moment either may be polled first here,
//! which `b_first` counts.
//!
//! The report line (`xhost key=value …`): `tasks`, `chunks` (pairs
//! measured), `p50_us`, `p99_us`, `max_us`, `over_50ms`, `b_first`
//! (chunks that arrived on B before A, counted as 0) and `b_lead_max_us`
//! (the most B was ahead), `missing` (chunks and final COMPLETED statuses expected but not
//! received on either stream), `late` (chunks already in a snapshot, the
//! subscription came after them: not measured, raise `--sleep`), `errors`
//! (tasks whose creation, subscription or stream failed, or timed out).
//!
//! The runtime is tokio's `current_thread`, for the reasons given in
//! `subscribers`: few streams, little work per event, and both arrival
//! times of a pair taken on the same thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tower_load::a2a::{Endpoint, connect, create_task, read_events, subscribe};
use a2a_tower_load::events::{Check, Event, chunk_count, echo_text};
use a2a_tower_load::{Latencies, arg, report};

/// One subscriber's stream: the check, and each chunk's end offset in the
/// text with its arrival time.
struct Stream {
    check: Check,
    arrivals: Vec<(usize, Instant)>,
    error: Option<String>,
}

/// What one task gave.
#[derive(Default)]
struct TaskResult {
    latencies: Latencies,
    b_first: usize,
    /// The most B was ahead of A.
    b_lead: Duration,
    missing: usize,
    late: usize,
    errors: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let writer = Endpoint::parse(&arg("--writer", String::new())).unwrap_or_else(|e| fail(&e));
    let reader = Endpoint::parse(&arg("--reader", String::new())).unwrap_or_else(|e| fail(&e));
    let tasks: usize = arg("--tasks", 200);
    let words: usize = arg("--words", 20);
    let concurrency: usize = arg("--concurrency", 4);
    let sleep: f64 = arg("--sleep", 0.3);
    let timeout = Duration::from_secs_f64(arg("--timeout", sleep + 30.0));
    let text: Arc<str> = echo_text(sleep, words).into();

    let concurrency = concurrency.clamp(1, tasks.max(1));
    let mut workers = Vec::new();
    for w in 0..concurrency {
        let (a, b, text) = (writer.clone(), reader.clone(), text.clone());
        let share = tasks / concurrency + usize::from(w < tasks % concurrency);
        workers.push(tokio::spawn(async move {
            let mut results = Vec::with_capacity(share);
            let mut sender = None;
            for _ in 0..share {
                results.push(one_task(&a, &b, &text, &mut sender, timeout).await);
            }
            results
        }));
    }
    let mut total = TaskResult::default();
    for w in workers {
        for r in w.await.expect("a worker panicked") {
            total.latencies.merge(r.latencies);
            total.b_first += r.b_first;
            total.b_lead = total.b_lead.max(r.b_lead);
            total.missing += r.missing;
            total.late += r.late;
            total.errors.extend(r.errors);
        }
    }
    for e in total.errors.iter().take(5) {
        eprintln!("xhost: {e}");
    }
    if total.late > 0 {
        eprintln!(
            "xhost: {} chunks were in a snapshot already: raise --sleep",
            total.late
        );
    }
    let mut l = total.latencies;
    report(
        "xhost",
        &[
            ("tasks", tasks.to_string()),
            ("chunks", l.len().to_string()),
            ("p50_us", l.percentile_us(50.0).to_string()),
            ("p99_us", l.percentile_us(99.0).to_string()),
            ("max_us", l.max_us().to_string()),
            ("over_50ms", l.over(Duration::from_millis(50)).to_string()),
            ("b_first", total.b_first.to_string()),
            ("b_lead_max_us", total.b_lead.as_micros().to_string()),
            ("missing", total.missing.to_string()),
            ("late", total.late.to_string()),
            ("errors", total.errors.len().to_string()),
        ],
    );
}

fn fail(e: &str) -> ! {
    eprintln!("xhost: {e}");
    std::process::exit(1)
}

/// Creates one task on `a` (over the worker's kept connection, opened again
/// after a failure), watches it on `a` and `b`, and pairs the arrivals.
async fn one_task(
    a: &Endpoint,
    b: &Endpoint,
    text: &Arc<str>,
    sender: &mut Option<
        hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    >,
    timeout: Duration,
) -> TaskResult {
    let mut r = TaskResult::default();
    if sender.is_none() {
        match connect(a).await {
            Ok(s) => *sender = Some(s),
            Err(e) => {
                r.errors.push(e);
                return r;
            }
        }
    }
    let id = match create_task(sender.as_mut().expect("connected above"), a, text).await {
        Ok(id) => id,
        Err(e) => {
            *sender = None;
            r.errors.push(e);
            return r;
        }
    };
    let (on_a, on_b) = tokio::join!(
        watch(a, &id, text.clone(), timeout),
        watch(b, &id, text.clone(), timeout)
    );
    for s in [&on_a, &on_b] {
        if let Some(e) = &s.error {
            r.errors.push(format!("task {id}: {e}"));
        } else if let Some(m) = s.check.missing() {
            r.errors.push(format!("task {id}: {m}"));
        }
        r.missing += missing_events(&s.check, text);
    }
    r.late = chunk_count(on_b.check.received()).saturating_sub(on_b.arrivals.len());
    pair(&on_a.arrivals, &on_b.arrivals, &mut r);
    r
}

/// Chunks and the final COMPLETED that a stream should have had but did
/// not (the final status counts as missing also when the stream went
/// wrong after it).
fn missing_events(check: &Check, text: &str) -> usize {
    let chunks = chunk_count(text) - chunk_count(check.received());
    chunks + usize::from(!check.complete())
}

/// Records, for every chunk both streams received as an event, B's arrival
/// minus A's (0 and counted in `b_first` when B was first).
fn pair(a: &[(usize, Instant)], b: &[(usize, Instant)], r: &mut TaskResult) {
    let mut a = a.iter().peekable();
    for &(end, tb) in b {
        while a.next_if(|(e, _)| *e < end).is_some() {}
        if let Some(&&(e, ta)) = a.peek()
            && e == end
        {
            if tb < ta {
                r.b_first += 1;
                r.b_lead = r.b_lead.max(ta - tb);
            }
            r.latencies.record(tb.saturating_duration_since(ta));
        }
    }
}

/// Subscribes to `task_id` on `ep` and reads the stream to its end.
async fn watch(ep: &Endpoint, task_id: &str, text: Arc<str>, timeout: Duration) -> Stream {
    let mut s = Stream {
        check: Check::new(text),
        arrivals: Vec::new(),
        error: None,
    };
    let run = async {
        let res = subscribe(ep, task_id).await?;
        read_events(res, |at, ev| {
            s.check.apply(&ev);
            if matches!(ev, Event::Chunk(_)) && s.check.failure().is_none() {
                s.arrivals.push((s.check.received().len(), at));
            }
        })
        .await
    };
    if let Err(e) = tokio::time::timeout(timeout, run)
        .await
        .unwrap_or_else(|_| Err("timed out".into()))
    {
        s.error = Some(e);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_tower::types::TaskState;

    #[test]
    fn pairs_by_place_in_the_text() {
        let t = Instant::now();
        let ms = |n| t + Duration::from_millis(n);
        // A saw the chunks ending at 3, 6, 9; B missed 3 (in its snapshot)
        // and saw 9 before A.
        let a = [(3, ms(10)), (6, ms(20)), (9, ms(30))];
        let b = [(6, ms(25)), (9, ms(29))];
        let mut r = TaskResult::default();
        pair(&a, &b, &mut r);
        assert_eq!(r.latencies.len(), 2);
        assert_eq!(r.latencies.max_us(), 5_000);
        assert_eq!(r.b_first, 1);
        assert_eq!(r.b_lead, Duration::from_millis(1));
        // A chunk only B has is not paired.
        let mut r = TaskResult::default();
        pair(&a[..1], &b, &mut r);
        assert!(r.latencies.is_empty());
    }

    #[test]
    fn counts_missing_events() {
        let text = "sleep 0 w1 w2";
        let snap = Event::Snapshot {
            state: TaskState::Working,
            text: String::new(),
        };
        let mut c = Check::new(text.into());
        assert_eq!(missing_events(&c, text), 5);
        c.apply(&snap);
        c.apply(&Event::Chunk("sleep ".into()));
        c.apply(&Event::Chunk("0 ".into()));
        assert_eq!(missing_events(&c, text), 3);
        c.apply(&Event::Chunk("w1 ".into()));
        c.apply(&Event::Chunk("w2".into()));
        assert_eq!(missing_events(&c, text), 1);
        c.apply(&Event::Status(TaskState::Completed));
        assert_eq!(missing_events(&c, text), 0);
    }
}
