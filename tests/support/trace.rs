//! A tracing subscriber that records every span's fields, for the tests of
//! what spans carry. Use it in a test binary of its own: tracing caches
//! callsite interest process-wide.

use std::sync::{Arc, Mutex};

/// Records the fields of every span, to check what a span carries (and
/// that nothing else does).
#[derive(Default, Clone)]
pub(crate) struct Fields(Arc<Mutex<Spans>>);

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

    /// Every recorded value contains none of `text`.
    pub(crate) fn never(&self, text: &str) -> bool {
        let spans = self.0.lock().unwrap();
        spans.fields.iter().all(|(.., v)| !v.contains(text))
    }

    /// The values recorded for `field` on spans named `span`.
    pub(crate) fn of(&self, span: &str, field: &str) -> Vec<String> {
        let spans = self.0.lock().unwrap();
        let found = spans
            .fields
            .iter()
            .filter(|(s, f, _)| s == span && f == field);
        found.map(|(.., v)| v.clone()).collect()
    }
}

impl Fields {
    /// Runs `work` to completion on a current-thread runtime (with timers),
    /// with this subscriber as the default.
    pub(crate) fn run<F: std::future::Future>(&self, work: F) -> F::Output {
        tracing::subscriber::with_default(self.clone(), || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap()
                .block_on(work)
        })
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
