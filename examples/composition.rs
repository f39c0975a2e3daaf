//! Run with `cargo run --example composition`: the echo agent with host
//! layers composed into the one-call assembly: a concurrency limit and a
//! response timeout at the HTTP level, an audit layer at the A2A level.
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`; `127.0.0.1:0` picks a
//! free port) and prints `listening on http://ADDR` once bound; each A2A call
//! is logged to stderr as `audit: #N Method`. The card advertises JSON-RPC
//! at `/a2a` and HTTP+JSON under `/a2a/rest`.
//!
//! ```text
//! AgentCardLayer                 the card (public, outside the host layers)
//!  └ ConcurrencyLimitLayer(64)   http_layer #1 (outermost)
//!    └ TimeoutLayer(30 s → 503)  http_layer #2
//!      └ body limit → version → extensions → JSON-RPC / HTTP+JSON
//!        └ AuditLayer            a2a_layer: sees decoded `A2aRequest`s
//!          └ task engine → Echo
//! ```

#[path = "common/agents.rs"]
mod agents;
#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use a2a_tower::A2aRequest;
use a2a_tower::server::A2aServer;
use http::StatusCode;
use tower::limit::ConcurrencyLimitLayer;
use tower::{Layer, Service};
use tower_http::timeout::TimeoutLayer;

/// Logs every decoded A2A call with its operation name and a running count.
/// An `a2a_layer` sees the operation, its parameters and the call context
/// (tenant, headers, principal): the place for audit trails and quotas, with
/// no HTTP or JSON-RPC parsing of its own.
#[derive(Clone, Default)]
struct AuditLayer {
    calls: Arc<AtomicU64>,
}

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;

    fn layer(&self, inner: S) -> Audit<S> {
        Audit {
            inner,
            calls: self.calls.clone(),
        }
    }
}

/// The service of [`AuditLayer`].
#[derive(Clone)]
struct Audit<S> {
    inner: S,
    calls: Arc<AtomicU64>,
}

impl<S: Service<A2aRequest>> Service<A2aRequest> for Audit<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: A2aRequest) -> S::Future {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        eprintln!("audit: #{n} {}", req.operation.method());
        self.inner.call(req)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (listener, addr) = common::bind().await?;
    let card = agents::card(&agents::base_url(addr));
    let a2a = A2aServer::builder(card)
        // At most 64 requests in flight; more wait for a permit. The permit is
        // held until the response head is ready, so an open SSE stream does
        // not hold one. `RateLimitLayer` is not usable here as is: in tower
        // 0.5 its service is not `Clone` (it owns its timer), and every
        // connection needs a clone. Wrapping it in `tower::buffer::Buffer`
        // makes one shared, cloneable rate limiter, at the price of a worker
        // task and a queue; a concurrency limit needs neither.
        .http_layer(ConcurrencyLimitLayer::new(64))
        // A response head within 30 s, else 503 with an empty body. It bounds
        // the wait of a blocking SendMessage, not the SSE body; the task
        // itself runs on (executions are detached from connections), and the
        // client can fetch it with GetTask.
        .http_layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_secs(30),
        ))
        .a2a_layer(AuditLayer::default())
        .agent(agents::Echo)
        .await?;
    common::serve(listener, a2a).await?;
    Ok(())
}
