//! Compaction of queue streams (`queue::QueueStreams` swept by
//! `log::StreamCompaction`) racing a context's inputs and another context's
//! load, on the memory log, SQLite and PostgreSQL: each time the context
//! rests, its stream is restated as one record (read from the start, the
//! restatement is all there is) and its revision goes on; the last replier
//! survives every compaction (an input naming no agent keeps going to it,
//! not to the default agent), and the inputs queued after a compaction run
//! in the order they were sent. Nothing is timed: each wait is for a
//! condition, within a guard.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a_tower::log::StreamCompaction;
use a2a_tower::queue::{AGENT_KEY, QueueRecord, QueueStreams, TARGET_KEY};
use a2a_tower::types::TaskState;
use serde_json::json;
use support::queue::{
    AUTH, Lab, Store, context, echoes, input, queue_cases, queue_sequenced, send, send_now, serve,
    until_queue,
};
use support::tasks::{meta, until_terminal};

queue_cases! {
    every: [a_context_compacted_under_load_keeps_its_last_replier_and_order],
    durable: [],
}

const ROUNDS: usize = 5;
const PER_ROUND: usize = 3;

async fn a_context_compacted_under_load_keeps_its_last_replier_and_order(store: Store) {
    let lab = Lab::default();
    let (log, retention) = store.open_with_retention().await;
    // `b` is the default agent: an input naming none goes to `b` unless
    // another agent replied last in the context.
    let svc = serve(log.clone(), echoes(&lab, &["b", "a"])).await;
    let ctx = context();
    let first = send(&svc, input(&ctx, "first", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(first.status.state, TaskState::Completed);

    // The sweeper: every idle queue stream compacted, sweep after sweep.
    let stop = Arc::new(AtomicBool::new(false));
    let sweeper = tokio::spawn({
        let (retention, stop) = (retention.clone(), stop.clone());
        let compaction = StreamCompaction::new(QueueStreams, Duration::ZERO);
        async move {
            let mut compacted = 0;
            while !stop.load(Ordering::Relaxed) {
                compacted += compaction.sweep(&*retention, 16).await.unwrap();
                tokio::task::yield_now().await;
            }
            compacted
        }
    });
    // The load: another context busy all along, its stream compacted
    // whenever it rests between two inputs.
    let other = context();
    let load = tokio::spawn({
        let svc = svc.clone();
        let other = other.clone();
        async move {
            for i in 0..3 * ROUNDS {
                let done = send(&svc, input(&other, &format!("o{i}"), &[]))
                    .await
                    .unwrap();
                assert_eq!(done.status.state, TaskState::Completed);
            }
        }
    });

    let mut sent = vec!["first".to_owned()];
    let mut revision = 0;
    for round in 0..ROUNDS {
        let mut ids = Vec::new();
        for k in 0..PER_ROUND {
            let text = format!("r{round}-{k}");
            ids.push(send_now(&svc, input(&ctx, &text, &[])).await.unwrap().id);
            sent.push(text);
        }
        for id in &ids {
            let done = until_terminal(&*log, AUTH, id).await;
            assert_eq!(done.status.state, TaskState::Completed);
            assert_eq!(
                meta(&done, AGENT_KEY),
                json!("a"),
                "round {round}: the last replier"
            );
        }
        // Resting: compacted to its restatement alone, which keeps `a`.
        let restated = QueueRecord::Restated {
            last_replier: Some("a".into()),
        };
        until_queue(&*log, &ctx, "the context compacted", |records| {
            records == [restated.clone()]
        })
        .await;
        let stream = queue_sequenced(&*log, &ctx).await;
        assert_eq!(stream.len(), 1);
        assert!(
            stream[0].seq > revision,
            "the revision goes on: {} after {revision}",
            stream[0].seq
        );
        revision = stream[0].seq;
    }
    load.await.unwrap();
    stop.store(true, Ordering::Relaxed);
    let compacted = sweeper.await.unwrap();
    assert!(compacted >= ROUNDS, "{compacted} compactions");

    // Every input of the context ran on `a`, in the order sent; the other
    // context's on the default `b`, in its order.
    assert_eq!(lab.read(|b| b.texts("a")), sent);
    let others: Vec<String> = (0..3 * ROUNDS).map(|i| format!("o{i}")).collect();
    assert_eq!(lab.read(|b| b.texts("b")), others);
}
