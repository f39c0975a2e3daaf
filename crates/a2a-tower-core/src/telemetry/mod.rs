//! Telemetry shared by every part of the crate: W3C Trace Context across A2A
//! calls ([`set_remote_parent`], [`inject`]) and the request metrics
//! ([`record_request`], [`record_client_call`]).
//!
//! `tracing` stays the instrumentation API. With the feature `otel`, a call
//! span whose request carries a `traceparent` (an HTTP header, or gRPC
//! metadata, which is the same header) is parented on that remote span
//! through `tracing-opentelemetry`, and the client writes the current span's
//! context into every request it sends (card fetches included). Without a
//! `tracing-opentelemetry` layer in the subscriber, or without the feature,
//! both do nothing.
//!
//! With the feature `metrics` (on by default), counters and histograms are
//! recorded through the [`metrics`](https://docs.rs/metrics) facade: the host
//! installs the recorder (Prometheus, StatsD, OpenTelemetry through a bridge)
//! it wants. Without one, the records made per request cost an atomic load
//! each (their keys are built once) and, for the request pair, a look-up
//! in a short per-thread list. The names are in [`names`].
//!
//! Span attributes follow the OpenTelemetry semantic conventions (RPC,
//! HTTP, and the GenAI agent draft):
//!
//! | span | attributes |
//! |---|---|
//! | `a2a.jsonrpc` | `otel.kind` server, `rpc.system` `jsonrpc`, `rpc.method`, `http.request.method`, `url.path`, `http.response.status_code` |
//! | `a2a.rest` | `otel.kind` server, `http.request.method`, `url.path`, `http.route` (the operation's template, `/tasks/{id}`), `http.response.status_code` |
//! | `a2a.grpc` | `otel.kind` server, `rpc.system` `grpc`, `rpc.service` `lf.a2a.v1.A2AService`, `rpc.method`, `http.request.method`, `url.path`, `http.response.status_code` |
//! | `a2a.call` | the engine's call span when no binding serves it: `method`, `task_id`, `context_id`, `error.kind` |
//! | `a2a.execution` | `gen_ai.operation.name` `invoke_agent`, `gen_ai.conversation.id` (the context id), `task_id`, `outcome` |
//! | `a2a.client` | `otel.kind` client, `rpc.system` (`jsonrpc`, `grpc`; none for HTTP+JSON), `rpc.method`, `server.address` |
//!
//! Beside them, `error` carries an error's ErrorInfo reason (a closed set);
//! message text, remote or the user's, never goes into a span. A binding's
//! span also carries the `task_id` and `context_id` of the call: the core
//! it serves records them there ([`in_binding_span`]), and makes no
//! `a2a.call` span of its own.
//!
//! ```
//! use a2a_tower_core::telemetry;
//!
//! // Nothing to extract: the span keeps its local parent.
//! let span = tracing::info_span!("a2a.call");
//! telemetry::set_remote_parent(&span, &http::HeaderMap::new());
//! // Outside any exported span there is no context to send.
//! let mut headers = http::HeaderMap::new();
//! telemetry::inject(&mut headers);
//! assert!(headers.get("traceparent").is_none());
//! ```

#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "otel")]
mod otel;

use std::time::Duration;

use crate::A2aError;

/// The names of the metrics the crate records (all `a2a_`-prefixed, in
/// Prometheus style; seconds for durations).
pub mod names {
    /// Counter of served requests; labels `operation`, `binding`
    /// (`JSONRPC`, `HTTP+JSON`, `GRPC`) and `outcome` (`ok`, or the error's
    /// ErrorInfo reason).
    pub const REQUESTS: &str = "a2a_requests_total";
    /// Histogram of the time from the decoded request to the core's answer
    /// (the first event of a stream), same labels as [`REQUESTS`].
    pub const REQUEST_DURATION: &str = "a2a_request_duration_seconds";
    /// Counter of client calls; labels `operation` and `outcome` (`ok`, or
    /// the remote's or the transport's ErrorInfo reason).
    pub const CLIENT_CALLS: &str = "a2a_client_calls_total";
    /// Histogram of client call durations, same labels as [`CLIENT_CALLS`].
    pub const CLIENT_CALL_DURATION: &str = "a2a_client_call_duration_seconds";
    /// Gauge of executions running in this process.
    pub const ACTIVE_EXECUTIONS: &str = "a2a_active_executions";
    /// Counter of ended executions; label `outcome`.
    pub const EXECUTIONS: &str = "a2a_executions_total";
    /// Counter of push delivery attempts; labels `outcome` (`delivered`,
    /// `retry`, `gave_up`).
    pub const PUSH_DELIVERIES: &str = "a2a_push_deliveries_total";
    /// Counter of tasks a retention sweep deleted; label `log`.
    pub const RETENTION_DELETED: &str = "a2a_retention_deleted_total";
    /// Histogram of the time a task log took to commit, from the append
    /// call to its durable commit (SQLite: one writer transaction, which
    /// may hold several appends; PostgreSQL: one committer transaction,
    /// which may hold several appends, or one locked append or
    /// `append_all` call; memory: one call); label `log` (`sqlite`,
    /// `postgres`, `memory`).
    pub const LOG_COMMIT_DURATION: &str = "a2a_log_commit_duration_seconds";
    /// Histogram of the appends each commit of [`LOG_COMMIT_DURATION`]
    /// held (group commit: how many callers one transaction answered);
    /// label `log`.
    pub const LOG_COMMIT_BATCH: &str = "a2a_log_commit_batch_size";
    /// Gauge of open event streams (SubscribeToTask, SendStreamingMessage)
    /// served by this process.
    pub const ACTIVE_SUBSCRIBERS: &str = "a2a_active_subscribers";
    /// Gauge of the inputs queued (not yet admitted) in the delivery
    /// queues of the contexts this process has seen; label `target` (the
    /// agent an input names, `*` for inputs naming none). One team per
    /// process: the team's depth is the sum.
    pub const QUEUE_DEPTH: &str = "a2a_queue_depth";
    /// Histogram of the time a queued input waited, from its SUBMITTED
    /// status to its admission; label `agent` (the agent it was admitted
    /// for).
    pub const QUEUE_ADMISSION_WAIT: &str = "a2a_queue_admission_wait_seconds";
}

/// Parents `span` on the remote span named by the `traceparent` (and
/// `tracestate`) of `headers`, if any and valid. Call it before the span
/// has children. Does nothing without the feature `otel`.
pub fn set_remote_parent(span: &tracing::Span, headers: &http::HeaderMap) {
    #[cfg(feature = "otel")]
    otel::set_remote_parent(span, headers);
    #[cfg(not(feature = "otel"))]
    let _ = (span, headers);
}

/// Writes the current span's trace context (`traceparent`, `tracestate`)
/// into `headers`; nothing when the current span is not exported by a
/// `tracing-opentelemetry` layer, or without the feature `otel`.
pub fn inject(headers: &mut http::HeaderMap) {
    #[cfg(feature = "otel")]
    otel::inject(headers);
    #[cfg(not(feature = "otel"))]
    let _ = headers;
}

/// The names of the bindings' call spans (JSON-RPC, HTTP+JSON, gRPC): each
/// declares `task_id` and `context_id`, which the core it serves records.
pub const BINDING_SPANS: [&str; 3] = ["a2a.jsonrpc", "a2a.rest", "a2a.grpc"];

/// Whether the current span is a binding's call span
/// ([`BINDING_SPANS`]): a core served by a binding records its ids there
/// instead of opening a second span per call that would repeat the method
/// (each span an exporter records costs CPU on every call).
pub fn in_binding_span() -> bool {
    tracing::Span::current()
        .metadata()
        .is_some_and(|m| BINDING_SPANS.contains(&m.name()))
}

/// The `outcome` label of a result: `ok`, or the error's reason (a closed
/// set, never the error's text).
pub fn outcome<T>(result: &Result<T, A2aError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(e) => e.kind().reason(),
    }
}

/// Records one served request in [`names::REQUESTS`] and
/// [`names::REQUEST_DURATION`].
pub fn record_request(
    operation: &'static str,
    binding: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    #[cfg(feature = "metrics")]
    metrics::request(operation, binding, outcome, took);
    #[cfg(not(feature = "metrics"))]
    let _ = (operation, binding, outcome, took);
}

/// Records one client call in [`names::CLIENT_CALLS`] and
/// [`names::CLIENT_CALL_DURATION`].
pub fn record_client_call(operation: &'static str, outcome: &'static str, took: Duration) {
    #[cfg(feature = "metrics")]
    metrics::client_call(operation, outcome, took);
    #[cfg(not(feature = "metrics"))]
    let _ = (operation, outcome, took);
}

/// Adds `delta` to the [`names::ACTIVE_EXECUTIONS`] gauge.
pub fn active_executions(delta: f64) {
    #[cfg(feature = "metrics")]
    metrics::active_executions(delta);
    #[cfg(not(feature = "metrics"))]
    let _ = delta;
}

/// Records one commit of the task log `log` in
/// [`names::LOG_COMMIT_DURATION`] and [`names::LOG_COMMIT_BATCH`].
pub fn record_commit(log: &'static str, appends: usize, took: Duration) {
    #[cfg(feature = "metrics")]
    metrics::commit(log, appends, took);
    #[cfg(not(feature = "metrics"))]
    let _ = (log, appends, took);
}

/// Adds `delta` to the [`names::ACTIVE_SUBSCRIBERS`] gauge.
pub fn active_subscribers(delta: f64) {
    #[cfg(feature = "metrics")]
    metrics::active_subscribers(delta);
    #[cfg(not(feature = "metrics"))]
    let _ = delta;
}

/// Adds `delta` to the [`names::QUEUE_DEPTH`] gauge of `target`.
pub fn queue_depth(target: &str, delta: f64) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!(names::QUEUE_DEPTH, "target" => target.to_owned()).increment(delta);
    #[cfg(not(feature = "metrics"))]
    let _ = (target, delta);
}

/// Records one admission's wait in [`names::QUEUE_ADMISSION_WAIT`].
pub fn admission_wait(agent: &str, waited: Duration) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!(names::QUEUE_ADMISSION_WAIT, "agent" => agent.to_owned())
        .record(waited.as_secs_f64());
    #[cfg(not(feature = "metrics"))]
    let _ = (agent, waited);
}

/// Counts one ended execution in [`names::EXECUTIONS`] by its `outcome`.
pub fn execution_ended(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::execution_ended(outcome);
    #[cfg(not(feature = "metrics"))]
    let _ = outcome;
}

/// Counts `n` under the counter `name` with one label.
pub fn count(name: &'static str, label: &'static str, value: &'static str, n: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(name, label => value).increment(n);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label, value, n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn outcome_is_the_reason_never_the_text() {
        let err: Result<(), _> = Err(A2aError::new(ErrorKind::TaskNotFound).with_message("secret"));
        assert_eq!(outcome(&err), "TASK_NOT_FOUND");
        assert_eq!(outcome(&Ok::<_, A2aError>(())), "ok");
    }

    #[test]
    fn inject_without_a_context_writes_nothing() {
        let mut headers = http::HeaderMap::new();
        inject(&mut headers);
        assert!(headers.is_empty());
    }
}
