//! Authorization through the whole `A2aServer` (`support::assembled`), on
//! both bindings: another caller's task looks exactly like a missing one
//! (a2a-spec.md §4.9), and a call without a principal is refused before any
//! lookup (§10.1).

use crate::support;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::assembled::{
    ALICE, BOB, call, continuation, message, raw, request, rest_err, rest_send, rest_subscribe,
    rpc_err, rpc_ok, rpc_req, server,
};

// a2a-spec.md §4.9: Get, Cancel, Subscribe, continuation and the push
// operations MUST check access; another authority's task MUST look exactly
// like a missing one (TaskNotFound, same body), and its owner is unaffected.
// The principal comes from a host `http_layer`, the authority from
// `Authority::principal`. Both bindings.
#[tokio::test]
async fn another_callers_task_is_task_not_found() {
    let h = server();
    let t = rest_send(&h, ALICE, message("ask"), false).await;
    let id = t["id"].as_str().unwrap().to_owned();
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    const GHOST: &str = "00000000-0000-4000-8000-000000000000";
    assert_eq!(id.len(), GHOST.len());

    // JSON-RPC: bob on alice's task answers byte for byte like a missing task.
    let ops = |task: &str| {
        vec![
            ("GetTask", json!({"id": task})),
            ("CancelTask", json!({"id": task})),
            ("SubscribeToTask", json!({"id": task})),
            (
                "SendMessage",
                json!({"message": continuation(task, "hijack")}),
            ),
        ]
    };
    for ((method, theirs), (_, missing)) in ops(&id).into_iter().zip(ops(GHOST)) {
        let (_, _, got) = raw(call(&h, rpc_req(BOB, "x", method, theirs)).await).await;
        let (_, _, absent) = raw(call(&h, rpc_req(BOB, "x", method, missing)).await).await;
        let v: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["error"]["code"], -32001, "{method}: {got}");
        assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(got.replace(&id, GHOST), absent, "{method}");
    }
    // REST, the same.
    let reqs = |task: &str| {
        vec![
            request("GET", &format!("/rest/tasks/{task}"), BOB, None),
            request("POST", &format!("/rest/tasks/{task}:cancel"), BOB, None),
            rest_subscribe("POST", BOB, task),
            rest_subscribe("GET", BOB, task),
            request(
                "POST",
                "/rest/message:send",
                BOB,
                Some(json!({"message": continuation(task, "hijack")})),
            ),
        ]
    };
    for (theirs, missing) in reqs(&id).into_iter().zip(reqs(GHOST)) {
        let what = format!("{} {}", theirs.method(), theirs.uri());
        let (status, _, got) = raw(call(&h, theirs).await).await;
        let (_, _, absent) = raw(call(&h, missing).await).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {got}");
        let v: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(
            v["error"]["details"][0]["reason"], "TASK_NOT_FOUND",
            "{what}"
        );
        assert_eq!(got.replace(&id, GHOST), absent, "{what}");
    }
    // Push operations: refused for everyone alike (no push support), so they
    // reveal nothing either.
    rpc_err(
        &h,
        BOB,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c"}),
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    )
    .await;

    // Alice's task is untouched by bob's cancel and continuation.
    let r = rpc_ok(&h, ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(r["history"], t["history"], "no hijacked message");
}

// a2a-spec.md §10.1: the server MUST authenticate every request. With
// `Authority::principal`, a call whose host layer recorded no principal is
// refused on both bindings (401, the ErrorInfo reason UNAUTHENTICATED) before
// any task is looked up; the card stays public (§2.1).
#[tokio::test]
async fn calls_without_a_principal_are_unauthenticated_on_both_bindings() {
    let h = server();
    let anonymous = |mut req: Request<Full<Bytes>>| {
        req.headers_mut().remove("x-user");
        req
    };
    let (status, ct, text) =
        raw(call(&h, anonymous(rpc_req(ALICE, "u", "ListTasks", json!({})))).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(ct, "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"jsonrpc": "2.0", "id": "u", "error": {
            "code": -31401,
            "message": "Authentication required",
            "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "UNAUTHENTICATED",
                "domain": "a2a-protocol.org"
            }]
        }})
    );
    for req in [
        request("GET", "/rest/tasks", ALICE, None),
        request("GET", "/rest/tasks/missing", ALICE, None),
        request(
            "POST",
            "/rest/message:send",
            ALICE,
            Some(json!({"message": message("echo")})),
        ),
    ] {
        rest_err(
            &h,
            anonymous(req),
            401,
            "UNAUTHENTICATED",
            "UNAUTHENTICATED",
        )
        .await;
    }
    // Nothing was created by the refused send.
    let r = rpc_ok(&h, ALICE, "ListTasks", json!({})).await;
    assert_eq!(r["totalSize"], 0);
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(call(&h, req).await.status(), StatusCode::OK);
}
