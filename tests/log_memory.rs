//! The TaskLog conformance suite on `MemoryTaskLog`, plus eviction.

#[path = "support/log_suite.rs"]
mod log_suite;

use std::future::Future;
use std::sync::Arc;

use a2a_tower::log::{AppendRequest, Eviction, LogErrorKind, MemoryTaskLog, Record, TaskLog};
use a2a_tower::types::{TaskState, TaskStatus};

async fn run<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskLog>) -> Fut,
    Fut: Future<Output = ()>,
{
    case(Arc::new(MemoryTaskLog::new())).await;
}

log_suite!(run);

#[tokio::test]
async fn eviction_drops_oldest_terminal_only() {
    let log = MemoryTaskLog::builder()
        .max_tasks(2)
        .shards(1)
        .eviction(Eviction::OldestTerminal)
        .build()
        .unwrap();
    for t in ["t1", "t2"] {
        log.append(AppendRequest::create("a", t, vec![Record::created(t, "c")]))
            .await
            .unwrap();
    }
    let t3 = || AppendRequest::create("a", "t3", vec![Record::created("t3", "c")]);
    assert_eq!(
        log.append(t3()).await.unwrap_err().kind(),
        LogErrorKind::Full
    );
    let done = Record::status(TaskStatus::new(TaskState::Completed));
    log.append(AppendRequest::new("a", "t1", 1, 1, vec![done]))
        .await
        .unwrap();
    assert_eq!(log.append(t3()).await.unwrap().seq, 1);
    assert_eq!(
        log.snapshot("a", "t1").await.unwrap_err().kind(),
        LogErrorKind::NotFound
    );
    assert_eq!(log.snapshot("a", "t2").await.unwrap().seq, 1);
    assert_eq!(log.len(), 2);
}
