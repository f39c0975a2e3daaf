//! Execution rules under concurrency: one execution per task, cancel racing
//! completion, slow subscribers, panics, inactivity, many tasks at once.

use crate::support;

use std::time::Duration;

use a2a_tower::engine::{Execution, TaskLayer};
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::types::{
    Artifact, CancelTaskRequest, ListTasksRequest, Part, StreamResponse, TaskState,
};
use a2a_tower::{A2aResponse, ErrorKind, Operation};
use futures_util::StreamExt as _;
use support::engine::{
    Gate, Inner, boxed, call, card, channel, code, collect, engine, engine_with, gated, get,
    immediate, send, send_req, send_task, stream, subscribe, to_task, user,
};

fn asker_then_gate(gate: Gate) -> Inner {
    boxed(move |ex: Execution| {
        let gate = gate.clone();
        async move {
            if ex.task.history.len() == 1 {
                ex.emit.input_required("more?").await?;
            } else {
                ex.emit.working().await?;
                gate.wait().await;
                ex.emit.complete().await?;
            }
            Ok(())
        }
    })
}

// One execution per task: of two concurrent continuations of one
// INPUT_REQUIRED task exactly one is admitted; a send to a running task is
// rejected with UnsupportedOperation naming the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sends_to_one_task() {
    let gate = Gate::default();
    let svc = engine(asker_then_gate(gate.clone()));
    let t = send_task(&svc, send_req(user("start"))).await;
    assert_eq!(t.status.state, TaskState::InputRequired);
    let a = send(&svc, immediate(to_task(&t.id, "", "a")));
    let b = send(&svc, immediate(to_task(&t.id, "", "b")));
    let (a, b) = tokio::join!(a, b);
    let oks = [a.is_ok(), b.is_ok()];
    assert_eq!(oks.iter().filter(|o| **o).count(), 1, "{a:?} {b:?}");
    let err = match (a, b) {
        (Err(e), _) | (_, Err(e)) => e,
        _ => unreachable!(),
    };
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    assert_eq!(err.metadata().get("taskId"), Some(&t.id));
    // Still running: a third send is rejected too.
    let err = send(&svc, immediate(to_task(&t.id, "", "c")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    let sub = subscribe(&svc, &t.id).await.unwrap();
    gate.open();
    let events = collect(sub).await;
    assert!(
        matches!(events.last(), Some(Ok(StreamResponse::StatusUpdate(u))) if u.status.state == TaskState::Completed)
    );
    let task = get(&svc, &t.id).await.unwrap();
    assert_eq!(
        task.history.len(),
        3,
        "start, question, one admitted answer"
    );
}

// Cancel racing completion: the outcome is one of the two, never both, and
// the response agrees with the stored task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_races_completion() {
    for _ in 0..40 {
        let gate = Gate::default();
        let svc = engine(boxed({
            let gate = gate.clone();
            move |ex: Execution| {
                let gate = gate.clone();
                async move {
                    gate.wait().await;
                    ex.emit.complete().await.ok();
                    Ok(())
                }
            }
        }));
        let t = send_task(&svc, immediate(user("x"))).await;
        let sub = subscribe(&svc, &t.id).await.unwrap();
        let cancel = call(
            &svc,
            Operation::CancelTask(CancelTaskRequest {
                id: t.id.clone(),
                ..Default::default()
            }),
        );
        gate.open();
        let result = cancel.await;
        collect(sub).await;
        let stored = get(&svc, &t.id).await.unwrap().status.state;
        match result {
            Ok(A2aResponse::Task(c)) => {
                assert_eq!(c.status.state, TaskState::Canceled);
                assert_eq!(stored, TaskState::Canceled);
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::TaskNotCancelable);
                assert_eq!(stored, TaskState::Completed);
            }
            Ok(other) => panic!("{other:?}"),
        }
    }
}

// Many tasks in parallel, each completing independently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_in_parallel() {
    let svc = engine(boxed(|ex: Execution| async move {
        tokio::task::yield_now().await;
        ex.emit.complete().await?;
        Ok(())
    }));
    let sends = (0..300).map(|i| {
        let svc = svc.clone();
        async move { send_task(&svc, send_req(user(&i.to_string()))).await }
    });
    let tasks = futures_util::future::join_all(sends).await;
    assert!(tasks.iter().all(|t| t.status.state == TaskState::Completed));
    let A2aResponse::Tasks(page) = call(&svc, Operation::ListTasks(ListTasksRequest::default()))
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(page.total_size, 300);
}

// A subscriber that never reads does not stall the task or the other
// subscribers; it is cut off with an error event (a2a-spec.md §4.2: closing
// or losing one stream must not affect the others).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_subscriber_is_cut_off() {
    // The executor emits one chunk per pace signal, so the test controls how
    // far the fast subscriber may lag (never) while the slow one never reads.
    let (pace, paced) = channel::<()>();
    let paced = std::sync::Arc::new(tokio::sync::Mutex::new(paced));
    let inner = boxed(move |ex: Execution| {
        let paced = paced.clone();
        async move {
            ex.emit.working().await?;
            let mut paced = paced.lock().await;
            for i in 0..50 {
                paced.recv().await;
                let art = Artifact {
                    artifact_id: "a".into(),
                    parts: vec![Part::text(i.to_string())],
                    ..Artifact::default()
                };
                ex.emit.artifact(art, i > 0, i == 49).await?;
            }
            ex.emit.complete().await?;
            Ok(())
        }
    });
    let layer = TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .subscriber_buffer(4)
        .unwrap();
    let svc = engine_with(layer, inner);
    let t = send_task(&svc, immediate(user("x"))).await;
    let slow = subscribe(&svc, &t.id).await.unwrap();
    let mut fast = subscribe(&svc, &t.id).await.unwrap();
    let mut chunks = 0;
    for _ in 0..50 {
        pace.send(()).unwrap();
        loop {
            match fast.next().await {
                Some(Ok(StreamResponse::ArtifactUpdate(_))) => break,
                Some(Ok(_)) => {}
                other => panic!("{other:?}"),
            }
        }
        chunks += 1;
    }
    assert_eq!(chunks, 50);
    let rest = collect(fast).await;
    assert!(
        matches!(rest.last(), Some(Ok(StreamResponse::StatusUpdate(u))) if u.status.state == TaskState::Completed),
        "{rest:?}"
    );
    let done = get(&svc, &t.id).await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    // The 50 appended text chunks make one text part.
    let text: String = (0..50).map(|i| i.to_string()).collect();
    assert_eq!(done.artifacts[0].parts, [Part::text(text)]);
    let slow_events = collect(slow).await;
    let err = slow_events.last().unwrap().as_ref().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert_eq!(code(err), -32603);
    assert!(slow_events.len() <= 5, "{}", slow_events.len());
}

// A panicking executor ends its task FAILED and nothing else.
#[tokio::test]
async fn panicking_executor_fails_only_its_task() {
    let svc = engine(boxed(|ex: Execution| async move {
        if ex.message.text() == "panic" {
            panic!("executor bug");
        }
        ex.emit.complete().await?;
        Ok(())
    }));
    let t = send_task(&svc, send_req(user("panic"))).await;
    assert_eq!(t.status.state, TaskState::Failed);
    assert_eq!(
        t.status.message.unwrap().text(),
        a2a_tower::engine::EXECUTOR_FAILED_MESSAGE
    );
    let ok = send_task(&svc, send_req(user("fine"))).await;
    assert_eq!(ok.status.state, TaskState::Completed);
    assert_eq!(svc.running(), 0);
}

// The inactivity timeout cancels an executor that stops producing.
#[tokio::test]
async fn inactivity_timeout_fails_and_cancels() {
    let (tx, mut rx) = channel::<()>();
    let inner = boxed(move |ex: Execution| {
        let tx = tx.clone();
        async move {
            ex.emit.working().await?;
            ex.emit.cancelled().await;
            tx.send(()).ok();
            Ok(())
        }
    });
    let layer = TaskLayer::new(card(), MemoryTaskLog::new())
        .unwrap()
        .inactivity_timeout(Duration::from_millis(50))
        .unwrap();
    let svc = engine_with(layer, inner);
    let t = send_task(&svc, send_req(user("x"))).await;
    assert_eq!(t.status.state, TaskState::Failed);
    assert_eq!(
        t.status.message.unwrap().text(),
        a2a_tower::engine::EXECUTOR_TIMED_OUT_MESSAGE
    );
    assert_eq!(rx.recv().await, Some(()), "executor saw the cancellation");
}

// A host concurrency limit between the engine and the executor: the second
// task waits SUBMITTED for a slot, and a cancel while it waits ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_layers_between_engine_and_executor() {
    let gate = Gate::default();
    let inner = tower::ServiceBuilder::new()
        .concurrency_limit(1)
        .service(gated(gate.clone()));
    let svc = engine_with(
        TaskLayer::new(card(), MemoryTaskLog::new()).unwrap(),
        tower::util::BoxCloneSyncService::new(inner),
    );
    let first = send_task(&svc, immediate(user("1"))).await;
    let mut sub = subscribe(&svc, &first.id).await.unwrap();
    // Wait until the first execution holds the slot.
    while let Some(Ok(ev)) = sub.next().await {
        if matches!(&ev, StreamResponse::Task(t) if t.status.state == TaskState::Working)
            || matches!(&ev, StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Working)
        {
            break;
        }
    }
    let second = send_task(&svc, immediate(user("2"))).await;
    assert_eq!(
        get(&svc, &second.id).await.unwrap().status.state,
        TaskState::Submitted
    );
    let A2aResponse::Task(c) = call(
        &svc,
        Operation::CancelTask(CancelTaskRequest {
            id: second.id.clone(),
            ..Default::default()
        }),
    )
    .await
    .unwrap() else {
        panic!()
    };
    assert_eq!(c.status.state, TaskState::Canceled);
    gate.open();
    collect(sub).await;
    assert_eq!(
        get(&svc, &first.id).await.unwrap().status.state,
        TaskState::Completed
    );
}

/// A log whose watches hear of nothing after they start: the engine must not
/// depend on a wake-up arriving in time (another host's NOTIFY can lag).
struct Deaf(std::sync::Arc<MemoryTaskLog>);

impl a2a_tower::log::TaskLog for Deaf {
    fn append(
        &self,
        request: a2a_tower::log::AppendRequest,
    ) -> a2a_tower::log::LogFuture<'_, a2a_tower::log::Appended> {
        self.0.append(request)
    }

    fn append_all(
        &self,
        requests: Vec<a2a_tower::log::AppendRequest>,
    ) -> a2a_tower::log::LogFuture<'_, Vec<a2a_tower::log::Appended>> {
        self.0.append_all(requests)
    }

    fn snapshot<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
    ) -> a2a_tower::log::LogFuture<'a, a2a_tower::log::Snapshot> {
        self.0.snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> a2a_tower::log::LogFuture<'a, Vec<a2a_tower::log::Sequenced>> {
        self.0.read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> a2a_tower::log::LogFuture<'a, a2a_tower::log::Watch> {
        Box::pin(async move {
            let w = self.0.watch(authority, task_id, after).await?;
            // Held, never read: the watch stays registered.
            let records = futures_util::stream::pending().chain(w.records);
            Ok(a2a_tower::log::Watch {
                snapshot: w.snapshot,
                records: Box::pin(records),
            })
        })
    }

    fn list<'a>(
        &'a self,
        authority: &'a str,
        query: &'a a2a_tower::log::ListQuery,
    ) -> a2a_tower::log::LogFuture<'a, a2a_tower::log::ListPage> {
        self.0.list(authority, query)
    }
}

// Fencing: a fenced execution's stream ends with what the log holds
// when it is fenced (here the new writer's FAILED status), even if its watch
// was never woken for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_stream_ends_with_what_fenced_it() {
    let memory = std::sync::Arc::new(MemoryTaskLog::new());
    let gate = Gate::default();
    let svc = engine_with(
        TaskLayer::new(
            card(),
            a2a_tower::log::TaskStore::from(memory.clone()).map_records(|_| Deaf(memory.clone())),
        )
        .unwrap(),
        gated(gate.clone()),
    );
    let stream = stream(&svc, Operation::SendStreamingMessage(send_req(user("go"))))
        .await
        .unwrap();
    let collected = tokio::spawn(collect(stream));
    // Another writer takes the task over and fails it.
    take_over_at(&memory, 4).await;
    gate.open();
    let events = tokio::time::timeout(Duration::from_secs(10), collected)
        .await
        .expect("the stream ended")
        .unwrap();
    let last = events.last().expect("events").as_ref().expect("no error");
    let StreamResponse::StatusUpdate(update) = last else {
        panic!("expected the FAILED status last, got {last:?}");
    };
    assert_eq!(update.status.state, TaskState::Failed);
}

// A fenced execution whose stream is further behind than the memory log's
// window of records: the log no longer holds the records after its cursor,
// so the stream continues from the task's snapshot (here FAILED, with every
// chunk written) instead of ending early without an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_stream_behind_the_window_ends_with_the_snapshot() {
    let memory = std::sync::Arc::new(MemoryTaskLog::builder().window(8).build().unwrap());
    let gate = Gate::default();
    let chunker = {
        let gate = gate.clone();
        boxed(move |ex: Execution| {
            let gate = gate.clone();
            async move {
                ex.emit.working().await?;
                for i in 0..100 {
                    let art = Artifact {
                        artifact_id: "a".into(),
                        parts: vec![Part::text(i.to_string())],
                        ..Artifact::default()
                    };
                    ex.emit.artifact(art, i > 0, false).await?;
                }
                gate.wait().await;
                ex.emit.complete().await?;
                Ok(())
            }
        })
    };
    let svc = engine_with(
        TaskLayer::new(
            card(),
            a2a_tower::log::TaskStore::from(memory.clone()).map_records(|_| Deaf(memory.clone())),
        )
        .unwrap(),
        chunker,
    );
    let stream = stream(&svc, Operation::SendStreamingMessage(send_req(user("go"))))
        .await
        .unwrap();
    let collected = tokio::spawn(collect(stream));
    // Every chunk written (the stream heard of none of them), then another
    // writer takes the task over and fails it.
    take_over_at(&memory, 100).await;
    gate.open();
    let events = tokio::time::timeout(Duration::from_secs(10), collected)
        .await
        .expect("the stream ended")
        .unwrap();
    let last = events.last().expect("not an empty stream");
    let Ok(StreamResponse::Task(task)) = last else {
        panic!("expected the task's snapshot last, got {last:?}");
    };
    assert_eq!(task.status.state, TaskState::Failed);
    let text: String = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(task.artifacts[0].parts, [Part::text(text)]);
}

/// Waits until the one live task of `memory` is at `seq` or beyond, then
/// fails it as another writer taking it over would.
async fn take_over_at(memory: &MemoryTaskLog, seq: u64) {
    let live = loop {
        let live = a2a_tower::log::LiveTaskScan::live_tasks(memory, None, 10)
            .await
            .unwrap();
        if live.first().is_some_and(|t| t.seq >= seq) {
            break live.into_iter().next().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let closed = a2a_tower::log::fail_live(
        memory,
        &live,
        a2a_tower::types::Message::agent("m-x", "taken over"),
    )
    .await
    .unwrap();
    assert!(closed.is_some());
}
