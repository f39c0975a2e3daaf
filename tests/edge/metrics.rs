//! The request metrics (`a2a_tower::telemetry`) after a known sequence of
//! calls, read from `metrics-util`'s debugging recorder installed for this
//! thread only (a current-thread runtime: the executions run here too).

use crate::support;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::server::A2aServer;
use a2a_tower::telemetry::names;
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use futures_core::Stream;
use metrics_util::CompositeKey;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use serde_json::json;
use support::http::{message, request, rpc_body};
use tower::ServiceExt;

struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}

fn card() -> AgentCard {
    AgentCard::new("Echo", "Echoes", "1.0.0")
        .with_interface(AgentInterface::jsonrpc("http://localhost/"))
        .with_interface(AgentInterface::http_json("http://localhost/rest"))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes"))
}

/// The value of the counter `name` with exactly these labels (0 if absent).
fn counter(snap: &Snapshot, name: &str, labels: &[(&str, &str)]) -> u64 {
    find(snap, name, labels)
        .map(|v| match v {
            DebugValue::Counter(n) => *n,
            other => panic!("{name} is {other:?}"),
        })
        .unwrap_or(0)
}

/// How many values the histogram `name` with these labels recorded.
fn observations(snap: &Snapshot, name: &str, labels: &[(&str, &str)]) -> usize {
    find(snap, name, labels)
        .map(|v| match v {
            DebugValue::Histogram(v) => v.len(),
            other => panic!("{name} is {other:?}"),
        })
        .unwrap_or(0)
}

/// One snapshot of every metric (a snapshot takes the values it reads).
type Snapshot = Vec<(
    CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)>;

fn find<'a>(snap: &'a Snapshot, name: &str, labels: &[(&str, &str)]) -> Option<&'a DebugValue> {
    snap.iter()
        .find(|(key, _, _, _)| {
            let key = key.key();
            let mut got: Vec<_> = key.labels().map(|l| (l.key(), l.value())).collect();
            let mut want: Vec<_> = labels.to_vec();
            got.sort();
            want.sort();
            key.name() == name && got == want
        })
        .map(|(_, _, _, v)| v)
}

#[tokio::test]
async fn requests_are_counted_by_operation_binding_and_outcome() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _local = metrics::set_default_local_recorder(&recorder);
    let server = A2aServer::builder(card()).agent(Echo).await.unwrap();

    for id in ["m-1", "m-2"] {
        let body = rpc_body(1, "SendMessage", json!({"message": message(id, "hi")}));
        let res = server
            .clone()
            .oneshot(request("POST", "/", Some(&body)))
            .await;
        assert_eq!(res.unwrap().status(), 200);
    }
    let res = server
        .clone()
        .oneshot(request("GET", "/rest/tasks/no-such-task", None))
        .await;
    assert_eq!(res.unwrap().status(), 404);

    let snap = snapshotter.snapshot().into_vec();
    let sent = [
        ("operation", "SendMessage"),
        ("binding", "JSONRPC"),
        ("outcome", "ok"),
    ];
    let missing = [
        ("operation", "GetTask"),
        ("binding", "HTTP+JSON"),
        ("outcome", "TASK_NOT_FOUND"),
    ];
    assert_eq!(counter(&snap, names::REQUESTS, &sent), 2);
    assert_eq!(counter(&snap, names::REQUESTS, &missing), 1);
    assert_eq!(observations(&snap, names::REQUEST_DURATION, &sent), 2);
    assert_eq!(observations(&snap, names::REQUEST_DURATION, &missing), 1);
    // Nothing else was counted as a request.
    let others = [
        ("operation", "GetTask"),
        ("binding", "JSONRPC"),
        ("outcome", "ok"),
    ];
    assert_eq!(counter(&snap, names::REQUESTS, &others), 0);
    assert_eq!(
        counter(&snap, names::EXECUTIONS, &[("outcome", "completed")]),
        2
    );
}
