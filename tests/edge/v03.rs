//! A2A 0.3 beside 1.0 (`a2a_tower::v03::V03Layer`) on the raw wire, over
//! the one-call assembly: a request without `A2A-Version` is a 0.3 one on
//! JSON-RPC and on HTTP+JSON under `/v1`; the same task is read over 1.0;
//! streams carry 0.3 events with the request's id; the card carries both.

use crate::support;

use std::convert::Infallible;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::v03::V03Layer;
use bytes::Bytes;
use futures_core::Stream;
use http::{Method, Request};
use http_body_util::Full;
use serde_json::{Value, json};
use support::http::{Reply, request, rpc_body};
use tower::{Layer, Service, ServiceExt};

/// Echoes its input; `wait` stays WORKING until canceled.
struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        use futures_util::StreamExt;
        let wait = input.text == "wait";
        futures_util::stream::iter([Ok(input.text)])
            .chain(futures_util::stream::pending().take(usize::from(wait)))
    }
}

fn card() -> AgentCard {
    AgentCard::new("Both", "Serves 0.3 and 1.0", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/a2a"))
        .with_interface(AgentInterface::http_json("http://localhost/a2a/rest"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"))
        .with_streaming(true)
}

async fn app()
-> impl Service<Request<Full<Bytes>>, Response = http::Response<a2a_tower::Body>, Error = Infallible>
+ Clone {
    let card = card();
    let inner = A2aServer::builder(card.clone()).agent(Echo).await.unwrap();
    V03Layer::new(&card).unwrap().layer(inner)
}

/// A request without `A2A-Version`.
fn v03(method: Method, uri: &str, body: Option<&Value>) -> Request<Full<Bytes>> {
    let mut req = request(method, uri, body);
    req.headers_mut().remove("a2a-version");
    req
}

async fn call<S>(app: &S, req: Request<Full<Bytes>>) -> Reply
where
    S: Service<
            Request<Full<Bytes>>,
            Response = http::Response<a2a_tower::Body>,
            Error = Infallible,
        > + Clone,
{
    Reply::read(app.clone().oneshot(req).await.unwrap()).await
}

fn msg03(text: &str) -> Value {
    json!({"kind": "message", "messageId": support::client::uuid(), "role": "user",
        "parts": [{"kind": "text", "text": text}]})
}

/// The `data:` payloads of an SSE body.
fn events(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test]
async fn jsonrpc_03_send_get_and_read_over_10() {
    let app = app().await;
    let body = rpc_body(41, "message/send", json!({"message": msg03("hello there")}));
    let r = call(&app, v03(Method::POST, "/a2a", Some(&body)))
        .await
        .json();
    assert_eq!(r["id"], 41, "{r}");
    let task = &r["result"];
    assert_eq!(task["kind"], "task");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(task["history"][0]["role"], "user");
    assert_eq!(
        task["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "hello there"})
    );
    let id = task["id"].as_str().unwrap().to_owned();

    // 0.3 tasks/get with a string id; unknown tasks keep the 0.3 code.
    let get = rpc_body("g", "tasks/get", json!({"id": id}));
    let r = call(&app, v03(Method::POST, "/a2a", Some(&get)))
        .await
        .json();
    assert_eq!(r["id"], "g");
    assert_eq!(r["result"]["status"]["state"], "completed");
    let missing = rpc_body(2, "tasks/get", json!({"id": "nope"}));
    let r = call(&app, v03(Method::POST, "/a2a", Some(&missing)))
        .await
        .json();
    assert_eq!(r["error"]["code"], -32001);

    // The same task over 1.0.
    let get10 = rpc_body(3, "GetTask", json!({"id": id}));
    let r = call(&app, request(Method::POST, "/a2a", Some(&get10)))
        .await
        .json();
    assert_eq!(r["result"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn jsonrpc_03_stream_echoes_the_numeric_id_on_every_event() {
    let app = app().await;
    let body = rpc_body(9, "message/stream", json!({"message": msg03("a b")}));
    let reply = call(&app, v03(Method::POST, "/a2a", Some(&body))).await;
    assert!(reply.content_type().starts_with("text/event-stream"));
    let evs = events(reply.text());
    assert!(evs.len() >= 2, "{}", reply.text());
    assert!(evs.iter().all(|e| e["id"] == 9));
    let last = &evs.last().unwrap()["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
}

#[tokio::test]
async fn cancel_over_03_a_task_started_over_10_and_resubscribe() {
    let app = app().await;
    let send = json!({"message": support::http::message("m-1", "wait"),
        "configuration": {"returnImmediately": true}});
    let r = call(
        &app,
        request(Method::POST, "/a2a/rest/message:send", Some(&send)),
    )
    .await;
    let id = r.json()["task"]["id"].as_str().unwrap().to_owned();

    // 0.3 HTTP+JSON GET sees it working; 0.3 JSON-RPC cancels it.
    let get = call(
        &app,
        v03(Method::GET, &format!("/a2a/rest/v1/tasks/{id}"), None),
    )
    .await;
    assert_eq!(get.status, 200, "{}", get.text());
    let state = get.json()["status"]["state"].clone();
    assert!(
        state == "TASK_STATE_WORKING" || state == "TASK_STATE_SUBMITTED",
        "{state}"
    );
    let cancel = rpc_body(5, "tasks/cancel", json!({"id": id}));
    let r = call(&app, v03(Method::POST, "/a2a", Some(&cancel)))
        .await
        .json();
    assert_eq!(r["result"]["status"]["state"], "canceled", "{r}");

    // A resubscription to a finished task over 0.3 HTTP+JSON: the 1.0
    // refusal as the 0.3 error body.
    let sub = call(
        &app,
        v03(
            Method::POST,
            &format!("/a2a/rest/v1/tasks/{id}:subscribe"),
            None,
        ),
    )
    .await;
    let v = sub.json();
    assert!(v["code"].is_i64(), "{v}");
    // Over 1.0 the task is canceled too.
    let r = call(
        &app,
        request(Method::GET, &format!("/a2a/rest/tasks/{id}"), None),
    )
    .await;
    assert_eq!(r.json()["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn rest_03_send_and_stream_in_protojson() {
    let app = app().await;
    let body = json!({"request": {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi you"}]},
        "configuration": {"blocking": true}});
    let r = call(
        &app,
        v03(Method::POST, "/a2a/rest/v1/message:send", Some(&body)),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(v["task"]["history"][0]["content"][0]["text"], "hi you");

    let body =
        json!({"message": {"messageId": "m-2", "role": "ROLE_USER", "content": [{"text": "x y"}]}});
    let r = call(
        &app,
        v03(Method::POST, "/a2a/rest/v1/message:stream", Some(&body)),
    )
    .await;
    let evs = events(r.text());
    assert!(evs[0]["task"].is_object(), "{}", r.text());
    let last = evs.last().unwrap();
    assert_eq!(last["statusUpdate"]["final"], true);
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    let r = call(&app, v03(Method::GET, "/a2a/rest/v1/tasks/nope", None)).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"code": -32001, "message": "Task not found"})
    );
}

#[tokio::test]
async fn the_card_carries_both_and_10_requests_pass() {
    let app = app().await;
    let req = Request::get("/.well-known/agent-card.json")
        .body(Full::default())
        .unwrap();
    let c = call(&app, req).await.json();
    assert_eq!(c["url"], "http://localhost/a2a");
    assert_eq!(c["preferredTransport"], "JSONRPC");
    assert_eq!(c["protocolVersion"], "0.3.0");
    assert_eq!(c["additionalInterfaces"][1]["transport"], "HTTP+JSON");
    assert_eq!(c["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(c["skills"][0]["tags"], json!(["echo"]));

    // A 1.0 method with A2A-Version 1.0 is untouched; asking for 2.0 is
    // the 1.0 stack's refusal.
    let get = rpc_body(1, "GetTask", json!({"id": "nope"}));
    let r = call(&app, request(Method::POST, "/a2a", Some(&get)))
        .await
        .json();
    assert_eq!(r["error"]["code"], -32001);
    let mut req = request(Method::POST, "/a2a", Some(&get));
    req.headers_mut()
        .insert("a2a-version", "2.0".parse().unwrap());
    let r = call(&app, req).await.json();
    assert_eq!(r["error"]["code"], -32009);
}
