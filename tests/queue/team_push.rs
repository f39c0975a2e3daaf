//! A team behind the delivery queue answers every operation the engine
//! answers, the push-config operations included: with push delivered
//! (`push_notifications`) its card may declare them, a SendMessage's inline
//! config is kept with the queued task and gets every event of its run, and
//! the four config operations behave as they do on the engine. Without a
//! sender, the card cannot declare push and the operations are
//! PushNotificationNotSupported, as on the engine.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::push::{Backoff, PushSender, WebhookGuard};
use a2a_tower::queue::Team;
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use futures_core::Stream;
use futures_util::StreamExt as _;
use http::{Method, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::http::{Reply, request, rpc_body};
use support::webhook::Receiver;
use tokio::sync::Semaphore;
use tower::ServiceExt;
use tower::util::BoxCloneService;

type App = BoxCloneService<
    http::Request<Full<bytes::Bytes>>,
    http::Response<a2a_tower::Body>,
    std::convert::Infallible,
>;

/// Answers its input's words one chunk each, once it gets a permit.
#[derive(Clone)]
struct Words(Arc<Semaphore>);

impl Agent for Words {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let gate = self.0.clone();
        let words: Vec<Result<String, BoxError>> = input
            .text
            .split_whitespace()
            .map(|w| Ok(w.to_owned()))
            .collect();
        futures_util::stream::once(async move {
            gate.acquire().await.expect("open gate").forget();
            futures_util::stream::iter(words)
        })
        .flatten()
    }
}

fn card() -> AgentCard {
    AgentCard::new("Team", "A team behind a queue", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/rpc"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_skill(AgentSkill::new("words", "Words", "Answers word by word"))
        .with_streaming(true)
}

fn team(gate: &Arc<Semaphore>) -> Team {
    Team::builder()
        .agent("words", Words(gate.clone()))
        .build()
        .unwrap()
}

/// Loopback allowed, as the receiver listens there; short backoff.
fn sender() -> PushSender {
    PushSender::builder()
        .guard(WebhookGuard::new().allow_networks(["127.0.0.0/8"]).unwrap())
        .timeout(Duration::from_secs(10))
        .backoff(Backoff::new(
            Duration::from_millis(10),
            Duration::from_millis(50),
        ))
        .build()
        .unwrap()
}

async fn push_team(gate: &Arc<Semaphore>) -> App {
    let app = A2aServer::builder(card().with_push_notifications(true))
        .push_notifications(sender())
        .team(team(gate))
        .await
        .expect("a team with push builds");
    BoxCloneService::new(app)
}

async fn rpc(app: &App, method: &str, params: Value) -> Value {
    let body = rpc_body(1, method, params);
    let res = app
        .clone()
        .oneshot(request(Method::POST, "/rpc", Some(&body)))
        .await
        .unwrap();
    let reply = Reply::read(res).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

#[tokio::test]
async fn an_inline_config_gets_every_event_of_the_queued_run() {
    let app = push_team(&Arc::new(Semaphore::new(1))).await;
    let hook = Receiver::start().await;
    let params = json!({
        "message": message("m-1", "one two three"),
        "configuration": {"taskPushNotificationConfig": {"url": hook.url("/hook"), "token": "tok-1"}},
    });
    let answer = rpc(&app, "SendMessage", params).await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let events = tokio::time::timeout(Duration::from_secs(30), hook.events_until_completed())
        .await
        .expect("delivered in time");
    // The queued task first, then its run: every chunk, then COMPLETED.
    assert_eq!(
        events[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{events:#?}"
    );
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(chunks, ["one", "two", "three"], "{events:#?}");
    assert!(
        hook.hits()
            .iter()
            .all(|h| h.headers["a2a-notification-token"] == "tok-1"),
    );
    // A terminal task keeps its configs (they receive nothing more): the
    // engine's rule, through the team too.
    let id = task["id"].as_str().unwrap();
    let list = rpc(
        &app,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    let configs = list["result"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1, "{list}");
    assert!(
        configs[0]["url"].as_str().unwrap().ends_with("/hook"),
        "{list}"
    );
    assert!(
        configs[0].get("token").is_none(),
        "answers carry no secret: {list}"
    );
}

#[tokio::test]
async fn the_four_config_operations_work_on_a_queued_task() {
    let gate = Arc::new(Semaphore::new(0));
    let app = push_team(&gate).await;
    let queue = |id: &str, text: &str| {
        let mut m = message(id, text);
        m["contextId"] = json!("ctx");
        json!({"message": m, "configuration": {"returnImmediately": true}})
    };
    // The first input runs (held at the gate); the second waits in the
    // context's queue, SUBMITTED.
    rpc(&app, "SendMessage", queue("m-2", "first")).await;
    let second = rpc(&app, "SendMessage", queue("m-3", "second")).await;
    let id = second["result"]["task"]["id"]
        .as_str()
        .expect("task id")
        .to_owned();
    assert_eq!(
        second["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );

    let config = json!({"taskId": id, "id": "c-1", "url": "https://example.com/hook"});
    let created = rpc(&app, "CreateTaskPushNotificationConfig", config.clone()).await;
    assert_eq!(created["result"], config, "{created}");
    let got = rpc(
        &app,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(got["result"], config, "{got}");
    let list = rpc(
        &app,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(list["result"]["configs"], json!([config]), "{list}");
    let deleted = rpc(
        &app,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert!(deleted.get("error").is_none(), "{deleted}");
    let list = rpc(
        &app,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(list["result"]["configs"], json!([]), "{list}");
    // No such task: TaskNotFound, as on the engine.
    let missing = rpc(
        &app,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": "no-such-task"}),
    )
    .await;
    assert_eq!(missing["error"]["code"], -32001, "{missing}");
    gate.add_permits(2);
}

#[tokio::test]
async fn without_a_sender_a_team_has_no_push() {
    let gate = Arc::new(Semaphore::new(1));
    let built = A2aServer::builder(card().with_push_notifications(true))
        .team(team(&gate))
        .await;
    let Err(err) = built else {
        panic!("a card declaring push needs a sender")
    };
    assert!(err.to_string().contains("push"), "{err}");
    let app: App =
        BoxCloneService::new(A2aServer::builder(card()).team(team(&gate)).await.unwrap());
    let got = rpc(
        &app,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": "t"}),
    )
    .await;
    assert_eq!(got["error"]["code"], -32003, "{got}");
    let params = json!({
        "message": message("m-3", "hi"),
        "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/hook"}},
    });
    let sent = rpc(&app, "SendMessage", params).await;
    assert_eq!(sent["error"]["code"], -32003, "{sent}");
}
