//! The text `Agent` adapter, content types, authority isolation, the
//! extended card and push-config operations.

use crate::support;

use a2a_tower::card::{ExtendedCard, ExtendedCardLayer};
use a2a_tower::engine::{
    AGENT_FAILED_MESSAGE, Agent, AgentExecutor, AgentInput, Authority, Execution, TaskLayer,
};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, Part, SendMessageConfiguration,
    StreamResponse, TaskPushNotificationConfig, TaskState,
};
use a2a_tower::{A2aRequest, A2aResponse, BoxError, ErrorKind, Operation};
use futures_core::Stream;
use support::engine::{
    boxed, call, card, channel, collect, engine, engine_with, send, send_req, to_task, user,
};
use tower::{Layer, ServiceExt};

/// Yields the words of the input, with empty chunks in between; fails on "fail".
struct Words;

impl Agent for Words {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        let mut out: Vec<Result<String, BoxError>> = Vec::new();
        for w in input.text.split(' ') {
            if w == "fail" {
                out.push(Err("model quota exceeded: key sk-123".into()));
                break;
            }
            out.push(Ok(String::new()));
            out.push(Ok(format!("{w} ")));
        }
        futures_util::stream::iter(out)
    }
}

fn agent_engine() -> TaskServiceOf {
    TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .layer(AgentExecutor::service(Words))
}

type TaskServiceOf =
    a2a_tower::engine::TaskService<a2a_tower::engine::ExecutorService<AgentExecutor<Words>>>;

async fn agent_call(
    svc: &TaskServiceOf,
    op: Operation,
) -> Result<A2aResponse, a2a_tower::A2aError> {
    svc.clone().oneshot(A2aRequest::new(op)).await
}

// Chunks go into one artifact; empty chunks are skipped.
#[tokio::test]
async fn text_agent_streams_chunks_into_one_artifact() {
    let svc = agent_engine();
    let A2aResponse::Stream(s) = agent_call(
        &svc,
        Operation::SendStreamingMessage(send_req(user("a b c"))),
    )
    .await
    .unwrap() else {
        panic!()
    };
    let events: Vec<_> = collect(s).await.into_iter().map(Result::unwrap).collect();
    let chunks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(chunks.len(), 3);
    assert!(!chunks[0].append);
    assert!(!chunks[0].last_chunk && !chunks[1].last_chunk && chunks[2].last_chunk);
    assert!(chunks[1].append && chunks[2].append);
    assert!(
        chunks
            .iter()
            .all(|c| c.artifact.artifact_id == chunks[0].artifact.artifact_id)
    );
    let A2aResponse::SendMessage(a2a_tower::types::SendMessageResponse::Task(t)) =
        agent_call(&svc, Operation::SendMessage(send_req(user("x y"))))
            .await
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(t.artifacts.len(), 1);
    let text: String = t.artifacts[0]
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(text, "x y ");
}

// a2a-spec.md §4.1.4 (TaskArtifactUpdateEvent): the final chunk of the
// artifact carries `lastChunk: true`, so a streaming client knows the
// artifact is complete before the terminal status arrives.
#[tokio::test]
async fn text_agent_marks_the_last_chunk() {
    let svc = agent_engine();
    let A2aResponse::Stream(s) =
        agent_call(&svc, Operation::SendStreamingMessage(send_req(user("a b"))))
            .await
            .unwrap()
    else {
        panic!()
    };
    let events: Vec<_> = collect(s).await.into_iter().map(Result::unwrap).collect();
    let flags: Vec<(bool, bool, String)> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some((
                a.append,
                a.last_chunk,
                a.artifact.parts.iter().filter_map(Part::as_text).collect(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        flags,
        [
            (false, false, "a ".to_owned()),
            (true, true, "b ".to_owned())
        ]
    );
    let Some(StreamResponse::StatusUpdate(last)) = events.last() else {
        panic!("the stream ends with a status update")
    };
    assert_eq!(last.status.state, TaskState::Completed);
}

// An agent that yields one chunk sends it as the first and the last chunk.
#[tokio::test]
async fn text_agent_single_chunk_is_first_and_last() {
    let svc = agent_engine();
    let A2aResponse::Stream(s) =
        agent_call(&svc, Operation::SendStreamingMessage(send_req(user("one"))))
            .await
            .unwrap()
    else {
        panic!()
    };
    let events: Vec<_> = collect(s).await.into_iter().map(Result::unwrap).collect();
    let flags: Vec<(bool, bool)> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some((a.append, a.last_chunk)),
            _ => None,
        })
        .collect();
    assert_eq!(flags, [(false, true)], "{events:#?}");
}

/// Yields its input, then waits until canceled.
struct Pauses;

impl Agent for Pauses {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        futures_util::StreamExt::chain(
            futures_util::stream::iter([Ok(input.text)]),
            futures_util::stream::pending(),
        )
    }
}

// A held chunk is not held forever: when the agent pauses, it is sent (not
// marked last, as more may follow) while the task is still WORKING.
#[tokio::test]
async fn a_pausing_agent_still_streams_its_chunk() {
    use futures_util::StreamExt as _;
    let svc = TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .layer(AgentExecutor::service(Pauses));
    let A2aResponse::Stream(mut s) = svc
        .clone()
        .oneshot(A2aRequest::new(Operation::SendStreamingMessage(send_req(
            user("partial"),
        ))))
        .await
        .unwrap()
    else {
        panic!()
    };
    let Some(Ok(StreamResponse::Task(task))) = s.next().await else {
        panic!("the task first")
    };
    // Bounded, so that a chunk held forever fails the test instead of hanging it.
    let next = tokio::time::timeout(std::time::Duration::from_secs(5), s.next()).await;
    let Ok(Some(Ok(StreamResponse::ArtifactUpdate(a)))) = next else {
        panic!("then the chunk, while the agent waits")
    };
    assert_eq!((a.append, a.last_chunk), (false, false));
    assert_eq!(a.artifact.parts, vec![Part::text("partial")]);
    let cancel = Operation::CancelTask(a2a_tower::types::CancelTaskRequest {
        id: task.id.clone(),
        ..Default::default()
    });
    svc.clone().oneshot(A2aRequest::new(cancel)).await.unwrap();
    let Some(Ok(StreamResponse::StatusUpdate(end))) = s.next().await else {
        panic!("the stream ends with CANCELED")
    };
    assert_eq!(end.status.state, TaskState::Canceled);
    assert!(s.next().await.is_none());
}

// An agent error ends the task FAILED with the fixed message; the error text
// never reaches the task.
#[tokio::test]
async fn text_agent_error_fails_with_fixed_message() {
    let svc = agent_engine();
    let A2aResponse::SendMessage(a2a_tower::types::SendMessageResponse::Task(t)) =
        agent_call(&svc, Operation::SendMessage(send_req(user("ok fail"))))
            .await
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(t.status.state, TaskState::Failed);
    assert_eq!(
        t.status.message.as_ref().unwrap().text(),
        AGENT_FAILED_MESSAGE
    );
    let json = serde_json::to_string(&t).unwrap();
    assert!(!json.contains("sk-123") && !json.contains("quota"));
    assert_eq!(t.artifacts.len(), 1, "partial output kept");
}

// a2a-spec.md §4.1: non-text input to a text agent → ContentTypeNotSupported
// (-32005) before anything starts: no task is created.
#[tokio::test]
async fn non_text_input_is_rejected_before_start() {
    let svc = agent_engine();
    let mut m = user("x");
    m.parts = vec![Part::data(serde_json::json!({"a": 1}))];
    let err = agent_call(&svc, Operation::SendMessage(send_req(m)))
        .await
        .unwrap_err();
    assert_eq!(err.kind().jsonrpc_code(), -32005);
    let mut m = user("x");
    m.parts = vec![Part::text("# hi").with_media_type("text/markdown")];
    let err = agent_call(&svc, Operation::SendMessage(send_req(m)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContentTypeNotSupported);
    let A2aResponse::Tasks(page) =
        agent_call(&svc, Operation::ListTasks(ListTasksRequest::default()))
            .await
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(page.total_size, 0);
}

// a2a-spec.md §3.7: acceptedOutputModes checked against the card.
#[tokio::test]
async fn accepted_output_modes() {
    let svc = agent_engine();
    for (modes, ok) in [
        (vec!["application/pdf"], false),
        (vec!["image/*"], false),
        (vec!["application/pdf", "text/plain"], true),
        (vec!["text/*"], true),
        (vec!["*/*"], true),
        (vec![], true),
    ] {
        let mut req = send_req(user("x"));
        req.configuration = Some(SendMessageConfiguration {
            accepted_output_modes: modes.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        });
        let r = agent_call(&svc, Operation::SendMessage(req)).await;
        match r {
            Ok(_) => assert!(ok, "{modes:?}"),
            Err(e) => {
                assert!(!ok, "{modes:?}");
                assert_eq!(e.kind().jsonrpc_code(), -32005);
            }
        }
    }
}

#[derive(Clone)]
struct User(String);

// a2a-spec.md §4.9: every operation is scoped to the caller; another
// caller's task is indistinguishable from a missing one (TaskNotFound).
#[tokio::test]
async fn authority_isolation() {
    let (tx, mut rx) = channel::<String>();
    let inner = boxed(move |ex: Execution| {
        let tx = tx.clone();
        async move {
            // The principal a host layer inserted reaches the executor.
            let who = ex.context.extensions.get::<User>().map(|u| u.0.clone());
            tx.send(who.unwrap_or_default()).ok();
            ex.emit.input_required("and?").await?;
            Ok(())
        }
    });
    let layer = TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .authority(Authority::principal(|u: &User, tenant: &str| {
            format!("{}@{tenant}", u.0)
        }));
    let svc = engine_with(layer, inner);
    let as_user = |name: &str, op: Operation| {
        let mut req = A2aRequest::new(op);
        req.context.extensions.insert(User(name.into()));
        svc.clone().oneshot(req)
    };
    let A2aResponse::SendMessage(a2a_tower::types::SendMessageResponse::Task(t)) =
        as_user("alice", Operation::SendMessage(send_req(user("hi"))))
            .await
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(rx.recv().await.as_deref(), Some("alice"));
    let get_op = || {
        Operation::GetTask(a2a_tower::types::GetTaskRequest {
            id: t.id.clone(),
            ..Default::default()
        })
    };
    assert!(as_user("alice", get_op()).await.is_ok());
    let missing = as_user(
        "bob",
        Operation::GetTask(a2a_tower::types::GetTaskRequest {
            id: "no-such".into(),
            ..Default::default()
        }),
    )
    .await
    .unwrap_err();
    let other = as_user("bob", get_op()).await.unwrap_err();
    assert_eq!(other.kind(), ErrorKind::TaskNotFound);
    assert_eq!(
        other.to_jsonrpc_error()["message"],
        missing.to_jsonrpc_error()["message"]
    );
    let cancel = Operation::CancelTask(CancelTaskRequest {
        id: t.id.clone(),
        ..Default::default()
    });
    assert_eq!(
        as_user("bob", cancel).await.unwrap_err().kind(),
        ErrorKind::TaskNotFound
    );
    let sub = Operation::SubscribeToTask(a2a_tower::types::SubscribeToTaskRequest {
        id: t.id.clone(),
        ..Default::default()
    });
    assert_eq!(
        as_user("bob", sub).await.unwrap_err().kind(),
        ErrorKind::TaskNotFound
    );
    let cont = Operation::SendMessage(send_req(to_task(&t.id, "", "hijack")));
    assert_eq!(
        as_user("bob", cont).await.unwrap_err().kind(),
        ErrorKind::TaskNotFound
    );
    let A2aResponse::Tasks(page) =
        as_user("bob", Operation::ListTasks(ListTasksRequest::default()))
            .await
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(page.total_size, 0);
    // Same user, another tenant: another authority.
    let mut req = A2aRequest::new(get_op());
    req.context.extensions.insert(User("alice".into()));
    req.context.tenant = "other".into();
    assert_eq!(
        svc.clone().oneshot(req).await.unwrap_err().kind(),
        ErrorKind::TaskNotFound
    );
    // No principal: unauthenticated.
    let err = svc
        .clone()
        .oneshot(A2aRequest::new(get_op()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthenticated);
}

// a2a-spec.md §2.5 / §4.8: extended card.
#[tokio::test]
async fn extended_agent_card() {
    let op = || Operation::GetExtendedAgentCard(GetExtendedAgentCardRequest::default());
    let svc = engine(boxed(|_ex: Execution| async { Ok(()) }));
    assert_eq!(
        call(&svc, op()).await.unwrap_err().kind().jsonrpc_code(),
        -32004
    );

    let mut declared = card();
    declared.capabilities.extended_agent_card = Some(true);
    let layer = TaskLayer::new(declared.clone(), MemoryTaskLog::new()).unwrap();
    let svc = engine_with(layer, boxed(|_ex: Execution| async { Ok(()) }));
    assert_eq!(
        call(&svc, op()).await.unwrap_err().kind().jsonrpc_code(),
        -32007
    );

    // The card is the ExtendedCardLayer's, in front of the engine: the card
    // of the principal, Unauthenticated without one.
    let layer = TaskLayer::new(declared, MemoryTaskLog::new()).unwrap();
    let engine = engine_with(layer, boxed(|_ex: Execution| async { Ok(()) }));
    let extended = ExtendedCard::for_principal(|user: &User| {
        AgentCard::new(format!("Test for {}", user.0), "extended", "1.0.0")
    });
    let svc = ExtendedCardLayer::new(extended).layer(engine);
    let anonymous = svc.clone().oneshot(A2aRequest::new(op())).await;
    assert_eq!(anonymous.unwrap_err().kind(), ErrorKind::Unauthenticated);
    let mut req = A2aRequest::new(op());
    req.context.extensions.insert(User("carol".into()));
    let A2aResponse::AgentCard(c) = svc.clone().oneshot(req).await.unwrap() else {
        panic!()
    };
    assert_eq!(c.name, "Test for carol");
}

// a2a-spec.md §4.7: push notifications undeclared → -32003 for all four
// operations (and an inline config on send).
#[tokio::test]
async fn push_config_operations_not_supported() {
    let svc = engine(boxed(|_ex: Execution| async { Ok(()) }));
    let ops = [
        Operation::CreateTaskPushNotificationConfig(TaskPushNotificationConfig {
            task_id: "t".into(),
            url: "https://example.com/hook".into(),
            ..Default::default()
        }),
        Operation::GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest::default()),
        Operation::ListTaskPushNotificationConfigs(
            ListTaskPushNotificationConfigsRequest::default(),
        ),
        Operation::DeleteTaskPushNotificationConfig(
            DeleteTaskPushNotificationConfigRequest::default(),
        ),
    ];
    for op in ops {
        let err = call(&svc, op).await.unwrap_err();
        assert_eq!(err.kind().jsonrpc_code(), -32003);
    }
    let mut req = send_req(user("x"));
    req.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(TaskPushNotificationConfig {
            url: "https://example.com/hook".into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        send(&svc, req).await.unwrap_err().kind().jsonrpc_code(),
        -32003
    );
    // Declared, the engine serves them (tests/push/push_config.rs, suite::push).
    let mut pushy = card();
    pushy.capabilities.push_notifications = Some(true);
    assert!(TaskLayer::new(pushy, MemoryTaskLog::new()).is_ok());
}

#[test]
fn builder_rejects_invalid_config() {
    let layer = || TaskLayer::new(card(), MemoryTaskLog::new()).unwrap();
    assert!(layer().subscriber_buffer(0).is_err());
    assert!(
        layer()
            .inactivity_timeout(std::time::Duration::ZERO)
            .is_err()
    );
}
