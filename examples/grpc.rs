//! Run with `cargo run --example grpc --features grpc`: the echo example's
//! agent (its input back word by word; `sleep N` first stays WORKING for N
//! seconds) over JSON-RPC, HTTP+JSON and gRPC, from one `A2aServer` service.
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`; `127.0.0.1:0` picks a
//! free port) and prints `listening on http://ADDR` once bound. The card
//! advertises JSON-RPC at `/a2a`, HTTP+JSON under `/a2a/rest` and a `GRPC`
//! interface at `host:port` (a2a-spec.md §8):
//!
//! - **One listener** (the default): hyper-util's `auto` builder serves
//!   HTTP/1.1 and HTTP/2 (h2c, prior knowledge) on the same port; the
//!   service routes requests with a gRPC content type to the gRPC binding
//!   and the rest by path. The GRPC interface is the same address.
//! - **A listener of its own**: with `A2A_GRPC_ADDR` set (`127.0.0.1:0`
//!   picks a free port), gRPC is served there, HTTP/2 only, by a clone of the
//!   same service (it shares the task engine); the card advertises that
//!   address. The line `grpc on ADDR` is printed once bound.
//!
//! ```text
//! grpcurl -plaintext -import-path proto -proto a2a.proto -H 'a2a-version: 1.0' \
//!   -d '{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}' \
//!   127.0.0.1:8080 lf.a2a.v1.A2AService/SendMessage
//! ```

#[path = "common/agents.rs"]
mod agents;
#[path = "common/echo_agent.rs"]
mod echo_agent;

use std::convert::Infallible;

use a2a_tower::server::A2aServer;
use a2a_tower::types::AgentInterface;
use a2a_tower::{Body, BoxError};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let listener = TcpListener::bind(agents::addr()).await?;
    let addr = listener.local_addr()?;
    let grpc_listener = match std::env::var("A2A_GRPC_ADDR") {
        Ok(a) if !a.is_empty() => Some(TcpListener::bind(a.as_str()).await?),
        _ => None,
    };
    let grpc_addr = match &grpc_listener {
        Some(l) => l.local_addr()?,
        None => addr,
    };
    // The GRPC interface's url is `host:port`, not a URL.
    let card = agents::card(&agents::base_url(addr))
        .with_interface(AgentInterface::grpc(grpc_addr.to_string()));
    // The card has a GRPC interface, so the service serves gRPC (by content
    // type) beside JSON-RPC and HTTP+JSON, all over one task engine.
    let a2a = A2aServer::builder(card).agent(echo_agent::Echo).await?;
    println!("listening on http://{addr}");
    if let Some(grpc) = grpc_listener {
        println!("grpc on {grpc_addr}");
        let mut h2 = auto::Builder::new(TokioExecutor::new());
        h2 = h2.http2_only();
        tokio::spawn(serve(grpc, a2a.clone(), h2));
    }
    serve(listener, a2a, auto::Builder::new(TokioExecutor::new())).await;
    Ok(())
}

/// Accepts connections forever, serving `svc` on each with `http`.
async fn serve<S>(listener: TcpListener, svc: S, http: auto::Builder<TokioExecutor>)
where
    S: tower::Service<
            http::Request<hyper::body::Incoming>,
            Response = http::Response<Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static,
{
    loop {
        let (stream, _peer) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let conn = http
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc.clone()))
            .into_owned();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                eprintln!("connection error: {e}");
            }
        });
    }
}
