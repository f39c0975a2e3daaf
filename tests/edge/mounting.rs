//! The mounting examples (axum, hyper, actix, composition) as real servers:
//! each is started on `127.0.0.1:0`, called over loopback HTTP, and stopped
//! with SIGINT. They answer the same conformance calls with the same bytes,
//! apart from ids, timestamps and the bound address (and, for axum, the
//! principal its agent names and the security scheme its card declares).
//!
//! This file builds nothing: `cargo build --examples --all-features` must run
//! first (`scripts/test.sh` does).

use crate::support;

use std::time::Duration;

use http::header::{CACHE_CONTROL, WWW_AUTHENTICATE};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::http::{
    HttpClient, RPC_ID, Reply, client, fetch, message, request, rpc_body, with_bearer,
};
use support::server::Server;

/// How long a stream may take to arrive.
const PATIENCE: Duration = Duration::from_secs(30);

/// The axum example's demo tokens.
const ALICE: &str = "secret-alice";
const BOB: &str = "secret-bob";

/// What the axum card adds to the shared card, in serialised form.
const AXUM_SECURITY: &str = r#","securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"securityRequirements":[{"schemes":{"bearer":{"list":[]}}}]"#;

/// An A2A call, with `token` as the bearer token when there is one.
async fn call(
    client: &HttpClient,
    method: &str,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> Reply {
    fetch(
        client,
        with_bearer(request(method, &url, body.as_ref()), token),
    )
    .await
}

/// The line an answer contributes to a transcript: status, the headers the
/// A2A layers set, and body.
fn line(answer: &Reply) -> String {
    let (status, ct) = (answer.status, answer.content_type());
    let cc = answer.header(CACHE_CONTROL).unwrap_or_default();
    format!(
        "{status} [content-type: {ct}] [cache-control: {cc}] {}",
        answer.text()
    )
}

/// The conformance calls, in order, as transcript lines. Every call carries
/// `token` (the hosts without auth ignore it).
async fn transcript(server: &Server, token: &str) -> Vec<String> {
    let c = client();
    let base = &server.base;
    let a2a = format!("{base}/a2a");
    let rest = format!("{base}/a2a/rest");
    let t = Some(token);
    let mut lines = Vec::new();

    // The card (public).
    let card = call(
        &c,
        "GET",
        format!("{base}/.well-known/agent-card.json"),
        None,
        None,
    )
    .await;
    assert_eq!(card.status, 200, "{}", server.name);
    assert_eq!(card.json()["supportedInterfaces"][0]["url"], a2a);
    assert_eq!(card.json()["supportedInterfaces"][1]["url"], rest);
    assert_eq!(card.json()["capabilities"]["streaming"], true);
    lines.push(line(&card));

    // JSON-RPC SendMessage.
    let send = rpc_body(
        RPC_ID,
        "SendMessage",
        json!({"message": message("m-1", "hello")}),
    );
    let sent = call(&c, "POST", a2a.clone(), t, Some(send)).await;
    assert_eq!(sent.status, 200, "{}: {}", server.name, sent.text());
    let task_id = sent.json()["result"]["task"]["id"]
        .as_str()
        .expect("task id")
        .to_owned();
    lines.push(line(&sent));

    // HTTP+JSON message:send.
    let body = json!({"message": message("m-2", "rest")});
    let sent = call(&c, "POST", format!("{rest}/message:send"), t, Some(body)).await;
    assert_eq!(sent.status, 200, "{}: {}", server.name, sent.text());
    lines.push(line(&sent));

    // JSON-RPC GetTask of the first task.
    let get = rpc_body(RPC_ID, "GetTask", json!({"id": task_id}));
    let got = call(&c, "POST", a2a.clone(), t, Some(get)).await;
    assert_eq!(got.json()["result"]["id"], task_id.as_str());
    lines.push(line(&got));

    // HTTP+JSON GetTask of the same task.
    let got = call(&c, "GET", format!("{rest}/tasks/{task_id}"), t, None).await;
    assert_eq!(got.json()["id"], task_id.as_str());
    lines.push(line(&got));

    // JSON-RPC SendStreamingMessage over SSE: the whole event stream.
    let stream = rpc_body(
        RPC_ID,
        "SendStreamingMessage",
        json!({"message": message("m-3", "stream")}),
    );
    let events = call(&c, "POST", a2a.clone(), t, Some(stream)).await;
    assert_eq!(events.status, 200, "{}", server.name);
    assert!(events.content_type().starts_with("text/event-stream"));
    assert_eq!(
        events.text().matches("data: ").count(),
        3,
        "{}",
        events.text()
    );
    assert!(events.text().contains("TASK_STATE_COMPLETED"));
    lines.push(line(&events));

    // HTTP+JSON message:stream.
    let body = json!({"message": message("m-4", "rest stream")});
    let events = call(&c, "POST", format!("{rest}/message:stream"), t, Some(body)).await;
    assert!(events.content_type().starts_with("text/event-stream"));
    assert_eq!(
        events.text().matches("data: ").count(),
        3,
        "{}",
        events.text()
    );
    lines.push(line(&events));

    // Errors: an unknown task over both bindings (a2a-spec: TaskNotFound,
    // JSON-RPC -32001, HTTP 404).
    let get = rpc_body(RPC_ID, "GetTask", json!({"id": "no-such-task"}));
    let missing = call(&c, "POST", a2a.clone(), t, Some(get)).await;
    assert_eq!(missing.json()["error"]["code"], -32001);
    lines.push(line(&missing));
    let missing = call(&c, "GET", format!("{rest}/tasks/no-such-task"), t, None).await;
    assert_eq!(missing.status, 404);
    lines.push(line(&missing));

    let addr = server.base.trim_start_matches("http://");
    let mut ids = Vec::new();
    lines.iter().map(|l| normalise(l, addr, &mut ids)).collect()
}

/// Replaces the bound address, UUIDs and RFC 3339 timestamps with
/// placeholders. UUIDs are numbered by first appearance in `ids`, so that a
/// transcript keeps which ids are the same (a task's id in its history, in
/// GetTask, in every stream event).
fn normalise(text: &str, addr: &str, ids: &mut Vec<String>) -> String {
    let text = text.replace(addr, "<addr>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        if let Some(n) = uuid_len(rest) {
            let id = &rest[..n];
            let k = ids.iter().position(|i| i == id).unwrap_or_else(|| {
                ids.push(id.to_owned());
                ids.len() - 1
            });
            out.push_str(&format!("<uuid-{k}>"));
            rest = &rest[n..];
        } else if let Some(n) = timestamp_len(rest) {
            out.push_str("<timestamp>");
            rest = &rest[n..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `s` starts with the bytes `pattern` describes: `h` a hex digit, `d` a
/// decimal digit, anything else itself.
fn shaped(s: &str, pattern: &str) -> bool {
    s.len() >= pattern.len()
        && s.bytes().zip(pattern.bytes()).all(|(b, p)| match p {
            b'h' => b.is_ascii_hexdigit(),
            b'd' => b.is_ascii_digit(),
            _ => b == p,
        })
}

fn uuid_len(s: &str) -> Option<usize> {
    const UUID: &str = "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";
    shaped(s, UUID).then_some(UUID.len())
}

fn timestamp_len(s: &str) -> Option<usize> {
    const SECONDS: &str = "dddd-dd-ddTdd:dd:dd";
    if !shaped(s, SECONDS) {
        return None;
    }
    let mut n = SECONDS.len();
    let b = s.as_bytes();
    if b.get(n) == Some(&b'.') {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => Some(n + 1),
        Some(b'+' | b'-') if shaped(&s[n + 1..], "dd:dd") => Some(n + 6),
        _ => None,
    }
}

#[test]
fn normalise_replaces_ids_timestamps_and_address() {
    let s = r#"{"id":"0b7c1e7e-8f7a-4c39-9d5a-1f0e2a3b4c5d","t":"2026-01-02T03:04:05.678Z","u":"http://127.0.0.1:4242/a2a","v":"2026-01-02T03:04:05+01:00","w":"2026-01-02"}"#;
    let mut ids = Vec::new();
    assert_eq!(
        normalise(s, "127.0.0.1:4242", &mut ids),
        r#"{"id":"<uuid-0>","t":"<timestamp>","u":"http://<addr>/a2a","v":"<timestamp>","w":"2026-01-02"}"#
    );
    let s = r#"["1b7c1e7e-8f7a-4c39-9d5a-1f0e2a3b4c5d","0b7c1e7e-8f7a-4c39-9d5a-1f0e2a3b4c5d"]"#;
    assert_eq!(
        normalise(s, "unused:1", &mut ids),
        r#"["<uuid-1>","<uuid-0>"]"#
    );
}

/// The axum, hyper and actix examples (and the composition example) answer
/// the same conformance calls with the same bytes, apart from ids and
/// timestamps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_answer_the_same_bytes() {
    let mut transcripts = Vec::new();
    for name in ["hyper", "actix", "composition", "axum"] {
        let server = Server::start(name);
        let mut lines = transcript(&server, ALICE).await;
        if name == "axum" {
            // The axum host authenticates: its card declares the bearer
            // scheme, and its agent names the principal. Everything else is
            // byte for byte the same.
            let card = &lines[0];
            assert!(card.contains(AXUM_SECURITY), "{card}");
            lines[0] = card.replacen(AXUM_SECURITY, "", 1);
            for (i, line) in lines.iter_mut().enumerate().skip(1) {
                // Every answer that carries the agent's reply names alice:
                // both sends, both reads, both streams (a2a-spec: the
                // principal of the host layer reaches the executor).
                if i <= 6 {
                    assert!(line.contains(r#""text":"alice: "#), "call #{i}: {line}");
                }
                *line = line.replace(r#""text":"alice: "#, r#""text":""#);
            }
        }
        transcripts.push((name, lines));
        server.stop();
    }
    let (first, expected) = &transcripts[0];
    // Only the explicitly removed differences above remain normalised away.
    assert!(expected[1].contains(r#""text":"hello""#), "{}", expected[1]);
    for (name, lines) in &transcripts[1..] {
        assert_eq!(lines.len(), expected.len());
        for (i, (got, want)) in lines.iter().zip(expected).enumerate() {
            assert_eq!(got, want, "call #{i}: {name} differs from {first}");
        }
    }
}

/// The axum host's bearer middleware: 401 + `WWW-Authenticate: Bearer`
/// without a token on both bindings; the card and the host's own route stay
/// public; the principal it inserts reaches the agent over both bindings and
/// scopes the tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_authenticates_and_the_agent_sees_the_principal() {
    let server = Server::start("axum");
    let c = client();
    let a2a = format!("{}/a2a", server.base);
    let rest = format!("{}/a2a/rest", server.base);
    let send_rpc = |text: &str| {
        rpc_body(
            RPC_ID,
            "SendMessage",
            json!({"message": message("m-1", text)}),
        )
    };
    let send_rest = |text: &str| json!({"message": message("m-2", text)});

    // No token, or an unknown one: refused before any A2A processing.
    for (token, challenge) in [
        (None, "Bearer"),
        (Some("wrong"), r#"Bearer error="invalid_token""#),
    ] {
        let res = call(&c, "POST", a2a.clone(), token, Some(send_rpc("x"))).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED);
        assert_eq!(res.header(WWW_AUTHENTICATE), Some(challenge));
        assert_eq!(res.text(), "");
        let url = format!("{rest}/message:send");
        let res = call(&c, "POST", url, token, Some(send_rest("x"))).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED);
        assert_eq!(res.header(WWW_AUTHENTICATE), Some(challenge));
    }

    // Public routes.
    let url = format!("{}/.well-known/agent-card.json", server.base);
    let card = call(&c, "GET", url, None, None).await;
    assert_eq!(card.status, 200);
    assert_eq!(
        card.json()["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    let health = call(&c, "GET", format!("{}/health", server.base), None, None).await;
    assert_eq!((health.status, health.text()), (StatusCode::OK, "ok"));

    // The principal reaches the agent over JSON-RPC ...
    let res = call(&c, "POST", a2a.clone(), Some(ALICE), Some(send_rpc("hi"))).await;
    let task = &res.json()["result"]["task"];
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "alice: hi");
    let task_id = task["id"].as_str().unwrap().to_owned();
    // ... and over HTTP+JSON.
    let url = format!("{rest}/message:send");
    let res = call(&c, "POST", url, Some(BOB), Some(send_rest("yo"))).await;
    assert_eq!(
        res.json()["task"]["artifacts"][0]["parts"][0]["text"],
        "bob: yo"
    );

    // Tasks are scoped by principal: bob cannot see alice's task.
    let get = rpc_body(RPC_ID, "GetTask", json!({"id": task_id}));
    let res = call(&c, "POST", a2a.clone(), Some(ALICE), Some(get.clone())).await;
    assert_eq!(res.json()["result"]["id"], task_id.as_str());
    let res = call(&c, "POST", a2a, Some(BOB), Some(get)).await;
    assert_eq!(res.json()["error"]["code"], -32001, "{}", res.text());

    server.stop();
}

/// Reads `body` until `text` holds `events` complete SSE events.
async fn read_events(body: &mut hyper::body::Incoming, text: &mut String, events: usize) {
    while text.matches("\n\n").count() < events {
        let frame = body
            .frame()
            .await
            .expect("the stream ended early")
            .expect("body frame");
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).expect("UTF-8 event"));
        }
    }
}

/// Every host streams SSE event by event: the events of a task that is still
/// running arrive before the stream ends (the agent holds the task open until
/// it is canceled, so a host that buffered the body would never deliver them;
/// the timeout turns that hang into a failure). Then CancelTask ends the
/// stream with CANCELED (a2a-spec: a stream closes at a terminal state).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_stream_event_by_event() {
    let mut transcripts = Vec::new();
    for name in ["hyper", "actix", "composition", "axum"] {
        let server = Server::start(name);
        let a2a = format!("{}/a2a", server.base);
        let c = client();
        let run = async {
            let hold = rpc_body(
                RPC_ID,
                "SendStreamingMessage",
                json!({"message": message("m-hold", "hold")}),
            );
            let req = with_bearer(request(Method::POST, &a2a, Some(&hold)), Some(ALICE));
            let res = c.request(req).await.expect("stream call");
            assert_eq!(res.status(), 200);
            let mut body = res.into_body();
            let mut text = String::new();
            // The task (WORKING) and the echo, while the task still runs.
            read_events(&mut body, &mut text, 2).await;
            assert!(text.contains("TASK_STATE_WORKING"), "{name}: {text}");
            assert!(text.contains("artifactUpdate"), "{name}: {text}");
            let start = text.find(r#""id":""#).expect("task id") + 6;
            let task_id = text[start..start + 36].to_owned();

            let cancel = rpc_body(RPC_ID, "CancelTask", json!({"id": task_id}));
            let res = call(&c, "POST", a2a.clone(), Some(ALICE), Some(cancel)).await;
            assert_eq!(
                res.json()["result"]["status"]["state"],
                "TASK_STATE_CANCELED"
            );

            // The stream ends with the CANCELED status.
            let rest = body.collect().await.expect("rest of the stream").to_bytes();
            text.push_str(std::str::from_utf8(&rest).unwrap());
            assert_eq!(text.matches("data: ").count(), 3, "{name}: {text}");
            assert!(text.ends_with("}}}}\n\n"), "{name}: {text}");
            assert!(text.contains("TASK_STATE_CANCELED"), "{name}: {text}");
            text.replace(r#""text":"alice: "#, r#""text":""#)
        };
        let text = tokio::time::timeout(PATIENCE, run)
            .await
            .unwrap_or_else(|_| panic!("{name}: the stream did not arrive event by event"));
        let addr = server.base.trim_start_matches("http://");
        transcripts.push((name, normalise(&text, addr, &mut Vec::new())));
        server.stop();
    }
    let (first, expected) = &transcripts[0];
    for (name, text) in &transcripts[1..] {
        assert_eq!(text, expected, "{name} differs from {first}");
    }
}
