//! The records through the `metrics` facade.

use std::time::Duration;

use metrics::{Key, Level, Metadata};

use super::{keys, names};

/// What the `metrics` macros would pass for a record of this module.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

pub(super) fn request(
    operation: &'static str,
    binding: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    // The keys of this label set, built once for the process: no label
    // vector allocated and no key hashed per request (the recorder is still
    // asked for its handle each time, so a local recorder sees the record).
    let [count, duration] = keys::cached(
        [names::REQUESTS, names::REQUEST_DURATION],
        [
            ("operation", operation),
            ("binding", binding),
            ("outcome", outcome),
        ],
    );
    record(count, duration, took);
}

pub(super) fn client_call(operation: &'static str, outcome: &'static str, took: Duration) {
    let [count, duration] = keys::cached(
        [names::CLIENT_CALLS, names::CLIENT_CALL_DURATION],
        [("operation", operation), ("outcome", outcome), ("", "")],
    );
    record(count, duration, took);
}

fn record(count: &Key, duration: &Key, took: Duration) {
    metrics::with_recorder(|r| {
        r.register_counter(count, &METADATA).increment(1);
        r.register_histogram(duration, &METADATA)
            .record(took.as_secs_f64());
    });
}

pub(super) fn commit(log: &'static str, appends: usize, took: Duration) {
    // Literal labels: a static key, nothing allocated per commit.
    let (duration, batch) = match log {
        "sqlite" => (
            metrics::histogram!(names::LOG_COMMIT_DURATION, "log" => "sqlite"),
            metrics::histogram!(names::LOG_COMMIT_BATCH, "log" => "sqlite"),
        ),
        "postgres" => (
            metrics::histogram!(names::LOG_COMMIT_DURATION, "log" => "postgres"),
            metrics::histogram!(names::LOG_COMMIT_BATCH, "log" => "postgres"),
        ),
        "memory" => (
            metrics::histogram!(names::LOG_COMMIT_DURATION, "log" => "memory"),
            metrics::histogram!(names::LOG_COMMIT_BATCH, "log" => "memory"),
        ),
        other => (
            metrics::histogram!(names::LOG_COMMIT_DURATION, "log" => other),
            metrics::histogram!(names::LOG_COMMIT_BATCH, "log" => other),
        ),
    };
    duration.record(took.as_secs_f64());
    batch.record(appends as f64);
}

pub(super) fn execution_ended(outcome: &'static str) {
    // Literal labels for the outcomes the engine reports: a static key,
    // nothing allocated per execution.
    let counter = match outcome {
        "completed" => metrics::counter!(names::EXECUTIONS, "outcome" => "completed"),
        "failed" => metrics::counter!(names::EXECUTIONS, "outcome" => "failed"),
        "canceled" => metrics::counter!(names::EXECUTIONS, "outcome" => "canceled"),
        "closed" => metrics::counter!(names::EXECUTIONS, "outcome" => "closed"),
        other => metrics::counter!(names::EXECUTIONS, "outcome" => other),
    };
    counter.increment(1);
}
