//! A conformance suite for any `TaskLog` backend. Each check takes a fresh,
//! empty log; backends run every check in `ALL` (see `tests/log_memory.rs`).
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use a2a_tower::log::{
    AppendRequest, ListQuery, LogErrorKind, PageCursor, Record, Sequenced, TaskLog,
};
use a2a_tower::types::{Artifact, Message, Part, TaskState, TaskStatus, Timestamp};
use futures_util::StreamExt as _;

pub type Log = Arc<dyn TaskLog>;

pub fn status(state: TaskState) -> Record {
    Record::status(TaskStatus::new(state))
}

pub fn status_at(state: TaskState, ms: i64) -> Record {
    Record::status(TaskStatus {
        state,
        message: None,
        timestamp: Some(Timestamp::from_unix_millis(ms)),
    })
}

pub fn chunk(id: &str, text: &str, append: bool) -> Record {
    Record::ArtifactChunk {
        artifact: Artifact {
            artifact_id: id.into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        },
        append,
        last_chunk: false,
    }
}

pub async fn create(log: &Log, authority: &str, id: &str, context: &str) -> u64 {
    let records = vec![
        Record::created(id, context),
        Record::MessageAdmitted {
            message: Message::user(format!("m-{id}"), "hi"),
        },
    ];
    log.append(AppendRequest::create(authority, id, records))
        .await
        .expect("create")
        .seq
}

/// Sequence numbers start at 1, grow by one per record, and appends are
/// conditional on the expected sequence (a2a-tower DESIGN: never a silent
/// overwrite).
pub async fn append_is_conditional(log: Log) {
    assert_eq!(create(&log, "a", "t1", "c").await, 2);
    let dup = AppendRequest::create("a", "t1", vec![Record::created("t1", "c")]);
    assert_eq!(
        log.append(dup).await.unwrap_err().kind(),
        LogErrorKind::Conflict
    );
    let ok = AppendRequest::new(
        "a",
        "t1",
        2,
        1,
        vec![status(TaskState::Working), chunk("x", "1", false)],
    );
    let out = log.append(ok).await.unwrap();
    assert_eq!(out.seq, 4);
    assert_eq!(out.snapshot.seq, 4);
    assert_eq!(out.snapshot.task.status.state, TaskState::Working);
    let stale = AppendRequest::new("a", "t1", 2, 1, vec![status(TaskState::Completed)]);
    assert_eq!(
        log.append(stale).await.unwrap_err().kind(),
        LogErrorKind::Conflict
    );
    let ahead = AppendRequest::new("a", "t1", 9, 1, vec![status(TaskState::Completed)]);
    assert_eq!(
        log.append(ahead).await.unwrap_err().kind(),
        LogErrorKind::Conflict
    );
    assert_eq!(
        log.snapshot("a", "t1").await.unwrap().seq,
        4,
        "nothing written"
    );
}

/// A higher epoch takes over and fences every older writer.
pub async fn epochs_fence_stale_writers(log: Log) {
    create(&log, "a", "t1", "c").await;
    let newer = AppendRequest::new("a", "t1", 2, 2, vec![status(TaskState::Working)]);
    assert_eq!(log.append(newer).await.unwrap().snapshot.epoch, 2);
    let stale = AppendRequest::new("a", "t1", 3, 1, vec![status(TaskState::Completed)]);
    assert_eq!(
        log.append(stale).await.unwrap_err().kind(),
        LogErrorKind::Fenced
    );
    let same = AppendRequest::new("a", "t1", 3, 2, vec![status(TaskState::Completed)]);
    assert!(log.append(same).await.is_ok());
}

/// Batches are atomic; nothing follows a terminal status; Created is first.
pub async fn invalid_batches_write_nothing(log: Log) {
    let no_created = AppendRequest::create("a", "t0", vec![status(TaskState::Working)]);
    assert_eq!(
        log.append(no_created).await.unwrap_err().kind(),
        LogErrorKind::Invalid
    );
    assert_eq!(
        log.snapshot("a", "t0").await.unwrap_err().kind(),
        LogErrorKind::NotFound
    );
    create(&log, "a", "t1", "c").await;
    let bad = AppendRequest::new(
        "a",
        "t1",
        2,
        1,
        vec![status(TaskState::Completed), status(TaskState::Working)],
    );
    assert_eq!(
        log.append(bad).await.unwrap_err().kind(),
        LogErrorKind::Invalid
    );
    assert_eq!(log.snapshot("a", "t1").await.unwrap().seq, 2, "atomic");
    let end = AppendRequest::new("a", "t1", 2, 1, vec![status(TaskState::Failed)]);
    log.append(end).await.unwrap();
    let after = AppendRequest::new("a", "t1", 3, 1, vec![chunk("x", "1", false)]);
    assert_eq!(
        log.append(after).await.unwrap_err().kind(),
        LogErrorKind::Invalid
    );
}

/// The snapshot is the projection of the records, and reading the records
/// back and replaying them gives the same task.
pub async fn snapshot_is_the_projection(log: Log) {
    create(&log, "a", "t1", "c").await;
    let more = vec![
        status(TaskState::Working),
        chunk("x", "1", false),
        chunk("x", "2", true),
        Record::status(TaskStatus {
            state: TaskState::InputRequired,
            message: Some(Message::agent("q", "?")),
            timestamp: Some(Timestamp::now()),
        }),
    ];
    log.append(AppendRequest::new("a", "t1", 2, 1, more))
        .await
        .unwrap();
    let snap = log.snapshot("a", "t1").await.unwrap();
    let records: Vec<Sequenced> = log.read("a", "t1", 0).await.unwrap();
    assert_eq!(
        records.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let replayed = a2a_tower::log::Projection::replay(records.iter().map(|r| &*r.record)).unwrap();
    assert_eq!(replayed.task(), &snap.task);
    assert_eq!(snap.task.artifacts[0].parts.len(), 2);
    assert_eq!(log.read("a", "t1", 4).await.unwrap().len(), 2);
    assert!(log.read("a", "t1", 6).await.unwrap().is_empty());
}

/// Another authority sees nothing, and cannot write.
pub async fn authority_isolation(log: Log) {
    create(&log, "alice", "t1", "c").await;
    for f in [
        log.snapshot("bob", "t1").await.map(drop),
        log.read("bob", "t1", 0).await.map(drop),
        log.watch("bob", "t1", None).await.map(drop),
    ] {
        assert_eq!(f.unwrap_err().kind(), LogErrorKind::NotFound);
    }
    let w = AppendRequest::new("bob", "t1", 2, 1, vec![status(TaskState::Canceled)]);
    assert_eq!(
        log.append(w).await.unwrap_err().kind(),
        LogErrorKind::NotFound
    );
    let page = log
        .list(
            "bob",
            &ListQuery {
                page_size: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 0);
    let page = log
        .list(
            "alice",
            &ListQuery {
                page_size: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 1);
}

/// Filters, newest-first order and stable cursors.
pub async fn list_filters_and_pages(log: Log) {
    for i in 0..10i64 {
        let id = format!("t{i}");
        create(&log, "a", &id, if i < 4 { "c1" } else { "c2" }).await;
        let state = if i % 3 == 0 {
            TaskState::Completed
        } else {
            TaskState::Working
        };
        let r = AppendRequest::new("a", &id, 2, 1, vec![status_at(state, 1_000 + i % 5)]);
        log.append(r).await.unwrap();
    }
    let q = |f: &dyn Fn(&mut ListQuery)| {
        let mut q = ListQuery {
            page_size: 100,
            ..Default::default()
        };
        f(&mut q);
        q
    };
    let all = log.list("a", &q(&|_| {})).await.unwrap();
    assert_eq!(all.total, 10);
    assert!(all.next.is_none());
    let keys: Vec<_> = all
        .tasks
        .iter()
        .map(|t| (t.status.timestamp.unwrap().unix_millis(), t.id.clone()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    assert_eq!(keys, sorted, "newest first, then id");
    let c1 = log
        .list("a", &q(&|q| q.context_id = Some("c1".into())))
        .await
        .unwrap();
    assert_eq!(c1.total, 4);
    let done = log
        .list("a", &q(&|q| q.state = Some(TaskState::Completed)))
        .await
        .unwrap();
    assert_eq!(done.total, 4);
    let after = log
        .list(
            "a",
            &q(&|q| q.status_after = Some(Timestamp::from_unix_millis(1_003))),
        )
        .await
        .unwrap();
    assert_eq!(after.total, 4, "timestamps 1003 and 1004, inclusive");
    // Pages of 3 walk the same order, and a task added meanwhile does not
    // shift the remaining pages.
    let mut cursor: Option<PageCursor> = None;
    let mut seen = Vec::new();
    loop {
        let page = log
            .list(
                "a",
                &q(&|q| {
                    q.page_size = 3;
                    q.after = cursor.clone();
                }),
            )
            .await
            .unwrap();
        assert_eq!(page.total, 10 + usize::from(!seen.is_empty()));
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        if seen.len() == 3 {
            create(&log, "a", "late", "c1").await; // newest: sorts before the cursor
        }
        match page.next {
            Some(c) => cursor = Some(PageCursor::from_token(&c.to_token()).unwrap()),
            None => break,
        }
    }
    let expected: Vec<_> = keys.iter().map(|k| k.1.clone()).collect();
    assert_eq!(seen, expected);
}

/// A watch delivers every record after its start, live, in order, without
/// gaps, and ends after the terminal record.
pub async fn watch_without_gaps(log: Log) {
    create(&log, "a", "t1", "c").await;
    let mut w = log.watch("a", "t1", None).await.unwrap();
    assert_eq!(w.snapshot.seq, 2);
    let mut from_one = log.watch("a", "t1", Some(1)).await.unwrap();
    let writer = {
        let log = log.clone();
        tokio::spawn(async move {
            let mut seq = 2;
            for i in 0..20 {
                let r =
                    AppendRequest::new("a", "t1", seq, 1, vec![chunk("x", &i.to_string(), i > 0)]);
                seq = log.append(r).await.unwrap().seq;
                if i % 7 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            let end = AppendRequest::new("a", "t1", seq, 1, vec![status(TaskState::Completed)]);
            log.append(end).await.unwrap();
        })
    };
    let mut seqs = Vec::new();
    while let Some(r) = w.records.next().await {
        let r = r.unwrap();
        assert!(r.head >= r.seq, "head is the task's last seq when read");
        seqs.push(r.seq);
    }
    writer.await.unwrap();
    assert_eq!(
        seqs,
        (3..=23).collect::<Vec<_>>(),
        "ends after the terminal record"
    );
    let first = from_one.records.next().await.unwrap().unwrap();
    assert_eq!(first.seq, 2);
    assert!(matches!(&*first.record, Record::MessageAdmitted { .. }));
    assert_eq!(from_one.records.count().await, 21);
    // A watch of a terminal task yields nothing more.
    let done = log.watch("a", "t1", None).await.unwrap();
    assert_eq!(done.snapshot.task.status.state, TaskState::Completed);
    assert_eq!(done.records.count().await, 0);
}

/// Concurrent writers with the same expectation: exactly one wins.
pub async fn concurrent_writers_one_wins(log: Log) {
    create(&log, "a", "t1", "c").await;
    let tries = (0..8).map(|i| {
        let log = log.clone();
        async move {
            let r = AppendRequest::new("a", "t1", 2, 1, vec![chunk(&format!("w{i}"), "x", false)]);
            log.append(r).await.is_ok()
        }
    });
    let wins = futures_util::future::join_all(tries).await;
    assert_eq!(wins.iter().filter(|w| **w).count(), 1);
    assert_eq!(log.snapshot("a", "t1").await.unwrap().seq, 3);
}

/// Every check, by name.
pub const ALL: &[&str] = &[
    "append_is_conditional",
    "epochs_fence_stale_writers",
    "invalid_batches_write_nothing",
    "snapshot_is_the_projection",
    "authority_isolation",
    "list_filters_and_pages",
    "watch_without_gaps",
    "concurrent_writers_one_wins",
];

/// Runs one check of the suite against a fresh log.
pub async fn run(name: &str, log: Log) {
    match name {
        "append_is_conditional" => append_is_conditional(log).await,
        "epochs_fence_stale_writers" => epochs_fence_stale_writers(log).await,
        "invalid_batches_write_nothing" => invalid_batches_write_nothing(log).await,
        "snapshot_is_the_projection" => snapshot_is_the_projection(log).await,
        "authority_isolation" => authority_isolation(log).await,
        "list_filters_and_pages" => list_filters_and_pages(log).await,
        "watch_without_gaps" => watch_without_gaps(log).await,
        "concurrent_writers_one_wins" => concurrent_writers_one_wins(log).await,
        other => panic!("unknown check {other}"),
    }
}
