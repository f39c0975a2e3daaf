//! Multi-host test of the delivery queue: two team examples (host ids
//! `host-a` and `host-b`) share one PostgreSQL schema, and the inputs of ONE
//! context are sent to them alternately, some urgent. Every admission, by
//! either host, is the comparator's head of the queue at its revision; no
//! input runs twice (one `ExecutionStarted` per task); the echo agent runs
//! one input of the context at a time, so the completions follow the
//! admissions; every input completes.
//!
//! The context is held by a first run (`sleep 30`) on one host while the
//! first inputs queue, so their order is known in advance; the run is then
//! canceled through the other host, so both drain at once, and bursts of
//! inputs sent to both hosts at once arrive while they drain.
//!
//! Needs PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`): the test FAILS when it is
//! unreachable. It works in its own `a2a_test_<uuid>` schema, dropped at the
//! end even when the test fails. Needs the example binary built with
//! `--all-features` (see `support/server.rs`).

use crate::support;

use std::collections::BTreeMap;

use a2a_tower::queue::Priority::{self, Normal, Urgent};
use serde_json::json;
use support::http::{HttpClient, client, rpc};
use support::postgres::{connect, url, with_schema};
use support::queue::{admissions, host_runs, queue_sequenced, ran_once};
use support::server::Server;
use support::team::{
    artifact_text, enqueue, enqueue_id, input, stamp, state, until_terminal, until_working,
};

/// Inputs queued while the first run holds the context.
const HELD: usize = 12;
/// Inputs sent at once while the hosts drain, in bursts.
const BURST: usize = 4;
const BURSTS: usize = 3;

/// Every third input is urgent.
fn priority(i: usize) -> Priority {
    if i % 3 == 1 { Urgent } else { Normal }
}

/// Queues input `i` at `base`: (task id, text, priority).
async fn send(c: &HttpClient, base: &str, context: &str, i: usize) -> (String, String, Priority) {
    let text = format!("sleep 0.2 input {i} {}", priority(i).as_str());
    // Alternately for echo and without a target (the context's replier).
    let target = (i % 4 < 2).then_some("echo");
    let m = input(context, &text, target, priority(i));
    let task = enqueue(c, base, m).await;
    assert!(
        matches!(state(&task), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{task}"
    );
    (task["id"].as_str().unwrap().to_owned(), text, priority(i))
}

async fn admissions_follow_the_comparator_across_hosts(schema: &str) {
    // Fails loudly, not with a server start-up error, when PostgreSQL is
    // down; the test reads the records through it at the end.
    let log = connect(schema).await;

    let start = |host: &str| {
        let url = url();
        let env = [
            ("A2A_POSTGRES_URL", url.as_str()),
            ("A2A_POSTGRES_SCHEMA", schema),
            ("A2A_HOST_ID", host),
        ];
        Server::start_with("team", &env)
    };
    let hosts = [start("host-a"), start("host-b")];
    let base = |i: usize| hosts[i % 2].base.as_str();
    let c = client();
    let context = format!("ctx-{}", uuid::Uuid::new_v4());

    let held = input(&context, "sleep 30 held", Some("echo"), Normal);
    let held = enqueue_id(&c, base(0), held).await;
    until_working(&c, base(0), &held).await;

    // (task id, text, priority) of every input, in the order acknowledged.
    let mut sent = Vec::new();
    for i in 0..HELD {
        sent.push(send(&c, base(i), &context, i).await);
    }
    // Canceled through the other host: both hosts drain at once.
    let canceled = rpc(&c, base(1), "CancelTask", json!({"id": held})).await;
    assert_eq!(
        state(&canceled),
        "TASK_STATE_CANCELED",
        "the held run ended early: {canceled}"
    );
    // Bursts into the draining context, each input to either host at once.
    for burst in 0..BURSTS {
        let first = HELD + burst * BURST;
        let inputs = (first..first + BURST).map(|i| send(&c, base(i), &context, i));
        sent.extend(futures_util::future::join_all(inputs).await);
    }

    let mut done = BTreeMap::new();
    for (i, (id, text, _)) in sent.iter().enumerate() {
        let task = until_terminal(&c, base(i + 1), id).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
        assert_eq!(&artifact_text(&task), text, "{task}");
        done.insert(id.clone(), task);
    }

    // The records, through the test's own connection to the schema.
    let mut ran_on = BTreeMap::<String, usize>::new();
    for (id, ..) in &sent {
        let records = ran_once(&log, id).await;
        *ran_on.entry(host_runs(&records)[0].to_owned()).or_default() += 1;
    }
    let order = admissions(&queue_sequenced(&log, &context).await);
    assert_eq!(order.len(), 1 + sent.len(), "{order:?}");
    assert_eq!(order[0], held);

    // The held inputs were all queued before any was admitted: among
    // themselves they run urgent first, then in the order sent.
    let mut expected: Vec<usize> = (0..HELD).collect();
    expected.sort_by_key(|&i| (priority(i), i));
    let expected: Vec<&String> = expected.iter().map(|&i| &sent[i].0).collect();
    let held_order: Vec<&String> = order
        .iter()
        .filter(|id| sent[..HELD].iter().any(|(s, ..)| s == *id))
        .collect();
    assert_eq!(held_order, expected);

    // One input of the context at a time: completions in admission order.
    let stamps: Vec<String> = order[1..].iter().map(|id| stamp(&done[id])).collect();
    assert!(
        stamps.is_sorted(),
        "completions out of admission order: {stamps:?}"
    );
    eprintln!("multihost queue: runs by host {ran_on:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admissions_of_one_context_follow_the_comparator_across_two_hosts() {
    with_schema(
        |schema| async move { admissions_follow_the_comparator_across_hosts(&schema).await },
    )
    .await;
}
