//! A host forgets the contexts it no longer uses (their queues are streams
//! of the log, its slots only views of them): messages into more contexts
//! than a sweep's floor are all answered, and a context come back to after
//! the sweeps still routes by what its stream holds (its last replier), on
//! memory and SQLite.

use crate::support;

use a2a_tower::queue::{AGENT_KEY, TARGET_KEY};
use a2a_tower::types::TaskState;
use futures_util::StreamExt as _;
use serde_json::json;
use support::queue::{Lab, Store, context, echoes, input, send, serve};
use support::tasks::meta;

/// More contexts than the 256 slots at which a host first sweeps.
const CONTEXTS: usize = 300;

async fn a_context_come_back_to_is_read_from_its_stream(store: Store) {
    let lab = Lab::default();
    let log = store.open().await;
    // b is the default agent: an input naming none goes to the context's
    // last replier, else to b.
    let svc = serve(log, echoes(&lab, &["b", "a"])).await;
    let ctx = context();
    let first = send(&svc, input(&ctx, "to a", &[(TARGET_KEY, "a")]))
        .await
        .unwrap();
    assert_eq!(meta(&first, AGENT_KEY), json!("a"));

    let others = futures_util::stream::iter(0..CONTEXTS)
        .map(|i| {
            let svc = &svc;
            async move { send(svc, input(&context(), &format!("other {i}"), &[])).await }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    for done in others {
        let done = done.unwrap();
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(
            meta(&done, AGENT_KEY),
            json!("b"),
            "a new context's default"
        );
    }

    let back = send(&svc, input(&ctx, "back", &[])).await.unwrap();
    assert_eq!(back.status.state, TaskState::Completed);
    assert_eq!(meta(&back, AGENT_KEY), json!("a"), "the last replier");
    assert_eq!(lab.read(|b| b.texts("a")), ["to a", "back"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_come_back_to_is_read_from_its_stream_on_memory() {
    a_context_come_back_to_is_read_from_its_stream(Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_come_back_to_is_read_from_its_stream_on_sqlite() {
    a_context_come_back_to_is_read_from_its_stream(Store::sqlite()).await;
}
