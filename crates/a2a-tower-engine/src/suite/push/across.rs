//! The push-config rules across handles of one log: a config written by
//! one engine while another runs the task, and configs read back through a
//! second handle (a restart).

use std::sync::Arc;
use std::time::Duration;

use super::{Engines, GUARD, create, delete, hook, page, send};
use crate::log::TaskBackend;
use crate::types::TaskState;
use tokio::sync::watch;

/// A config created and deleted through engine `b` while engine `a` runs the
/// task: `a`'s execution folds them in and finishes as if nothing happened.
/// `a` and `b` are two handles of one log (the same `Arc` for memory).
pub async fn configs_fold_into_a_running_execution(
    a: Arc<dyn TaskBackend>,
    b: Arc<dyn TaskBackend>,
) {
    let engines = Engines::new();
    let (writer, other) = (
        engines.engine("a", a, true),
        engines.engine("b", b.clone(), true),
    );
    let task = send(&writer, "alice", "", "hold", None, true)
        .await
        .unwrap();
    let t = task.id.as_str();
    let authority = format!("{}/alice", engines.prefix);
    // Wait for WORKING: the execution holds the task.
    tokio::time::timeout(GUARD, async {
        while b.snapshot(&authority, t).await.unwrap().state() != TaskState::Working {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the task works");
    create(&other, hook("alice", t, "k", "https://example.com/k"))
        .await
        .unwrap();
    create(&other, hook("alice", t, "gone", "https://example.com/g"))
        .await
        .unwrap();
    delete(&other, "alice", t, "gone").await.unwrap();
    engines.gate.send_replace(true);
    let done = tokio::time::timeout(GUARD, async {
        loop {
            let snap = b.snapshot(&authority, t).await.unwrap();
            if snap.state().is_terminal() {
                return snap;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the task ends");
    assert_eq!(done.state(), TaskState::Completed, "not fenced");
    assert_eq!(done.task.artifacts[0].parts[0].as_text(), Some("late"));
    let ids: Vec<&str> = done
        .projection
        .push_configs()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["k"]);
}

/// Configs written through a log handle `a` are read back through `b` (a
/// reopened file, another connection): writes them through `a` and returns
/// what [`configs_read_back`] checks through `b`.
pub async fn configs_written(a: Arc<dyn TaskBackend>) -> (String, String) {
    let engines = Engines::new();
    let svc = engines.engine("a", a, true);
    let task = send(&svc, "alice", "", "ask", None, false).await.unwrap();
    let mut c = hook("alice", &task.id, "kept", "https://example.com/kept");
    c.token = "t".into();
    create(&svc, c).await.unwrap();
    create(&svc, hook("alice", &task.id, "dropped", "https://e.com"))
        .await
        .unwrap();
    delete(&svc, "alice", &task.id, "dropped").await.unwrap();
    (engines.prefix, task.id)
}

/// Checks what [`configs_written`] wrote, through another handle `b`.
pub async fn configs_read_back(b: Arc<dyn TaskBackend>, written: (String, String)) {
    let (prefix, task) = written;
    let engines = Engines {
        prefix,
        gate: watch::channel(false).0,
    };
    let svc = engines.engine("a", b.clone(), true);
    let (configs, _) = page(&svc, "alice", &task, 0, "").await.unwrap();
    assert_eq!(configs.len(), 1);
    assert_eq!(configs[0].id, "kept");
    assert_eq!(configs[0].token, "", "answers carry no secret");
    assert_eq!(configs[0].url, "https://example.com/kept");
    let stored = b
        .snapshot(&format!("{}/alice", engines.prefix), &task)
        .await
        .unwrap();
    assert_eq!(stored.projection.push_configs()[0].token, "t");
}
