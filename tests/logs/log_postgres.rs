//! The TaskLog conformance suite on `PostgresTaskLog`, plus what only a
//! shared database does: two hosts (two logs on one schema) fence each other
//! and see each other's records in watches.
//!
//! Needs PostgreSQL at `A2A_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); a test FAILS when it is
//! unreachable. Each test works in its own `a2a_test_<uuid>` schema and drops
//! it afterwards, even when the test fails.

use crate::support;

use std::future::Future;
use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, DeliveryLog, LiveTaskScan, LogErrorKind, PostgresTaskLog, Record, TaskBackend,
    TaskLog,
};
use a2a_tower::types::{Message, TaskState, TaskStatus};
use a2a_tower_engine::suite::{push as push_suite, recovery as recovery_suite};
use a2a_tower_log::log_suite;
use a2a_tower_log::suite::{GUARD, msg};
use futures_util::StreamExt;
use support::postgres::{connect, url, with_schema};

async fn run<F, Fut>(case: F)
where
    F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
    Fut: Future<Output = ()>,
{
    with_schema(|schema| async move {
        let log = connect(&schema).await;
        case(Arc::new(log)).await;
    })
    .await;
}

log_suite!(run);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_fence_and_watch_each_other() {
    with_schema(|schema| async move {
        let a = connect(&schema).await;
        let b = connect(&schema).await;
        a.append(AppendRequest::create(
            "x",
            "t",
            vec![Record::created("t", "c")],
        ))
        .await
        .unwrap();
        // A watcher on host B sees records host A commits.
        let mut on_b = b.watch("x", "t", None).await.unwrap().records;
        a.append(AppendRequest::new("x", "t", 1, 1, vec![msg(1)]))
            .await
            .unwrap();
        let got = tokio::time::timeout(GUARD, on_b.next())
            .await
            .expect("B's watch saw A's commit")
            .unwrap()
            .unwrap();
        assert_eq!(got.seq, 2);
        // B takes over with epoch 2; A is fenced even though A's projection
        // cache still holds the task at seq 2.
        assert_eq!(
            b.append(AppendRequest::new("x", "t", 2, 2, vec![msg(2)]))
                .await
                .unwrap()
                .seq,
            3
        );
        let err = a
            .append(AppendRequest::new("x", "t", 3, 1, vec![msg(3)]))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Fenced);
        let err = a
            .append(AppendRequest::new("x", "t", 2, 2, vec![msg(3)]))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), LogErrorKind::Conflict);
        let out = a
            .append(AppendRequest::new("x", "t", 3, 2, vec![msg(3)]))
            .await
            .unwrap();
        let ids: Vec<&str> = out
            .snapshot
            .task
            .history
            .iter()
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(ids, ["m1", "m2", "m3"], "A saw B's record");
        let done = Record::status(TaskStatus::new(TaskState::Completed));
        b.append(AppendRequest::new("x", "t", 4, 2, vec![done]))
            .await
            .unwrap();
        let mut seqs = Vec::new();
        while let Some(r) = tokio::time::timeout(GUARD, on_b.next())
            .await
            .expect("B's watch ends after the terminal record")
        {
            seqs.push(r.unwrap().seq);
        }
        assert_eq!(seqs, [3, 4, 5]);
    })
    .await;
}

/// Each append is one entry however many records it holds: host B (which
/// reads the database, not host A's memory) reads, watches and snapshots
/// the task after any cursor, inside an entry or at its end, page by page
/// past the watch's page size, and replays from stored snapshots taken
/// inside the run of entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_after_a_cursor_inside_an_entry_get_the_rest() {
    use a2a_tower_log::hub::PAGE;
    with_schema(|schema| async move {
        let a = connect(&schema).await;
        let b = connect(&schema).await;
        a.append(AppendRequest::create(
            "x",
            "t",
            vec![Record::created("t", "c")],
        ))
        .await
        .unwrap();
        let (mut seq, mut size, mut n) = (1, 1, 0u64);
        let mut last = None;
        while seq < PAGE as u64 + 200 {
            let records = (0..size).map(|i| msg(seq + 1 + i)).collect();
            let out = a
                .append(AppendRequest::new("x", "t", seq, 1, records))
                .await
                .unwrap();
            assert_eq!(out.seq, seq + size);
            seq = out.seq;
            size = size % 7 + 1;
            n += 1;
            if n % 40 == 0 {
                let snap = b.snapshot("x", "t").await.unwrap();
                assert_eq!((snap.seq, &snap.task), (seq, &out.snapshot.task));
            }
            last = Some(out);
        }
        let head = seq;
        let last = last.unwrap();
        let snap = b.snapshot("x", "t").await.unwrap();
        assert_eq!((snap.seq, &snap.task), (head, &last.snapshot.task));
        assert_eq!(snap.task.history.len() as u64, head - 1);

        let all = b.read("x", "t", 0).await.unwrap();
        let seqs: Vec<u64> = all.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=head).collect::<Vec<_>>());
        assert!(matches!(&*all[0].record, Record::Created { .. }));
        assert!(all[1..].iter().all(|r| *r.record == msg(r.seq)));
        let cursors = (0..40)
            .chain((PAGE as u64 - 10)..(PAGE as u64 + 10))
            .chain((0..=head).step_by(23))
            .chain(head - 10..=head + 2);
        for k in cursors {
            let rest = b.read("x", "t", k).await.unwrap();
            let seqs: Vec<u64> = rest.iter().map(|r| r.seq).collect();
            assert_eq!(seqs, (k + 1..=head).collect::<Vec<_>>(), "after {k}");
            assert!(rest.iter().all(|r| r.head == head), "after {k}");
        }
        for k in [0, 2, 3, 5, PAGE as u64 - 1, PAGE as u64 + 3, head - 1] {
            let mut w = b.watch("x", "t", Some(k)).await.unwrap().records;
            for want in k + 1..=head {
                let r = tokio::time::timeout(GUARD, w.next())
                    .await
                    .expect("the watch reads the rest")
                    .unwrap()
                    .unwrap();
                assert_eq!(r.seq, want, "watch after {k}");
                assert_eq!(r.record, all[want as usize - 1].record, "watch after {k}");
            }
        }
        // Then live, across hosts, from an entry of several.
        let mut w = b.watch("x", "t", Some(head - 1)).await.unwrap().records;
        let next = tokio::time::timeout(GUARD, w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(next.seq, head);
        let records = vec![msg(head + 1), msg(head + 2), msg(head + 3)];
        a.append(AppendRequest::new("x", "t", head, 1, records))
            .await
            .unwrap();
        for want in head + 1..=head + 3 {
            let r = tokio::time::timeout(GUARD, w.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert_eq!((r.seq, &*r.record), (want, &msg(want)));
        }
    })
    .await;
}

/// A commit of several tasks on host A wakes host B's watchers of each, and
/// B's cached heads do not hide it: B's next append on a stale head is a
/// conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_see_each_task_of_a_grouped_commit() {
    with_schema(|schema| async move {
        let a = connect(&schema).await;
        let b = connect(&schema).await;
        for t in ["q", "t"] {
            b.append(AppendRequest::create("x", t, vec![Record::created(t, "c")]))
                .await
                .unwrap();
        }
        let mut on_q = b.watch("x", "q", None).await.unwrap().records;
        let mut on_t = b.watch("x", "t", None).await.unwrap().records;
        a.append_all(vec![
            AppendRequest::new("x", "t", 1, 1, vec![msg(1)]),
            AppendRequest::new("x", "q", 1, 1, vec![msg(2), msg(3)]),
        ])
        .await
        .unwrap();
        for (watch, want) in [(&mut on_q, vec![2, 3]), (&mut on_t, vec![2])] {
            let mut got = Vec::new();
            while got.len() < want.len() {
                let r = tokio::time::timeout(GUARD, watch.next())
                    .await
                    .expect("B's watch saw A's grouped commit")
                    .unwrap()
                    .unwrap();
                got.push(r.seq);
            }
            assert_eq!(got, want);
        }
        let stale = b.append(AppendRequest::new("x", "q", 1, 1, vec![msg(4)]));
        assert_eq!(stale.await.unwrap_err().kind(), LogErrorKind::Conflict);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_recover_each_task_once() {
    with_schema(|schema| async move {
        let a = Arc::new(connect(&schema).await);
        let b = Arc::new(connect(&schema).await);
        for i in 0..20 {
            let t = format!("t{i}");
            a.append(AppendRequest::create(
                "x",
                &t,
                vec![Record::created(&t, "c")],
            ))
            .await
            .unwrap();
        }
        let mut hosts = Vec::new();
        for host in [a.clone(), b.clone()] {
            hosts.push(tokio::spawn(async move {
                let mut closed = 0;
                for task in host.live_tasks(None, 100).await.unwrap() {
                    let m = Message::agent(uuid::Uuid::new_v4().to_string(), "server restarted");
                    if a2a_tower::log::fail_live(&host, &task, m)
                        .await
                        .unwrap()
                        .is_some()
                    {
                        closed += 1;
                    }
                }
                closed
            }));
        }
        let mut total = 0;
        for h in hosts {
            total += h.await.unwrap();
        }
        assert_eq!(total, 20);
        assert!(a.live_tasks(None, 100).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_idempotent_and_versioned() {
    with_schema(|schema| async move {
        let _first = connect(&schema).await;
        let _second = connect(&schema).await;
        let (client, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let rows = client
            .query(
                &format!("SELECT version FROM \"{schema}\".schema_version"),
                &[],
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get::<_, i64>(0), PostgresTaskLog::SCHEMA_VERSION);
    })
    .await;
}

#[tokio::test]
async fn unreachable_database_is_an_error() {
    let err = PostgresTaskLog::builder("postgres://postgres@127.0.0.1:1/none")
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Backend);
}

/// Two logs (two hosts' connections) on one schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_recovery_and_fencing_through_the_engine() {
    with_schema(|schema| async move {
        let a: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        let b: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        recovery_suite::restart_recovery_and_fencing(a, b).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_execution_stops_cleanly() {
    with_schema(|schema| async move {
        let a: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        let b: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        recovery_suite::fenced_execution_stops_cleanly(a, b).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_rules_through_the_engine() {
    with_schema(|schema| async move {
        push_suite::push_config_rules(Arc::new(connect(&schema).await)).await;
    })
    .await;
}

// Two hosts: the config goes through host b while host a's execution writes
// the task; a folds it in and is not fenced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_fold_into_another_hosts_execution() {
    with_schema(|schema| async move {
        let a: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        let b: Arc<dyn TaskBackend> = Arc::new(connect(&schema).await);
        push_suite::configs_fold_into_a_running_execution(a, b).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_are_read_by_another_connection() {
    with_schema(|schema| async move {
        let written = push_suite::configs_written(Arc::new(connect(&schema).await)).await;
        push_suite::configs_read_back(Arc::new(connect(&schema).await), written).await;
    })
    .await;
}

/// Two hosts (two logs on one schema) race for a task's delivery lease:
/// exactly one wins each round, the loser cannot advance, and the winner's
/// advances are seen by the other host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_share_one_delivery_lease() {
    use a2a_tower_log::suite::{advance, config};

    with_schema(|schema| async move {
        let a = Arc::new(connect(&schema).await);
        let b = Arc::new(connect(&schema).await);
        a.append(AppendRequest::create(
            "x",
            "t",
            vec![Record::created("t", "c"), config("p"), msg(1), msg(2)],
        ))
        .await
        .unwrap();
        let ttl = std::time::Duration::from_secs(60);
        for round in 0..5u64 {
            let claims = futures_util::future::join_all(
                [(a.clone(), "a"), (b.clone(), "b")]
                    .into_iter()
                    .map(|(log, host)| async move {
                        log.claim_deliveries("x", "t", host, ttl).await.unwrap()
                    }),
            )
            .await;
            assert_eq!(
                claims.iter().filter(|c| **c).count(),
                1,
                "round {round}: {claims:?}"
            );
            let (winner, loser) = if claims[0] { (&a, "b") } else { (&b, "a") };
            let holder = if claims[0] { "a" } else { "b" };
            let from = b.delivery_cursors("x", "t").await.unwrap()[0].seq;
            let to = (from + 1).min(4);
            assert!(
                !a.advance_delivery(&advance("x", "t", "p", loser, from, to))
                    .await
                    .unwrap()
            );
            assert!(
                winner
                    .advance_delivery(&advance("x", "t", "p", holder, from, to))
                    .await
                    .unwrap()
                    || from == to
            );
            winner.release_deliveries("x", "t", holder).await.unwrap();
        }
        assert_eq!(a.delivery_cursors("x", "t").await.unwrap()[0].seq, 4);
    })
    .await;
}
