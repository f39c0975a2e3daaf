//! The examples' telemetry as processes: `GET /metrics` on the agent's own
//! listener (Prometheus text with the request counter and the latency
//! histogram, on echo, team and managed), and `ask` with `A2A_OTEL=stdout`:
//! its request carries the `traceparent` of its root span, whose trace id
//! the stdout exporter prints in hex.

use crate::support;

use std::process::Command;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};
use serde_json::json;
use support::http::{client, fetch, request, rpc};
use support::server::{Server, example_binary};

/// `GET /metrics` after one SendMessage counts it, with its latency.
async fn metrics_count_a_send(name: &str, envs: &[(&str, &str)], text: &str) {
    let srv = Server::start_with(name, envs);
    let c = client();
    let params =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}});
    rpc(&c, &srv.base, "SendMessage", params).await;
    let r = fetch(
        &c,
        request(Method::GET, &format!("{}/metrics", srv.base), None),
    )
    .await;
    assert_eq!(r.status, 200, "{name}");
    assert_eq!(r.content_type(), "text/plain; version=0.0.4", "{name}");
    let text = r.text();
    let counter = text
        .lines()
        .find(|l| {
            l.starts_with("a2a_requests_total{")
                && l.contains(r#"operation="SendMessage""#)
                && l.contains(r#"binding="JSONRPC""#)
                && l.contains(r#"outcome="ok""#)
        })
        .unwrap_or_else(|| panic!("{name}: no SendMessage counter in\n{text}"));
    assert!(counter.ends_with(" 1"), "{name}: {counter}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("a2a_request_duration_seconds_bucket{")
                && l.contains(r#"operation="SendMessage""#)),
        "{name}: no latency histogram in\n{text}"
    );
}

#[tokio::test]
async fn echo_serves_metrics_on_its_listener() {
    metrics_count_a_send("echo", &[("A2A_LOG", "memory")], "hi").await;
}

#[tokio::test]
async fn team_serves_metrics_on_its_listener() {
    metrics_count_a_send("team", &[], "hi").await;
}

/// A log commit's batch size is counted in appends (buckets 1, 2, 4 … 256),
/// not in the seconds buckets of the durations.
#[tokio::test]
async fn the_commit_batch_size_has_buckets_of_appends() {
    let srv = Server::start_with("team", &[]);
    let c = client();
    let params =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    rpc(&c, &srv.base, "SendMessage", params).await;
    // The log records a commit after answering its callers: read until
    // the histogram is there.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let r = fetch(
            &c,
            request(Method::GET, &format!("{}/metrics", srv.base), None),
        )
        .await;
        let text = r.text().to_owned();
        if text.contains("a2a_log_commit_batch_size_bucket{") {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no batch sizes in\n{text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let bounds: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("a2a_log_commit_batch_size_bucket{"))
        .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        bounds,
        ["1", "2", "4", "8", "16", "32", "64", "128", "256", "+Inf"],
        "{text}"
    );
}

#[cfg(feature = "managed")]
#[tokio::test]
async fn managed_serves_metrics_on_its_listener() {
    let srv = Server::start_with("managed", &[]);
    let c = client();
    let r = fetch(
        &c,
        request(Method::GET, &format!("{}/metrics", srv.base), None),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.content_type(), "text/plain; version=0.0.4");
    // A call the program refuses still counts, by its outcome.
    let get = support::http::rpc_body(1, "GetTask", json!({"id": "no-such-task"}));
    let r = fetch(
        &c,
        request(Method::POST, &format!("{}/", srv.base), Some(&get)),
    )
    .await;
    assert!(r.text().contains("TASK_NOT_FOUND"), "{}", r.text());
    let r = fetch(
        &c,
        request(Method::GET, &format!("{}/metrics", srv.base), None),
    )
    .await;
    assert!(
        r.text()
            .lines()
            .any(|l| l.starts_with("a2a_requests_total{")
                && l.contains(r#"operation="GetTask""#)
                && l.contains(r#"outcome="TASK_NOT_FOUND""#)
                && l.ends_with(" 1")),
        "{}",
        r.text()
    );
}

#[cfg(feature = "otel")]
#[tokio::test]
async fn ask_sends_the_traceparent_of_its_root_span() {
    let (listener, base) = support::loopback::listener().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let card_base = base.clone();
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let tp = req.headers().get("traceparent").cloned();
        record.lock().unwrap().push(tp);
        let card_base = card_base.clone();
        async move {
            let is_card = req.uri().path().starts_with("/.well-known");
            let _ = req.into_body().collect().await;
            let body = if is_card {
                json!({
                    "name": "A", "description": "d", "version": "1",
                    "supportedInterfaces": [{"url": format!("{card_base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                    "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
                })
            } else {
                let task = json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}});
                json!({"jsonrpc": "2.0", "id": 1, "result": {"task": task}})
            };
            let mut res = Response::new(Full::new(Bytes::from(body.to_string())));
            res.headers_mut()
                .insert("content-type", "application/json".parse().unwrap());
            Ok::<_, std::convert::Infallible>(res)
        }
    });
    support::loopback::serve(listener, svc);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(example_binary("ask"))
            .arg(&base)
            .arg("hello")
            .env("A2A_OTEL", "stdout")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 2, "the card fetch and the call: {seen:?}");
    let mut traces = seen.iter().map(|tp| {
        let tp = tp.as_ref().expect("a traceparent on every request");
        tp.to_str().unwrap().split('-').nth(1).unwrap().to_owned()
    });
    let trace = traces.next().unwrap();
    assert!(traces.all(|t| t == trace), "one trace: {seen:?}");
    // The exporter printed the root span `ask` with that trace id.
    assert!(stdout.contains(&trace), "trace {trace} not in\n{stdout}");
    assert!(stdout.contains("ask"), "{stdout}");
}
