//! gRPC SendMessage throughput beside JSON-RPC, on the same run.
//!
//! One `A2aServer` (card with a JSONRPC and a GRPC interface; the task
//! engine over a `MemoryTaskLog`; an agent answering its input text) is
//! served in this process on `127.0.0.1:0` by hyper-util's `auto` builder
//! (HTTP/1.1 and h2c on one listener). Two sides drive it, alternating
//! A B A B …, each for `GRPC_SECS` seconds (default 2) per round over
//! `GRPC_CONNS` connections (default 16) with one call in flight per
//! connection:
//!
//! - `grpc`: the generated tonic client (`A2aServiceClient`), one HTTP/2
//!   channel per connection, `SendMessage`;
//! - `jsonrpc`: hyper-util's pooled HTTP/1.1 client POSTing the JSON-RPC
//!   `SendMessage` of the same message.
//!
//! Both answer a COMPLETED task (checked on every call). The load generator
//! shares the server's tokio runtime (2 workers), as in `benches/load.rs`.
//! After `GRPC_ROUNDS` rounds (default 3) it prints each side's calls per
//! second per round and the ratio grpc/jsonrpc, then the cost of the ProtoJSON
//! bridge alone (generated message → JSON → crate type, and back) per call.
//!
//! ```sh
//! cargo bench --bench grpc --features grpc
//! ```

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::grpc::proto::a2a_service_client::A2aServiceClient;
use a2a_tower::grpc::proto::{self, part, send_message_response};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill, SendMessageRequest, Task};
use bytes::Bytes;
use futures_core::Stream;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tonic::transport::Channel;

/// Answers with the input text.
struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn start() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let card = AgentCard::new("Bench", "Echoes", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("http://{addr}/rpc")))
        .with_interface(AgentInterface::grpc(addr.to_string()))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"));
    let app = A2aServer::builder(card).agent(Echo).await.expect("stack");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let svc = TowerToHyperService::new(app.clone());
            tokio::spawn(async move {
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

const TEXT: &str = "hello world";

fn grpc_request() -> proto::SendMessageRequest {
    proto::SendMessageRequest {
        message: Some(proto::Message {
            message_id: "m-1".into(),
            role: proto::Role::User as i32,
            parts: vec![proto::Part {
                content: Some(part::Content::Text(TEXT.into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn jsonrpc_body() -> Bytes {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": TEXT}]}}});
    Bytes::from(serde_json::to_vec(&body).expect("body"))
}

async fn grpc_call(client: &mut A2aServiceClient<Channel>) {
    let mut req = tonic::Request::new(grpc_request());
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().expect("ascii"));
    let res = client.send_message(req).await.expect("SendMessage");
    match res.into_inner().payload {
        Some(send_message_response::Payload::Task(t)) => {
            let state = t.status.as_ref().map(|s| s.state());
            assert_eq!(state, Some(proto::TaskState::Completed));
            black_box(t);
        }
        other => panic!("unexpected answer {other:?}"),
    }
}

async fn jsonrpc_call(client: &Client<HttpConnector, Full<Bytes>>, url: &str, body: &Bytes) {
    let req = Request::post(url)
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(Full::new(body.clone()))
        .expect("request");
    let res = client.request(req).await.expect("POST");
    assert!(res.status().is_success());
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    assert!(
        memchr_completed(&bytes),
        "not a completed task: {}",
        String::from_utf8_lossy(&bytes)
    );
    black_box(bytes);
}

fn memchr_completed(bytes: &[u8]) -> bool {
    bytes
        .windows(b"TASK_STATE_COMPLETED".len())
        .any(|w| w == b"TASK_STATE_COMPLETED")
}

/// Calls per second of one side over `conns` connections for `secs`.
async fn run_side(side: &str, addr: SocketAddr, conns: u64, secs: u64) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let url = format!("http://{addr}/rpc");
    let body = jsonrpc_body();
    let mut workers = Vec::new();
    for _ in 0..conns {
        let (stop, done, url, body) = (stop.clone(), done.clone(), url.clone(), body.clone());
        if side == "grpc" {
            let channel = Channel::from_shared(format!("http://{addr}"))
                .expect("uri")
                .connect()
                .await
                .expect("connect");
            let mut client = A2aServiceClient::new(channel);
            workers.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    grpc_call(&mut client).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }));
        } else {
            // One pooled keep-alive connection per worker.
            let client: Client<HttpConnector, Full<Bytes>> =
                Client::builder(TokioExecutor::new()).build_http();
            workers.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    jsonrpc_call(&client, &url, &body).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
    }
    // Half a second of warm-up, then the measured window.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let start_count = done.load(Ordering::Relaxed);
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let calls = done.load(Ordering::Relaxed) - start_count;
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.expect("worker");
    }
    calls as f64 / elapsed.as_secs_f64()
}

/// Mean time of `f` over `n` calls.
fn per_call(n: u32, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed() / n
}

/// The ProtoJSON bridge alone, as the binding runs it: the request message
/// into the crate's `SendMessageRequest`, the answer `Task` into the
/// generated message.
fn bridge() -> (Duration, Duration) {
    let pb = grpc_request();
    let decode = per_call(20_000, || {
        let json = serde_json::to_vec(black_box(&pb)).expect("json");
        let req: SendMessageRequest = serde_json::from_slice(&json).expect("fits");
        black_box(req);
    });
    let task: Task = serde_json::from_value(serde_json::json!({
        "id": "01a2", "contextId": "01a3",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-01T10:00:00Z"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": TEXT}]}],
        "history": [{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": TEXT}]}]
    }))
    .expect("task");
    let encode = per_call(20_000, || {
        let json = serde_json::to_vec(black_box(&task)).expect("json");
        let pb: proto::Task = serde_json::from_slice(&json).expect("fits");
        black_box(pb);
    });
    (decode, encode)
}

fn main() {
    let rounds = env("GRPC_ROUNDS", 3);
    let secs = env("GRPC_SECS", 2);
    let conns = env("GRPC_CONNS", 16);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let addr = rt.block_on(start());
    let mut results = Vec::new();
    for r in 1..=rounds {
        let grpc = rt.block_on(run_side("grpc", addr, conns, secs));
        let jsonrpc = rt.block_on(run_side("jsonrpc", addr, conns, secs));
        eprintln!("round {r}: grpc {grpc:.0}/s, jsonrpc {jsonrpc:.0}/s");
        results.push((grpc, jsonrpc));
    }
    eprintln!("\nSendMessage, {conns} connections, {secs} s per side and round:");
    for (r, (g, j)) in results.iter().enumerate() {
        eprintln!(
            "  round {}: grpc {g:.0} calls/s, jsonrpc {j:.0} calls/s, grpc/jsonrpc {:.2}",
            r + 1,
            g / j
        );
    }
    let (decode, encode) = bridge();
    eprintln!(
        "ProtoJSON bridge per call: request {:.1} µs, answer task {:.1} µs",
        decode.as_secs_f64() * 1e6,
        encode.as_secs_f64() * 1e6
    );
}
