//! Client overhead: one SendMessage at a time over JSON-RPC through
//! [`A2aClient`] (encode the `A2aRequest`, the HTTP call, decode the answer
//! into a typed `Task`), against a raw hyper-util legacy client POSTing the
//! same JSON-RPC bytes with the same headers and only collecting the body.
//! Both talk to the same server over one keep-alive loopback connection
//! each, so the difference is what the client adds per call.
//!
//! The server is the echo example's full stack (`examples/echo.rs`:
//! card, body limit, version, extensions, JSON-RPC, task engine, the echo
//! agent) over a `MemoryTaskLog`, served **in this process** on
//! `127.0.0.1:0` rather than as the example's child process: the bench then
//! needs no example binary built with matching features, starts no second
//! process, and both sides meet exactly the same server (the example's own
//! SQLite log would add an fsync per task, which would drown the client's
//! share). Server and client share one tokio runtime (2 workers).
//!
//! The two sides alternate, A B A B …: `CLIENT_ROUNDS` rounds (default 3),
//! each a `client/rN` then a `raw/rN` criterion bench. After the last round
//! it prints each round's mean per call (over criterion's measured
//! iterations, warm-up excluded) and the ratio client/raw.
//!
//! ```sh
//! cargo bench --bench client -- --warm-up-time 1 --measurement-time 3
//! ```

// The example itself (its `main` and unit tests unused here).
#[allow(dead_code, unused_imports)]
#[path = "../examples/echo.rs"]
mod echo;

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_tower::client::{A2aClient, HttpClient, Transport};
use a2a_tower::engine::TaskLayer;
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{Message, SendMessageRequest, SendMessageResponse, TaskState};
use a2a_tower::{A2aRequest, A2aResponse, Operation};
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

const TEXT: &str = "hello world";
const MESSAGE_ID: &str = "m-1";

/// The request both sides send.
fn request() -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user(MESSAGE_ID, TEXT),
        ..Default::default()
    }
}

/// The JSON-RPC body `A2aClient` sends for [`request`] (its ids count up
/// from 1; the raw side sends id 1 every time).
fn raw_body() -> Bytes {
    let params = serde_json::to_value(request()).expect("params");
    let env =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params});
    Bytes::from(serde_json::to_vec(&env).expect("body"))
}

/// The echo example's stack over a `MemoryTaskLog`, on a free port.
async fn start_echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let card = echo::card(&format!("http://{addr}"));
    let tasks = TaskLayer::new(card.clone(), MemoryTaskLog::new()).expect("engine");
    let app = echo::app_with(&card, tasks).expect("echo stack");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let svc = TowerToHyperService::new(app.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

/// One SendMessage through the client; checks the answer.
async fn via_client(client: &A2aClient<HttpClient>, req: &SendMessageRequest) {
    let res = client
        .clone()
        .oneshot(A2aRequest::new(Operation::SendMessage(req.clone())))
        .await
        .expect("SendMessage");
    match res {
        A2aResponse::SendMessage(SendMessageResponse::Task(t)) => {
            assert_eq!(t.status.state, TaskState::Completed);
            black_box(t);
        }
        other => panic!("unexpected answer {other:?}"),
    }
}

/// The same bytes POSTed by a raw hyper client; only the body is collected.
async fn via_raw(raw: &Client<HttpConnector, Full<Bytes>>, url: &str, body: &Bytes) {
    let req = Request::post(url)
        .header("a2a-version", "1.0")
        .header("accept", "application/json")
        .header("content-type", "application/json")
        .body(Full::new(body.clone()))
        .expect("request");
    let res = raw.request(req).await.expect("POST");
    assert!(res.status().is_success());
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    assert!(!bytes.is_empty());
    black_box(bytes);
}

/// Per side and round: (iterations, time) of criterion's measured samples.
type Totals = Arc<Mutex<Vec<(u64, Duration)>>>;

/// Criterion calls `iter_custom` for the warm-up too (its iteration counts
/// grow during it); only calls after `measuring` starts count, approximated
/// as those after the warm-up time has passed.
fn record(totals: &Totals, started: Instant, warm_up: Duration, iters: u64, took: Duration) {
    if started.elapsed() > warm_up {
        totals.lock().unwrap().push((iters, took));
    }
}

fn mean(samples: &[(u64, Duration)]) -> Duration {
    let iters: u64 = samples.iter().map(|s| s.0).sum();
    let time: Duration = samples.iter().map(|s| s.1).sum();
    time / u32::try_from(iters.max(1)).unwrap_or(u32::MAX)
}

fn bench(c: &mut Criterion) {
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime"),
    );
    let addr = rt.block_on(start_echo());
    let base = format!("http://{addr}");
    let client = rt.block_on(async {
        A2aClient::builder(format!("{base}/.well-known/agent-card.json"))
            .transport(Transport::JsonRpc)
            .build()
            .expect("config")
            .connect()
            .await
            .expect("connect")
    });
    let raw: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let url = client.url().to_owned();
    let body = raw_body();
    let req = request();
    // Criterion's default warm-up is 3 s; `--warm-up-time` overrides it.
    let warm_up = warm_up_from_args().unwrap_or(Duration::from_secs(3));
    let rounds = std::env::var("CLIENT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3u32);

    let mut results = Vec::new();
    let mut g = c.benchmark_group("send_message");
    for r in 1..=rounds {
        let sides: [(&str, Totals); 2] =
            [("client", Totals::default()), ("raw", Totals::default())];
        for (side, totals) in &sides {
            let started = Instant::now();
            g.bench_function(format!("{side}/r{r}"), |b| {
                b.to_async(&*rt).iter_custom(|iters| {
                    let (client, raw, url, body, req, totals) = (
                        client.clone(),
                        raw.clone(),
                        url.clone(),
                        body.clone(),
                        req.clone(),
                        totals.clone(),
                    );
                    let side = *side;
                    async move {
                        let t = Instant::now();
                        for _ in 0..iters {
                            if side == "client" {
                                via_client(&client, &req).await;
                            } else {
                                via_raw(&raw, &url, &body).await;
                            }
                        }
                        let took = t.elapsed();
                        record(&totals, started, warm_up, iters, took);
                        took
                    }
                })
            });
        }
        let client_mean = mean(&sides[0].1.lock().unwrap());
        let raw_mean = mean(&sides[1].1.lock().unwrap());
        results.push((r, client_mean, raw_mean));
    }
    g.finish();
    eprintln!("\nSendMessage, one call at a time (mean per call, measured samples):");
    for (r, cm, rm) in results {
        eprintln!(
            "  round {r}: client {:.1} µs, raw {:.1} µs, client/raw {:.3}, overhead {:.1} µs",
            cm.as_secs_f64() * 1e6,
            rm.as_secs_f64() * 1e6,
            cm.as_secs_f64() / rm.as_secs_f64(),
            (cm.as_secs_f64() - rm.as_secs_f64()) * 1e6,
        );
    }
}

/// `--warm-up-time SECS` from the bench's arguments, if given.
fn warm_up_from_args() -> Option<Duration> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--warm-up-time")?;
    args.get(i + 1)?.parse().ok().map(Duration::from_secs_f64)
}

criterion_group!(benches, bench);
criterion_main!(benches);
