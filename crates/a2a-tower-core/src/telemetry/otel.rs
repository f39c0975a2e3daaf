//! W3C Trace Context through `opentelemetry`'s propagator and
//! `tracing-opentelemetry`'s span extension.

use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(HeaderName::as_str).collect()
    }
}

struct HeadersMut<'a>(&'a mut HeaderMap);

impl Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

pub(super) fn set_remote_parent(span: &tracing::Span, headers: &HeaderMap) {
    if !headers.contains_key("traceparent") {
        return;
    }
    let cx = TraceContextPropagator::new().extract(&Headers(headers));
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

pub(super) fn inject(headers: &mut HeaderMap) {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return;
    }
    TraceContextPropagator::new().inject_context(&cx, &mut HeadersMut(headers));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_through_the_propagator() {
        let mut headers = HeaderMap::new();
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        headers.insert("traceparent", HeaderValue::from_static(tp));
        let cx = TraceContextPropagator::new().extract(&Headers(&headers));
        let mut out = HeaderMap::new();
        TraceContextPropagator::new().inject_context(&cx, &mut HeadersMut(&mut out));
        assert_eq!(out["traceparent"], tp);
    }
}
