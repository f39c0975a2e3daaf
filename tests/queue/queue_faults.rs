//! Log faults under the delivery queue: a drain pass whose commit fails (a
//! PostgreSQL connection lost, a busy SQLite file) is passed again after a
//! backoff until it succeeds, without another event; before, the context
//! rested with an executable head and no run until something else happened
//! in it.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::engine::TaskLayer;
use a2a_tower::log::{AppendRequest, LogError, LogErrorKind, TaskStore};
use support::gated::Gated;
use support::queue::{Lab, Store, card, echoes, held, queue_for};

/// Whether `requests` touch a queue stream and one of the `armed` faults
/// is left (then it is used up).
fn fault(armed: &AtomicUsize, requests: &[AppendRequest]) -> bool {
    requests
        .iter()
        .any(|r| a2a_tower::log::is_stream(&r.task_id))
        && armed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
}

async fn drain_survives_failed_commits(store: Store) {
    let lab = Lab::default();
    let armed = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let (a, f) = (armed.clone(), failed.clone());
    // The next `armed` commits that touch a queue stream fail as a backend
    // error would, and are counted.
    let store = TaskStore::from(store.open().await).map_records(move |inner| {
        Gated::new(inner, move |requests| {
            if fault(&a, requests) {
                f.fetch_add(1, Ordering::SeqCst);
                return Err(LogError::new(LogErrorKind::Backend));
            }
            Ok(())
        })
    });
    let svc = echoes(&lab, &["a"]).service(TaskLayer::new(card(), store).unwrap());
    svc.recover().await.unwrap();
    let ctx = support::queue::context();
    held(&svc, &lab, &ctx, "a", "first").await;
    queue_for(&svc, &ctx, "a", "second").await;
    // The first run's end drains the context: its next three commits fail.
    armed.store(3, Ordering::SeqCst);
    lab.release("first");
    lab.started("second").await;
    assert_eq!(
        failed.load(Ordering::SeqCst),
        3,
        "every armed fault was hit"
    );
    assert_eq!(armed.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_whose_commits_fail_passes_again_on_memory() {
    drain_survives_failed_commits(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_whose_commits_fail_passes_again_on_sqlite() {
    drain_survives_failed_commits(Store::sqlite()).await;
}
