//! The delivery-queue extension through the whole `A2aServer::team` stack:
//! the card declares it; GetContextQueue over JSON-RPC and
//! `GET /contexts/{id}/queue` over HTTP+JSON show the same queue (entries in
//! comparator order, a revision, the runs going); ReorderContextQueue (both
//! bindings) replaces the order, and the inputs then run in it; a stale
//! revision, an incomplete order, a duplicate or an unknown id fail closed
//! (nothing changes).

use crate::support;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::queue::{QUEUE_EXTENSION, Team};
use a2a_tower::server::A2aServer;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use a2a_tower::{Body, BoxError, ErrorKind};
use bytes::Bytes;
use futures_core::Stream;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use support::http::{Reply, request, rpc_body};
use tokio::sync::Semaphore;
use tower::ServiceExt;
use tower::util::BoxCloneService;

type App = BoxCloneService<Request<Full<Bytes>>, Response<Body>, Infallible>;

/// Records the order of its inputs; a text `block` waits for a permit.
#[derive(Clone)]
struct Recorder {
    ran: Arc<Mutex<Vec<String>>>,
    gate: Arc<Semaphore>,
}

impl Agent for Recorder {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let me = self.clone();
        futures_util::stream::once(async move {
            if input.text == "block" {
                me.gate.acquire().await?.forget();
            }
            me.ran.lock().unwrap().push(input.text.clone());
            Ok(input.text)
        })
    }
}

fn card() -> AgentCard {
    AgentCard::new("Team", "A queue per context", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://agent.example/rpc"))
        .with_interface(AgentInterface::http_json("http://agent.example/rest"))
        .with_skill(AgentSkill::new("work", "Work", "Records its inputs"))
}

async fn app() -> (App, Recorder) {
    let agent = Recorder {
        ran: Arc::default(),
        gate: Arc::new(Semaphore::new(0)),
    };
    let team = Team::builder()
        .agent("worker", agent.clone())
        .build()
        .unwrap();
    let app = A2aServer::builder(card()).team(team).await.expect("builds");
    (BoxCloneService::new(app), agent)
}

async fn call(app: &App, req: Request<Full<Bytes>>) -> Reply {
    Reply::read(app.clone().oneshot(req).await.unwrap()).await
}

async fn rpc(app: &App, method: &str, params: Value) -> Value {
    let body = rpc_body(1, method, params);
    let reply = call(app, request(Method::POST, "/rpc", Some(&body))).await;
    assert_eq!(reply.status, StatusCode::OK);
    reply.json()
}

/// Queues `text` in context `c` (returnImmediately): the task id.
async fn queue(app: &App, text: &str) -> String {
    let msg = json!({"messageId": format!("m-{text}"), "contextId": "c", "role": "ROLE_USER",
        "parts": [{"text": text}]});
    let body = json!({"message": msg, "configuration": {"returnImmediately": true}});
    let reply = call(
        app,
        request(Method::POST, "/rest/message:send", Some(&body)),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["task"]["id"].as_str().unwrap().to_owned()
}

async fn rest_queue(app: &App) -> Value {
    let reply = call(app, request(Method::GET, "/rest/contexts/c/queue", None)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

fn ids(queue: &Value) -> Vec<String> {
    queue["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["taskId"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the agent ran `n` inputs (a guard, not a timing assertion).
async fn ran(agent: &Recorder, n: usize) -> Vec<String> {
    let wait = async {
        loop {
            let ran = agent.ran.lock().unwrap().clone();
            if ran.len() >= n {
                return ran;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), wait)
        .await
        .expect("the inputs ran")
}

#[tokio::test]
async fn the_queue_is_read_and_reordered_on_both_bindings() {
    let (app, agent) = app().await;
    let card = call(
        &app,
        request(Method::GET, "/.well-known/agent-card.json", None),
    )
    .await;
    let uris: Vec<_> = card.json()["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].clone())
        .collect();
    assert!(uris.contains(&json!(QUEUE_EXTENSION)));

    let running = queue(&app, "block").await;
    // Admission is the drain's, a moment after the answer: wait for it.
    let admitted = async {
        while rest_queue(&app).await["running"]
            .as_array()
            .unwrap()
            .is_empty()
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), admitted)
        .await
        .expect("the first input was admitted");
    let (a, b, c) = (
        queue(&app, "a").await,
        queue(&app, "b").await,
        queue(&app, "c").await,
    );
    let over_rest = rest_queue(&app).await;
    let over_rpc = rpc(&app, "GetContextQueue", json!({"contextId": "c"})).await;
    assert_eq!(
        over_rpc["result"], over_rest,
        "the same queue on both bindings"
    );
    assert_eq!(ids(&over_rest), [a.clone(), b.clone(), c.clone()]);
    assert_eq!(
        over_rest["running"],
        json!([{"agent": "worker", "taskId": running}])
    );
    let revision = over_rest["revision"].as_str().unwrap().to_owned();

    // Fail closed: stale, incomplete, duplicate, unknown. Nothing changes.
    let reorder = |rev: &str, ids: Vec<&String>| json!({"revision": rev, "taskIds": ids});
    let uri = "/rest/contexts/c/queue:reorder";
    let refused = [
        (
            reorder("0", vec![&c, &b, &a]),
            ErrorKind::UnsupportedOperation,
        ),
        (reorder(&revision, vec![&c, &b]), ErrorKind::InvalidParams),
        (
            reorder(&revision, vec![&c, &b, &b]),
            ErrorKind::InvalidParams,
        ),
        (
            reorder(&revision, vec![&c, &b, &running]),
            ErrorKind::InvalidParams,
        ),
    ];
    for (body, kind) in refused {
        let reply = call(&app, request(Method::POST, uri, Some(&body))).await;
        reply.rest_error(kind);
    }
    let stale = rpc(
        &app,
        "ReorderContextQueue",
        json!({"contextId": "c", "revision": "0", "taskIds": [&c, &b, &a]}),
    )
    .await;
    assert_eq!(stale["error"]["code"], -32004);
    assert_eq!(
        stale["error"]["data"][0]["metadata"]["queue.error"],
        "STALE_REVISION"
    );
    assert_eq!(
        rest_queue(&app).await,
        over_rest,
        "refusals changed nothing"
    );

    // The complete order with the current revision: c, a, b.
    let body = reorder(&revision, vec![&c, &a, &b]);
    let reply = call(&app, request(Method::POST, uri, Some(&body))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let after = reply.json();
    assert_eq!(ids(&after), [c.clone(), a.clone(), b.clone()]);
    assert_ne!(after["revision"], over_rest["revision"]);
    // Over JSON-RPC with the new revision: a, c, b.
    let rev = after["revision"].clone();
    let res = rpc(
        &app,
        "ReorderContextQueue",
        json!({"contextId": "c", "revision": rev, "taskIds": [&a, &c, &b]}),
    )
    .await;
    assert_eq!(ids(&res["result"]), [a.clone(), c.clone(), b.clone()]);
    assert_eq!(res["result"]["entries"][0]["position"], 0);

    agent.gate.add_permits(1);
    assert_eq!(ran(&agent, 4).await, ["block", "a", "c", "b"]);
}
