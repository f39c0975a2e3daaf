//! The examples as processes: the conformance agent answers the a2a-tck
//! scenarios over real HTTP, both bindings; the echo agent streams words and
//! cancels promptly. Needs the example binaries (see `support/server.rs`).

use crate::support;

use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use serde_json::{Value, json};
use support::http::{HttpClient, RPC_ID, Reply, client, fetch, message, request, rpc, rpc_body};
use support::server::Server;
use support::sse;

/// SendMessage of "hi" in the message `id`: the result.
async fn send(c: &HttpClient, base: &str, id: &str) -> Value {
    rpc(
        c,
        base,
        "SendMessage",
        json!({"message": message(id, "hi")}),
    )
    .await
}

#[tokio::test]
async fn conformance_complete_task_has_the_status_message() {
    let srv = Server::start("conformance");
    let r = send(&client(), &srv.base, "tck-complete-task-1").await;
    let task = &r["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        task["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}])
    );
    assert_eq!(task["status"]["message"]["taskId"], task["id"]);
}

#[tokio::test]
async fn conformance_artifacts() {
    let srv = Server::start("conformance");
    let c = client();
    let part = |r: &Value| r["task"]["artifacts"][0]["parts"][0].clone();

    let r = send(&c, &srv.base, "tck-artifact-data-1").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // Exact JSON, key order and number text included.
    assert_eq!(
        serde_json::to_string(&part(&r)).unwrap(),
        r#"{"data":{"key":"value","count":42}}"#
    );

    let r = send(&c, &srv.base, "tck-artifact-text-1").await;
    assert_eq!(part(&r), json!({"text": "Generated text content"}));

    let r = send(&c, &srv.base, "tck-artifact-file-1").await;
    assert_eq!(
        part(&r),
        json!({"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"})
    );

    // The longer prefix wins over `tck-artifact-file`.
    let r = send(&c, &srv.base, "tck-artifact-file-url-1").await;
    assert_eq!(part(&r)["url"], "https://example.com/output.txt");
}

#[tokio::test]
async fn conformance_message_response_is_a_message() {
    let srv = Server::start("conformance");
    let r = send(&client(), &srv.base, "tck-message-response-1").await;
    assert!(r.get("task").is_none(), "{r}");
    assert_eq!(r["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        r["message"]["parts"],
        json!([{"text": "Direct message response"}])
    );
}

#[tokio::test]
async fn conformance_reject_task() {
    let srv = Server::start("conformance");
    let r = send(&client(), &srv.base, "tck-reject-task-1").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_REJECTED");
}

#[tokio::test]
async fn conformance_input_required_then_follow_up_completes() {
    let srv = Server::start("conformance");
    let c = client();
    let r = send(&c, &srv.base, "tck-input-required-1").await;
    let task = &r["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let (id, ctx) = (
        task["id"].as_str().unwrap(),
        task["contextId"].as_str().unwrap(),
    );

    let mut follow = message("follow-up-1", "more input");
    follow["taskId"] = json!(id);
    follow["contextId"] = json!(ctx);
    let r = rpc(&c, &srv.base, "SendMessage", json!({"message": follow})).await;
    assert_eq!(r["task"]["id"], id);
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let history: Vec<&str> = r["task"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(history.first(), Some(&"tck-input-required-1"));
    assert!(history.contains(&"follow-up-1"), "{history:?}");
}

/// The ids of a task's history messages.
fn history(task: &Value) -> Vec<String> {
    task["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messageId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn conformance_multi_turn_follows_each_prefix() {
    let srv = Server::start("conformance");
    let c = client();
    let r = send(&c, &srv.base, "tck-input-required-a").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let (id, ctx) = (r["task"]["id"].clone(), r["task"]["contextId"].clone());
    let follow = |mid: &str| {
        let mut m = message(mid, "more");
        m["taskId"] = id.clone();
        m["contextId"] = ctx.clone();
        json!({"message": m})
    };

    // Asked again: INPUT_REQUIRED, the follow-up in the history.
    let r = rpc(&c, &srv.base, "SendMessage", follow("tck-input-required-b")).await;
    assert_eq!(r["task"]["id"], id);
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert!(history(&r["task"]).contains(&"tck-input-required-b".to_owned()));

    // Completed by the complete-task prefix, with its status message.
    let r = rpc(&c, &srv.base, "SendMessage", follow("tck-complete-task-c")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        r["task"]["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}])
    );
    let ids = history(&r["task"]);
    for mid in [
        "tck-input-required-a",
        "tck-input-required-b",
        "tck-complete-task-c",
    ] {
        assert!(ids.contains(&mid.to_owned()), "{ids:?}");
    }
}

#[tokio::test]
async fn conformance_extended_card_needs_a_bearer() {
    let srv = Server::start("conformance");
    let c = client();
    let body = rpc_body(RPC_ID, "GetExtendedAgentCard", json!({}));
    let url = format!("{}/", srv.base);
    let call = |token: Option<&'static str>| {
        support::http::with_bearer(request(Method::POST, &url, Some(&body)), token)
    };
    let r = fetch(&c, call(Some("tck"))).await.json();
    let skills: Vec<&str> = r["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["tck", "tck-extended"], "{r}");

    let r = fetch(&c, call(None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.json()["error"]["code"], -31401);

    let rest = format!("{}/rest/extendedAgentCard", srv.base);
    let get = |token| support::http::with_bearer(request(Method::GET, &rest, None), token);
    let r = fetch(&c, get(Some("tck"))).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["name"], "A2A TCK agent");
    let r = fetch(&c, get(None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // The public card declares it.
    let card = fetch(
        &c,
        request(
            Method::GET,
            &format!("{}/.well-known/agent-card.json", srv.base),
            None,
        ),
    )
    .await;
    assert_eq!(card.json()["capabilities"]["extendedAgentCard"], true);
}

#[tokio::test]
async fn conformance_stream_artifact_chunked() {
    let srv = Server::start("conformance");
    let c = client();
    let body = rpc_body(
        RPC_ID,
        "SendStreamingMessage",
        json!({"message": message("tck-stream-artifact-chunked-1", "hi")}),
    );
    let url = format!("{}/", srv.base);
    let r = fetch(&c, request(Method::POST, &url, Some(&body))).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.content_type(), "text/event-stream");
    let events = sse::events(&r.body);
    let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
    assert_eq!(results.len(), 4, "{results:#?}");
    assert_eq!(results[0]["task"]["status"]["state"], "TASK_STATE_WORKING");
    let a1 = &results[1]["artifactUpdate"];
    assert_eq!(a1["artifact"]["parts"], json!([{"text": "chunk-1 "}]));
    assert!(
        a1.get("append").is_none() && a1.get("lastChunk").is_none(),
        "{a1}"
    );
    let a2 = &results[2]["artifactUpdate"];
    assert_eq!(a2["artifact"]["parts"], json!([{"text": "chunk-2"}]));
    assert_eq!(a2["artifact"]["artifactId"], a1["artifact"]["artifactId"]);
    assert_eq!(a2["append"], true);
    assert_eq!(a2["lastChunk"], true);
    assert_eq!(
        results[3]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    for e in &events {
        assert_eq!(e["id"], 7);
    }
}

#[tokio::test]
async fn conformance_over_rest() {
    let srv = Server::start("conformance");
    let c = client();
    let body = json!({"message": message("tck-complete-task-rest", "hi")});
    let url = format!("{}/rest/message:send", srv.base);
    let res = fetch(&c, request(Method::POST, &url, Some(&body))).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.content_type(), "application/json");
    let r: Value = res.json();
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        r["task"]["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}])
    );

    // The task is readable under the REST prefix too.
    let id = r["task"]["id"].as_str().unwrap();
    let url = format!("{}/rest/tasks/{id}", srv.base);
    let res = fetch(&c, request(Method::GET, &url, None)).await;
    assert_eq!(res.status, StatusCode::OK);
    let t: Value = res.json();
    assert_eq!(t["id"], id);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn conformance_card_declares_both_bindings_and_streaming() {
    let srv = Server::start("conformance");
    let url = format!("{}/.well-known/agent-card.json", srv.base);
    let res = fetch(&client(), request(Method::GET, &url, None)).await;
    assert_eq!(res.status, StatusCode::OK);
    let card: Value = res.json();
    assert_eq!(card["capabilities"]["streaming"], true);
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifaces[0]["url"], format!("{}/", srv.base));
    assert_eq!(ifaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[1]["url"], format!("{}/rest", srv.base));
    assert_eq!(ifaces[1]["protocolBinding"], "HTTP+JSON");
}

#[tokio::test]
async fn echo_streams_words_that_concatenate_to_the_input() {
    let srv = Server::start("echo");
    let c = client();
    let text = "one two  three";
    let body = json!({"message": message("m-1", text)});
    let url = format!("{}/rest/message:stream", srv.base);
    let r = fetch(&c, request(Method::POST, &url, Some(&body))).await;
    assert_eq!(r.status, StatusCode::OK);
    let events = sse::events(&r.body);
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(chunks, ["one ", "two  ", "three"]);
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test]
async fn echo_cancel_interrupts_sleep() {
    let srv = Server::start("echo");
    let c = client();
    let params = json!({
        "message": message("m-1", "sleep 60 then answer"),
        "configuration": {"returnImmediately": true},
    });
    let r = rpc(&c, &srv.base, "SendMessage", params).await;
    let id = r["task"]["id"].as_str().unwrap().to_owned();
    let state = r["task"]["status"]["state"].as_str().unwrap();
    assert!(
        matches!(state, "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{state}"
    );

    let started = Instant::now();
    let t = rpc(&c, &srv.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_CANCELED");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel waited for the sleep"
    );
    let t = rpc(&c, &srv.base, "GetTask", json!({"id": id})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_CANCELED");
    assert!(
        t.get("artifacts").is_none(),
        "a canceled task gained an artifact: {t}"
    );
}

#[tokio::test]
async fn echo_subscriber_sees_the_cancel_of_a_sleeping_task() {
    let srv = Server::start("echo");
    let c = client();
    let params = json!({
        "message": message("m-1", "sleep 60 then answer"),
        "configuration": {"returnImmediately": true},
    });
    let r = rpc(&c, &srv.base, "SendMessage", params).await;
    let id = r["task"]["id"].as_str().unwrap().to_owned();

    // The answer's head comes once the first event (the task) is read.
    let sub = rpc_body(RPC_ID, "SubscribeToTask", json!({"id": id}));
    let sub = request(Method::POST, &format!("{}/", srv.base), Some(&sub));
    let res = c.request(sub).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let t = rpc(&c, &srv.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_CANCELED");

    let events = sse::events(&Reply::read(res).await.body);
    let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
    // The task (SUBMITTED, or WORKING if the agent started already), maybe
    // the WORKING update, then CANCELED, and the stream ends.
    let (first, rest) = results.split_first().unwrap();
    assert_eq!(first["task"]["id"], id.as_str());
    let state = first["task"]["status"]["state"].as_str().unwrap();
    assert!(
        matches!(state, "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{state}"
    );
    let states: Vec<&str> = rest
        .iter()
        .map(|r| r["statusUpdate"]["status"]["state"].as_str().unwrap())
        .collect();
    let expected: &[&str] = if state == "TASK_STATE_WORKING" {
        &["TASK_STATE_CANCELED"]
    } else {
        &["TASK_STATE_WORKING", "TASK_STATE_CANCELED"]
    };
    assert_eq!(states, expected, "{results:#?}");
}

/// The conformance agent serves its scenarios over gRPC on the same
/// listener, and advertises that interface.
#[cfg(feature = "grpc")]
#[tokio::test]
async fn conformance_over_grpc() {
    use a2a_tower::grpc::proto::{self, a2a_service_client::A2aServiceClient, part};

    let srv = Server::start("conformance");
    let card = fetch(
        &client(),
        request(
            Method::GET,
            &format!("{}/.well-known/agent-card.json", srv.base),
            None,
        ),
    )
    .await
    .json();
    let grpc = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .expect("a GRPC interface");
    let addr = grpc["url"].as_str().unwrap();
    assert_eq!(format!("http://{addr}"), srv.base);

    let channel = tonic::transport::Channel::from_shared(srv.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = A2aServiceClient::new(channel);
    let mut req = tonic::Request::new(proto::SendMessageRequest {
        message: Some(proto::Message {
            message_id: "tck-complete-task-g".into(),
            role: proto::Role::User as i32,
            parts: vec![proto::Part {
                content: Some(part::Content::Text("hi".into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    let r = c.send_message(req).await.unwrap().into_inner();
    let Some(proto::send_message_response::Payload::Task(task)) = r.payload else {
        panic!("a task: {r:?}")
    };
    let status = task.status.unwrap();
    assert_eq!(status.state, proto::TaskState::Completed as i32);
    let text = &status.message.unwrap().parts[0];
    assert_eq!(
        text.content,
        Some(part::Content::Text("Hello from TCK".into()))
    );
}
