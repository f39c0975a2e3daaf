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

/// The value of the gauge `name` with exactly these labels (`None` if it was
/// never touched).
fn gauge(snap: &Snapshot, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    find(snap, name, labels).map(|v| match v {
        DebugValue::Gauge(n) => n.into_inner(),
        other => panic!("{name} is {other:?}"),
    })
}

/// The values the histogram `name` with these labels recorded.
fn values(snap: &Snapshot, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
    find(snap, name, labels)
        .map(|v| match v {
            DebugValue::Histogram(v) => v.iter().map(|x| x.into_inner()).collect(),
            other => panic!("{name} is {other:?}"),
        })
        .unwrap_or_default()
}

/// (A snapshot takes every value it reads: a gauge then reads as its
/// change since the previous snapshot, a histogram as the values recorded
/// since.)
#[tokio::test]
async fn commits_subscribers_and_the_queue_are_measured() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _local = metrics::set_default_local_recorder(&recorder);
    let team = a2a_tower::queue::Team::builder()
        .agent("worker", Echo)
        .build()
        .unwrap();
    let server = A2aServer::builder(card().with_streaming(true))
        .team(team)
        .await
        .unwrap();

    // One input: queued, admitted for `worker`, answered.
    let body = rpc_body(1, "SendMessage", json!({"message": message("q-1", "hi")}));
    let res = server
        .clone()
        .oneshot(request("POST", "/", Some(&body)))
        .await;
    assert_eq!(res.unwrap().status(), 200);
    // A second one as a stream, held open (its body unread).
    let body = rpc_body(
        2,
        "SendStreamingMessage",
        json!({"message": message("q-2", "hi")}),
    );
    let open = server
        .clone()
        .oneshot(request("POST", "/", Some(&body)))
        .await
        .unwrap();
    assert_eq!(open.status(), 200);
    let sse = open.headers()[http::header::CONTENT_TYPE].to_str().unwrap();
    assert!(
        sse.starts_with("text/event-stream"),
        "a stream, not an error: {sse}"
    );

    let first = snapshotter.snapshot().into_vec();
    assert_eq!(gauge(&first, names::ACTIVE_SUBSCRIBERS, &[]), Some(1.0));
    // Read to its end (the run completes), the stream is gone.
    use http_body_util::BodyExt as _;
    let events = open.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&events).contains("TASK_STATE_COMPLETED"));

    let snap = snapshotter.snapshot().into_vec();
    // Down by one since: no stream open.
    assert_eq!(gauge(&snap, names::ACTIVE_SUBSCRIBERS, &[]), Some(-1.0));
    // Both inputs were queued (naming no agent) and both admitted: nothing
    // queued in all (the second may not have been admitted at the first
    // snapshot).
    let depth = |s: &Snapshot| gauge(s, names::QUEUE_DEPTH, &[("target", "*")]).unwrap_or(0.0);
    let at_first = depth(&first);
    assert!(at_first == 0.0 || at_first == 1.0, "{at_first}");
    assert_eq!(at_first + depth(&snap), 0.0);
    let both = |name: &str, labels: &[(&str, &str)]| {
        let mut v = values(&first, name, labels);
        v.extend(values(&snap, name, labels));
        v
    };
    let waits = both(names::QUEUE_ADMISSION_WAIT, &[("agent", "worker")]);
    assert_eq!(waits.len(), 2, "one wait per admission: {waits:?}");
    assert!(waits.iter().all(|w| (0.0..5.0).contains(w)), "{waits:?}");
    // Every commit of the (memory) log is timed, with its size.
    let memory = [("log", "memory")];
    let commits = both(names::LOG_COMMIT_DURATION, &memory);
    let sizes = both(names::LOG_COMMIT_BATCH, &memory);
    assert!(
        commits.len() >= 4,
        "at least two commits per input, got {commits:?}"
    );
    assert_eq!(sizes.len(), commits.len());
    assert!(sizes.iter().all(|n| *n >= 1.0), "{sizes:?}");
    assert!(both(names::LOG_COMMIT_DURATION, &[("log", "sqlite")]).is_empty());
}

#[cfg(feature = "client")]
#[tokio::test]
async fn client_calls_are_counted_by_the_remotes_outcome() {
    use a2a_tower::client::A2aClient;
    use a2a_tower::types::GetTaskRequest;
    use a2a_tower::{A2aRequest, Operation};
    use bytes::Bytes;
    use http_body_util::Full;

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _local = metrics::set_default_local_recorder(&recorder);
    // The remote: its card, then TaskNotFound (-32001) for every call.
    let http = tower::service_fn(|req: http::Request<Full<Bytes>>| {
        let body = if req.uri().path() == "/card" {
            serde_json::to_vec(&card()).unwrap()
        } else {
            let error = json!({"code": -32001, "message": "no such task"});
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "error": error})).unwrap()
        };
        async move {
            Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from(body))))
        }
    });
    let client = A2aClient::builder("http://localhost/card")
        .http(http)
        .build()
        .unwrap()
        .connect()
        .await
        .unwrap();
    for _ in 0..2 {
        let get = A2aRequest::new(Operation::GetTask(GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        }));
        let err = client.clone().oneshot(get).await.unwrap_err();
        assert_eq!(err.kind(), a2a_tower::ErrorKind::TaskNotFound);
    }

    let snap = snapshotter.snapshot().into_vec();
    let missing = [("operation", "GetTask"), ("outcome", "TASK_NOT_FOUND")];
    assert_eq!(counter(&snap, names::CLIENT_CALLS, &missing), 2);
    assert_eq!(
        observations(&snap, names::CLIENT_CALL_DURATION, &missing),
        2
    );
    let ok = [("operation", "GetTask"), ("outcome", "ok")];
    assert_eq!(counter(&snap, names::CLIENT_CALLS, &ok), 0);
}
