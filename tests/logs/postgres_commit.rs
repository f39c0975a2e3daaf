//! The PostgreSQL log's committer (issue 30 item 1): concurrent appends of
//! one host ride ONE transaction, refusals are answered each its own way,
//! and a connection killed mid-batch never leaves a caller answered Ok for
//! an append that is not in the database.
//!
//! Transactions are counted by the `xmin` of the rows they wrote, in a
//! database created for the test (not `pg_stat_database.xact_commit`: it
//! also counts PostgreSQL's reads of the notification queue for the
//! listening committer connections, reported whenever they next go idle).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use a2a_tower::engine::{AgentExecutor, TaskLayer};
use a2a_tower::log::{AppendRequest, LogErrorKind, PostgresTaskLog, Record, TaskLog};
use a2a_tower_log::suite::msg;
use futures_util::future::join_all;
use support::postgres::{url, with_schema};
use tokio_postgres::NoTls;

/// `url()` with its database replaced by `db`.
fn url_of(db: &str) -> String {
    let base = url();
    let (base, query) = base.split_once('?').unwrap_or((&base, ""));
    let (server, _) = base.rsplit_once('/').expect("a database in the URL");
    if query.is_empty() {
        format!("{server}/{db}")
    } else {
        format!("{server}/{db}?{query}")
    }
}

async fn admin() -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&url(), NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} is required for this test: {e}", url()));
    tokio::spawn(conn);
    client
}

/// A client of the database `db`.
async fn admin_of(db: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&url_of(db), NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// Runs `body` with the URL of a fresh database, dropped afterwards.
async fn with_database<Fut: Future<Output = ()>>(body: impl FnOnce(String, String) -> Fut) {
    use futures_util::FutureExt as _;
    let db = format!("a2a_commit_{}", uuid::Uuid::new_v4().simple());
    let admin = admin().await;
    admin
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create the test database");
    let out = std::panic::AssertUnwindSafe(body(url_of(&db), db.clone()))
        .catch_unwind()
        .await;
    let dropped = admin
        .batch_execute(&format!("DROP DATABASE \"{db}\" WITH (FORCE)"))
        .await;
    if let Err(panic) = out {
        std::panic::resume_unwind(panic);
    }
    dropped.expect("drop the test database");
}

/// The pids of the committer connections named `name`.
async fn committer(admin: &tokio_postgres::Client, name: &str) -> Vec<i32> {
    admin
        .query(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, i32>(0))
        .collect()
}

/// The sizes of the commit batches `recorder` saw, in order.
#[cfg(feature = "metrics")]
fn batch_sizes(recorder: &metrics_util::debugging::DebuggingRecorder) -> Vec<f64> {
    use metrics_util::debugging::DebugValue;
    let name = a2a_tower::telemetry::names::LOG_COMMIT_BATCH;
    recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(k, ..)| k.key().name() == name)
        .flat_map(|(.., v)| match v {
            DebugValue::Histogram(v) => v.into_iter().map(|x| x.into_inner()).collect::<Vec<f64>>(),
            other => panic!("{name} is {other:?}"),
        })
        .collect()
}

async fn log_on(url: &str) -> PostgresTaskLog {
    PostgresTaskLog::builder(url)
        .pool_size(8)
        .connect()
        .await
        .expect("connect the log")
}

/// 24 concurrent appends: 8 creations, 8 appends at this host's head and 8
/// at a head another host moved since. The first 16 are written, the 8
/// stale ones refused with Conflict, each its own way, and the written
/// ones ride one transaction (their entries share one `xmin`).
#[tokio::test]
async fn concurrent_appends_ride_one_transaction_refusals_answered_each() {
    with_database(|url, db| async move {
        let (a, b) = (log_on(&url).await, log_on(&url).await);
        for i in 0..24 {
            let t = format!("t{i}");
            a.append(AppendRequest::create(
                "x",
                &t,
                vec![Record::created(&t, "c")],
            ))
            .await
            .unwrap();
        }
        // Host B moves t8..t15 on: A's cached heads for them are stale.
        for i in 8..24 {
            b.append(AppendRequest::new("x", format!("t{i}"), 1, 1, vec![msg(1)]))
                .await
                .unwrap();
        }
        // Eight refusals outside the measure open (and prepare) the pooled
        // connections the refused appends read the row on.
        let warm = (16..24)
            .map(|i| a.append(AppendRequest::new("x", format!("t{i}"), 1, 1, vec![msg(2)])));
        for r in join_all(warm.collect::<Vec<_>>()).await {
            assert_eq!(r.unwrap_err().kind(), LogErrorKind::Conflict);
        }
        // The batch's size, as the commit metric reports it (the committer
        // runs on this current-thread runtime, so a thread-local recorder
        // sees it).
        #[cfg(feature = "metrics")]
        let recorder = metrics_util::debugging::DebuggingRecorder::new();
        #[cfg(feature = "metrics")]
        let _local = metrics::set_default_local_recorder(&recorder);
        // One poll queues every append before the committer runs (a
        // current-thread runtime): one batch.
        let appends = (0..24).map(|i| {
            let req = if i < 8 {
                let t = format!("n{i}");
                AppendRequest::create("x", &t, vec![Record::created(&t, "c")])
            } else {
                AppendRequest::new("x", format!("t{}", i - 8), 1, 1, vec![msg(2)])
            };
            a.append(req)
        });
        let appends: Vec<_> = appends.collect();
        let out = join_all(appends).await;
        for (i, r) in out.iter().enumerate() {
            match i {
                0..8 => assert_eq!(r.as_ref().unwrap().seq, 1, "creation {i}"),
                8..16 => assert_eq!(r.as_ref().unwrap().seq, 2, "append {i}"),
                _ => assert_eq!(
                    r.as_ref().unwrap_err().kind(),
                    LogErrorKind::Conflict,
                    "{i}"
                ),
            }
        }
        // The 16 written appends' entries were inserted by ONE transaction
        // (counted by their `xmin`; `xact_commit` also counts PostgreSQL's
        // reads of the notification queue for the listening committer
        // connections, reported whenever they next go idle).
        let xids = admin_of(&db)
            .await
            .query_one(
                "SELECT count(*), count(DISTINCT xmin::text) FROM a2a.entries \
                 WHERE (task_id LIKE 'n%' AND seq = 1) \
                 OR (seq = 2 AND task_id IN ('t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'))",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(
            (xids.get::<_, i64>(0), xids.get::<_, i64>(1)),
            (16, 1),
            "entries of the batch, transactions that wrote them"
        );
        #[cfg(feature = "metrics")]
        {
            let sizes = batch_sizes(&recorder);
            // The batch of 24, then the 8 refused appends' locked retries
            // (each its own transaction, refused again).
            assert_eq!(sizes.first(), Some(&24.0), "{sizes:?}");
            assert!(sizes[1..].iter().all(|n| *n == 1.0), "{sizes:?}");
        }
        for i in 0..8 {
            let s = b.snapshot("x", &format!("t{i}")).await.unwrap();
            assert_eq!(s.seq, 2);
        }
    })
    .await;
}

/// The creations of a batch ride one statement over arrays: in ONE batch,
/// a task created twice is created once (by the first, the second answered
/// Conflict), the creation of a task that exists is refused without failing
/// the others, and each created task holds its own records.
#[tokio::test]
async fn one_batch_of_creations_answers_each_duplicates_refused() {
    with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        log.append(AppendRequest::create(
            "x",
            "old",
            vec![Record::created("old", "c0")],
        ))
        .await
        .unwrap();
        #[cfg(feature = "metrics")]
        let recorder = metrics_util::debugging::DebuggingRecorder::new();
        #[cfg(feature = "metrics")]
        let _local = metrics::set_default_local_recorder(&recorder);
        // One poll queues every append before the committer runs (a
        // current-thread runtime): one batch.
        let batch = [
            ("n1", "c1"),
            ("dup", "c2"),
            ("old", "c3"),
            ("dup", "c4"),
            ("n2", "c5"),
        ];
        let appends = batch.map(|(t, c)| {
            log.append(AppendRequest::create(
                "x",
                t,
                vec![Record::created(t, c), msg(1)],
            ))
        });
        let out = join_all(appends).await;
        for (i, r) in out.iter().enumerate() {
            match i {
                0 | 1 | 4 => assert_eq!(r.as_ref().unwrap().seq, 2, "creation {i}"),
                _ => assert_eq!(
                    r.as_ref().unwrap_err().kind(),
                    LogErrorKind::Conflict,
                    "creation {i}"
                ),
            }
        }
        #[cfg(feature = "metrics")]
        {
            let sizes = batch_sizes(&recorder);
            assert_eq!(sizes.first(), Some(&5.0), "{sizes:?}");
        }
        // What is stored, read by another log (nothing from this one's
        // cache): each task its own context and records.
        let other = support::postgres::connect(&schema).await;
        for (t, c, seq) in [
            ("n1", "c1", 2),
            ("dup", "c2", 2),
            ("n2", "c5", 2),
            ("old", "c0", 1),
        ] {
            let s = other.snapshot("x", t).await.unwrap();
            assert_eq!((s.seq, s.task.context_id.as_str()), (seq, c), "{t}");
            let read = other.read("x", t, 0).await.unwrap();
            assert_eq!(read.len() as u64, seq, "{t}");
        }
    })
    .await;
}

/// Another host's listener on the log of `schema`, as a raw connection:
/// each notification's payload, with when it arrived.
async fn listen(
    schema: &str,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<(std::time::Instant, String)>,
) {
    let (listener, mut conn) = tokio_postgres::connect(&url(), NoTls).await.unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(m)) = futures_util::StreamExt::next(&mut messages).await {
            if let tokio_postgres::AsyncMessage::Notification(n) = m {
                let _ = tx.send((std::time::Instant::now(), n.payload().to_owned()));
            }
        }
    });
    listener
        .batch_execute(&format!("LISTEN \"a2a_log_{schema}\""))
        .await
        .unwrap();
    (listener, rx)
}

/// The task ids a batch notification names, in order.
fn named(payload: &str) -> Vec<String> {
    let (head, entries) = payload.split_once(';').expect(payload);
    assert!(head.starts_with('*'), "{payload}");
    entries
        .split(';')
        .map(|e| e.splitn(3, ':').nth(2).expect(payload).to_owned())
        .collect()
}

/// A log on `schema` sending its notifications at most every `interval`.
async fn spaced(schema: &str, interval: Duration) -> PostgresTaskLog {
    support::postgres::open(support::postgres::builder(schema).notify_interval(interval)).await
}

/// One task created, its append awaited (its own batch).
async fn create(log: &PostgresTaskLog, task: &str) {
    let appended = log
        .append(AppendRequest::create(
            "x",
            task,
            vec![Record::created(task, "c"), msg(1)],
        ))
        .await
        .unwrap();
    assert_eq!(appended.seq, 2);
}

/// A batch's NOTIFY is ONE notification naming every task the batch wrote
/// with the sequence number it reached (schema 7), not one per task: each
/// other host's listener receives and reads one message per batch.
#[tokio::test]
async fn a_batch_is_announced_in_one_notification() {
    with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        let (_listener, mut rx) = listen(&schema).await;
        // One poll queues every append before the committer runs (a
        // current-thread runtime): one batch of 16 tasks.
        let ids: Vec<String> = (0..16).map(|i| format!("task-{i:02}")).collect();
        let appends = ids.iter().map(|t| {
            log.append(AppendRequest::create(
                "x",
                t,
                vec![Record::created(t, "c"), msg(1)],
            ))
        });
        for r in join_all(appends.collect::<Vec<_>>()).await {
            assert_eq!(r.unwrap().seq, 2);
        }
        let (_, first) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the batch's NOTIFY")
            .unwrap();
        // Nothing else arrives for the batch.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(rx.try_recv().is_err(), "one notification per batch");
        let (head, entries) = first.split_once(';').expect(&first);
        assert!(head.starts_with('*'), "{first}");
        let want: Vec<String> = ids.iter().map(|t| format!("2:{}:{t}", t.len())).collect();
        assert_eq!(entries.split(';').collect::<Vec<_>>(), want, "{first}");
    })
    .await;
}

/// Under load the notifications are spaced (`notify_interval`): batches
/// committed within the interval after one notification are announced
/// together in the next, once the interval is over, and nothing is left
/// unannounced. The first batch after a quiet interval is announced at once.
#[tokio::test]
async fn batches_within_the_notify_interval_are_announced_together() {
    with_schema(|schema| async move {
        let interval = Duration::from_secs(1);
        let log = spaced(&schema, interval).await;
        let (_listener, mut rx) = listen(&schema).await;
        let ids: Vec<String> = (0..10).map(|i| format!("task-{i:02}")).collect();
        // Ten batches one after another, each awaited.
        let began = std::time::Instant::now();
        for t in &ids {
            create(&log, t).await;
        }
        let took = began.elapsed();
        let mut got = Vec::new();
        while got
            .iter()
            .map(|(_, n): &(_, Vec<String>)| n.len())
            .sum::<usize>()
            < ids.len()
        {
            let (at, payload) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("every task announced")
                .unwrap();
            got.push((at, named(&payload)));
        }
        // The first batch at once, alone.
        assert_eq!(got[0].1, ids[..1], "{got:?}");
        assert!(got[0].0 - began < interval, "{got:?}");
        // The rest in order, each notification an interval after the one
        // before, so at most one per interval the batches took.
        let all: Vec<String> = got.iter().flat_map(|(_, n)| n.clone()).collect();
        assert_eq!(all, ids);
        for pair in got.windows(2) {
            assert!(pair[1].0 - pair[0].0 >= interval * 9 / 10, "{got:?}");
        }
        let most = 2 + (took.as_millis() / interval.as_millis()) as usize;
        assert!(
            got.len() <= most,
            "{} notifications for {took:?}",
            got.len()
        );
        assert!(got.len() < ids.len(), "spaced, not one per batch");
        // Nothing else follows.
        tokio::time::sleep(interval + Duration::from_millis(300)).await;
        assert!(rx.try_recv().is_err());
    })
    .await;
}

/// `notify_interval(0)`: every batch is announced by a notification of its
/// own, at once.
#[tokio::test]
async fn a_zero_notify_interval_announces_every_batch() {
    with_schema(|schema| async move {
        let log = spaced(&schema, Duration::ZERO).await;
        let (_listener, mut rx) = listen(&schema).await;
        let ids: Vec<String> = (0..5).map(|i| format!("task-{i:02}")).collect();
        for t in &ids {
            create(&log, t).await;
        }
        for t in &ids {
            let (_, payload) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("a notification per batch")
                .unwrap();
            assert_eq!(named(&payload), std::slice::from_ref(t));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(rx.try_recv().is_err());
    })
    .await;
}

/// The committer's connection is also the log's listener: killed while its
/// host appends nothing, it listens again at once (not at the next append),
/// so a watcher there still sees another host's next append.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_committer_listens_again_without_an_append() {
    use futures_util::StreamExt as _;
    with_schema(|schema| async move {
        let a = support::postgres::connect(&schema).await;
        let b = support::postgres::connect(&schema).await;
        b.append(AppendRequest::create(
            "x",
            "t",
            vec![Record::created("t", "c")],
        ))
        .await
        .unwrap();
        let mut watch = a.watch("x", "t", None).await.unwrap();
        assert_eq!(watch.snapshot.seq, 1);
        let admin = admin().await;
        let name = format!("a2a_commit {schema}");
        let killed = committer(&admin, &name).await;
        assert_eq!(killed.len(), 2, "one connection per log");
        for pid in &killed {
            admin
                .execute("SELECT pg_terminate_backend($1)", &[pid])
                .await
                .unwrap();
        }
        // Both logs open a new connection on their own.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let now = committer(&admin, &name).await;
            if now.len() == 2 && now.iter().all(|p| !killed.contains(p)) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no reconnect: {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        b.append(AppendRequest::new("x", "t", 1, 1, vec![msg(1)]))
            .await
            .unwrap();
        let next = tokio::time::timeout(Duration::from_secs(10), watch.records.next())
            .await
            .expect("the watcher on A woken by B's append")
            .expect("a record")
            .expect("no error");
        assert_eq!(next.seq, 2);
    })
    .await;
}

/// The committer's connection killed while appends stream in: every append
/// answered Ok is in the database, and the committer reconnects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_committer_acknowledges_nothing_lost_and_reconnects() {
    with_schema(|schema| async move {
        let log = Arc::new(support::postgres::connect(&schema).await);
        let admin = admin().await;
        let name = format!("a2a_commit {schema}");
        let workers = (0..8).map(|w| {
            let log = log.clone();
            tokio::spawn(async move {
                let t = format!("w{w}");
                let mut acked = Vec::new();
                let first = log
                    .append(AppendRequest::create(
                        "x",
                        &t,
                        vec![Record::created(&t, "c")],
                    ))
                    .await;
                let mut head = first.map(|a| a.seq).unwrap_or(0);
                for i in 0..150u64 {
                    if head == 0 {
                        // The creation failed: try it again.
                        let r = log
                            .append(AppendRequest::create(
                                "x",
                                &t,
                                vec![Record::created(&t, "c")],
                            ))
                            .await;
                        head = r.map(|a| a.seq).unwrap_or(0);
                        continue;
                    }
                    match log
                        .append(AppendRequest::new("x", &t, head, 1, vec![msg(i)]))
                        .await
                    {
                        Ok(a) => {
                            acked.push(a.seq);
                            head = a.seq;
                        }
                        // Not acknowledged: where is the task now?
                        Err(_) => match log.snapshot("x", &t).await {
                            Ok(s) => head = s.seq,
                            Err(e) if e.kind() == LogErrorKind::NotFound => head = 0,
                            Err(_) => {}
                        },
                    }
                }
                (t, acked)
            })
        });
        let workers: Vec<_> = workers.collect();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let pids = committer(&admin, &name).await;
        assert_eq!(pids.len(), 1, "one committer connection");
        let killed: bool = admin
            .query_one("SELECT pg_terminate_backend($1)", &[&pids[0]])
            .await
            .unwrap()
            .get(0);
        assert!(killed);
        let mut acked_total = 0;
        for w in workers {
            let (t, acked) = w.await.unwrap();
            acked_total += acked.len();
            let stored = log.read("x", &t, 0).await.unwrap();
            let seqs: std::collections::HashSet<u64> = stored.iter().map(|s| s.seq).collect();
            for seq in &acked {
                assert!(
                    seqs.contains(seq),
                    "{t}: seq {seq} acknowledged but not stored"
                );
            }
        }
        assert!(acked_total > 0);
        // It reconnected: creations (which always ride the committer) pass.
        for i in 0..4 {
            let t = format!("after{i}");
            log.append(AppendRequest::create(
                "x",
                &t,
                vec![Record::created(&t, "c")],
            ))
            .await
            .unwrap();
        }
        let now = committer(&admin, &name).await;
        assert_eq!(now.len(), 1);
        assert_ne!(now[0], pids[0], "a new connection");
    })
    .await;
}

/// A blocking SendMessage to a quick agent commits its task in one append
/// through the committer: each message's rows (its task and its one entry)
/// are written by one transaction of their own (counted over 20 messages by
/// the rows' `xmin`; the NOTIFY after each writes no row).
#[tokio::test]
async fn a_quick_send_message_is_one_append_in_one_transaction() {
    use support::engine::{card, engine_with, send_req, send_task, user};
    with_database(|url, db| async move {
        let log = log_on(&url).await;
        let svc = engine_with(
            TaskLayer::new(card(), log).unwrap(),
            tower::util::BoxCloneSyncService::new(AgentExecutor::service(Quick)),
        );
        let mut ids = Vec::new();
        for i in 0..20 {
            let task = send_task(&svc, send_req(user(&format!("m{i}")))).await;
            assert_eq!(task.status.state, a2a_tower::types::TaskState::Completed);
            ids.push(task.id);
        }
        let rows = admin_of(&db)
            .await
            .query_one(
                "SELECT (SELECT count(*) FROM a2a.entries WHERE task_id = ANY($1)), \
                 (SELECT count(DISTINCT xmin::text) FROM a2a.tasks WHERE task_id = ANY($1)), \
                 (SELECT count(DISTINCT x::text) FROM (SELECT xmin AS x FROM a2a.tasks WHERE task_id = ANY($1) \
                  UNION ALL SELECT xmin FROM a2a.entries WHERE task_id = ANY($1)) u)",
                &[&ids],
            )
            .await
            .unwrap();
        let counts: (i64, i64, i64) = (rows.get(0), rows.get(1), rows.get(2));
        // One entry per message; its task row and entry in one transaction,
        // one per message (they were sent one after the other).
        assert_eq!(counts, (20, 20, 20), "entries, transactions of the tasks, of all rows");
    })
    .await;
}

/// Completes at once with the input as its answer.
#[derive(Clone)]
struct Quick;

impl a2a_tower::engine::Agent for Quick {
    fn run(
        &self,
        input: a2a_tower::engine::AgentInput,
    ) -> impl futures_core::Stream<Item = Result<String, a2a_tower::BoxError>> + Send {
        futures_util::stream::iter([Ok(input.text)])
    }
}
