//! Per-context isolation of the delivery queue, end to end: in the team
//! example, context A is held by a long run (`sleep 600`) while 50 inputs
//! queue behind it; meanwhile, under that load, 20 blocking SendMessages in
//! 20 other contexts each come back COMPLETED, and A's run is still WORKING
//! with all 50 inputs still queued. Once A's run is canceled, its 50 inputs
//! run in the order they arrived. The only clocks are guards far above what
//! the calls need, and a call past its guard fails the test. Needs the
//! example binary (see `support/server.rs`).

use crate::support;

use a2a_tower::queue::Priority::Normal;
use serde_json::json;
use support::http::{client, rpc};
use support::server::Server;
use support::tasks::GUARD;
use support::team::{
    artifact_text, enqueue, enqueue_id, input, stamp, state, until_terminal, until_working,
};

/// Inputs queued behind A's run.
const QUEUED: usize = 50;
/// Other contexts, one blocking SendMessage each.
const OTHERS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_context_holds_up_no_other_context() {
    let srv = Server::start("team");
    let base = srv.base.as_str();
    let c = client();

    let run = input("ctx-a", "sleep 600 holds context A", None, Normal);
    let run = enqueue_id(&c, base, run).await;
    until_working(&c, base, &run).await;

    // A's inputs queue (one after another: their arrival order is known)
    // while the other contexts' messages run, all at once.
    let queue_a = async {
        let mut queued = Vec::new();
        for i in 0..QUEUED {
            let text = format!("queued {i} in A");
            let m = input("ctx-a", &text, None, Normal);
            let task = enqueue(&c, base, m).await;
            assert_eq!(state(&task), "TASK_STATE_SUBMITTED", "{task}");
            queued.push((task["id"].as_str().unwrap().to_owned(), text));
        }
        queued
    };
    let others = futures_util::future::join_all((0..OTHERS).map(|i| {
        let c = c.clone();
        async move {
            let text = format!("one two three in context {i}");
            let m = input(&format!("ctx-{i}"), &text, None, Normal);
            let call = rpc(&c, base, "SendMessage", json!({"message": m}));
            let task = tokio::time::timeout(GUARD, call)
                .await
                .unwrap_or_else(|_| panic!("context {i} waited past {GUARD:?}"))["task"]
                .clone();
            assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
            assert_eq!(artifact_text(&task), text);
        }
    }));
    let (queued, _) = tokio::join!(queue_a, others);

    // A was held all along: its run still works, its inputs still wait.
    let held = rpc(&c, base, "GetTask", json!({"id": run})).await;
    assert_eq!(state(&held), "TASK_STATE_WORKING", "{held}");
    for (id, _) in &queued {
        let task = rpc(&c, base, "GetTask", json!({"id": id})).await;
        assert_eq!(state(&task), "TASK_STATE_SUBMITTED", "{task}");
    }

    // Released, A's queue runs in arrival order.
    let canceled = rpc(&c, base, "CancelTask", json!({"id": run})).await;
    assert_eq!(state(&canceled), "TASK_STATE_CANCELED", "{canceled}");
    let mut stamps = Vec::new();
    for (id, text) in &queued {
        let task = until_terminal(&c, base, id).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
        assert_eq!(&artifact_text(&task), text);
        stamps.push(stamp(&task));
    }
    assert!(
        stamps.is_sorted(),
        "A's inputs out of arrival order: {stamps:?}"
    );
}
