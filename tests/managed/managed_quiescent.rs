//! A blocking SendMessage that starts a managed run answers once the run is
//! quiescent (every process waiting for an answer or exited), with every
//! question the run asks at once, not at the first INPUT_REQUIRED commit.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::BoxError;
use a2a_tower::log::MemoryTaskLog;
use a2a_tower::managed::{Process, Program, Wait};
use a2a_tower::types::{Part, TaskState};
use serde_json::{Value, json};
use support::managed::{
    Counter, REFUND, pending, refund, refund_input, result, send, send_now, service, start,
};

/// The root asks `approve` at once; its child works a while in a step
/// (`ms`), then asks `score`, and, once answered, the root completes. A
/// blocking start that returned at the first question would show `approve`
/// alone.
fn slow_child(ms: u64) -> Program {
    let schema = json!({"type": "integer"});
    Program::new(
        "test.slow-child",
        schema.clone(),
        json!(true),
        move |p: Process, _| async move {
            let approve = p.wait(Wait::new("approve"));
            let score = p.child("score", move |c| async move {
                let _: Value = c
                    .step("think", || async move {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        Ok(json!(1))
                    })
                    .await?;
                Ok(c.wait(Wait::new("score")).await?)
            });
            let (a, s) = tokio::try_join!(async { approve.await.map_err(BoxError::from) }, score)?;
            Ok(json!([a, s]))
        },
    )
    .unwrap()
}

fn keys(task: &a2a_tower::types::Task) -> Vec<String> {
    pending(task)
        .iter()
        .map(|q| q["key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_refund_start_answers_with_both_questions() {
    let svc = service(Arc::new(MemoryTaskLog::new()), refund(Counter::default()));
    for n in 0..20 {
        let task = send(
            &svc,
            start(
                &format!("m-{n}"),
                "",
                Part::data(refund_input("A-1", "10.50")),
            ),
        )
        .await
        .unwrap();
        assert_eq!(task.status.state, TaskState::InputRequired);
        assert_eq!(keys(&task), ["approve", "score"], "start {n} of {REFUND}");
    }
}

#[tokio::test]
async fn a_child_still_at_work_is_waited_for() {
    let svc = service(Arc::new(MemoryTaskLog::new()), slow_child(150));
    let task = send(&svc, start("m-1", "", Part::data(json!(1))))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired);
    assert_eq!(keys(&task), ["approve", "score"]);
    // Without blocking, the start answers at once, before any question.
    let now = send_now(&svc, start("m-2", "", Part::data(json!(1))))
        .await
        .unwrap();
    assert!(pending(&now).is_empty(), "{now:?}");
}

#[tokio::test]
async fn a_run_that_ends_answers_with_its_end() {
    let done = Program::new(
        "test.done",
        json!(true),
        json!(true),
        |p: Process, v: Value| async move {
            let c = p.child("c", |_| async { Ok(json!(2)) }).await?;
            Ok(json!([v, c]))
        },
    )
    .unwrap();
    let svc = service(Arc::new(MemoryTaskLog::new()), done);
    let task = send(&svc, start("m-1", "", Part::data(json!(1))))
        .await
        .unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(result(&task), json!([1, 2]));
}
