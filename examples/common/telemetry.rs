//! The examples' telemetry: `GET /metrics` (Prometheus text exposition, from
//! the `metrics` facade's records) on the same listener as the agent, and
//! with `A2A_OTEL=stdout` every span exported as OpenTelemetry through the
//! official stdout exporter (trace ids in hex). Build with `--features otel`
//! so that trace context also crosses calls (a `traceparent` parents the
//! call span; the client sends its own).

#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use a2a_tower::Body;
use bytes::Bytes;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tower::Service;
use tracing_subscriber::layer::SubscriberExt as _;

/// What [`init`] installed; dropping it flushes the spans.
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take() {
            let _ = p.shutdown();
        }
    }
}

static PROMETHEUS: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder (for `GET /metrics`) and, with
/// `A2A_OTEL=stdout`, the stdout span exporter.
pub(crate) fn init() -> Telemetry {
    let builder = prometheus();
    // `A2A_METRICS=off`: no recorder (the telemetry-off side of the figures).
    if std::env::var("A2A_METRICS").as_deref() != Ok("off")
        && let Ok(handle) = builder.install_recorder()
    {
        // `install_recorder` spawns no upkeep: without it every histogram
        // sample is kept until the next scrape of `GET /metrics` (memory
        // growing with the request count when nobody scrapes).
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(5));
                    upkeep.run_upkeep();
                }
            })
            .expect("spawn the metrics upkeep thread");
        let _ = PROMETHEUS.set(handle);
    }
    let otel = std::env::var("A2A_OTEL");
    let provider = match otel.as_deref() {
        // `noop`: spans recorded as OpenTelemetry, exported nowhere (the
        // telemetry-on side of the figures).
        Ok(mode @ ("stdout" | "noop")) => {
            let mut provider = SdkTracerProvider::builder();
            if mode == "stdout" {
                provider =
                    provider.with_simple_exporter(opentelemetry_stdout::SpanExporter::default());
            }
            let provider = provider.build();
            let layer = span_layer(&provider);
            let _ =
                tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer));
            Some(provider)
        }
        _ => None,
    };
    Telemetry { provider }
}

/// The Prometheus recorder's settings: histograms with buckets (the
/// exporter's default is a summary): seconds for the durations, counts of
/// appends for a log commit's batch size.
pub(crate) fn prometheus() -> PrometheusBuilder {
    const BUCKETS: &[f64] = &[
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ];
    const BATCH: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
    PrometheusBuilder::new()
        .set_buckets(BUCKETS)
        .expect("buckets are not empty")
        .set_buckets_for_metric(
            Matcher::Full(a2a_tower::telemetry::names::LOG_COMMIT_BATCH.to_owned()),
            BATCH,
        )
        .expect("buckets are not empty")
}

/// The layer that records every span as OpenTelemetry through `provider`:
/// no busy/idle timings (two clock reads per poll of every instrumented
/// future, and two attributes added at close) and no thread attributes (the
/// thread's name copied into every span): what they cost is measured in
/// benches/README.md (`benches/telemetry.rs` measures the rest).
pub(crate) fn span_layer<S>(
    provider: &SdkTracerProvider,
) -> tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_tracer(provider.tracer("a2a-tower"))
}

/// `svc` with `GET /metrics` answered from the recorder [`init`] installed.
#[derive(Clone)]
pub(crate) struct WithMetrics<S>(pub(crate) S);

type BoxFuture = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

impl<S, B> Service<http::Request<B>> for WithMetrics<S>
where
    S: Service<http::Request<B>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> BoxFuture {
        if req.method() == http::Method::GET && req.uri().path() == "/metrics" {
            let text = PROMETHEUS.get().map(|h| h.render()).unwrap_or_default();
            let res = http::Response::builder()
                .header(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")
                .body(Body::from(Bytes::from(text)))
                .expect("a valid response");
            return Box::pin(async move { Ok(res) });
        }
        Box::pin(self.0.call(req))
    }
}

/// With `A2A_RETENTION_SECS=N`, deletes `log`'s terminal tasks older than N
/// seconds in the background (every N seconds, at most every minute), and
/// compacts the queue streams of contexts with nothing queued and nothing
/// running whose queue has not changed for N seconds, for the life of the
/// process.
#[cfg(feature = "engine")]
pub(crate) fn retention<L: a2a_tower::log::Retention + Clone>(log: &L) {
    static SWEEPS: std::sync::Mutex<Vec<a2a_tower::log::RetentionHandle>> =
        std::sync::Mutex::new(Vec::new());
    let Some(secs) = std::env::var("A2A_RETENTION_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return;
    };
    let policy = a2a_tower::log::RetentionPolicy::new(std::time::Duration::from_secs(secs))
        .compact_streams(a2a_tower::queue::QueueStreams);
    let handle = policy.spawn(std::sync::Arc::new(log.clone()));
    SWEEPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(handle);
}
