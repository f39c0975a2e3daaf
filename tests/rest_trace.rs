//! The `a2a.rest` tracing span (its own test binary: tracing caches callsite
//! interest process-wide, so a thread-local subscriber must not race other
//! tests hitting the same callsite).

#![cfg(feature = "rest")]

use std::sync::{Arc, Mutex};

use a2a_tower::types::{AgentCard, AgentInterface};
use a2a_tower::{A2aError, A2aRequest, A2aResponse, RestLayer};
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt};

/// Records the fields of every span, to check what `a2a.rest` carries.
#[derive(Default, Clone)]
struct Fields(Arc<Mutex<Spans>>);

/// Span names by id, and `(span, field, value)` as recorded.
#[derive(Default)]
struct Spans {
    names: Vec<&'static str>,
    fields: Vec<(String, String, String)>,
}

impl Fields {
    fn push(&self, span: &str, values: &tracing::span::Record<'_>) {
        struct V<'a>(&'a mut Vec<(String, String, String)>, &'a str);
        impl tracing::field::Visit for V<'_> {
            fn record_str(&mut self, f: &tracing::field::Field, v: &str) {
                self.0
                    .push((self.1.to_owned(), f.name().to_owned(), v.to_owned()));
            }
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.record_str(f, &format!("{v:?}"));
            }
        }
        values.record(&mut V(&mut self.0.lock().unwrap().fields, span));
    }

    fn of(&self, span: &str, field: &str) -> Vec<String> {
        let spans = self.0.lock().unwrap();
        let found = spans
            .fields
            .iter()
            .filter(|(s, f, _)| s == span && f == field);
        found.map(|(.., v)| v.clone()).collect()
    }
}

impl tracing::Subscriber for Fields {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let name = attrs.metadata().name();
        let id = {
            let mut spans = self.0.lock().unwrap();
            spans.names.push(name);
            spans.names.len() as u64
        };
        self.push(name, &tracing::span::Record::new(attrs.values()));
        tracing::span::Id::from_u64(id)
    }
    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let name = self.0.lock().unwrap().names[span.into_u64() as usize - 1];
        self.push(name, values);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The `a2a.rest` span names the operation and the error kind, never error text.
#[test]
fn span_records_operation_and_error_kind_only() {
    let fields = Fields::default();
    let core = tower::service_fn(|_req: A2aRequest| async {
        Err::<A2aResponse, _>(A2aError::internal("db password hunter2"))
    });
    let card = AgentCard::default().with_interface(AgentInterface::http_json("http://h/a2a"));
    let svc = RestLayer::new(&card).unwrap().layer(core);
    let get = |path: &str| Request::get(path).body(Full::new(Bytes::new())).unwrap();
    tracing::subscriber::with_default(fields.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            for (path, status) in [("/a2a/tasks/t-1", 500), ("/a2a/nope", 404)] {
                let res = svc.clone().oneshot(get(path)).await.unwrap();
                assert_eq!(res.status(), status);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                assert!(!String::from_utf8_lossy(&body).contains("hunter2"));
            }
        });
    });
    assert_eq!(fields.of("a2a.rest", "operation"), ["GetTask"]);
    assert_eq!(
        fields.of("a2a.rest", "error"),
        ["INTERNAL_ERROR", "METHOD_NOT_FOUND"]
    );
    let spans = fields.0.lock().unwrap();
    assert!(spans.fields.iter().all(|(.., v)| !v.contains("hunter2")));
}
