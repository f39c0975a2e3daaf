//! A context's queue is a stream of the task log, not a task: no caller of
//! the team reaches it through the protocol, even with its id in hand
//! (GetTask, SubscribeToTask, CancelTask, a continuation, ListTasks), on
//! memory and SQLite.

use crate::support;

use a2a_tower::ErrorKind;
use a2a_tower::log::TaskBackend;
use a2a_tower::queue::QUEUE_FEATURE;
use support::calls::{cancel, get, subscribe};
use support::queue::{Lab, Store, echoes, held, input, list, queue_for, send_now, serve};

/// The authority and id of the only queue stream of `ctx`.
async fn the_stream(log: &dyn TaskBackend, ctx: &str) -> (String, String) {
    let live = log.live_tasks(None, 1000).await.unwrap();
    let mut streams = live
        .iter()
        .filter(|t| t.context_id == ctx && t.stream().is_some());
    let s = streams.next().expect("the context's queue stream");
    assert!(streams.next().is_none(), "one stream per context");
    assert_eq!(s.stream().map(|(f, _)| f), Some(QUEUE_FEATURE));
    (s.authority.clone(), s.task_id.clone())
}

async fn no_caller_reads_the_queue_as_a_task(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    let svc = serve(log.clone(), echoes(&lab, &["a"])).await;
    let ctx = support::queue::context();
    let first = held(&svc, &lab, &ctx, "a", "first").await;
    let second = queue_for(&svc, &ctx, "a", "second").await;
    let (authority, stream) = the_stream(&*log, &ctx).await;
    assert!(!log.read(&authority, &stream, 0).await.unwrap().is_empty());

    let kind = |e: a2a_tower::A2aError| e.kind();
    assert_eq!(
        get(&svc, &stream).await.map_err(kind).unwrap_err(),
        ErrorKind::TaskNotFound
    );
    assert_eq!(
        subscribe(&svc, &stream)
            .await
            .map(|_| ())
            .map_err(kind)
            .unwrap_err(),
        ErrorKind::TaskNotFound
    );
    assert_eq!(
        cancel(&svc, &stream).await.map_err(kind).unwrap_err(),
        ErrorKind::TaskNotFound
    );
    let mut continued = input(&ctx, "into the queue itself", &[]);
    continued.task_id.clone_from(&stream);
    assert_eq!(
        send_now(&svc, continued).await.map_err(kind).unwrap_err(),
        ErrorKind::TaskNotFound
    );
    let mut listed: Vec<String> = list(&svc, &ctx).await.into_iter().map(|t| t.id).collect();
    listed.sort();
    let mut tasks = vec![first, second];
    tasks.sort();
    assert_eq!(
        listed, tasks,
        "the context lists its tasks, never its queue"
    );
    lab.release("first");
    lab.started("second").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_caller_reads_the_queue_as_a_task_on_memory() {
    no_caller_reads_the_queue_as_a_task(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_caller_reads_the_queue_as_a_task_on_sqlite() {
    no_caller_reads_the_queue_as_a_task(Store::sqlite()).await;
}
