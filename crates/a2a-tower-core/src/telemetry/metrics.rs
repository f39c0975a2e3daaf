//! The records through the `metrics` facade.
//!
//! The facade's macros build a metric's [`Key`] (its name, its labels and
//! their hash) at every call unless the name and the labels are all
//! literals, and without a recorder installed that is most of a record's
//! cost: about 1 300 instructions per served SendMessage (seven keys for
//! the request pair, the commit pair, the execution gauge and counter, and
//! a `Vec` of labels for each of the request pair's). So the keys
//! of the records made per request are built once: in statics where every
//! part is known at compile time, per thread for the request pair, whose
//! label values are `&'static str`s from closed sets. The recorder still
//! sees every record, with the key and metadata the macros would give.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use metrics::{Key, Label, Level, Metadata};

use super::names;

/// What the macros give their records: this module as the target, level
/// INFO.
static META: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// A static key: `key!(NAME)` or `key!(NAME, "label" => "value", …)`,
/// built (and hashed) at compile time.
macro_rules! key {
    ($name:expr $(, $label:literal => $value:literal)* $(,)?) => {{
        static LABELS: [Label; key!(@count $($label)*)] =
            [$(Label::from_static_parts($label, $value)),*];
        static KEY: Key = Key::from_static_parts($name, &LABELS);
        &KEY
    }};
    (@count) => { 0 };
    (@count $head:literal $($tail:literal)*) => { 1 + key!(@count $($tail)*) };
}

fn counter(key: &Key) -> metrics::Counter {
    metrics::with_recorder(|r| r.register_counter(key, &META))
}

fn gauge(key: &Key) -> metrics::Gauge {
    metrics::with_recorder(|r| r.register_gauge(key, &META))
}

fn histogram(key: &Key) -> metrics::Histogram {
    metrics::with_recorder(|r| r.register_histogram(key, &META))
}

/// The request pair's keys for one set of label values.
type RequestKeys = Rc<(Key, Key)>;

/// At most this many sets of label values are kept per thread (the crate's
/// own are a few dozen); past it, a record builds its keys, as the macros do.
const KEPT: usize = 256;

thread_local! {
    /// By the label values' addresses and lengths: each is a `&'static str`,
    /// so they stand for its text (two copies of one text give two entries
    /// with equal keys, which a recorder merges). A server serves a few
    /// operations with a few outcomes each, so a short list is searched.
    static REQUEST_KEYS: RefCell<Vec<([usize; 6], RequestKeys)>> = const { RefCell::new(Vec::new()) };
}

fn request_keys(
    operation: &'static str,
    binding: &'static str,
    outcome: &'static str,
) -> RequestKeys {
    let make = || {
        let labels = [
            Label::from_static_parts("operation", operation),
            Label::from_static_parts("binding", binding),
            Label::from_static_parts("outcome", outcome),
        ];
        Rc::new((
            Key::from_parts(names::REQUESTS, labels.to_vec()),
            Key::from_parts(names::REQUEST_DURATION, labels.to_vec()),
        ))
    };
    let at = |s: &str| (s.as_ptr() as usize, s.len());
    let ((o, ol), (b, bl), (r, rl)) = (at(operation), at(binding), at(outcome));
    let id = [o, ol, b, bl, r, rl];
    // `try_with`: a record made while the thread's locals are being
    // destroyed builds its keys instead of panicking.
    REQUEST_KEYS
        .try_with(|keys| {
            let mut keys = keys.borrow_mut();
            if let Some(i) = keys.iter().rposition(|(k, _)| *k == id) {
                return keys[i].1.clone();
            }
            let made = make();
            if keys.len() < KEPT {
                keys.push((id, made.clone()));
            }
            made
        })
        .unwrap_or_else(|_| make())
}

pub(super) fn request(
    operation: &'static str,
    binding: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    let keys = request_keys(operation, binding, outcome);
    counter(&keys.0).increment(1);
    histogram(&keys.1).record(took.as_secs_f64());
}

pub(super) fn client_call(operation: &'static str, outcome: &'static str, took: Duration) {
    let labels = [("operation", operation), ("outcome", outcome)];
    metrics::counter!(names::CLIENT_CALLS, &labels).increment(1);
    metrics::histogram!(names::CLIENT_CALL_DURATION, &labels).record(took.as_secs_f64());
}

pub(super) fn commit(log: &'static str, appends: usize, took: Duration) {
    let (duration, batch) = match log {
        "sqlite" => (
            histogram(key!(names::LOG_COMMIT_DURATION, "log" => "sqlite")),
            histogram(key!(names::LOG_COMMIT_BATCH, "log" => "sqlite")),
        ),
        "postgres" => (
            histogram(key!(names::LOG_COMMIT_DURATION, "log" => "postgres")),
            histogram(key!(names::LOG_COMMIT_BATCH, "log" => "postgres")),
        ),
        "memory" => (
            histogram(key!(names::LOG_COMMIT_DURATION, "log" => "memory")),
            histogram(key!(names::LOG_COMMIT_BATCH, "log" => "memory")),
        ),
        other => (
            metrics::histogram!(names::LOG_COMMIT_DURATION, "log" => other),
            metrics::histogram!(names::LOG_COMMIT_BATCH, "log" => other),
        ),
    };
    duration.record(took.as_secs_f64());
    batch.record(appends as f64);
}

pub(super) fn active_executions(delta: f64) {
    gauge(key!(names::ACTIVE_EXECUTIONS)).increment(delta);
}

pub(super) fn active_subscribers(delta: f64) {
    gauge(key!(names::ACTIVE_SUBSCRIBERS)).increment(delta);
}

pub(super) fn execution_ended(outcome: &'static str) {
    let counter = match outcome {
        "completed" => counter(key!(names::EXECUTIONS, "outcome" => "completed")),
        "failed" => counter(key!(names::EXECUTIONS, "outcome" => "failed")),
        "canceled" => counter(key!(names::EXECUTIONS, "outcome" => "canceled")),
        "closed" => counter(key!(names::EXECUTIONS, "outcome" => "closed")),
        other => metrics::counter!(names::EXECUTIONS, "outcome" => other),
    };
    counter.increment(1);
}

#[cfg(test)]
mod tests {
    use metrics_util::MetricKind;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::*;

    /// One record: kind, name, labels, value.
    type Record = (MetricKind, String, Vec<(String, String)>, DebugValue);

    /// Every record `f` made, by name and labels.
    fn recorded(f: impl FnOnce()) -> Vec<Record> {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, f);
        let mut out: Vec<_> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let (kind, key) = key.into_parts();
                let labels = key
                    .labels()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                (kind, key.name().to_owned(), labels, value)
            })
            .collect();
        out.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
        out
    }

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn request_keys_are_reused_and_reach_the_recorder_whole() {
        let got = recorded(|| {
            request("SendMessage", "jsonrpc", "ok", Duration::from_millis(2));
            request("SendMessage", "jsonrpc", "ok", Duration::from_millis(4));
            request(
                "GetTask",
                "rest",
                "TASK_NOT_FOUND",
                Duration::from_millis(1),
            );
        });
        let send = labels(&[
            ("operation", "SendMessage"),
            ("binding", "jsonrpc"),
            ("outcome", "ok"),
        ]);
        let get = labels(&[
            ("operation", "GetTask"),
            ("binding", "rest"),
            ("outcome", "TASK_NOT_FOUND"),
        ]);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0].1, names::REQUEST_DURATION);
        assert_eq!((&got[0].2, &got[1].2), (&get, &send));
        assert_eq!(
            got[1].3,
            DebugValue::Histogram(vec![0.002.into(), 0.004.into()])
        );
        assert_eq!(got[2].1, names::REQUESTS);
        assert_eq!((&got[2].2, &got[2].3), (&get, &DebugValue::Counter(1)));
        assert_eq!((&got[3].2, &got[3].3), (&send, &DebugValue::Counter(2)));
    }

    #[test]
    fn static_keys_carry_their_names_and_labels() {
        let got = recorded(|| {
            commit("memory", 3, Duration::from_millis(1));
            commit("custom", 1, Duration::from_millis(1));
            execution_ended("completed");
            execution_ended("other");
            active_executions(1.0);
            active_subscribers(2.0);
        });
        let names_and_labels: Vec<_> = got.iter().map(|r| (r.1.as_str(), r.2.clone())).collect();
        assert_eq!(
            names_and_labels,
            [
                (names::ACTIVE_EXECUTIONS, labels(&[])),
                (names::ACTIVE_SUBSCRIBERS, labels(&[])),
                (names::EXECUTIONS, labels(&[("outcome", "completed")])),
                (names::EXECUTIONS, labels(&[("outcome", "other")])),
                (names::LOG_COMMIT_BATCH, labels(&[("log", "custom")])),
                (names::LOG_COMMIT_BATCH, labels(&[("log", "memory")])),
                (names::LOG_COMMIT_DURATION, labels(&[("log", "custom")])),
                (names::LOG_COMMIT_DURATION, labels(&[("log", "memory")])),
            ]
        );
        assert_eq!(got[5].3, DebugValue::Histogram(vec![3.0.into()]));
        assert_eq!(got[0].3, DebugValue::Gauge(1.0.into()));
    }

    #[test]
    fn past_the_kept_sets_keys_are_built_per_record() {
        // Leaked texts: each set of label values is new, so the list fills.
        let texts: Vec<&'static str> = (0..KEPT + 10)
            .map(|i| &*Box::leak(format!("op{i}").into_boxed_str()))
            .collect();
        let got = recorded(|| {
            for t in &texts {
                request(t, "jsonrpc", "ok", Duration::from_millis(1));
            }
            request(texts[KEPT + 5], "jsonrpc", "ok", Duration::from_millis(1));
        });
        assert_eq!(REQUEST_KEYS.with_borrow(Vec::len), KEPT);
        let last = labels(&[
            ("operation", texts[KEPT + 5]),
            ("binding", "jsonrpc"),
            ("outcome", "ok"),
        ]);
        let counted = got.iter().find(|r| r.1 == names::REQUESTS && r.2 == last);
        assert_eq!(counted.map(|r| &r.3), Some(&DebugValue::Counter(2)));
    }

    #[test]
    fn a_static_key_equals_the_one_the_macros_build() {
        let ours = key!(names::LOG_COMMIT_BATCH, "log" => "memory");
        let theirs = Key::from_parts(names::LOG_COMMIT_BATCH, vec![Label::new("log", "memory")]);
        assert_eq!(ours, &theirs);
        assert_eq!(ours.get_hash(), theirs.get_hash());
    }
}
