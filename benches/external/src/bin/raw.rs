//! The raw baseline of the external load figures: a hyper handler with no
//! layers and no store. It decodes a JSON-RPC SendMessage into the crate's
//! own types and answers a completed echo task, served by the same hyper
//! connection builder as the examples (`hyper_util`'s auto builder, HTTP/1.1
//! and HTTP/2), so that a server's ratio to it is the cost of the A2A stack.
//!
//! Listens on `A2A_ADDR` (default `127.0.0.1:8080`) and prints
//! `listening on http://ADDR` once bound, as the examples do:
//!
//! ```text
//! A2A_ADDR=127.0.0.1:0 target/release/raw
//! ```

#[path = "../../../common/raw.rs"]
mod handler;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;

// The examples' allocator (examples/common/mod.rs), so that the baseline
// differs from them by the stack alone.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::var("A2A_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let svc = tower::service_fn(handler::handle);
    loop {
        let (stream, _) = listener.accept().await?;
        let conn = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc))
            .into_owned();
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}
