//! Crash test of the delivery queue: the team example on SQLite is killed
//! with SIGKILL while one run of a context is going (`sleep 30`) and inputs
//! of mixed priority wait behind it, then restarts on the same data
//! directory. The run is FAILED exactly once with the restart message; every
//! acknowledged input runs once, in the comparator's order, and completes;
//! no task is lost or added. Needs the example binary (see
//! `support/server.rs`).

use crate::support;

use std::collections::HashSet;

use a2a_tower::engine::RESTARTED_MESSAGE;
use a2a_tower::log::SqliteTaskLog;
use a2a_tower::queue::Priority::{Normal, Urgent};
use serde_json::json;
use support::http::{client, list_all, rpc};
use support::queue::{admissions, queue_sequenced, ran_once};
use support::server::{Server, TempDir};
use support::team::{
    artifact_text, enqueue, enqueue_id, input, stamp, state, until_terminal, until_working,
};

const CONTEXT: &str = "ctx-crash-queue";

/// The inputs queued behind the run: (target, priority).
const QUEUED: [(Option<&str>, a2a_tower::queue::Priority); 8] = [
    (None, Normal),
    (Some("echo"), Urgent),
    (Some("echo"), Normal),
    (None, Urgent),
    (None, Normal),
    (Some("echo"), Urgent),
    (None, Normal),
    (Some("echo"), Normal),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_fails_the_run_once_and_the_queue_runs_in_order_after_restart() {
    let data = TempDir::new("crash-queue");
    let dir = data.0.to_str().unwrap().to_owned();
    let env = [("A2A_DATA_DIR", dir.as_str())];
    let srv = Server::start_with("team", &env);
    let c = client();

    let held = input(CONTEXT, "sleep 30 cut short", None, Normal);
    let run = enqueue_id(&c, &srv.base, held).await;
    until_working(&c, &srv.base, &run).await;

    // Each acknowledged input: (task id, text, priority).
    let mut queued = Vec::new();
    for (i, (target, priority)) in QUEUED.into_iter().enumerate() {
        let text = format!("queued {i} {}", priority.as_str());
        let m = input(CONTEXT, &text, target, priority);
        let task = enqueue(&c, &srv.base, m).await;
        assert_eq!(state(&task), "TASK_STATE_SUBMITTED", "{task}");
        queued.push((task["id"].as_str().unwrap().to_owned(), text, priority));
    }
    let still = rpc(&c, &srv.base, "GetTask", json!({"id": run})).await;
    assert_eq!(
        state(&still),
        "TASK_STATE_WORKING",
        "the run ended before the kill"
    );

    // SIGKILL: no shutdown code runs. Restart on the same data directory.
    srv.kill();
    let srv = Server::start_with("team", &env);

    let failed = until_terminal(&c, &srv.base, &run).await;
    assert_eq!(state(&failed), "TASK_STATE_FAILED", "{failed}");
    assert_eq!(
        failed["status"]["message"]["parts"][0]["text"], RESTARTED_MESSAGE,
        "{failed}"
    );
    let mut done = Vec::new();
    for (id, text, _) in &queued {
        let task = until_terminal(&c, &srv.base, id).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
        assert_eq!(&artifact_text(&task), text, "{task}");
        done.push(task);
    }

    // The comparator's order: urgent before normal, then arrival.
    let mut expected: Vec<usize> = (0..queued.len()).collect();
    expected.sort_by_key(|&i| (queued[i].2, i));
    let stamps: Vec<String> = expected.iter().map(|&i| stamp(&done[i])).collect();
    assert!(
        stamps.is_sorted(),
        "completions out of the comparator's order: {stamps:?}"
    );

    // Nothing lost, nothing added: the context holds exactly the run and the
    // acknowledged inputs.
    let listed: Vec<String> = list_all(&c, &srv.base)
        .await
        .into_iter()
        .filter(|t| t["contextId"] == CONTEXT)
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    let want: HashSet<String> = std::iter::once(run.clone())
        .chain(queued.iter().map(|(id, ..)| id.clone()))
        .collect();
    assert_eq!(listed.len(), want.len(), "{listed:?}");
    assert_eq!(listed.into_iter().collect::<HashSet<_>>(), want);

    // The records, read once the process is gone.
    srv.stop();
    let log = SqliteTaskLog::open(data.0.join("team.db")).expect("open the team's log");
    // The run: started once, closed once (FAILED, as read above).
    ran_once(&log, &run).await;
    for (id, ..) in &queued {
        ran_once(&log, id).await;
    }
    let order: Vec<String> = std::iter::once(run.clone())
        .chain(expected.iter().map(|&i| queued[i].0.clone()))
        .collect();
    assert_eq!(admissions(&queue_sequenced(&log, CONTEXT).await), order);
}
