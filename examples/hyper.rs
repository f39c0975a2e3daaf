//! Run with `cargo run --example hyper`: the echo agent on plain hyper 1 +
//! hyper-util, with graceful shutdown on Ctrl-C.
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`; `127.0.0.1:0` picks a
//! free port) and prints `listening on http://ADDR` once bound. The card at
//! `/.well-known/agent-card.json` advertises JSON-RPC at `/a2a` and HTTP+JSON
//! under `/a2a/rest`: the `A2aServer` service routes both itself, so hyper
//! needs no router, only an accept loop. (`a2a_tower::server::serve` is such
//! a loop, for hosts that want nothing of their own in it.)
//!
//! ```text
//! curl -s localhost:8080/a2a/rest/message:send -H 'a2a-version: 1.0' \
//!   -H 'content-type: application/json' \
//!   -d '{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}'
//! ```

#[path = "common/agents.rs"]
mod agents;

use a2a_tower::server::A2aServer;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

// mimalloc, not glibc's malloc: tokio's workers free on one thread what
// another allocated (a request's task moves between workers, the memory log
// evicts what other requests stored), and glibc's arenas then contend for a
// lock (futex calls, wake-ups). Measured from outside: about a fifth less
// server CPU per SendMessage on the memory log and through the delivery
// queue, none for the raw baseline (benches/README.md, "Allocator"). A host
// binary picks its own; this is a suggestion.
// `RUSTFLAGS="--cfg a2a_system_allocator"` leaves the system's malloc in
// place, which valgrind's dhat counts (benches/README.md, "The engine alone").
#[cfg(not(a2a_system_allocator))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Bind first: the card advertises the bound address (port 0 included).
    let listener = TcpListener::bind(agents::addr()).await?;
    let addr = listener.local_addr()?;
    let card = agents::card(&agents::base_url(addr));
    // A `tower::Service<http::Request<B>>` for any body B: the card endpoint,
    // body limit, version and extension checks, JSON-RPC at /a2a and
    // HTTP+JSON under /a2a/rest, and the task engine running `Echo`.
    let a2a = A2aServer::builder(card).agent(agents::Echo).await?;
    println!("listening on http://{addr}");

    // One builder for every connection: HTTP/1.1 and HTTP/2 (prior knowledge).
    let http = auto::Builder::new(TokioExecutor::new());
    // Tracks open connections so that Ctrl-C can drain them.
    let graceful = GracefulShutdown::new();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _peer) = match accepted {
                    Ok(conn) => conn,
                    // Out of file descriptors and the like: back off, keep serving.
                    Err(e) => {
                        eprintln!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                };
                // `TowerToHyperService` adapts the tower service (cloned per
                // connection; clones share the task engine) to hyper's.
                let svc = TowerToHyperService::new(a2a.clone());
                let conn = http.serve_connection_with_upgrades(TokioIo::new(stream), svc);
                // `watch` makes the connection finish its in-flight requests
                // and close once shutdown starts.
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        eprintln!("connection error: {e}");
                    }
                });
            }
            _ = &mut ctrl_c => break,
        }
    }
    // Stop accepting, signal every connection, and wait for them (bounded: an
    // open SSE stream would otherwise hold shutdown for as long as it lasts).
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => println!("shut down gracefully"),
        () = tokio::time::sleep(std::time::Duration::from_secs(10)) => {
            println!("shutdown timed out; closing open connections");
        }
    }
    Ok(())
}
