//! The conformance cases of push delivery progress (the log's "Push
//! delivery" rules): cursors created and removed with the configs' records,
//! conditional advances, the pending listing, leases and their expiry, and
//! the cleanup of a delivered terminal task.

use std::sync::Arc;
use std::time::Duration;

use crate::types::{TaskPushNotificationConfig, TaskState};
use crate::{
    Advance, AppendRequest, DeliveryCursor, PendingDelivery, Record, TaskBackend, TaskLog,
};

use super::{authority, msg, status, uid};

const LONG: Duration = Duration::from_secs(60);

/// The record that sets push config `id` (URL `https://example.com/<id>`).
pub fn config(id: &str) -> Record {
    Record::PushConfigSet {
        config: TaskPushNotificationConfig {
            id: id.into(),
            url: format!("https://example.com/{id}"),
            ..TaskPushNotificationConfig::default()
        },
    }
}

fn cursor(id: &str, seq: u64) -> DeliveryCursor {
    DeliveryCursor {
        config_id: id.into(),
        seq,
    }
}

/// The advance of config `config`'s cursor on `task` from `from` to `to`,
/// by the lease holder `holder`.
pub fn advance(auth: &str, task: &str, config: &str, holder: &str, from: u64, to: u64) -> Advance {
    Advance {
        authority: auth.into(),
        task_id: task.into(),
        config_id: config.into(),
        holder: holder.into(),
        from,
        to,
    }
}

/// A config given with the creation starts before it; one set later starts
/// before its own commit; replacing keeps the cursor; deleting removes it.
/// Another authority sees and claims nothing.
pub async fn deliveries_cursors_follow_the_configs(log: Arc<dyn TaskBackend>) {
    let (auth, other, t) = (authority(), authority(), uid("t"));
    log.append(AppendRequest::create(
        &auth,
        &t,
        vec![Record::created(&t, "c"), config("p1"), msg(1)],
    ))
    .await
    .unwrap();
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p1", 0)]
    );
    log.append(AppendRequest::new(
        &auth,
        &t,
        3,
        1,
        vec![msg(2), config("p2")],
    ))
    .await
    .unwrap();
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p1", 0), cursor("p2", 3)]
    );
    assert!(log.claim_deliveries(&auth, &t, "h", LONG).await.unwrap());
    assert!(
        log.advance_delivery(&advance(&auth, &t, "p2", "h", 3, 5))
            .await
            .unwrap()
    );
    // Replacing p2 keeps its cursor; deleting p1 removes it.
    log.append(AppendRequest::new(
        &auth,
        &t,
        5,
        1,
        vec![config("p2"), Record::PushConfigDeleted { id: "p1".into() }],
    ))
    .await
    .unwrap();
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p2", 5)]
    );
    // Another authority: nothing to see, claim or advance.
    assert!(log.delivery_cursors(&other, &t).await.unwrap().is_empty());
    assert!(!log.claim_deliveries(&other, &t, "x", LONG).await.unwrap());
    assert!(
        !log.advance_delivery(&advance(&other, &t, "p2", "h", 5, 6))
            .await
            .unwrap()
    );
    // Several tasks at once: the cursors commit with them, or not at all.
    let (t2, t3) = (uid("t"), uid("t"));
    let refused = log
        .append_all(vec![
            AppendRequest::create(&auth, &t3, vec![Record::created(&t3, "c"), config("r")]),
            AppendRequest::new(&auth, &t, 6, 1, vec![config("p3")]),
        ])
        .await;
    assert!(refused.is_err(), "a stale request refuses the group");
    assert!(log.delivery_cursors(&auth, &t3).await.unwrap().is_empty());
    log.append_all(vec![
        AppendRequest::create(&auth, &t2, vec![Record::created(&t2, "c"), config("q")]),
        AppendRequest::new(&auth, &t, 7, 1, vec![config("p3")]),
    ])
    .await
    .unwrap();
    assert_eq!(
        log.delivery_cursors(&auth, &t2).await.unwrap(),
        [cursor("q", 0)]
    );
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p2", 5), cursor("p3", 7)]
    );
    // A task without configs cannot be claimed.
    let plain = uid("t");
    log.append(AppendRequest::create(
        &auth,
        &plain,
        vec![Record::created(&plain, "c")],
    ))
    .await
    .unwrap();
    assert!(
        !log.claim_deliveries(&auth, &plain, "h", LONG)
            .await
            .unwrap()
    );
    assert!(
        log.delivery_cursors(&auth, &plain)
            .await
            .unwrap()
            .is_empty()
    );
}

/// An advance moves a cursor only from where it is, within the task's
/// records, and only by the lease holder.
pub async fn deliveries_advance_is_conditional(log: Arc<dyn TaskBackend>) {
    let (auth, t) = (authority(), uid("t"));
    log.append(AppendRequest::create(
        &auth,
        &t,
        vec![Record::created(&t, "c"), config("p"), msg(1)],
    ))
    .await
    .unwrap();
    // No lease yet.
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h", 0, 1))
            .await
            .unwrap()
    );
    assert!(log.claim_deliveries(&auth, &t, "h", LONG).await.unwrap());
    // Another holder, a stale `from`, beyond the head, an unknown config.
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "g", 0, 1))
            .await
            .unwrap()
    );
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h", 1, 2))
            .await
            .unwrap()
    );
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h", 0, 4))
            .await
            .unwrap()
    );
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "q", "h", 0, 1))
            .await
            .unwrap()
    );
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p", 0)]
    );
    assert!(
        log.advance_delivery(&advance(&auth, &t, "p", "h", 0, 1))
            .await
            .unwrap()
    );
    // The same move twice: the second is stale.
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h", 0, 1))
            .await
            .unwrap()
    );
    assert!(
        log.advance_delivery(&advance(&auth, &t, "p", "h", 1, 3))
            .await
            .unwrap()
    );
    // Never backwards.
    let back = advance(&auth, &t, "p", "h", 3, 2);
    assert!(!log.advance_delivery(&back).await.unwrap());
    assert_eq!(
        log.delivery_cursors(&auth, &t).await.unwrap(),
        [cursor("p", 3)]
    );
}

/// Pending: tasks with a cursor below their head, in key order, paged.
pub async fn deliveries_pending_pages(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let mut ids: Vec<String> = (0..3).map(|_| uid("t")).collect();
    ids.sort();
    for t in &ids {
        log.append(AppendRequest::create(
            &auth,
            t,
            vec![Record::created(t, "c"), config("p")],
        ))
        .await
        .unwrap();
    }
    // A task whose config is delivered up to its head is not pending.
    let done = uid("t");
    log.append(AppendRequest::create(
        &auth,
        &done,
        vec![Record::created(&done, "c"), config("p")],
    ))
    .await
    .unwrap();
    assert!(log.claim_deliveries(&auth, &done, "h", LONG).await.unwrap());
    assert!(
        log.advance_delivery(&advance(&auth, &done, "p", "h", 0, 2))
            .await
            .unwrap()
    );
    let key = |p: &PendingDelivery| p.task_id.clone();
    let all = log.pending_deliveries(None, 10).await.unwrap();
    assert_eq!(all.iter().map(key).collect::<Vec<_>>(), ids);
    assert!(all.iter().all(|p| p.authority == auth));
    let first = log.pending_deliveries(None, 2).await.unwrap();
    assert_eq!(first.iter().map(key).collect::<Vec<_>>(), ids[..2]);
    let rest = log
        .pending_deliveries(Some(first[1].key()), 2)
        .await
        .unwrap();
    assert_eq!(rest.iter().map(key).collect::<Vec<_>>(), ids[2..]);
    // New records make the delivered task pending again.
    log.append(AppendRequest::new(&auth, &done, 2, 1, vec![msg(1)]))
        .await
        .unwrap();
    assert_eq!(log.pending_deliveries(None, 10).await.unwrap().len(), 4);
}

/// One holder at a time: renewed by its holder, taken over once expired
/// (the old holder can no longer advance), given up by a release.
pub async fn deliveries_lease_is_exclusive_and_expires(log: Arc<dyn TaskBackend>) {
    let (auth, t) = (authority(), uid("t"));
    log.append(AppendRequest::create(
        &auth,
        &t,
        vec![Record::created(&t, "c"), config("p"), msg(1), msg(2)],
    ))
    .await
    .unwrap();
    let short = Duration::from_millis(400);
    assert!(log.claim_deliveries(&auth, &t, "h1", short).await.unwrap());
    assert!(!log.claim_deliveries(&auth, &t, "h2", short).await.unwrap());
    assert!(
        log.claim_deliveries(&auth, &t, "h1", short).await.unwrap(),
        "renewed"
    );
    assert!(
        log.advance_delivery(&advance(&auth, &t, "p", "h1", 0, 1))
            .await
            .unwrap()
    );
    tokio::time::sleep(short + Duration::from_millis(200)).await;
    // Expired: h1 cannot advance, h2 takes over.
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h1", 1, 2))
            .await
            .unwrap()
    );
    assert!(log.claim_deliveries(&auth, &t, "h2", LONG).await.unwrap());
    assert!(!log.claim_deliveries(&auth, &t, "h1", LONG).await.unwrap());
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h1", 1, 2))
            .await
            .unwrap()
    );
    assert!(
        log.advance_delivery(&advance(&auth, &t, "p", "h2", 1, 2))
            .await
            .unwrap()
    );
    // A release by another holder changes nothing; by the holder, frees it.
    log.release_deliveries(&auth, &t, "h1").await.unwrap();
    assert!(!log.claim_deliveries(&auth, &t, "h1", LONG).await.unwrap());
    log.release_deliveries(&auth, &t, "h2").await.unwrap();
    assert!(log.claim_deliveries(&auth, &t, "h1", LONG).await.unwrap());
    assert!(
        !log.advance_delivery(&advance(&auth, &t, "p", "h2", 2, 3))
            .await
            .unwrap()
    );
}

/// A terminal task whose cursors all reach its head loses its cursors and
/// lease; its records stay readable.
pub async fn deliveries_cleanup_after_the_end(log: Arc<dyn TaskBackend>) {
    let (auth, t) = (authority(), uid("t"));
    log.append(AppendRequest::create(
        &auth,
        &t,
        vec![Record::created(&t, "c"), config("a"), config("b")],
    ))
    .await
    .unwrap();
    log.append(AppendRequest::new(
        &auth,
        &t,
        3,
        1,
        vec![status(TaskState::Completed, 5)],
    ))
    .await
    .unwrap();
    assert!(log.claim_deliveries(&auth, &t, "h", LONG).await.unwrap());
    assert_eq!(log.read(&auth, &t, 0).await.unwrap().len(), 4);
    assert!(
        log.advance_delivery(&advance(&auth, &t, "a", "h", 0, 4))
            .await
            .unwrap()
    );
    // b is still behind: nothing is removed yet.
    assert_eq!(log.delivery_cursors(&auth, &t).await.unwrap().len(), 2);
    assert_eq!(log.pending_deliveries(None, 10).await.unwrap().len(), 1);
    assert!(
        log.advance_delivery(&advance(&auth, &t, "b", "h", 0, 4))
            .await
            .unwrap()
    );
    assert!(log.delivery_cursors(&auth, &t).await.unwrap().is_empty());
    assert!(log.pending_deliveries(None, 10).await.unwrap().is_empty());
    assert!(!log.claim_deliveries(&auth, &t, "h", LONG).await.unwrap());
    assert_eq!(
        log.snapshot(&auth, &t).await.unwrap().state(),
        TaskState::Completed
    );
}
