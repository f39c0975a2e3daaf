//! The push-config operations through the assembled stack, on both bindings
//! (a2a-spec.md §4.7, §6.2, §7.1), and on the managed layer; the storage
//! rules on every log run from tests/logs/log_{memory,sqlite,postgres}.rs
//! (`a2a_tower_engine::suite::push`).

use crate::support;

use a2a_tower::card::StackCapabilities;
use a2a_tower::server::A2aServer;
use serde_json::{Value, json};
use support::assembled::{
    ALICE, BOB, Harness, card, engine_core_server, message, raw, request, rest_err, rest_ok,
    rest_send, rpc_err, rpc_ok, server,
};

fn push_server() -> Harness {
    let mut card = card();
    card.capabilities.push_notifications = Some(true);
    let caps = StackCapabilities::new()
        .streaming(true)
        .push_notifications(true);
    engine_core_server(card, caps)
}

/// An INPUT_REQUIRED task of `user`.
async fn waiting_task(h: &Harness, user: &str) -> String {
    let t = rest_send(h, user, message("ask"), false).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    t["id"].as_str().unwrap().to_owned()
}

// The four methods over JSON-RPC: ids, replacement, pages, idempotent
// delete, a missing config as TaskNotFound (§4.7).
#[tokio::test]
async fn jsonrpc_create_get_list_delete() {
    let h = push_server();
    let t = waiting_task(&h, ALICE).await;
    let created = rpc_ok(
        &h,
        ALICE,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": t, "url": "https://example.com/a",
               "authentication": {"scheme": "Bearer", "credentials": "c"}}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(!id.is_empty());
    assert_eq!(created["taskId"], t);
    assert_eq!(
        created["authentication"],
        json!({"scheme": "Bearer"}),
        "credentials are never answered"
    );
    let got = rpc_ok(
        &h,
        ALICE,
        "GetTaskPushNotificationConfig",
        json!({"taskId": t, "id": id}),
    )
    .await;
    assert_eq!(got, created);
    for url in ["https://example.com/b1", "https://example.com/b2"] {
        rpc_ok(
            &h,
            ALICE,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": t, "id": "b", "url": url}),
        )
        .await;
    }
    let page = rpc_ok(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": t, "pageSize": 1}),
    )
    .await;
    assert_eq!(page["configs"].as_array().unwrap().len(), 1);
    let token = page["nextPageToken"].as_str().unwrap();
    assert!(!token.is_empty());
    let rest = rpc_ok(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": t, "pageSize": 1, "pageToken": token}),
    )
    .await;
    assert_eq!(rest["nextPageToken"], "", "{rest}");
    let mut urls: Vec<Value> = vec![page["configs"][0]["url"].clone()];
    urls.push(rest["configs"][0]["url"].clone());
    urls.sort_by_key(|u| u.to_string());
    assert_eq!(
        urls,
        [
            json!("https://example.com/a"),
            json!("https://example.com/b2")
        ]
    );
    for _ in 0..2 {
        let empty = rpc_ok(
            &h,
            ALICE,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": t, "id": "b"}),
        )
        .await;
        assert_eq!(empty, json!({}));
    }
    rpc_err(
        &h,
        ALICE,
        "GetTaskPushNotificationConfig",
        json!({"taskId": t, "id": "b"}),
        -32001,
        "TASK_NOT_FOUND",
    )
    .await;
    rpc_err(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": t, "pageToken": "nope"}),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
}

// The REST routes (§7.1): POST/GET/DELETE under
// /tasks/{id}/pushNotificationConfigs, the task id from the path, Delete
// answering `{}`, errors as google.rpc.Status.
#[tokio::test]
async fn rest_routes() {
    let h = push_server();
    let t = waiting_task(&h, ALICE).await;
    let base = format!("/rest/tasks/{t}/pushNotificationConfigs");
    let (_, created) = rest_ok(
        &h,
        request(
            "POST",
            &base,
            ALICE,
            Some(json!({"id": "r", "url": "http://hooks.example.com/r", "token": "tok"})),
        ),
    )
    .await;
    assert_eq!(created["taskId"], t, "from the path");
    assert_eq!(created.get("token"), None, "secrets are never answered");
    let (_, got) = rest_ok(&h, request("GET", &format!("{base}/r"), ALICE, None)).await;
    assert_eq!(got, created);
    let (_, list) = rest_ok(
        &h,
        request("GET", &format!("{base}?pageSize=5"), ALICE, None),
    )
    .await;
    assert_eq!(list["configs"], json!([created]));
    let (text, _) = rest_ok(&h, request("DELETE", &format!("{base}/r"), ALICE, None)).await;
    assert_eq!(text, "{}");
    let (text, _) = rest_ok(&h, request("DELETE", &format!("{base}/r"), ALICE, None)).await;
    assert_eq!(text, "{}", "idempotent");
    rest_err(
        &h,
        request("GET", &format!("{base}/r"), ALICE, None),
        404,
        "NOT_FOUND",
        "TASK_NOT_FOUND",
    )
    .await;
    let bad = request("POST", &base, ALICE, Some(json!({"url": "ftp://x"})));
    let (status, _, text) = raw(support::assembled::call(&h, bad).await).await;
    assert_eq!(status.as_u16(), 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let violations = v["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest")
        .unwrap_or_else(|| panic!("no BadRequest in {v}"))["fieldViolations"]
        .clone();
    assert_eq!(violations[0]["field"], "url", "{v}");
}

// §4.9: another caller's task and its configs look exactly like missing
// ones, for all four operations, on both bindings.
#[tokio::test]
async fn another_callers_configs_are_task_not_found() {
    let h = push_server();
    let t = waiting_task(&h, ALICE).await;
    rpc_ok(
        &h,
        ALICE,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": t, "id": "mine", "url": "https://example.com"}),
    )
    .await;
    let ops = [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": t, "id": "mine", "url": "https://evil.example.com"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": t, "id": "mine"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": t})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": t, "id": "mine"}),
        ),
    ];
    for (method, params) in ops {
        rpc_err(&h, BOB, method, params, -32001, "TASK_NOT_FOUND").await;
    }
    let base = format!("/rest/tasks/{t}/pushNotificationConfigs");
    for req in [
        request(
            "POST",
            &base,
            BOB,
            Some(json!({"url": "https://evil.example.com"})),
        ),
        request("GET", &format!("{base}/mine"), BOB, None),
        request("GET", &base, BOB, None),
        request("DELETE", &format!("{base}/mine"), BOB, None),
    ] {
        rest_err(&h, req, 404, "NOT_FOUND", "TASK_NOT_FOUND").await;
    }
    let got = rpc_ok(
        &h,
        ALICE,
        "GetTaskPushNotificationConfig",
        json!({"taskId": t, "id": "mine"}),
    )
    .await;
    assert_eq!(got["url"], "https://example.com", "untouched");
}

// SendMessage's inline config over JSON-RPC: stored with the new task.
#[tokio::test]
async fn inline_config_of_send_message() {
    let h = push_server();
    let task = rpc_ok(
        &h,
        ALICE,
        "SendMessage",
        json!({"message": message("ask"), "configuration": {
            "taskPushNotificationConfig": {"url": "https://example.com/inline", "token": "t"}
        }}),
    )
    .await;
    let t = task["task"]["id"].as_str().unwrap();
    let list = rpc_ok(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": t}),
    )
    .await;
    assert_eq!(list["configs"][0]["url"], "https://example.com/inline");
    assert_eq!(list["configs"][0]["taskId"], t);
}

// §4.7/§4.8: without `capabilities.pushNotifications`, all four operations
// and an inline config are PushNotificationNotSupported (−32003) on both
// bindings.
#[tokio::test]
async fn capability_off_is_push_notification_not_supported() {
    let h = server();
    let t = waiting_task(&h, ALICE).await;
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": t, "url": "https://example.com"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": t, "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": t})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": t, "id": "c"}),
        ),
        (
            "SendMessage",
            json!({"message": message("ask"), "configuration": {
                "taskPushNotificationConfig": {"url": "https://example.com"}}}),
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
    let base = format!("/rest/tasks/{t}/pushNotificationConfigs");
    for req in [
        request(
            "POST",
            &base,
            ALICE,
            Some(json!({"url": "https://example.com"})),
        ),
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
}

// The builder serves a card declaring push notifications only when the
// stack delivers them: the engine stores configs, delivery is not
// configured here.
#[tokio::test]
async fn builder_refuses_push_without_delivery() {
    let mut card = card();
    card.capabilities.push_notifications = Some(true);
    let (exec, _, _) = support::assembled::executor();
    let built = A2aServer::builder(card).executor(exec).await;
    let Err(err) = built else {
        panic!("a card declaring push without delivery was served")
    };
    assert!(err.to_string().contains("pushNotifications"), "{err}");
}

#[cfg(feature = "managed")]
mod managed {
    use std::time::Duration;

    use a2a_tower::log::{MemoryTaskLog, Record, TaskLog};
    use a2a_tower::managed::{ManagedService, Process, Program, Wait};
    use a2a_tower::types::{
        ListTaskPushNotificationConfigsRequest, Message, SendMessageConfiguration,
        SendMessageRequest, SendMessageResponse, Task, TaskPushNotificationConfig, TaskState,
    };
    use a2a_tower::{A2aError, A2aRequest, A2aResponse, ErrorKind, Operation};
    use serde_json::{Value, json};
    use tower::ServiceExt;

    fn program() -> Program {
        Program::new(
            "test.double",
            json!({"type": "integer"}),
            json!({"type": "integer"}),
            |p: Process, n: Value| async move {
                let ok = p
                    .wait(Wait::new("go").schema(json!({"type": "boolean"})))
                    .await?;
                Ok(if ok == json!(true) {
                    json!(n.as_i64().unwrap_or(0) * 2)
                } else {
                    json!(0)
                })
            },
        )
        .unwrap()
    }

    fn service(push: bool, log: MemoryTaskLog) -> ManagedService {
        let mut card = super::support::managed::card(&["application/json"]);
        card.capabilities.push_notifications = Some(push);
        ManagedService::builder(card, log, program())
            .build()
            .unwrap()
    }

    async fn call(svc: &ManagedService, op: Operation) -> Result<A2aResponse, A2aError> {
        tokio::time::timeout(
            Duration::from_secs(10),
            svc.clone().oneshot(A2aRequest::new(op)),
        )
        .await
        .expect("answered")
    }

    async fn send(
        svc: &ManagedService,
        message: Message,
        config: Option<TaskPushNotificationConfig>,
    ) -> Result<Task, A2aError> {
        let req = SendMessageRequest {
            message,
            configuration: Some(SendMessageConfiguration {
                task_push_notification_config: config,
                ..Default::default()
            }),
            ..Default::default()
        };
        match call(svc, Operation::SendMessage(req)).await? {
            A2aResponse::SendMessage(SendMessageResponse::Task(t)) => Ok(t.into_inner()),
            other => panic!("{other:?}"),
        }
    }

    fn hook(task: &str, id: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            id: id.into(),
            task_id: task.into(),
            url: format!("https://example.com/{id}"),
            ..Default::default()
        }
    }

    async fn ids(svc: &ManagedService, task: &str) -> Vec<String> {
        let op =
            Operation::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                task_id: task.into(),
                ..Default::default()
            });
        match call(svc, op).await.unwrap() {
            A2aResponse::PushConfigs(p) => p.configs.into_iter().map(|c| c.id).collect(),
            other => panic!("{other:?}"),
        }
    }

    // The managed core stores configs on its tasks as the engine does: the
    // inline config with the start, one created while the run waits (the
    // run folds it in and completes), an idempotent delete.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn managed_layer_stores_configs() {
        let log = MemoryTaskLog::new();
        let svc = service(true, log.clone());
        let task = send(&svc, Message::user("m-1", "21"), Some(hook("", "inline")))
            .await
            .unwrap();
        assert_eq!(task.status.state, TaskState::InputRequired);
        assert_eq!(ids(&svc, &task.id).await, ["inline"]);
        let created = call(
            &svc,
            Operation::CreateTaskPushNotificationConfig(hook(&task.id, "later")),
        )
        .await
        .unwrap();
        assert!(matches!(created, A2aResponse::PushConfig(c) if c.id == "later"));
        let records = log.read("test.double/public", &task.id, 0).await.unwrap();
        let sets = records
            .iter()
            .filter(|s| matches!(&*s.record, Record::PushConfigSet { .. }))
            .count();
        assert_eq!(sets, 2, "the inline config and the created one");
        let mut yes = Message::user("m-2", "true");
        yes.task_id = task.id.clone();
        let done = send(&svc, yes, None).await.unwrap();
        assert_eq!(
            done.status.state,
            TaskState::Completed,
            "the run was not lost"
        );
        assert_eq!(
            serde_json::to_value(&done.artifacts[0].parts[0]).unwrap()["data"],
            json!(42)
        );
        // Terminal now: the configs stay (they receive nothing more).
        assert_eq!(ids(&svc, &task.id).await, ["inline", "later"]);
        let op = Operation::DeleteTaskPushNotificationConfig(Default::default());
        assert_eq!(
            call(&svc, op).await.unwrap_err().kind(),
            ErrorKind::InvalidParams,
            "taskId and id are required"
        );
    }

    #[tokio::test]
    async fn managed_capability_off() {
        let svc = service(false, MemoryTaskLog::new());
        let err = send(&svc, Message::user("m-1", "21"), Some(hook("", "x")))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PushNotificationNotSupported);
        let op = Operation::CreateTaskPushNotificationConfig(hook("t", "x"));
        assert_eq!(
            call(&svc, op).await.unwrap_err().kind(),
            ErrorKind::PushNotificationNotSupported
        );
    }
}

// A task keeps at most 16 configs: the 17th id is refused (a replacement of
// an existing id still works), so one caller cannot fan a task's events out
// to any number of URLs.
#[tokio::test]
async fn a_task_keeps_at_most_sixteen_configs() {
    let h = push_server();
    let t = waiting_task(&h, ALICE).await;
    let create = |id: String| json!({"taskId": t, "id": id, "url": "https://example.com/h"});
    for n in 0..16 {
        rpc_ok(
            &h,
            ALICE,
            "CreateTaskPushNotificationConfig",
            create(format!("c{n}")),
        )
        .await;
    }
    rpc_err(
        &h,
        ALICE,
        "CreateTaskPushNotificationConfig",
        create("c16".into()),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
    let mut again = create("c3".into());
    again["url"] = json!("https://example.com/other");
    rpc_ok(&h, ALICE, "CreateTaskPushNotificationConfig", again).await;
}

// An inline config on a follow-up message is bounded as Create is: a task
// with 16 configs refuses a 17th id (InvalidParams, nothing admitted), and
// takes a replacement of an existing one.
#[tokio::test]
async fn inline_configs_of_follow_ups_are_bounded_too() {
    let h = push_server();
    let t = waiting_task(&h, ALICE).await;
    for n in 0..16 {
        let create = json!({"taskId": t, "id": format!("c{n}"), "url": "https://example.com/h"});
        rpc_ok(&h, ALICE, "CreateTaskPushNotificationConfig", create).await;
    }
    let follow_up = |id: &str| {
        let mut m = message("ask");
        m["taskId"] = json!(t);
        json!({"message": m, "configuration": {
            "taskPushNotificationConfig": {"id": id, "url": "https://example.com/inline"}
        }})
    };
    rpc_err(
        &h,
        ALICE,
        "SendMessage",
        follow_up("c16"),
        -32602,
        "INVALID_PARAMS",
    )
    .await;
    let list = rpc_ok(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": t}),
    )
    .await;
    assert_eq!(list["configs"].as_array().unwrap().len(), 16);
    // A replacement is admitted (the follow-up then ends the task).
    let task = rpc_ok(&h, ALICE, "SendMessage", follow_up("c3")).await;
    assert_eq!(task["task"]["id"], t);
}
