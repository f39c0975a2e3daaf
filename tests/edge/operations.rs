//! The task operations (a2a-spec.md §4.1, §4.4, §4.7, §4.8) and the rules
//! their results follow (§3.2 contextId on server messages, §3.8
//! historyLength and includeArtifacts), through the whole `A2aServer`
//! (`support::assembled`), asserted on the wire of both bindings: HTTP
//! status, content type and body.

use crate::support;

use std::time::Duration;

use a2a_tower::server::A2aServer;
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::{Value, json};
use support::assembled::{
    ALICE, BOB, call, card, continuation, executor, message, raw, request, rest_err, rest_ok,
    rest_send, rest_subscribe, rpc, rpc_err, rpc_ok, rpc_req, server, server_with, sse, unwrap_rpc,
};

// a2a-spec.md §3.2: server messages MUST carry contextId (and taskId only if a
// task exists): a direct Message reply on both bindings, streamed and not, and
// the status message of an INPUT_REQUIRED task.
#[tokio::test]
async fn server_messages_carry_context_id() {
    let h = server();
    let check = |m: &Value, what: &str| {
        assert_eq!(m["role"], "ROLE_AGENT", "{what}: {m}");
        let ctx = m["contextId"].as_str().unwrap_or_default();
        assert!(!ctx.is_empty(), "{what}: no contextId in {m}");
        ctx.to_owned()
    };

    // A direct reply, unary, both bindings.
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("reply")}),
    )
    .await;
    let ctx = check(&r["message"], "JSON-RPC SendMessage");
    // taskId only if a task exists: the reply's task is a real, readable task
    // of the same context.
    if let Some(task_id) = r["message"].get("taskId") {
        let t = rpc_ok(&h, ALICE, "GetTask", json!({"id": task_id})).await;
        assert_eq!(t["contextId"], ctx.as_str());
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let (_, v) = rest_ok(
        &h,
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": message("reply")})),
        ),
    )
    .await;
    check(&v["message"], "REST message:send");

    // A client context is kept on the reply.
    let mut m = message("reply");
    m["contextId"] = json!("ctx-client");
    let r = rpc_ok(&h, ALICE, "SendMessage", json!({"message": m})).await;
    assert_eq!(check(&r["message"], "kept context"), "ctx-client");

    // A direct reply, streamed, both bindings: one message event.
    let mut s = sse(
        &h,
        rpc_req(
            ALICE,
            "s",
            "SendStreamingMessage",
            json!({"message": message("reply")}),
        ),
    )
    .await;
    let events = s.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    check(
        &unwrap_rpc(events[0].clone(), "s")["message"],
        "JSON-RPC stream",
    );
    let mut s = sse(
        &h,
        request(
            "POST",
            "/rest/message:stream",
            ALICE,
            Some(json!({"message": message("reply")})),
        ),
    )
    .await;
    let events = s.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    check(&events[0]["message"], "REST stream");

    // A status message carries the task's context and id.
    let task = rest_send(&h, ALICE, message("ask"), false).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let status_msg = &task["status"]["message"];
    assert_eq!(
        check(status_msg, "status message"),
        task["contextId"].as_str().unwrap()
    );
    assert_eq!(status_msg["taskId"], task["id"]);
    assert_eq!(status_msg["parts"][0]["text"], "Which currency?");
}

// a2a-spec.md §3.8: historyLength 0 omits history, N > 0 returns at most the
// N most recent messages, a negative value is InvalidParams; on GetTask and
// SendMessage, both bindings, asserted on the wire bytes.
#[tokio::test]
async fn history_length_zero_omits_n_keeps_most_recent_negative_is_invalid() {
    let h = server();
    let task = rest_send(&h, ALICE, message("ask"), false).await;
    let id = task["id"].as_str().unwrap().to_owned();
    let done = rest_send(&h, ALICE, continuation(&id, "EUR"), false).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    // user "ask", agent "Which currency?", user "EUR".
    assert_eq!(done["history"].as_array().unwrap().len(), 3);

    // 0: no `history` member at all.
    let v = rpc(&h, ALICE, "GetTask", json!({"id": id, "historyLength": 0})).await;
    assert_eq!(v["result"]["id"], id.as_str());
    assert!(v["result"].get("history").is_none(), "{v}");
    let (text, v) = rest_ok(
        &h,
        request(
            "GET",
            &format!("/rest/tasks/{id}?historyLength=0"),
            ALICE,
            None,
        ),
    )
    .await;
    assert_eq!(v["id"], id.as_str());
    assert!(!text.contains("\"history\""), "{text}");

    // N: the N most recent, oldest first.
    for (n, want) in [(1, vec!["EUR"]), (2, vec!["Which currency?", "EUR"])] {
        let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id, "historyLength": n})).await;
        let texts: Vec<_> = r["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["parts"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, want, "JSON-RPC historyLength={n}");
        let (_, v) = rest_ok(
            &h,
            request(
                "GET",
                &format!("/rest/tasks/{id}?historyLength={n}"),
                ALICE,
                None,
            ),
        )
        .await;
        assert_eq!(v["history"], r["history"], "REST historyLength={n}");
    }

    // Negative: −32602 / 400 INVALID_ARGUMENT.
    rpc_err(
        &h,
        ALICE,
        "GetTask",
        json!({"id": id, "historyLength": -1}),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
    rest_err(
        &h,
        request(
            "GET",
            &format!("/rest/tasks/{id}?historyLength=-1"),
            ALICE,
            None,
        ),
        400,
        "INVALID_ARGUMENT",
        "INVALID_PARAMS",
    )
    .await;

    // On SendMessage's configuration too.
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo"), "configuration": {"historyLength": 0}}),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(r["task"].get("history").is_none(), "{r}");
    rpc_err(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo"), "configuration": {"historyLength": -2}}),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
}

// a2a-spec.md §3.8: ListTasks without includeArtifacts (or false) MUST omit
// `artifacts` entirely; with true it is present. Both bindings, wire bytes.
#[tokio::test]
async fn list_tasks_omits_artifacts_unless_included() {
    let h = server();
    let t = rest_send(&h, ALICE, message("echo"), false).await;
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "echo");

    for params in [json!({}), json!({"includeArtifacts": false})] {
        let v = rpc(&h, ALICE, "ListTasks", params.clone()).await;
        assert_eq!(v["result"]["tasks"].as_array().unwrap().len(), 1);
        assert!(!v.to_string().contains("\"artifacts\""), "{params}: {v}");
    }
    for query in ["", "?includeArtifacts=false"] {
        let (text, v) = rest_ok(
            &h,
            request("GET", &format!("/rest/tasks{query}"), ALICE, None),
        )
        .await;
        assert_eq!(v["tasks"].as_array().unwrap().len(), 1);
        assert!(!text.contains("\"artifacts\""), "{query}: {text}");
    }
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({"includeArtifacts": true})).await;
    assert_eq!(r["tasks"][0]["artifacts"], t["artifacts"]);
    let (_, v) = rest_ok(
        &h,
        request("GET", "/rest/tasks?includeArtifacts=true", ALICE, None),
    )
    .await;
    assert_eq!(v["tasks"][0]["artifacts"], t["artifacts"]);
}

// a2a-spec.md §4.1: task ids are server-generated and MUST appear in the
// returned Task; a client-chosen contextId is kept; a taskId the client made
// up MUST be TaskNotFound (clients cannot choose the id of a new task).
#[tokio::test]
async fn task_ids_are_server_generated_and_client_context_is_kept() {
    let h = server();
    let mut m = message("echo");
    m["contextId"] = json!("ctx-mine");
    let msg_id = m["messageId"].clone();
    let t = rest_send(&h, ALICE, m, false).await;
    let id = t["id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "server-generated: {id}");
    assert_ne!(t["id"], msg_id);
    assert_eq!(t["contextId"], "ctx-mine");
    assert_eq!(t["history"][0]["taskId"], id);
    assert_eq!(t["history"][0]["contextId"], "ctx-mine");

    // No context: one is generated and returned (Task and history).
    let r = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("echo")}),
    )
    .await;
    let ctx = r["task"]["contextId"].as_str().unwrap();
    assert!(!ctx.is_empty());
    assert_eq!(r["task"]["history"][0]["contextId"], ctx);
    assert_ne!(r["task"]["id"], t["id"], "unique");

    // A made-up task id.
    rpc_err(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": continuation("client-chosen", "echo")}),
        -32001,
        "TASK_NOT_FOUND",
    )
    .await;
    rest_err(
        &h,
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": continuation("client-chosen", "echo")})),
        ),
        404,
        "NOT_FOUND",
        "TASK_NOT_FOUND",
    )
    .await;
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({})).await;
    assert_eq!(r["totalSize"], 2, "the refused sends created nothing");
}

// a2a-spec.md §4.4: ListTasks MUST return only the caller's tasks even without
// filters, sorted by status timestamp newest first, with cursor pagination
// whose nextPageToken is always present ("" on the last page). Both bindings,
// asserted on the wire bytes.
#[tokio::test]
async fn list_tasks_is_scoped_newest_first_and_always_has_next_page_token() {
    let h = server();
    // Distinct status timestamps (millisecond precision): the pause only
    // separates the clocks of consecutive commits, it awaits no outcome.
    let tick = || tokio::time::sleep(Duration::from_millis(3));
    let a1 = rest_send(&h, ALICE, message("ask"), false).await;
    tick().await;
    let a2 = rest_send(&h, ALICE, message("echo"), false).await;
    tick().await;
    let b1 = rest_send(&h, BOB, message("echo"), false).await;
    tick().await;
    let a3 = rest_send(&h, ALICE, message("echo"), false).await;
    tick().await;
    // Continuing a1 makes its status the newest.
    let a1 = rest_send(
        &h,
        ALICE,
        continuation(a1["id"].as_str().unwrap(), "EUR"),
        false,
    )
    .await;
    assert_eq!(a1["status"]["state"], "TASK_STATE_COMPLETED");
    let want: Vec<Value> = vec![a1["id"].clone(), a3["id"].clone(), a2["id"].clone()];

    let ids = |tasks: &Value| -> Vec<Value> {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].clone())
            .collect()
    };

    // JSON-RPC, no filter at all.
    let v = rpc(&h, ALICE, "ListTasks", json!({})).await;
    let text = v.to_string();
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    let r = &v["result"];
    assert_eq!(ids(&r["tasks"]), want);
    assert_eq!(r["totalSize"], 3);
    assert_eq!(r["pageSize"], 50);
    assert!(
        !text.contains(b1["id"].as_str().unwrap()),
        "bob's task leaked"
    );

    // REST, no filter at all.
    let (text, v) = rest_ok(&h, request("GET", "/rest/tasks", ALICE, None)).await;
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    assert_eq!(ids(&v["tasks"]), want);
    assert_eq!(v["totalSize"], 3);
    assert!(
        !text.contains(b1["id"].as_str().unwrap()),
        "bob's task leaked"
    );

    // Bob sees only his.
    let r = rpc_ok(&h, BOB, "ListTasks", json!({})).await;
    assert_eq!(ids(&r["tasks"]), vec![b1["id"].clone()]);
    assert_eq!(r["totalSize"], 1);

    // Pages of two: a token, then the last page with "".
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({"pageSize": 2})).await;
    assert_eq!(ids(&r["tasks"]), want[..2]);
    let token = r["nextPageToken"].as_str().unwrap();
    assert!(!token.is_empty());
    let (text, v) = rest_ok(
        &h,
        request(
            "GET",
            &format!("/rest/tasks?pageSize=2&pageToken={token}"),
            ALICE,
            None,
        ),
    )
    .await;
    assert_eq!(ids(&v["tasks"]), vec![want[2].clone()]);
    assert!(text.contains(r#""nextPageToken":"""#), "{text}");
    assert_eq!(v["totalSize"], 3);

    // An empty list still has every field.
    let r = rpc_ok(&h, "carol", "ListTasks", json!({})).await;
    assert_eq!(
        r,
        json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
    );
}

// a2a-spec.md §4.7 / §4.8: without push support every push config operation
// MUST fail with PushNotificationNotSupported (−32003 / 400), and the card
// cannot declare push; streaming undeclared → UnsupportedOperation for
// SendStreamingMessage and SubscribeToTask; extendedAgentCard undeclared →
// UnsupportedOperation. Both bindings, through the assembled stack.
#[tokio::test]
async fn undeclared_capabilities_fail_with_their_errors_on_both_bindings() {
    let h = server();
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();

    // Push: all four operations.
    let cfg = json!({"taskId": id, "url": "https://client.example/hook"});
    for (method, params) in [
        ("CreateTaskPushNotificationConfig", cfg.clone()),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c"}),
        ),
    ] {
        rpc_err(
            &h,
            ALICE,
            method,
            params,
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        )
        .await;
    }
    let base = format!("/rest/tasks/{id}/pushNotificationConfigs");
    for req in [
        request("POST", &base, ALICE, Some(cfg.clone())),
        request("GET", &format!("{base}/c"), ALICE, None),
        request("GET", &base, ALICE, None),
        request("DELETE", &format!("{base}/c"), ALICE, None),
    ] {
        rest_err(
            &h,
            req,
            400,
            "FAILED_PRECONDITION",
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        )
        .await;
    }
    // The served card does not declare push, and cannot be built to.
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (_, _, text) = raw(call(&h, req).await).await;
    let served: Value = serde_json::from_str(&text).unwrap();
    assert_ne!(served["capabilities"]["pushNotifications"], true);
    let mut pushy = card();
    pushy.capabilities.push_notifications = Some(true);
    let (exec, _, _) = executor();
    assert!(A2aServer::builder(pushy).executor(exec).await.is_err());

    // Extended card undeclared.
    rpc_err(
        &h,
        ALICE,
        "GetExtendedAgentCard",
        json!({}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        request("GET", "/rest/extendedAgentCard", ALICE, None),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;

    // Streaming undeclared.
    let h = server_with(card().with_streaming(false));
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();
    rpc_err(
        &h,
        ALICE,
        "SendStreamingMessage",
        json!({"message": message("echo")}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rpc_err(
        &h,
        ALICE,
        "SubscribeToTask",
        json!({"id": id}),
        -32004,
        "UNSUPPORTED_OPERATION",
    )
    .await;
    rest_err(
        &h,
        request(
            "POST",
            "/rest/message:stream",
            ALICE,
            Some(json!({"message": message("echo")})),
        ),
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    )
    .await;
    for verb in ["GET", "POST"] {
        rest_err(
            &h,
            rest_subscribe(verb, ALICE, &id),
            400,
            "FAILED_PRECONDITION",
            "UNSUPPORTED_OPERATION",
        )
        .await;
    }
}
