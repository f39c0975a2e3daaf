//! The records through the `metrics` facade.

use std::time::Duration;

use super::names;

pub(super) fn request(
    operation: &'static str,
    binding: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    let labels = [
        ("operation", operation),
        ("binding", binding),
        ("outcome", outcome),
    ];
    metrics::counter!(names::REQUESTS, &labels).increment(1);
    metrics::histogram!(names::REQUEST_DURATION, &labels).record(took.as_secs_f64());
}

pub(super) fn client_call(operation: &'static str, outcome: &'static str, took: Duration) {
    let labels = [("operation", operation), ("outcome", outcome)];
    metrics::counter!(names::CLIENT_CALLS, &labels).increment(1);
    metrics::histogram!(names::CLIENT_CALL_DURATION, &labels).record(took.as_secs_f64());
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
