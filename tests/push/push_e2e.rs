//! Push notifications through the whole `A2aServer` (a2a-spec.md §9, issue
//! 17 items 2 and 4): `push_notifications(PushSender)` on the builder, the
//! real HTTP sender, and webhook receivers on loopback. Each config gets
//! every event of its task, in order, as the same JSON a REST SSE stream
//! carries, with the configured credentials; a failing or hanging webhook
//! neither slows the task nor another config; retries go through; the SSRF
//! guard is on by default.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tower::BoxError;
use a2a_tower::engine::{Execution, Executor};
use a2a_tower::log::{DeliveryLog, MemoryTaskLog};
use a2a_tower::push::{Backoff, PushSender, WebhookGuard};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{Artifact, Part, StreamResponse};
use futures_util::FutureExt as _;
use serde_json::{Value, json};
use support::assembled::{
    ALICE, Harness, card, continuation, message, request, rest_subscribe, rpc_ok, sse,
};
use support::webhook::{Receiver, Reply};
use tokio::sync::Semaphore;
use tower::util::BoxCloneService;

const TOKEN: &str = "tok-e2e-51c0";
const CREDENTIALS: &str = "cred-e2e-8d2f";
const MS: Duration = Duration::from_millis(1);
/// How long a call or a wait may take on a loaded machine.
const BOUND: Duration = Duration::from_secs(20);

/// The agent: a first message `ask` waits in INPUT_REQUIRED; any other
/// message (or the answer to `ask`) is WORKING, one artifact chunk per word,
/// COMPLETED.
#[derive(Clone)]
struct Words;

impl Executor for Words {
    async fn execute(&self, ex: Execution) -> Result<(), BoxError> {
        let text = ex.message.text();
        if text == "ask" && ex.task.history.len() == 1 {
            ex.emit.input_required("Which words?").await?;
            return Ok(());
        }
        ex.emit.working().await?;
        let words: Vec<&str> = text.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let chunk = Artifact {
                artifact_id: "words".into(),
                parts: vec![Part::text(*w)],
                ..Artifact::default()
            };
            ex.emit.artifact(chunk, i > 0, i + 1 == words.len()).await?;
        }
        ex.emit.complete().await?;
        Ok(())
    }
}

/// Loopback allowed, as the receivers listen there; short backoff.
fn loopback_sender(timeout: Duration) -> PushSender {
    PushSender::builder()
        .guard(WebhookGuard::new().allow_networks(["127.0.0.0/8"]).unwrap())
        .timeout(timeout)
        .retries(2)
        .backoff(Backoff::new(10 * MS, 50 * MS))
        .build()
        .unwrap()
}

/// The whole server over `log`, delivering push through `sender`.
fn push_server(sender: PushSender, log: MemoryTaskLog) -> Harness {
    let card = card().with_push_notifications(true);
    let app = A2aServer::builder(card)
        .task_log(log)
        .push_notifications(sender)
        // A fresh log: nothing to recover, so the build is ready at once.
        .recovery(false)
        .executor(Words)
        .now_or_never()
        .expect("builds without waiting")
        .unwrap();
    Harness {
        app: BoxCloneService::new(app),
        pace: Arc::new(Semaphore::new(0)),
        started: tokio::sync::mpsc::unbounded_channel().1,
    }
}

/// The server delivering to loopback, 10 s per attempt.
fn loopback_server() -> Harness {
    push_server(
        loopback_sender(Duration::from_secs(10)),
        MemoryTaskLog::new(),
    )
}

/// SendMessage's params: `text` with an inline config for `url`.
fn inline(text: &str, url: &str) -> Value {
    json!({
        "message": message(text),
        "configuration": {"taskPushNotificationConfig": config(url)},
    })
}

/// A config for `url` with the token and Bearer credentials.
fn config(url: &str) -> Value {
    json!({
        "url": url,
        "token": TOKEN,
        "authentication": {"scheme": "Bearer", "credentials": CREDENTIALS},
    })
}

/// A blocking JSON-RPC SendMessage answered within the bound; its task.
async fn send(h: &Harness, params: Value) -> Value {
    let res = tokio::time::timeout(BOUND, rpc_ok(h, ALICE, "SendMessage", params))
        .await
        .expect("SendMessage answered in time");
    res["task"].clone()
}

/// A task waiting in INPUT_REQUIRED; its id.
async fn waiting_task(h: &Harness) -> String {
    let task = send(h, json!({"message": message("ask")})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    task["id"].as_str().unwrap().to_owned()
}

/// Creates a config on `task` with CreateTaskPushNotificationConfig.
async fn create(h: &Harness, task: &str, id: &str, url: &str) {
    let mut params = config(url);
    params["taskId"] = json!(task);
    params["id"] = json!(id);
    let created = rpc_ok(h, ALICE, "CreateTaskPushNotificationConfig", params).await;
    assert_eq!(created["id"], id, "{created}");
}

/// Waits (within the bound) until `done`.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(20 * MS).await;
    }
}

/// What each event is, in short: `task`, a status, or an artifact's text.
fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            if e.get("task").is_some() {
                "task".to_owned()
            } else if let Some(u) = e.get("statusUpdate") {
                u["status"]["state"].as_str().unwrap().to_owned()
            } else if let Some(u) = e.get("artifactUpdate") {
                u["artifact"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            } else {
                panic!("not a task event: {e}")
            }
        })
        .collect()
}

/// Every request `rx` got went to `path` with the spec's headers, its body
/// exactly the ProtoJSON of a StreamResponse.
fn assert_requests(rx: &Receiver, path: &str) {
    let hits = rx.hits();
    assert!(!hits.is_empty());
    for hit in hits {
        assert_eq!(hit.path, path);
        let h = &hit.headers;
        assert_eq!(h["content-type"], "application/a2a+json");
        assert_eq!(h["authorization"], format!("Bearer {CREDENTIALS}").as_str());
        assert_eq!(h["a2a-notification-token"], TOKEN);
        assert_eq!(h["x-a2a-notification-token"], TOKEN);
        let event: StreamResponse = serde_json::from_slice(&hit.body).unwrap();
        assert_eq!(hit.body, serde_json::to_vec(&event).unwrap());
    }
}

// An inline config of a streamed SendMessage gets the task as created, each
// status and artifact update and the final COMPLETED, each body exactly the
// ProtoJSON of a StreamResponse and each update as the REST SSE stream
// carried it, with the credentials in Authorization and the token in both
// token headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inline_config_gets_every_event_as_the_stream_carries_it() {
    let rx = Receiver::start().await;
    let h = loopback_server();
    let body = inline("one two three", &rx.url("/hook"));
    let mut stream = sse(
        &h,
        request("POST", "/rest/message:stream", ALICE, Some(body)),
    )
    .await;
    let streamed = stream.rest().await;
    let pushed = rx.events_until_completed().await;
    assert_eq!(
        kinds(&pushed),
        [
            "task",
            "TASK_STATE_WORKING",
            "one",
            "two",
            "three",
            "TASK_STATE_COMPLETED"
        ]
    );
    // The task as created, then the same updates as the stream: the stream
    // starts from a snapshot that may already include WORKING.
    let task = &pushed[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED");
    assert_eq!(task["id"], streamed[0]["task"]["id"]);
    assert_eq!(task["contextId"], streamed[0]["task"]["contextId"]);
    // With the message that created it, as the SDKs push it.
    assert_eq!(task["history"][0]["role"], "ROLE_USER", "{task}");
    assert_eq!(task["history"], streamed[0]["task"]["history"]);
    assert!(
        pushed[1..].ends_with(&streamed[1..]),
        "pushed {pushed:#?}, streamed {streamed:#?}"
    );
    assert_eq!(streamed.last(), pushed.last());
    assert_eq!(rx.hits().len(), pushed.len(), "each event once");
    assert_requests(&rx, "/hook");
}

// A config created on a task in INPUT_REQUIRED gets the events after it: the
// follow-up's updates, as a subscriber opened at the same time gets them,
// and no task snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_config_gets_the_events_after_it() {
    let rx = Receiver::start().await;
    let h = loopback_server();
    let task = waiting_task(&h).await;
    create(&h, &task, "later", &rx.url("/later")).await;
    let mut sub = sse(&h, rest_subscribe("GET", ALICE, &task)).await;
    let first = sub.next().await.expect("the task snapshot");
    assert_eq!(
        first["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let done = send(&h, json!({"message": continuation(&task, "four five")})).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let subscribed = sub.rest().await;
    let pushed = rx.events_until_completed().await;
    assert_eq!(
        kinds(&pushed),
        ["TASK_STATE_WORKING", "four", "five", "TASK_STATE_COMPLETED"]
    );
    assert_eq!(pushed, subscribed);
    assert_requests(&rx, "/later");
}

// Three configs on one task: one webhook answers 500 forever, one never
// answers. The task completes at once, the good config gets every event in
// order while the hanging delivery is still in flight, and the failing one
// gets each event tried (with retries) and given up, in order too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_hanging_webhook_slows_neither_the_task_nor_another_config() {
    let good = Receiver::start().await;
    let failing = Receiver::start().await;
    failing.script(std::iter::repeat_n(Reply::Status(500), 1000));
    let hanging = Receiver::start().await;
    hanging.script(std::iter::repeat_n(Reply::Hang, 100));
    // Each attempt may wait a minute: the hanging webhook holds its config.
    let h = push_server(
        loopback_sender(Duration::from_secs(60)),
        MemoryTaskLog::new(),
    );
    let task = waiting_task(&h).await;
    create(&h, &task, "hanging", &hanging.url("/")).await;
    create(&h, &task, "failing", &failing.url("/")).await;
    create(&h, &task, "good", &good.url("/")).await;

    let started = Instant::now();
    let done = send(
        &h,
        json!({"message": continuation(&task, "six seven eight")}),
    )
    .await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let took = started.elapsed();
    assert!(took < BOUND, "the task took {took:?}");

    let pushed = good.events_until_completed().await;
    let expected = [
        "TASK_STATE_WORKING",
        "six",
        "seven",
        "eight",
        "TASK_STATE_COMPLETED",
    ];
    assert_eq!(kinds(&pushed), expected);
    assert_eq!(good.hits().len(), expected.len());
    let given_up = failing.events_until_completed().await;
    assert_eq!(
        given_up, pushed,
        "the failing config got every event in order"
    );
    // Each event tried 3 times; the last one's retries may still be coming.
    until("the failing config's retries", || {
        failing.hits().len() >= 3 * expected.len()
    })
    .await;
    assert_eq!(failing.hits().len(), 3 * expected.len());
    // The hanging config is still at its first event.
    let hits = hanging.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    let first: Value = serde_json::from_slice(&hits[0].body).unwrap();
    assert_eq!(first, pushed[0]);
}

// A webhook answering 503 twice and then 200 gets the event on the third
// attempt, and the events after it in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_event_arrives_and_the_rest_follow() {
    let rx = Receiver::start().await;
    rx.script([Reply::Status(503), Reply::Status(503)]);
    let h = loopback_server();
    let body = inline("nine ten", &rx.url("/retry"));
    let task = send(&h, body).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let pushed = rx.events_until_completed().await;
    assert_eq!(
        kinds(&pushed),
        [
            "task",
            "TASK_STATE_WORKING",
            "nine",
            "ten",
            "TASK_STATE_COMPLETED"
        ]
    );
    let hits = rx.hits();
    assert_eq!(hits.len(), pushed.len() + 2);
    assert!(hits[..3].iter().all(|hit| hit.body == hits[0].body));
    assert_requests(&rx, "/retry");
}

// The SSRF guard is on by default: with `PushSender::new()` a config on the
// loopback receiver is accepted (creation takes any http(s) URL), the task
// completes, the outbox settles every event, and the receiver never sees a
// connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_loopback_by_default_and_the_task_completes() {
    let rx = Receiver::start().await;
    let log = MemoryTaskLog::new();
    let h = push_server(PushSender::new(), log.clone());
    let task = waiting_task(&h).await;
    create(&h, &task, "loop", &rx.url("/")).await;
    let done = send(&h, json!({"message": continuation(&task, "eleven")})).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    // A terminal task's cursors go once every event has an outcome.
    let deadline = Instant::now() + BOUND;
    while !log
        .delivery_cursors("public", &task)
        .await
        .unwrap()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the outbox never settled");
        tokio::time::sleep(20 * MS).await;
    }
    assert_eq!(rx.connections(), 0);
    assert!(rx.hits().is_empty());
}

// With the store sealing push secrets under a host key, the log holds them
// sealed and the webhook still gets them in the clear; Get answers neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sealed_secrets_are_delivered_and_never_answered() {
    use a2a_tower::log::{PushSecretKey, TaskLog, TaskStore, is_sealed};
    let rx = Receiver::start().await;
    let memory = Arc::new(MemoryTaskLog::new());
    let store = TaskStore::from(memory.clone()).seal_push_secrets(PushSecretKey::generate());
    let card = card().with_push_notifications(true);
    let app = A2aServer::builder(card)
        .task_log(store)
        .push_notifications(loopback_sender(Duration::from_secs(10)))
        .recovery(false)
        .executor(Words)
        .now_or_never()
        .expect("builds without waiting")
        .unwrap();
    let h = Harness {
        app: BoxCloneService::new(app),
        pace: Arc::new(Semaphore::new(0)),
        started: tokio::sync::mpsc::unbounded_channel().1,
    };
    let task = send(&h, inline("one", &rx.url("/sealed"))).await;
    let id = task["id"].as_str().unwrap();
    rx.events_until_completed().await;
    assert_requests(&rx, "/sealed");
    // The builder's default authority: every caller's tasks are "public".
    let raw = memory.snapshot("public", id).await.unwrap();
    assert!(is_sealed(&raw.projection.push_configs()[0]));
    // A live task's config, as List answers it.
    let waiting = waiting_task(&h).await;
    create(&h, &waiting, "s", &rx.url("/later")).await;
    let list = rpc_ok(
        &h,
        ALICE,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": waiting}),
    )
    .await;
    let config = &list["configs"][0];
    assert_eq!(config["url"], rx.url("/later"));
    assert_eq!(config.get("token"), None, "{config}");
    assert_eq!(config["authentication"], json!({"scheme": "Bearer"}));
}

// No binding answers a config's secrets: Create, Get and List over gRPC
// carry neither the token nor the credentials (JSON-RPC and REST above).
#[cfg(feature = "grpc")]
#[tokio::test]
async fn grpc_answers_no_push_secret() {
    use a2a_tower::grpc::proto;
    use a2a_tower::grpc::proto::a2a_service_client::A2aServiceClient;

    use a2a_tower::types::AgentInterface;
    let card = card()
        .with_push_notifications(true)
        .with_interface(AgentInterface::grpc("localhost:50051"));
    let app = A2aServer::builder(card)
        .push_notifications(loopback_sender(Duration::from_secs(10)))
        .recovery(false)
        .executor(Words)
        .now_or_never()
        .expect("builds without waiting")
        .unwrap();
    let (listener, base) = support::loopback::listener().await;
    support::loopback::serve(listener, app);
    let channel = tonic::transport::Channel::from_shared(base)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = A2aServiceClient::new(channel);
    fn req<T>(msg: T) -> tonic::Request<T> {
        let mut r = tonic::Request::new(msg);
        r.metadata_mut()
            .insert("a2a-version", "1.0".parse().unwrap());
        r
    }
    let sent = c
        .send_message(req(proto::SendMessageRequest {
            message: Some(proto::Message {
                message_id: "m-1".into(),
                role: proto::Role::User as i32,
                parts: vec![proto::Part {
                    content: Some(proto::part::Content::Text("ask".into())),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let Some(proto::send_message_response::Payload::Task(task)) = sent.payload else {
        panic!("a task: {sent:?}")
    };
    let t = task.id;
    let config = proto::TaskPushNotificationConfig {
        task_id: t.clone(),
        id: "g".into(),
        url: "https://example.com/g".into(),
        token: "tok".into(),
        authentication: Some(proto::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "secret".into(),
        }),
        ..Default::default()
    };
    let created = c
        .create_task_push_notification_config(req(config))
        .await
        .unwrap()
        .into_inner();
    let got = c
        .get_task_push_notification_config(req(proto::GetTaskPushNotificationConfigRequest {
            task_id: t.clone(),
            id: "g".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let listed = c
        .list_task_push_notification_configs(req(proto::ListTaskPushNotificationConfigsRequest {
            task_id: t.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    for answer in [&created, &got, &listed.configs[0]] {
        assert_eq!(answer.url, "https://example.com/g");
        assert_eq!(answer.token, "", "{answer:?}");
        let auth = answer.authentication.as_ref().unwrap();
        assert_eq!(
            (auth.scheme.as_str(), auth.credentials.as_str()),
            ("Bearer", "")
        );
    }
}
