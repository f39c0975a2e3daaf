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
    let labels = [("log", log)];
    metrics::histogram!(names::LOG_COMMIT_DURATION, &labels).record(took.as_secs_f64());
    metrics::histogram!(names::LOG_COMMIT_BATCH, &labels).record(appends as f64);
}
