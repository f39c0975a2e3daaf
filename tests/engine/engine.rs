//! The task engine's operations and their state machine, driven with `oneshot`.

use crate::support;

use a2a_tower::engine::{EmitError, Execution, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{
    Artifact, CancelTaskRequest, GetTaskRequest, ListTasksRequest, Message,
    SendMessageConfiguration, SendMessageResponse, StreamResponse, TaskState, Timestamp,
};
use a2a_tower::{A2aRequest, A2aResponse, BoxError, ErrorKind, Operation};
use futures_util::StreamExt as _;
use support::engine::{
    Gate, Inner, Svc, assert_kind, boxed, call, card, channel, code, collect, echo_artifact,
    engine, engine_with, gated, get, immediate, send, send_req, send_task, stream, subscribe,
    to_task, user,
};

/// Echoes the message text as one artifact and completes.
fn echo() -> Inner {
    boxed(echo_artifact)
}

/// Asks a question first; completes on the answer.
fn asker() -> Inner {
    boxed(|ex: Execution| async move {
        if ex.task.history.len() == 1 {
            ex.emit.input_required("Which currency?").await?;
        } else {
            ex.emit.complete().await?;
        }
        Ok(())
    })
}

// a2a-spec.md §4.1: blocking send returns the terminal task with its
// artifacts; ids are server-generated and appear in the task.
#[tokio::test]
async fn send_blocks_until_completed() {
    let svc = engine(echo());
    let task = send_task(&svc, send_req(user("hello"))).await;
    assert_eq!(task.status.state, TaskState::Completed);
    // Time-ordered UUIDs (v7), so that durable logs' indexes grow at the end.
    let id = uuid::Uuid::parse_str(&task.id).unwrap();
    let context = uuid::Uuid::parse_str(&task.context_id).expect("context generated");
    assert_eq!((id.get_version_num(), context.get_version_num()), (7, 7));
    let later = send_task(&svc, send_req(user("again"))).await;
    assert!(later.id > task.id, "{} then {}", task.id, later.id);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].parts[0].as_text(), Some("hello"));
    assert_eq!(task.history.len(), 1);
    assert_eq!(task.history[0].task_id, task.id);
    assert_eq!(task.history[0].context_id, task.context_id);
    let json = serde_json::to_value(&task).unwrap();
    assert_eq!(json["status"]["state"], "TASK_STATE_COMPLETED");
}

// a2a-spec.md §4.1: a client-chosen contextId is kept.
#[tokio::test]
async fn client_context_id_is_kept() {
    let svc = engine(echo());
    let mut m = user("hi");
    m.context_id = "ctx-client".into();
    let task = send_task(&svc, send_req(m)).await;
    assert_eq!(task.context_id, "ctx-client");
}

// a2a-spec.md §4.1: returnImmediately returns as soon as the task exists.
#[tokio::test]
async fn return_immediately_then_subscribe_to_completion() {
    let gate = Gate::default();
    let svc = engine(gated(gate.clone()));
    let task = send_task(&svc, immediate(user("x"))).await;
    assert!(
        matches!(task.status.state, TaskState::Submitted | TaskState::Working),
        "{:?}",
        task.status.state
    );
    let sub = subscribe(&svc, &task.id).await.unwrap();
    gate.open();
    let events = collect(sub).await;
    let Some(Ok(StreamResponse::StatusUpdate(last))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(last.status.state, TaskState::Completed);
    assert_eq!(
        get(&svc, &task.id).await.unwrap().status.state,
        TaskState::Completed
    );
}

// a2a-spec.md §3.8 on SendMessage: historyLength applies to the result.
#[tokio::test]
async fn send_history_length() {
    let svc = engine(echo());
    let mut req = send_req(user("x"));
    req.configuration = Some(SendMessageConfiguration {
        history_length: Some(0),
        ..Default::default()
    });
    let task = send_task(&svc, req).await;
    assert!(task.history.is_empty());
    let json = serde_json::to_value(&task).unwrap();
    assert!(json.get("history").is_none(), "history omitted for 0");

    let mut req = send_req(user("x"));
    req.configuration = Some(SendMessageConfiguration {
        history_length: Some(-1),
        ..Default::default()
    });
    let err = send(&svc, req).await.unwrap_err();
    assert_eq!(code(&err), -32602);
}

#[tokio::test]
async fn invalid_messages_are_rejected_before_anything_starts() {
    let svc = engine(echo());
    let mut m = user("x");
    m.message_id.clear();
    assert_eq!(code(&send(&svc, send_req(m)).await.unwrap_err()), -32602);
    let mut m = user("x");
    m.parts.clear();
    assert_eq!(code(&send(&svc, send_req(m)).await.unwrap_err()), -32602);
    let page = list(&svc, ListTasksRequest::default()).await;
    assert_eq!(page.total_size, 0);
}

// a2a-spec.md §4.3: unknown task → TaskNotFound; historyLength semantics (§3.8).
#[tokio::test]
async fn get_task_and_history_length() {
    let svc = engine(asker());
    assert_eq!(code(&get(&svc, "nope").await.unwrap_err()), -32001);
    let t = send_task(&svc, send_req(user("q"))).await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    let t = send_task(&svc, send_req(to_task(&t.id, "", "EUR"))).await;
    assert_eq!(t.status.state, TaskState::Completed);
    // user, question, answer
    assert_eq!(get(&svc, &t.id).await.unwrap().history.len(), 3);
    for (n, want) in [
        (Some(0), 0),
        (Some(1), 1),
        (Some(2), 2),
        (Some(9), 3),
        (None, 3),
    ] {
        let op = Operation::GetTask(GetTaskRequest {
            id: t.id.clone(),
            history_length: n,
            ..Default::default()
        });
        let A2aResponse::Task(task) = call(&svc, op).await.unwrap() else {
            panic!()
        };
        assert_eq!(task.history.len(), want, "{n:?}");
        if n == Some(1) {
            assert_eq!(task.history[0].text(), "EUR", "most recent first kept");
        }
    }
    let op = Operation::GetTask(GetTaskRequest {
        id: t.id.clone(),
        history_length: Some(-3),
        ..Default::default()
    });
    assert_kind(call(&svc, op).await, ErrorKind::InvalidParams);
}

async fn list(svc: &Svc, req: ListTasksRequest) -> a2a_tower::types::ListTasksResponse {
    match call(svc, Operation::ListTasks(req)).await.unwrap() {
        A2aResponse::Tasks(t) => t,
        other => panic!("{other:?}"),
    }
}

// a2a-spec.md §4.4: filters, cursor pagination, newest first, totalSize,
// nextPageToken always present, artifacts omitted unless asked.
#[tokio::test]
async fn list_tasks_filters_and_pages() {
    let svc = engine(asker());
    let mut ids = Vec::new();
    for i in 0..7 {
        let mut m = user("q");
        m.context_id = if i % 2 == 0 { "even" } else { "odd" }.into();
        ids.push(send_task(&svc, send_req(m)).await.id);
    }
    // Complete two of them.
    for id in &ids[..2] {
        send_task(&svc, send_req(to_task(id, "", "a"))).await;
    }
    let all = list(&svc, ListTasksRequest::default()).await;
    assert_eq!(all.total_size, 7);
    assert_eq!(all.page_size, 50);
    assert_eq!(all.next_page_token, "");
    let json = serde_json::to_value(&all).unwrap();
    assert_eq!(json["nextPageToken"], "", "always present");
    let stamps: Vec<_> = all
        .tasks
        .iter()
        .map(|t| t.status.timestamp.unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "newest first");

    let even = list(
        &svc,
        ListTasksRequest {
            context_id: "even".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(even.total_size, 4);
    assert!(even.tasks.iter().all(|t| t.context_id == "even"));

    let done = list(
        &svc,
        ListTasksRequest {
            status: TaskState::Completed,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(done.total_size, 2);

    let future = list(
        &svc,
        ListTasksRequest {
            status_timestamp_after: Some(Timestamp::from_unix_millis(i64::MAX / 4_000_000)),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(future.total_size, 0);

    // Pages of 3: 3 + 3 + 1, no duplicates, same order as one page.
    let mut token = String::new();
    let mut seen = Vec::new();
    for round in 0.. {
        let page = list(
            &svc,
            ListTasksRequest {
                page_size: Some(3),
                page_token: token.clone(),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(page.total_size, 7);
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        token = page.next_page_token;
        if token.is_empty() {
            assert_eq!(round, 2);
            break;
        }
    }
    let one: Vec<_> = all.tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(seen, one);
}

#[tokio::test]
async fn list_tasks_validation_and_artifacts() {
    let svc = engine(echo());
    send_task(&svc, send_req(user("x"))).await;
    for size in [0, 101, -1] {
        let r = call(
            &svc,
            Operation::ListTasks(ListTasksRequest {
                page_size: Some(size),
                ..Default::default()
            }),
        )
        .await;
        assert_kind(r, ErrorKind::InvalidParams);
    }
    let r = call(
        &svc,
        Operation::ListTasks(ListTasksRequest {
            page_token: "garbage".into(),
            ..Default::default()
        }),
    )
    .await;
    assert_kind(r, ErrorKind::InvalidParams);
    let r = call(
        &svc,
        Operation::ListTasks(ListTasksRequest {
            history_length: Some(-1),
            ..Default::default()
        }),
    )
    .await;
    assert_kind(r, ErrorKind::InvalidParams);

    // a2a-spec.md §3.8: artifacts omitted entirely unless includeArtifacts.
    let page = list(&svc, ListTasksRequest::default()).await;
    let json = serde_json::to_value(&page).unwrap();
    assert!(json["tasks"][0].get("artifacts").is_none());
    let page = list(
        &svc,
        ListTasksRequest {
            include_artifacts: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(page.tasks[0].artifacts.len(), 1);
    let page = list(
        &svc,
        ListTasksRequest {
            page_size: Some(1),
            history_length: Some(0),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(page.page_size, 1);
    assert!(page.tasks[0].history.is_empty());
}

async fn cancel(svc: &Svc, id: &str) -> Result<a2a_tower::types::Task, a2a_tower::A2aError> {
    let op = Operation::CancelTask(CancelTaskRequest {
        id: id.into(),
        ..Default::default()
    });
    match call(svc, op).await? {
        A2aResponse::Task(t) => Ok(t),
        other => panic!("{other:?}"),
    }
}

// a2a-spec.md §4.5: a running task is canceled, the executor sees it, the
// response is the canceled task; terminal → TaskNotCancelable; unknown → TaskNotFound.
#[tokio::test]
async fn cancel_running_task_executor_observes() {
    let (tx, mut rx) = channel::<bool>();
    let svc = engine(boxed(move |ex: Execution| {
        let tx = tx.clone();
        async move {
            ex.emit.working().await?;
            tx.send(false).ok(); // started
            ex.emit.cancelled().await;
            // Emissions after the cancel are refused.
            let after = ex.emit.complete().await;
            tx.send(after == Err(EmitError::Closed)).ok();
            Ok(())
        }
    }));
    let t = send_task(&svc, immediate(user("x"))).await;
    assert_eq!(rx.recv().await, Some(false), "started");
    let canceled = cancel(&svc, &t.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    assert_eq!(rx.recv().await, Some(true), "executor saw the cancel");
    assert_eq!(
        get(&svc, &t.id).await.unwrap().status.state,
        TaskState::Canceled
    );
    let err = cancel(&svc, &t.id).await.unwrap_err();
    assert_eq!(code(&err), -32002);
    assert_eq!(code(&cancel(&svc, "missing").await.unwrap_err()), -32001);
}

// Cancel of an INPUT_REQUIRED task (no execution is running).
#[tokio::test]
async fn cancel_input_required_task() {
    let svc = engine(asker());
    let t = send_task(&svc, send_req(user("q"))).await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    let c = cancel(&svc, &t.id).await.unwrap();
    assert_eq!(c.status.state, TaskState::Canceled);
    // a2a-spec.md §4.1: a message to a terminal task → UnsupportedOperation.
    let err = send(&svc, send_req(to_task(&t.id, "", "late")))
        .await
        .unwrap_err();
    assert_eq!(code(&err), -32004);
}

// a2a-spec.md §4.1: continuation of INPUT_REQUIRED with the same task id;
// context inferred; mismatch rejected; unknown task → TaskNotFound.
#[tokio::test]
async fn continuation_rules() {
    let svc = engine(asker());
    let t = send_task(&svc, send_req(user("Convert 10"))).await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    assert_eq!(
        t.status.message.as_ref().map(Message::text).as_deref(),
        Some("Which currency?")
    );
    let err = send(&svc, send_req(to_task(&t.id, "other-ctx", "EUR")))
        .await
        .unwrap_err();
    assert_eq!(code(&err), -32602);
    let err = send(&svc, send_req(to_task("no-such-task", "", "EUR")))
        .await
        .unwrap_err();
    assert_eq!(code(&err), -32001);
    let done = send_task(&svc, send_req(to_task(&t.id, "", "EUR"))).await;
    assert_eq!(done.id, t.id, "same task");
    assert_eq!(done.context_id, t.context_id, "context inferred");
    assert_eq!(done.status.state, TaskState::Completed);
    let texts: Vec<_> = done.history.iter().map(Message::text).collect();
    assert_eq!(texts, ["Convert 10", "Which currency?", "EUR"]);
    assert_eq!(done.history[2].context_id, t.context_id);
    let err = send(&svc, send_req(to_task(&t.id, "", "more")))
        .await
        .unwrap_err();
    assert_eq!(code(&err), -32004, "terminal task");
}

// a2a-spec.md §4.2: the stream starts with the Task, then updates, and ends
// at the terminal state.
#[tokio::test]
async fn streaming_send_task_stream() {
    let svc = engine(echo());
    let s = stream(&svc, Operation::SendStreamingMessage(send_req(user("hi"))))
        .await
        .unwrap();
    let events: Vec<_> = collect(s).await.into_iter().map(Result::unwrap).collect();
    let StreamResponse::Task(first) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(first.status.state, TaskState::Working);
    assert!(
        matches!(&events[1], StreamResponse::ArtifactUpdate(a) if a.last_chunk && a.task_id == first.id)
    );
    let StreamResponse::StatusUpdate(end) = &events[2] else {
        panic!()
    };
    assert_eq!(end.status.state, TaskState::Completed);
    assert_eq!(end.context_id, first.context_id);
    assert_eq!(events.len(), 3);
}

// a2a-spec.md §4.2: a message stream is exactly one Message; SendMessage
// answers with the message.
#[tokio::test]
async fn direct_reply_is_a_message() {
    let svc = engine(boxed(|ex: Execution| async move {
        ex.emit.reply(Message::agent("", "pong")).await?;
        Ok(())
    }));
    let s = stream(
        &svc,
        Operation::SendStreamingMessage(send_req(user("ping"))),
    )
    .await
    .unwrap();
    let events = collect(s).await;
    assert_eq!(events.len(), 1);
    let Ok(StreamResponse::Message(m)) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(m.text(), "pong");
    assert!(!m.context_id.is_empty(), "server messages carry contextId");
    let SendMessageResponse::Message(m) = send(&svc, send_req(user("ping"))).await.unwrap() else {
        panic!()
    };
    assert_eq!(m.role, a2a_tower::types::Role::Agent);
}

// The stream of SendStreamingMessage closes at INPUT_REQUIRED.
#[tokio::test]
async fn stream_closes_at_input_required() {
    let svc = engine(asker());
    let s = stream(&svc, Operation::SendStreamingMessage(send_req(user("q"))))
        .await
        .unwrap();
    let events = collect(s).await;
    assert_eq!(events.len(), 1);
    let Ok(StreamResponse::Task(t)) = &events[0] else {
        panic!()
    };
    assert_eq!(t.status.state, TaskState::InputRequired);
}

// a2a-spec.md §4.6: subscribe to a terminal task → UnsupportedOperation;
// unknown → TaskNotFound; first event is the current task.
#[tokio::test]
async fn subscribe_rules() {
    let gate = Gate::default();
    let svc = engine(gated(gate.clone()));
    assert_eq!(code(&subscribe(&svc, "nope").await.unwrap_err()), -32001);
    let t = send_task(&svc, immediate(user("x"))).await;
    let s = subscribe(&svc, &t.id).await.unwrap();
    gate.open();
    let events = collect(s).await;
    let Ok(StreamResponse::Task(first)) = &events[0] else {
        panic!()
    };
    assert_eq!(first.id, t.id);
    assert!(
        matches!(events.last(), Some(Ok(StreamResponse::StatusUpdate(u))) if u.status.state == TaskState::Completed)
    );
    assert_eq!(code(&subscribe(&svc, &t.id).await.unwrap_err()), -32004);
}

// Executions are detached: dropping the stream cancels nothing, and the
// client can resubscribe.
#[tokio::test]
async fn dropped_stream_cancels_nothing() {
    let gate = Gate::default();
    let svc = engine(gated(gate.clone()));
    let mut s = stream(&svc, Operation::SendStreamingMessage(send_req(user("x"))))
        .await
        .unwrap();
    let Some(Ok(StreamResponse::Task(t))) = s.next().await else {
        panic!()
    };
    drop(s);
    let again = subscribe(&svc, &t.id).await.unwrap();
    gate.open();
    let events = collect(again).await;
    assert!(
        matches!(events.last(), Some(Ok(StreamResponse::StatusUpdate(u))) if u.status.state == TaskState::Completed)
    );
}

// A blocking SendMessage runs its execution in its own future; dropping
// the call (the client went away) cancels nothing: the rest of the
// execution goes on in a task of its own.
#[tokio::test]
async fn dropped_blocking_send_cancels_nothing() {
    let gate = Gate::default();
    let (ids, mut started) = channel();
    let svc = engine(boxed({
        let gate = gate.clone();
        move |ex: Execution| {
            let (gate, ids) = (gate.clone(), ids.clone());
            async move {
                ex.emit.working().await?;
                ids.send(ex.task.id.clone()).unwrap();
                gate.wait().await;
                ex.emit.complete().await?;
                Ok(())
            }
        }
    }));
    let req = A2aRequest::new(Operation::SendMessage(send_req(user("x"))));
    let call = tokio::spawn(tower::ServiceExt::oneshot(svc.clone(), req));
    let id = started.recv().await.unwrap();
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    assert_eq!(
        get(&svc, &id).await.unwrap().status.state,
        TaskState::Working
    );
    gate.open();
    let done = async {
        loop {
            if get(&svc, &id).await.unwrap().status.state == TaskState::Completed {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), done)
        .await
        .expect("the execution went on after the call was dropped");
}

// A blocking SendMessage answers when its task closes, not when the
// executor returns: one that lingers after COMPLETED (here until it is
// stopped after the shutdown grace of a minute) delays no answer.
#[tokio::test(start_paused = true)]
async fn blocking_send_answers_when_the_task_closes() {
    let lingering = boxed(|ex: Execution| async move {
        ex.emit.complete().await?;
        std::future::pending::<()>().await;
        Ok(())
    });
    let layer = TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .shutdown_grace(std::time::Duration::from_secs(60));
    let svc = engine_with(layer, lingering);
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        send_task(&svc, send_req(user("x"))),
    )
    .await
    .expect("answered before the executor returned");
    assert_eq!(answer.status.state, TaskState::Completed);
}

// a2a-spec.md §4.8: streaming undeclared → UnsupportedOperation for both
// streaming operations.
#[tokio::test]
async fn streaming_not_declared() {
    let card = card().with_streaming(false);
    let svc = engine_with(TaskLayer::new(card, MemoryTaskLog::new()).unwrap(), echo());
    let err = stream(&svc, Operation::SendStreamingMessage(send_req(user("x"))))
        .await
        .unwrap_err();
    assert_eq!(code(&err), -32004);
    let t = send_task(&svc, send_req(user("x"))).await;
    assert_eq!(code(&subscribe(&svc, &t.id).await.unwrap_err()), -32004);
}

// An executor that returns without a final status completes its task;
// an error fails it with a fixed message that never carries the error text.
#[tokio::test]
async fn executor_outcomes() {
    let svc = engine(boxed(|ex: Execution| async move {
        match ex.message.text().as_str() {
            "ok" => Ok(()),
            _ => Err::<(), BoxError>("secret database password leaked".into()),
        }
    }));
    let t = send_task(&svc, send_req(user("ok"))).await;
    assert_eq!(t.status.state, TaskState::Completed);
    let t = send_task(&svc, send_req(user("boom"))).await;
    assert_eq!(t.status.state, TaskState::Failed);
    let msg = t.status.message.unwrap();
    assert_eq!(msg.text(), a2a_tower::engine::EXECUTOR_FAILED_MESSAGE);
    assert!(
        !serde_json::to_string(&get(&svc, &t.id).await.unwrap())
            .unwrap()
            .contains("secret")
    );
}

// Invalid emissions are refused, and nothing follows a terminal status.
#[tokio::test]
async fn emitter_rules() {
    let (tx, mut rx) = channel::<Vec<Result<(), EmitError>>>();
    let svc = engine(boxed(move |ex: Execution| {
        let tx = tx.clone();
        async move {
            let empty = Artifact {
                artifact_id: "a".into(),
                ..Artifact::default()
            };
            let out = vec![
                ex.emit.status(TaskState::Submitted, None).await,
                ex.emit.artifact(empty, false, false).await,
                ex.emit.complete().await,
                ex.emit.working().await,
            ];
            tx.send(out).ok();
            Ok(())
        }
    }));
    let t = send_task(&svc, send_req(user("x"))).await;
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(
        rx.recv().await.unwrap(),
        [
            Err(EmitError::Invalid),
            Err(EmitError::Invalid),
            Ok(()),
            Err(EmitError::Closed)
        ]
    );
}
