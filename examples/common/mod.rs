//! Serving helpers shared by the examples: bind `A2A_ADDR` (default
//! `127.0.0.1:8080`), print the bound address, serve with
//! `a2a_tower::server::serve` until Ctrl-C.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;

use a2a_tower::Body;
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tower::Service;

// mimalloc, not glibc's malloc: tokio's workers free on one thread what
// another allocated (a request's task moves between workers, the memory log
// evicts what other requests stored), and glibc's arenas then contend for a
// lock (futex calls, wake-ups). Measured from outside: about a fifth less
// server CPU per SendMessage on the memory log and through the delivery
// queue, none for the raw baseline (benches/README.md, "Allocator"). A host
// binary picks its own; this is a suggestion, set once here for the examples
// that serve through this module.
// `RUSTFLAGS="--cfg a2a_system_allocator"` leaves the system's malloc in
// place, which valgrind's dhat counts (benches/README.md, "The engine alone").
#[cfg(not(a2a_system_allocator))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The address to listen on: `A2A_ADDR`, else `127.0.0.1:8080`.
pub(crate) fn addr() -> SocketAddr {
    std::env::var("A2A_ADDR")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)))
}

/// The public base URL for a bound address (what the card advertises).
pub(crate) fn base_url(addr: SocketAddr) -> String {
    format!("http://{addr}")
}

/// Binds the listener and prints `listening on http://ADDR`. The accept
/// backlog is 1024 (the operating system may cap it at `somaxconn`), not
/// std's 128: a burst of clients connecting at once (thousands of
/// subscribers, say) is queued rather than dropped and retried a second later.
pub(crate) async fn bind() -> std::io::Result<(TcpListener, SocketAddr)> {
    let addr = addr();
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let listener = socket.listen(1024)?;
    let local = listener.local_addr()?;
    println!("listening on http://{local}");
    Ok((listener, local))
}

/// Serves `svc` on `listener` until Ctrl-C, then lets open connections finish.
pub(crate) async fn serve<S>(listener: TcpListener, svc: S) -> std::io::Result<()>
where
    S: Service<http::Request<Incoming>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    a2a_tower::server::serve(listener, svc)
        .with_graceful_shutdown(ctrl_c)
        .await
}

/// `V03Layer` over `card` when `A2A_V03` is `1` (A2A 0.3 served beside
/// 1.0), else `None`.
pub(crate) fn v03_layer(
    card: &a2a_tower::types::AgentCard,
) -> Result<Option<a2a_tower::v03::V03Layer>, a2a_tower::ConfigError> {
    if std::env::var("A2A_V03").is_ok_and(|v| v == "1") {
        a2a_tower::v03::V03Layer::new(card).map(Some)
    } else {
        Ok(None)
    }
}
