//! When a new task's admission is committed: with the execution's first
//! commit when a blocking SendMessage's executor answers without waiting
//! (one append per task), alone and at once when it waits for anything
//! first, and never at all when that commit fails (the caller gets the
//! error and no task exists).

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_tower::engine::{Execution, TaskLayer};
use a2a_tower::log::{LogError, LogErrorKind, MemoryTaskLog, TaskStore};
use a2a_tower::types::{ListTasksRequest, TaskState};
use a2a_tower::{A2aResponse, ErrorKind, Operation};
use support::engine::{
    Gate, Inner, Svc, boxed, call, card, collect, engine_with, get, immediate, send, send_req,
    send_task, stream, user,
};
use support::gated::Gated;

/// A memory log that records each append (task id, expected sequence
/// number, records) and can be told to refuse appends.
#[derive(Clone, Default)]
struct Recording {
    log: Arc<MemoryTaskLog>,
    appends: Arc<Mutex<Vec<(String, u64, usize)>>>,
    refuse: Arc<Mutex<Option<LogErrorKind>>>,
}

impl Recording {
    fn appends(&self) -> Vec<(String, u64, usize)> {
        self.appends.lock().unwrap().clone()
    }

    /// The memory log, its records gated by this recorder.
    fn store(&self) -> TaskStore {
        let (appends, refuse) = (self.appends.clone(), self.refuse.clone());
        TaskStore::from(self.log.clone()).map_records(move |inner| {
            Gated::new(inner, move |requests| {
                if let Some(kind) = *refuse.lock().unwrap() {
                    return Err(LogError::new(kind));
                }
                let mut appends = appends.lock().unwrap();
                for r in requests {
                    appends.push((r.task_id.clone(), r.expected, r.records.len()));
                }
                Ok(())
            })
        })
    }
}

/// An executor that completes the task at once.
fn completes() -> Inner {
    boxed(|ex: Execution| async move {
        ex.emit.complete().await?;
        Ok(())
    })
}

/// An executor that completes the task once `gate` opens.
fn completes_after(gate: &Gate) -> Inner {
    let gate = gate.clone();
    boxed(move |ex: Execution| {
        let gate = gate.clone();
        async move {
            gate.wait().await;
            ex.emit.complete().await?;
            Ok(())
        }
    })
}

fn over(log: &Recording, inner: Inner) -> Svc {
    engine_with(TaskLayer::new(card(), log.store()).unwrap(), inner)
}

/// The tasks of one context, as ListTasks answers.
async fn listed(svc: &Svc, context_id: &str) -> Vec<a2a_tower::types::Task> {
    let req = ListTasksRequest {
        context_id: context_id.to_owned(),
        ..ListTasksRequest::default()
    };
    match call(svc, Operation::ListTasks(req)).await.unwrap() {
        A2aResponse::Tasks(page) => page.tasks,
        other => panic!("{other:?}"),
    }
}

fn in_context(context_id: &str, text: &str) -> a2a_tower::types::Message {
    let mut m = user(text);
    m.context_id = context_id.to_owned();
    m
}

#[tokio::test]
async fn a_quick_answer_carries_the_admission_in_one_append() {
    let log = Recording::default();
    let svc = over(
        &log,
        boxed(|ex: Execution| async move {
            ex.emit.working().await?;
            Ok(())
        }),
    );
    let t = send_task(&svc, send_req(user("hi"))).await;
    assert_eq!(t.status.state, TaskState::Completed);
    // Created, MessageAdmitted, ExecutionStarted, WORKING in one creation;
    // COMPLETED (the driver's, after the executor returned) in a second.
    assert_eq!(
        log.appends(),
        [(t.id.clone(), 0, 4), (t.id.clone(), 4, 1)],
        "{:?}",
        log.appends()
    );
    assert_eq!(t.history.len(), 1);
    assert_eq!(
        get(&svc, &t.id).await.unwrap().status.state,
        TaskState::Completed
    );

    // An executor that closes the task itself: one append in all.
    let log = Recording::default();
    let svc = over(&log, completes());
    let t = send_task(&svc, send_req(user("hi"))).await;
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(log.appends(), [(t.id.clone(), 0, 4)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_that_waits_first_is_admitted_at_once() {
    let log = Recording::default();
    let gate = Gate::default();
    let svc = over(&log, completes_after(&gate));
    let sending = send_task(&svc, send_req(in_context("ctx-wait", "hi")));
    tokio::pin!(sending);
    // Visible while the executor waits, before the SendMessage answers.
    let seen = tokio::select! {
        t = &mut sending => panic!("answered before the gate opened: {t:?}"),
        seen = async {
            loop {
                if let Some(t) = listed(&svc, "ctx-wait").await.pop() {
                    break t;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        } => seen,
        () = tokio::time::sleep(Duration::from_secs(10)) => {
            panic!("the admission was not committed while the executor waited")
        }
    };
    assert_eq!(seen.status.state, TaskState::Submitted);
    gate.open();
    let t = sending.await;
    assert_eq!(t.id, seen.id);
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(log.appends(), [(t.id.clone(), 0, 3), (t.id.clone(), 3, 1)]);
}

// The same for an inner service that is not ready (a host concurrency
// limit): the queued task is admitted while it waits for its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_queued_behind_a_concurrency_limit_is_admitted_while_it_waits() {
    let log = Recording::default();
    let gate = Gate::default();
    let inner = completes_after(&gate);
    let limited = tower::util::BoxCloneSyncService::new(
        tower::ServiceBuilder::new()
            .layer(tower::limit::ConcurrencyLimitLayer::new(1))
            .service(inner),
    );
    let svc = over(&log, limited);
    let first = send_task(&svc, send_req(in_context("ctx-a", "one")));
    let second = send_task(&svc, send_req(in_context("ctx-b", "two")));
    let release = async {
        for ctx in ["ctx-a", "ctx-b"] {
            tokio::time::timeout(Duration::from_secs(10), async {
                while listed(&svc, ctx).await.is_empty() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{ctx} was not admitted"));
        }
        // Both are admitted while one of them holds the only permit: one
        // opening per execution (the gate keeps a permit for the second).
        gate.open();
        gate.open();
    };
    let (a, b, ()) = tokio::join!(first, second, release);
    assert_eq!(a.status.state, TaskState::Completed);
    assert_eq!(b.status.state, TaskState::Completed);
}

#[tokio::test]
async fn a_refused_admission_answers_with_the_error_and_leaves_no_task() {
    for (kind, expected) in [
        (LogErrorKind::Full, ErrorKind::Unavailable),
        (LogErrorKind::Backend, ErrorKind::Internal),
    ] {
        let log = Recording::default();
        let svc = over(&log, completes());
        *log.refuse.lock().unwrap() = Some(kind);
        let err = send(&svc, send_req(in_context("ctx-full", "hi")))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), expected, "{kind:?}");
        *log.refuse.lock().unwrap() = None;
        assert!(listed(&svc, "ctx-full").await.is_empty());
        assert!(log.appends().is_empty());
        // The engine still serves.
        let ok = call(&svc, Operation::SendMessage(send_req(user("again")))).await;
        assert!(ok.is_ok(), "{ok:?}");
    }
}

// returnImmediately and SendStreamingMessage answer with the admitted task
// before the executor runs: their admission is committed first, alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_before_the_outcome_commit_the_admission_first() {
    let log = Recording::default();
    let svc = over(&log, completes());
    let r = send(&svc, immediate(user("hi"))).await.unwrap();
    let a2a_tower::types::SendMessageResponse::Task(t) = r else {
        panic!("{r:?}")
    };
    let s = stream(&svc, Operation::SendStreamingMessage(send_req(user("hi"))))
        .await
        .unwrap();
    let events = collect(s).await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    let appends = log.appends();
    let first_of = |id: &str| appends.iter().find(|a| a.0 == id).cloned().unwrap();
    assert_eq!(first_of(&t.id), (t.id.clone(), 0, 3));
    let streamed = appends.iter().rfind(|a| a.0 != t.id).unwrap().0.clone();
    assert_eq!(first_of(&streamed), (streamed.clone(), 0, 3));
}
