//! The external load generator of the speed figures (benches/external.sh,
//! benches/soak.sh): JSON-RPC SendMessage over HTTP/1.1 keep-alive
//! connections, in a process of its own, so that a server's CPU per request
//! (read from `/proc` by `--pid`) is its own. Two modes:
//!
//! ```text
//! loadgen closed --url URL [--url URL2 ...] [--conns 32] [--secs 10] [--warmup 1] [--contexts M]
//!                [--pid PID ...]
//! loadgen open --url URL [--rate 5000] [--secs 60] [--pid PID] [--max-conns 512]
//!              [--max-lag-ms 10] [--drain-secs 10]
//! ```
//!
//! `closed` is `wrk -t1 -cN`: N connections on one thread, each sending its
//! next request once the last is answered; one `closed key=value …` line.
//! `open` sends requests at fixed intervals whatever the server does and
//! measures each from its due time; an `open-second …` line per second and
//! an `open key=value …` summary, whose `generator=` says whether the
//! generator kept to its schedule (`BEHIND` makes the run invalid).
//! A request is ok only for status 200 and a JSON-RPC `result`; the first
//! error is printed on stderr.

mod closed;
mod open;
mod pool;
mod procs;
mod request;
mod schedule;
mod stats;
mod timer;

use std::future::Future;
use std::process::ExitCode;

fn main() -> ExitCode {
    let result = match std::env::args().nth(1).as_deref() {
        Some("closed") => closed::run(),
        Some("open") => open::run(),
        _ => Err("usage: loadgen closed|open --url URL ... (see the source's docs)".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs `f` on a single-threaded tokio runtime, where the generator's tasks
/// share state without locks (`spawn_local`).
fn on_one_thread<F: Future>(f: F) -> Result<F::Output, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    Ok(tokio::task::LocalSet::new().block_on(&rt, f))
}
