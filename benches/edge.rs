//! The whole HTTP edge (card, body limit, version, extensions, JSON-RPC) over a
//! trivial core, against the same core called directly with a decoded request.
//!
//! Run with `cargo bench --bench edge`. The ratio edge/core is the cost of the
//! edge per SendMessage: header checks, body collection, envelope decode,
//! validation and response encode. `full_edge_v03` is the same SendMessage
//! sent as A2A 0.3 (`message/send`, no `A2A-Version`) through `V03Layer`
//! around the same edge; `full_edge_through_v03` is the 1.0 request through
//! that layer (its pass-through cost).

use std::hint::black_box;

use a2a_tower::types::{
    AgentCard, AgentInterface, AgentSkill, Message, SendMessageRequest, SendMessageResponse, Task,
    TaskState, TaskStatus,
};
use a2a_tower::{
    A2aError, A2aRequest, A2aResponse, AgentCardLayer, BodyLimitLayer, ErrorKind, ExtensionsLayer,
    JsonRpcLayer, Operation, VersionLayer,
};
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use tower::{Service, ServiceBuilder, ServiceExt};

const BODY_V03: &str = r#"{"jsonrpc":"2.0","id":"r1","method":"message/send","params":{"message":{"kind":"message","messageId":"9f3c2a52-2d54-4bd8-9d11-7b8a4f0f5e21","role":"user","parts":[{"kind":"text","text":"hello, agent: please echo this short sentence back"}]}}}"#;

const BODY: &str = r#"{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"message":{"messageId":"9f3c2a52-2d54-4bd8-9d11-7b8a4f0f5e21","role":"ROLE_USER","parts":[{"text":"hello, agent: please echo this short sentence back"}]}}}"#;

async fn trivial_core(req: A2aRequest) -> Result<A2aResponse, A2aError> {
    match req.operation {
        Operation::SendMessage(send) => Ok(A2aResponse::SendMessage(SendMessageResponse::Task(
            Task {
                id: "5a8f0e0e-7c55-4f2b-a6a3-0c1f9ad1d7a2".into(),
                context_id: "b7f0b8b1-1f0a-4d39-9c34-55c1c0b1d6f3".into(),
                status: TaskStatus {
                    state: TaskState::Completed,
                    ..Default::default()
                },
                history: vec![send.message],
                ..Default::default()
            }
            .into(),
        ))),
        _ => Err(A2aError::new(ErrorKind::UnsupportedOperation)),
    }
}

fn card() -> AgentCard {
    AgentCard::new("Bench", "Trivial core", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://127.0.0.1:8080/"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echo"))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let card = card();
    let edge = ServiceBuilder::new()
        .layer(AgentCardLayer::new(&card).unwrap())
        .layer(BodyLimitLayer::new(&card).unwrap())
        .layer(VersionLayer::new(&card).unwrap())
        .layer(ExtensionsLayer::new(&card).unwrap())
        .layer(JsonRpcLayer::new(&card).unwrap())
        .service(tower::service_fn(trivial_core));
    let core = tower::service_fn(trivial_core);
    let message: Message = serde_json::from_str(
        r#"{"messageId":"9f3c2a52-2d54-4bd8-9d11-7b8a4f0f5e21","role":"ROLE_USER","parts":[{"text":"hello, agent: please echo this short sentence back"}]}"#,
    )
    .unwrap();

    let mut g = c.benchmark_group("send_message");
    g.bench_function("core_alone", |b| {
        b.to_async(&rt).iter(|| {
            let mut core = core;
            let req = A2aRequest::new(Operation::SendMessage(SendMessageRequest {
                message: message.clone(),
                ..Default::default()
            }));
            async move { black_box(core.call(req).await.unwrap()) }
        })
    });
    g.bench_function("full_edge", |b| {
        b.to_async(&rt).iter(|| {
            let svc = edge.clone();
            let req = http::Request::post("/")
                .header("content-type", "application/json")
                .header("a2a-version", "1.0")
                .header("content-length", BODY.len())
                .body(Full::new(Bytes::from_static(BODY.as_bytes())))
                .unwrap();
            async move {
                let res = svc.oneshot(req).await.unwrap();
                black_box(res.into_body().collect().await.unwrap().to_bytes())
            }
        })
    });
    let edge03 = tower::Layer::layer(&a2a_tower::v03::V03Layer::new(&card).unwrap(), edge.clone());
    for (name, body, version) in [
        ("full_edge_through_v03", BODY, Some("1.0")),
        ("full_edge_v03", BODY_V03, None),
    ] {
        g.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let svc = edge03.clone();
                let mut req = http::Request::post("/")
                    .header("content-type", "application/json")
                    .header("content-length", body.len());
                if let Some(v) = version {
                    req = req.header("a2a-version", v);
                }
                let req = req
                    .body(Full::new(Bytes::from_static(body.as_bytes())))
                    .unwrap();
                async move {
                    let res = svc.oneshot(req).await.unwrap();
                    black_box(res.into_body().collect().await.unwrap().to_bytes())
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
