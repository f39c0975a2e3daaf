//! Push deliveries per second: `PushSender::deliver` of one status update
//! (ProtoJSON, token and Authorization headers) to a minimal hyper receiver
//! on loopback (it reads the body and answers 204), served in this process
//! on the same tokio runtime (2 workers), loopback allowed in the guard.
//!
//! - `push/sequential`: one delivery at a time (one config, its events in
//!   order), so per-delivery latency over a kept-alive connection;
//! - `push/concurrent_32`: 32 deliveries at once (32 configs), the
//!   sender's throughput with its connection pool.
//!
//! Criterion reports time per iteration and, from the declared throughput,
//! deliveries per second.
//!
//! ```sh
//! cargo bench --bench push -- --warm-up-time 1 --measurement-time 3
//! ```

use std::convert::Infallible;
use std::hint::black_box;

use a2a_tower::push::{PushSender, WebhookGuard};
use a2a_tower::types::{AuthenticationInfo, StreamResponse, TaskPushNotificationConfig};
use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const EVENT: &str = r#"{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-02T03:04:05.678Z"}}}"#;
const CONCURRENT: usize = 32;

/// A receiver that reads each body and answers 204; its base URL.
async fn receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let svc = hyper::service::service_fn(
                |req: http::Request<hyper::body::Incoming>| async move {
                    let body = req.into_body().collect().await.map(|b| b.to_bytes());
                    black_box(body.ok());
                    let mut res = Response::new(Full::<Bytes>::default());
                    *res.status_mut() = StatusCode::NO_CONTENT;
                    Ok::<_, Infallible>(res)
                },
            );
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

fn config(base: &str, n: usize) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        id: format!("cfg-{n}"),
        task_id: "task-1".into(),
        url: format!("{base}/hook/{n}"),
        token: "bench-token".into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "bench-credentials".into(),
        }),
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let base = rt.block_on(receiver());
    let sender = PushSender::builder()
        .guard(WebhookGuard::new().allow("127.0.0.0/8".parse().expect("net")))
        .build()
        .expect("sender");
    let event: StreamResponse = serde_json::from_str(EVENT).expect("event");
    let configs: Vec<_> = (0..CONCURRENT).map(|n| config(&base, n)).collect();

    let mut g = c.benchmark_group("push");
    g.throughput(Throughput::Elements(1));
    g.bench_function("sequential", |b| {
        b.to_async(&rt).iter(|| async {
            sender
                .deliver(&configs[0], &event)
                .await
                .expect("delivered");
        })
    });
    g.throughput(Throughput::Elements(CONCURRENT as u64));
    g.bench_function(format!("concurrent_{CONCURRENT}"), |b| {
        b.to_async(&rt).iter(|| async {
            let all = configs.iter().map(|c| {
                let (sender, c, event) = (sender.clone(), c.clone(), event.clone());
                tokio::spawn(async move { sender.deliver(&c, &event).await })
            });
            for d in futures_util::future::join_all(all).await {
                d.expect("joined").expect("delivered");
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
