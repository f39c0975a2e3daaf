//! What telemetry costs a SendMessage, in process: the echo agent behind the
//! JSON-RPC binding over the engine and a `MemoryTaskLog`, called with an
//! in-memory request, with the examples' telemetry off, with only the
//! Prometheus recorder, with only the OpenTelemetry span layer (recording
//! every span, exported nowhere: `A2A_OTEL=noop`), and with both (what
//! `benches/telemetry/echo-telemetry-on` runs). One thread, no sockets: the
//! difference between the sides is telemetry's own CPU, without the noise of
//! the load generator and the scheduler that the figures from outside carry.
//!
//! Run with `cargo bench --bench telemetry --features otel,metrics`. The
//! sides' times move with this VM's noise (±30 % between processes); their
//! instructions do not: `TELEMETRY_CALLS=N TELEMETRY_SIDE=off|metrics|spans|on`
//! makes N calls of one side under `valgrind --tool=callgrind` (see
//! `benches/README.md`).
//!
//! The recorder and the span layer are the examples' own
//! (`examples/common/telemetry.rs`), installed for the calls of their side
//! only (`metrics::with_local_recorder`, `tracing::dispatcher::with_default`),
//! so every side runs in one process; the recorder's upkeep runs every 4 096
//! calls, as the examples' does every 5 s.

// The examples' own modules (their unused parts allowed in them).
#[allow(unused_imports)]
#[path = "../examples/common/echo_agent.rs"]
mod echo_agent;
#[path = "../examples/common/telemetry.rs"]
mod telemetry;

use std::cell::Cell;
use std::hint::black_box;

use a2a_tower::JsonRpcLayer;
use a2a_tower::engine::{AgentExecutor, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tower::{Layer as _, ServiceExt as _};
use tracing_subscriber::layer::SubscriberExt as _;

/// The binding over the engine, one type for every side.
type Stack = tower::util::BoxCloneService<
    http::Request<Full<Bytes>>,
    http::Response<a2a_tower::Body>,
    std::convert::Infallible,
>;

const BODY: &str = r#"{"jsonrpc":"2.0","id":"r1","method":"SendMessage","params":{"message":{"messageId":"9f3c2a52-2d54-4bd8-9d11-7b8a4f0f5e21","role":"ROLE_USER","parts":[{"text":"hello, agent: please echo this short sentence back"}]}}}"#;

fn card() -> AgentCard {
    AgentCard::new("Echo", "Echo", "0.1.0")
        .with_interface(AgentInterface::jsonrpc("http://127.0.0.1:8080/"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echo"))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let card = card();
    // A stack of its own for each side, its log bounded at 1 024 tasks: from
    // the warm-up on, every call stores one task and evicts one, so no side
    // runs on a log fuller (or emptier) than another's.
    let stack = || {
        let _rt = rt.enter();
        let log = MemoryTaskLog::builder().max_tasks(1024).build().unwrap();
        let core = TaskLayer::new(card.clone(), log)
            .unwrap()
            .layer(AgentExecutor::service(echo_agent::Echo));
        Stack::new(JsonRpcLayer::new(&card).unwrap().layer(core))
    };
    let send = |stack: &Stack| {
        let req = http::Request::post("/")
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .header("content-length", BODY.len())
            .body(Full::new(Bytes::from_static(BODY.as_bytes())))
            .unwrap();
        let svc = stack.clone();
        rt.block_on(async move {
            let res = svc.oneshot(req).await.unwrap();
            assert_eq!(res.status(), http::StatusCode::OK);
            black_box(res.into_body().collect().await.unwrap().to_bytes())
        })
    };

    let recorder = telemetry::prometheus().build_recorder();
    let handle = recorder.handle();
    let calls = Cell::new(0u32);
    let with_metrics = |f: &dyn Fn() -> Bytes| {
        calls.set(calls.get().wrapping_add(1));
        if calls.get().is_multiple_of(4096) {
            handle.run_upkeep();
        }
        metrics::with_local_recorder(&recorder, f)
    };
    let provider = SdkTracerProvider::builder().build();
    let spans = tracing::Dispatch::new(
        tracing_subscriber::registry().with(telemetry::span_layer(&provider)),
    );
    let none = tracing::Dispatch::none();

    // `TELEMETRY_CALLS=N TELEMETRY_SIDE=spans`: N calls of one side and
    // nothing else, for instruction counts (callgrind, the difference between
    // two N), which this shared VM's noise does not move.
    if let Ok(n) = std::env::var("TELEMETRY_CALLS") {
        let n: usize = n.parse().expect("TELEMETRY_CALLS is a count");
        let side = std::env::var("TELEMETRY_SIDE").unwrap_or_default();
        let s = stack();
        for _ in 0..n {
            match side.as_str() {
                "off" => tracing::dispatcher::with_default(&none, || send(&s)),
                "metrics" => {
                    tracing::dispatcher::with_default(&none, || with_metrics(&|| send(&s)))
                }
                "spans" => tracing::dispatcher::with_default(&spans, || send(&s)),
                "on" => tracing::dispatcher::with_default(&spans, || with_metrics(&|| send(&s))),
                other => panic!("TELEMETRY_SIDE {other:?}: off, metrics, spans or on"),
            };
        }
        return;
    }
    let mut g = c.benchmark_group("send_message_telemetry");
    let off = stack();
    g.bench_function("off", |b| {
        b.iter(|| tracing::dispatcher::with_default(&none, || send(&off)))
    });
    let only_metrics = stack();
    g.bench_function("metrics", |b| {
        b.iter(|| {
            tracing::dispatcher::with_default(&none, || with_metrics(&|| send(&only_metrics)))
        })
    });
    let only_spans = stack();
    g.bench_function("spans", |b| {
        b.iter(|| tracing::dispatcher::with_default(&spans, || send(&only_spans)))
    });
    let on = stack();
    g.bench_function("on", |b| {
        b.iter(|| tracing::dispatcher::with_default(&spans, || with_metrics(&|| send(&on))))
    });
    g.finish();
    // The recorder saw the requests of its sides.
    assert!(handle.render().contains("a2a_requests_total"));
}

criterion_group!(benches, bench);
criterion_main!(benches);
