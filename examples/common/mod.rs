//! Serving helpers shared by the examples: bind `A2A_ADDR` (default
//! `127.0.0.1:8080`), print the bound address, serve HTTP/1.1 with hyper until
//! Ctrl-C.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;

use a2a_tower::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::Service;

/// The address to listen on: `A2A_ADDR`, else `127.0.0.1:8080`.
pub fn addr() -> SocketAddr {
    std::env::var("A2A_ADDR")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)))
}

/// The public base URL for a bound address (what the card advertises).
pub fn base_url(addr: SocketAddr) -> String {
    format!("http://{addr}")
}

/// Binds the listener and prints `listening on http://ADDR`.
pub async fn bind() -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr()).await?;
    let local = listener.local_addr()?;
    println!("listening on http://{local}");
    Ok((listener, local))
}

/// Serves `svc` on `listener` until Ctrl-C, then lets open connections finish.
pub async fn serve<S>(listener: TcpListener, svc: S) -> std::io::Result<()>
where
    S: Service<http::Request<Incoming>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                let conn = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc.clone()))
                    .into_owned();
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    graceful.shutdown().await;
    Ok(())
}
