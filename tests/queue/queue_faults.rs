//! Log faults under the delivery queue: a drain pass whose commit fails (a
//! PostgreSQL connection lost, a busy SQLite file) is passed again after a
//! backoff until it succeeds, without another event; before, the context
//! rested with an executable head and no run until something else happened
//! in it.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_tower::engine::TaskLayer;
use a2a_tower::log::{
    AppendRequest, Appended, ListPage, ListQuery, LogError, LogErrorKind, LogFuture, Sequenced,
    Snapshot, TaskLog, TaskStore, Watch,
};
use a2a_tower::queue::QUEUE_AUTHORITY;
use support::queue::{Lab, Store, card, echoes, held, queue_for};

/// The records of a log whose next `armed` commits that touch a queue
/// stream fail as a backend error would, and are counted.
struct Faulty {
    inner: Arc<dyn TaskLog>,
    armed: Arc<AtomicUsize>,
    failed: Arc<AtomicUsize>,
}

impl Faulty {
    fn fault(&self, requests: &[AppendRequest]) -> bool {
        requests.iter().any(|r| r.authority == QUEUE_AUTHORITY)
            && self
                .armed
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
    }
}

impl TaskLog for Faulty {
    fn append(&self, request: AppendRequest) -> LogFuture<'_, Appended> {
        if self.fault(std::slice::from_ref(&request)) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Box::pin(async { Err(LogError::new(LogErrorKind::Backend)) });
        }
        self.inner.append(request)
    }

    fn append_all(&self, requests: Vec<AppendRequest>) -> LogFuture<'_, Vec<Appended>> {
        if self.fault(&requests) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Box::pin(async { Err(LogError::new(LogErrorKind::Backend)) });
        }
        self.inner.append_all(requests)
    }

    fn snapshot<'a>(&'a self, authority: &'a str, task_id: &'a str) -> LogFuture<'a, Snapshot> {
        self.inner.snapshot(authority, task_id)
    }

    fn read<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: u64,
    ) -> LogFuture<'a, Vec<Sequenced>> {
        self.inner.read(authority, task_id, after)
    }

    fn watch<'a>(
        &'a self,
        authority: &'a str,
        task_id: &'a str,
        after: Option<u64>,
    ) -> LogFuture<'a, Watch> {
        self.inner.watch(authority, task_id, after)
    }

    fn list<'a>(&'a self, authority: &'a str, query: &'a ListQuery) -> LogFuture<'a, ListPage> {
        self.inner.list(authority, query)
    }
}

async fn drain_survives_failed_commits(store: Store) {
    let lab = Lab::default();
    let armed = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let (a, f) = (armed.clone(), failed.clone());
    let store = TaskStore::from(store.open().await).map_records(move |inner| Faulty {
        inner,
        armed: a,
        failed: f,
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
