//! The `TaskLog` conformance suite (feature `suite`): every backend (memory,
//! SQLite, PostgreSQL, and yours) runs the same cases. Each case takes a
//! fresh `Arc<dyn TaskBackend>` and uses its own authority, so cases stay
//! independent even on a shared database.
//!
//! A test file imports the macro (`use a2a_tower_log::log_suite;`) and
//! instantiates the cases with `log_suite!(run)`, where
//! `async fn run<F, Fut>(case: F)` builds a log, runs `case(log).await`, and
//! cleans up. Each case becomes a `#[tokio::test]` on a multi-threaded
//! runtime, so the test crate needs `tokio` with the features `macros` and
//! `rt-multi-thread`. The cases are also functions of this module, to call
//! one at a time.
//!
//! ```
//! use std::sync::Arc;
//! use a2a_tower::log::{MemoryTaskLog, TaskBackend};
//! use a2a_tower_log::suite;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let log: Arc<dyn TaskBackend> = Arc::new(MemoryTaskLog::new());
//! suite::append_rules(log.clone()).await;
//! suite::epochs_fence(log).await;
//! # });
//! ```
//!
//! In a test file (`tests/my_log.rs`), every case against a log of your own:
//!
//! ```no_run
//! use std::sync::Arc;
//! use a2a_tower::log::{MemoryTaskLog, TaskBackend};
//! use a2a_tower_log::log_suite;
//!
//! async fn run<F, Fut>(case: F)
//! where
//!     F: FnOnce(Arc<dyn TaskBackend>) -> Fut,
//!     Fut: std::future::Future<Output = ()>,
//! {
//!     case(Arc::new(MemoryTaskLog::new())).await;
//! }
//!
//! log_suite!(run);
//! # fn main() {}
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::types::{
    Artifact, Message, Part, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use futures_util::StreamExt;

use crate::{
    AppendRequest, ListQuery, LiveTask, LogErrorKind, PageCursor, Record, Sequenced, TaskBackend,
    TaskLog,
};

mod append_all;
mod deliveries;
mod streams;
pub use append_all::{
    append_all_commits_together, append_all_race_one_winner_no_deadlock,
    append_all_refusal_writes_nothing, append_all_same_task_twice_or_none,
};
pub use deliveries::{
    advance, config, deliveries_advance_is_conditional, deliveries_cleanup_after_the_end,
    deliveries_cursors_follow_the_configs, deliveries_lease_is_exclusive_and_expires,
    deliveries_pending_pages,
};
pub use streams::streams_are_no_tasks;

/// The guard against a watch that never delivers (a failure, not a wait).
pub const GUARD: Duration = Duration::from_secs(10);

/// A unique authority for one case.
pub fn authority() -> String {
    format!("auth-{}", uuid::Uuid::new_v4())
}

/// The admission of the user message `m<i>`.
pub fn msg(i: u64) -> Record {
    Record::MessageAdmitted {
        message: Message::user(format!("m{i}"), "x"),
    }
}

fn uid(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4())
}

fn status(state: TaskState, ms: i64) -> Record {
    Record::status(TaskStatus {
        state,
        message: None,
        timestamp: Some(Timestamp::from_unix_millis(ms)),
    })
}

fn created_at(task: &str, ctx: &str, ms: i64) -> Record {
    Record::Created {
        task_id: task.into(),
        context_id: ctx.into(),
        at: Timestamp::from_unix_millis(ms),
        metadata: None,
    }
}

async fn create(log: &dyn TaskBackend, auth: &str, task: &str, ctx: &str, ms: i64) {
    let out = log
        .append(AppendRequest::create(
            auth,
            task,
            vec![created_at(task, ctx, ms)],
        ))
        .await
        .unwrap();
    assert_eq!(out.seq, 1);
}

fn kind<T: std::fmt::Debug>(r: Result<T, crate::LogError>) -> LogErrorKind {
    r.unwrap_err().kind()
}

/// Sequence numbers, CAS on `expected`, validity of record sequences.
pub async fn append_rules(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    let out = log
        .append(AppendRequest::create(
            &auth,
            &t,
            vec![
                Record::created(&t, "c"),
                Record::MessageAdmitted {
                    message: Message::user("m1", "hi"),
                },
            ],
        ))
        .await
        .unwrap();
    assert_eq!(out.seq, 2);
    assert_eq!(out.snapshot.seq, 2);
    assert_eq!(out.snapshot.epoch, 1);
    assert_eq!(out.snapshot.state(), TaskState::Submitted);

    // Creating again: conflict, whatever the authority.
    let again = AppendRequest::create(&auth, &t, vec![Record::created(&t, "c")]);
    assert_eq!(kind(log.append(again).await), LogErrorKind::Conflict);
    let other = AppendRequest::create(authority(), &t, vec![Record::created(&t, "c")]);
    assert_eq!(kind(log.append(other).await), LogErrorKind::Conflict);

    // Create must start with Created naming the task.
    let t2 = uid("t");
    let bad = AppendRequest::create(&auth, &t2, vec![status(TaskState::Working, 1)]);
    assert_eq!(kind(log.append(bad).await), LogErrorKind::Invalid);
    let wrong_id = AppendRequest::create(&auth, &t2, vec![Record::created("someone-else", "c")]);
    assert_eq!(kind(log.append(wrong_id).await), LogErrorKind::Invalid);
    assert_eq!(kind(log.snapshot(&auth, &t2).await), LogErrorKind::NotFound);

    // Stale and future expectations conflict; nothing is written.
    for expected in [1, 3] {
        let req = AppendRequest::new(&auth, &t, expected, 1, vec![status(TaskState::Working, 5)]);
        assert_eq!(
            kind(log.append(req).await),
            LogErrorKind::Conflict,
            "expected {expected}"
        );
    }
    assert_eq!(log.snapshot(&auth, &t).await.unwrap().seq, 2);

    // A second Created is invalid; the whole batch is rejected.
    let req = AppendRequest::new(
        &auth,
        &t,
        2,
        1,
        vec![status(TaskState::Working, 5), Record::created(&t, "c")],
    );
    assert_eq!(kind(log.append(req).await), LogErrorKind::Invalid);
    assert_eq!(log.read(&auth, &t, 0).await.unwrap().len(), 2);

    // A good append, then terminal, then nothing more.
    let req = AppendRequest::new(&auth, &t, 2, 1, vec![status(TaskState::Working, 5)]);
    assert_eq!(log.append(req).await.unwrap().seq, 3);
    let req = AppendRequest::new(&auth, &t, 3, 1, vec![status(TaskState::Completed, 6)]);
    let done = log.append(req).await.unwrap();
    assert_eq!((done.seq, done.snapshot.state()), (4, TaskState::Completed));
    let req = AppendRequest::new(&auth, &t, 4, 1, vec![status(TaskState::Working, 7)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::Invalid);

    // Records read back exactly, in order (a log may compact the records
    // of a terminal task into its snapshot: then it says so).
    match log.read(&auth, &t, 2).await {
        Ok(recs) => {
            let seqs: Vec<u64> = recs.iter().map(|r| r.seq).collect();
            assert_eq!(seqs, [3, 4]);
            assert_eq!(*recs[1].record, status(TaskState::Completed, 6));
        }
        Err(e) => assert_eq!(e.kind(), LogErrorKind::Compacted),
    }
    assert!(log.read(&auth, &t, 4).await.unwrap().is_empty());

    // Unknown task.
    let req = AppendRequest::new(
        &auth,
        uid("missing"),
        1,
        1,
        vec![status(TaskState::Working, 1)],
    );
    assert_eq!(kind(log.append(req).await), LogErrorKind::NotFound);
}

/// Of many writers racing on the same `expected`, exactly one wins.
pub async fn cas_race_has_one_winner(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    create(&*log, &auth, &t, "c", 1).await;
    let mut handles = Vec::new();
    for i in 0..16 {
        let (log, auth, t) = (log.clone(), auth.clone(), t.clone());
        handles.push(tokio::spawn(async move {
            let msg = Message::user(format!("m{i}"), "x");
            let req = AppendRequest::new(
                &auth,
                &t,
                1,
                1,
                vec![Record::MessageAdmitted { message: msg }],
            );
            log.append(req).await.map(|a| a.seq).map_err(|e| e.kind())
        }));
    }
    let mut wins = 0;
    for h in handles {
        match h.await.unwrap() {
            Ok(seq) => {
                assert_eq!(seq, 2);
                wins += 1;
            }
            Err(k) => assert_eq!(k, LogErrorKind::Conflict),
        }
    }
    assert_eq!(wins, 1);
    let snap = log.snapshot(&auth, &t).await.unwrap();
    assert_eq!((snap.seq, snap.task.history.len()), (2, 1));
}

/// Concurrent appends to many tasks all commit, each in its own order.
pub async fn concurrent_tasks(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let mut handles = Vec::new();
    for i in 0..24 {
        let (log, auth) = (log.clone(), auth.clone());
        handles.push(tokio::spawn(async move {
            let t = format!("t-{i}");
            create(&*log, &auth, &t, "c", 1).await;
            for seq in 1..10 {
                let msg = Message::user(format!("m{seq}"), "x");
                let req = AppendRequest::new(
                    &auth,
                    &t,
                    seq,
                    1,
                    vec![Record::MessageAdmitted { message: msg }],
                );
                assert_eq!(log.append(req).await.unwrap().seq, seq + 1);
            }
            t
        }));
    }
    for h in handles {
        let t = h.await.unwrap();
        let snap = log.snapshot(&auth, &t).await.unwrap();
        assert_eq!((snap.seq, snap.task.history.len()), (10, 9));
        let ids: Vec<String> = snap
            .task
            .history
            .iter()
            .map(|m| m.message_id.clone())
            .collect();
        assert_eq!(ids, (1..10).map(|i| format!("m{i}")).collect::<Vec<_>>());
    }
}

/// A newer epoch fences older writers; equal epochs keep writing.
pub async fn epochs_fence(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    create(&*log, &auth, &t, "c", 1).await;
    let req = AppendRequest::new(&auth, &t, 1, 1, vec![status(TaskState::Working, 2)]);
    assert_eq!(log.append(req).await.unwrap().snapshot.epoch, 1);
    // Host B takes over with epoch 2.
    let msg = Message::user("m", "continue");
    let req = AppendRequest::new(
        &auth,
        &t,
        2,
        2,
        vec![Record::MessageAdmitted { message: msg }],
    );
    let b = log.append(req).await.unwrap();
    assert_eq!((b.seq, b.snapshot.epoch), (3, 2));
    // Host A (epoch 1) is fenced, even with the right sequence number.
    let req = AppendRequest::new(&auth, &t, 3, 1, vec![status(TaskState::Completed, 3)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::Fenced);
    // Fenced is reported before a sequence conflict.
    let req = AppendRequest::new(&auth, &t, 1, 1, vec![status(TaskState::Completed, 3)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::Fenced);
    // B keeps writing; a newer epoch still needs the right sequence.
    let req = AppendRequest::new(&auth, &t, 2, 3, vec![status(TaskState::Completed, 3)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::Conflict);
    let req = AppendRequest::new(&auth, &t, 3, 2, vec![status(TaskState::Completed, 4)]);
    assert_eq!(log.append(req).await.unwrap().seq, 4);
    let snap = log.snapshot(&auth, &t).await.unwrap();
    assert_eq!(
        (snap.seq, snap.epoch, snap.state()),
        (4, 2, TaskState::Completed)
    );
}

/// The stored snapshot is the projection of the records (history, status
/// message, artifacts, cancel flag, push configs survive a round trip).
pub async fn projection(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    let question = Message::agent("q", "which one?");
    let chunk = |text: &str, append: bool| Record::ArtifactChunk {
        artifact: Artifact {
            artifact_id: "a1".into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        },
        append,
        last_chunk: false,
    };
    let records = vec![
        created_at(&t, "ctx", 10),
        Record::MessageAdmitted {
            message: Message::user("m1", "go"),
        },
        chunk("hello ", false),
        chunk("world", true),
        Record::status(TaskStatus {
            state: TaskState::InputRequired,
            message: Some(question.clone()),
            timestamp: Some(Timestamp::from_unix_millis(20)),
        }),
        Record::CancelRequested {
            at: Timestamp::from_unix_millis(21),
        },
        Record::PushConfigSet {
            config: TaskPushNotificationConfig {
                id: "p1".into(),
                task_id: t.clone(),
                url: "https://example.com/hook".into(),
                ..TaskPushNotificationConfig::default()
            },
        },
        Record::PushConfigSet {
            config: TaskPushNotificationConfig {
                id: "p2".into(),
                task_id: t.clone(),
                url: "https://example.com/other".into(),
                ..TaskPushNotificationConfig::default()
            },
        },
        Record::PushConfigDeleted { id: "p1".into() },
    ];
    let out = log
        .append(AppendRequest::create(&auth, &t, records.clone()))
        .await
        .unwrap();
    assert_eq!(out.seq, 9);
    let snap = log.snapshot(&auth, &t).await.unwrap();
    assert_eq!(
        snap.projection, out.snapshot.projection,
        "stored == committed"
    );
    let replayed = crate::Projection::replay(records.iter()).unwrap();
    assert_eq!(snap.projection, replayed);
    assert_eq!(snap.task.status.state, TaskState::InputRequired);
    assert_eq!(snap.task.status.message.as_ref(), Some(&question));
    assert_eq!(
        snap.task.artifacts[0].parts,
        vec![Part::text("hello "), Part::text("world")]
    );
    assert!(snap.projection.cancel_requested());
    let hooks: Vec<&str> = snap
        .projection
        .push_configs()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(hooks, ["p2"]);
    // The next append continues from the stored projection.
    let req = AppendRequest::new(
        &auth,
        &t,
        9,
        1,
        vec![Record::MessageAdmitted {
            message: Message::user("m2", "this one"),
        }],
    );
    let out = log.append(req).await.unwrap();
    let ids: Vec<&str> = out
        .snapshot
        .task
        .history
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(ids, ["m1", "q", "m2"]);
    let snap = log.snapshot(&auth, &t).await.unwrap();
    assert_eq!(snap.task, out.snapshot.task);
}

/// ListTasks filters, order (newest status first, then id) and keyset pages
/// that stay stable while tasks are added (a2a-spec.md §3.7).
pub async fn list_filters_and_pages(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    // t-0..t-9: timestamps 100, 100, 200, 200, ... ; contexts alternate.
    for i in 0..10i64 {
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        create(&*log, &auth, &format!("t-{i}"), ctx, 100 * (i / 2 + 1)).await;
    }
    for i in [1, 4] {
        let req = AppendRequest::new(
            &auth,
            format!("t-{i}"),
            1,
            1,
            vec![status(TaskState::Working, 50)],
        );
        log.append(req).await.unwrap();
    }
    create(&*log, &authority(), "elsewhere", "even", 999).await;

    let ids =
        |p: &crate::ListPage| -> Vec<String> { p.tasks.iter().map(|t| t.id.clone()).collect() };
    let all = log
        .list(
            &auth,
            &ListQuery {
                page_size: 100,
                ..ListQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.total, 10);
    assert_eq!(all.next, None);
    assert_eq!(
        ids(&all),
        [
            "t-8", "t-9", "t-6", "t-7", "t-5", "t-2", "t-3", "t-0", "t-1", "t-4"
        ]
    );

    let q = ListQuery {
        context_id: Some("even".into()),
        page_size: 100,
        ..ListQuery::default()
    };
    assert_eq!(
        ids(&log.list(&auth, &q).await.unwrap()),
        ["t-8", "t-6", "t-2", "t-0", "t-4"]
    );
    let q = ListQuery {
        state: Some(TaskState::Working),
        page_size: 100,
        ..ListQuery::default()
    };
    let page = log.list(&auth, &q).await.unwrap();
    assert_eq!(
        (ids(&page), page.total),
        (vec!["t-1".to_owned(), "t-4".to_owned()], 2)
    );
    let q = ListQuery {
        status_after: Some(Timestamp::from_unix_millis(400)),
        page_size: 100,
        ..ListQuery::default()
    };
    assert_eq!(
        ids(&log.list(&auth, &q).await.unwrap()),
        ["t-8", "t-9", "t-6", "t-7"]
    );

    // Pages of 3, through opaque tokens; a task added meanwhile before the
    // cursor does not shift later pages.
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let q = ListQuery {
            page_size: 3,
            after: after.clone(),
            ..ListQuery::default()
        };
        let page = log.list(&auth, &q).await.unwrap();
        assert_eq!(page.total, 10 + usize::from(pages > 0));
        seen.extend(ids(&page));
        pages += 1;
        if pages == 1 {
            create(&*log, &auth, "t-new", "even", 10_000).await;
        }
        match page.next {
            Some(c) => {
                let token = c.to_token();
                after = Some(PageCursor::from_token(&token).unwrap());
            }
            None => break,
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(seen, ids(&all));
    // page_size 0 is treated as 1.
    let one = log.list(&auth, &ListQuery::default()).await.unwrap();
    assert_eq!(ids(&one), ["t-new"]);
    assert!(one.next.is_some());
}

/// Running and rested (terminal, interrupted) tasks interleave in one order,
/// whatever a backend keeps them in, across pages and under every filter.
pub async fn list_mixes_running_and_rested(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    // r-0..r-11 at 100, 200, ...; every third stays running, the others come
    // to rest (completed, failed, input-required) at their own timestamp.
    let mut expected = Vec::new();
    for i in 0..12i64 {
        let id = format!("r-{i}");
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        create(&*log, &auth, &id, ctx, 100 * (i + 1)).await;
        let rest = match i % 3 {
            0 => None,
            1 => Some(TaskState::Completed),
            _ if i % 4 == 2 => Some(TaskState::InputRequired),
            _ => Some(TaskState::Failed),
        };
        let ms = 100 * (i + 1) + 50;
        let state = rest.unwrap_or(TaskState::Working);
        log.append(AppendRequest::new(
            &auth,
            &id,
            1,
            1,
            vec![status(state, ms)],
        ))
        .await
        .unwrap();
        expected.push((ms, id, ctx, state));
    }
    expected.sort_by_key(|e| std::cmp::Reverse(e.0));
    let ids =
        |p: &crate::ListPage| -> Vec<String> { p.tasks.iter().map(|t| t.id.clone()).collect() };
    let walk = |query: ListQuery| {
        let log = log.clone();
        let auth = auth.clone();
        async move {
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let q = ListQuery {
                    page_size: 5,
                    after,
                    ..query.clone()
                };
                let page = log.list(&auth, &q).await.unwrap();
                seen.extend(ids(&page));
                match page.next {
                    Some(c) => after = Some(c),
                    None => return (seen, page.total),
                }
            }
        }
    };
    type Entry<'a> = (i64, String, &'a str, TaskState);
    let want = |f: &dyn Fn(&Entry<'_>) -> bool| -> Vec<String> {
        expected
            .iter()
            .filter(|e| f(e))
            .map(|e| e.1.clone())
            .collect()
    };
    let all = want(&|_| true);
    assert_eq!(walk(ListQuery::default()).await, (all.clone(), 12));
    let odd = want(&|e| e.2 == "odd");
    let q = ListQuery {
        context_id: Some("odd".into()),
        ..ListQuery::default()
    };
    assert_eq!(walk(q).await, (odd.clone(), odd.len()));
    for state in [
        TaskState::Working,
        TaskState::Completed,
        TaskState::InputRequired,
    ] {
        let q = ListQuery {
            state: Some(state),
            ..ListQuery::default()
        };
        let of_state = want(&|e| e.3 == state);
        assert_eq!(
            walk(q).await,
            (of_state.clone(), of_state.len()),
            "{state:?}"
        );
    }
    let q = ListQuery {
        status_after: Some(Timestamp::from_unix_millis(650)),
        ..ListQuery::default()
    };
    let recent = want(&|e| e.0 >= 650);
    assert_eq!(walk(q).await, (recent.clone(), recent.len()));
}

/// Another authority's task is indistinguishable from a missing one.
pub async fn authority_isolation(log: Arc<dyn TaskBackend>) {
    let (mine, theirs) = (authority(), authority());
    let t = uid("t");
    create(&*log, &mine, &t, "c", 1).await;
    assert_eq!(
        kind(log.snapshot(&theirs, &t).await),
        LogErrorKind::NotFound
    );
    assert_eq!(kind(log.read(&theirs, &t, 0).await), LogErrorKind::NotFound);
    assert_eq!(
        kind(log.watch(&theirs, &t, None).await),
        LogErrorKind::NotFound
    );
    let req = AppendRequest::new(&theirs, &t, 1, 5, vec![status(TaskState::Canceled, 2)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::NotFound);
    let page = log
        .list(
            &theirs,
            &ListQuery {
                page_size: 10,
                ..ListQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((page.tasks.len(), page.total), (0, 0));
    let snap = log.snapshot(&mine, &t).await.unwrap();
    assert_eq!(
        (snap.seq, snap.epoch, snap.state()),
        (1, 1, TaskState::Submitted)
    );
    assert_eq!(
        kind(log.snapshot(&mine, &uid("missing")).await),
        LogErrorKind::NotFound
    );
}

async fn next(s: &mut crate::RecordStream) -> Option<Sequenced> {
    tokio::time::timeout(GUARD, s.next())
        .await
        .expect("watch delivered nothing within the guard")
        .map(|r| r.unwrap())
}

/// A watch sees every record committed after it was opened, in order, with
/// no gap and no duplicate, then ends after the terminal record.
pub async fn watch_without_gaps(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    create(&*log, &auth, &t, "c", 1).await;
    let w = log.watch(&auth, &t, None).await.unwrap();
    assert_eq!(w.snapshot.seq, 1);
    let mut records = w.records;
    // A second watch from the start replays, then goes live.
    let mut from_start = log.watch(&auth, &t, Some(0)).await.unwrap().records;
    let writer = {
        let (log, auth, t) = (log.clone(), auth.clone(), t.clone());
        tokio::spawn(async move {
            let mut seq = 1;
            for i in 0..40 {
                let msg = Message::user(format!("m{i}"), "x");
                let req = AppendRequest::new(
                    &auth,
                    &t,
                    seq,
                    1,
                    vec![Record::MessageAdmitted { message: msg }],
                );
                seq = log.append(req).await.unwrap().seq;
            }
            let req = AppendRequest::new(&auth, &t, seq, 1, vec![status(TaskState::Completed, 9)]);
            log.append(req).await.unwrap().seq
        })
    };
    let mut got = Vec::new();
    while let Some(r) = next(&mut records).await {
        got.push(r.seq);
    }
    assert_eq!(got, (2..=42).collect::<Vec<u64>>());
    let last = writer.await.unwrap();
    assert_eq!(last, 42);
    let mut all = Vec::new();
    while let Some(r) = next(&mut from_start).await {
        all.push(r.seq);
    }
    assert_eq!(all, (1..=42).collect::<Vec<u64>>());

    // Watching a terminal task: snapshot, then the stream ends at once.
    let w = log.watch(&auth, &t, None).await.unwrap();
    assert_eq!(
        (w.snapshot.seq, w.snapshot.state()),
        (42, TaskState::Completed)
    );
    let mut records = w.records;
    assert!(next(&mut records).await.is_none());
    assert_eq!(
        kind(log.watch(&auth, &uid("missing"), None).await),
        LogErrorKind::NotFound
    );
}

/// Many watchers of many tasks all see their own records.
pub async fn watch_many(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let mut handles = Vec::new();
    for i in 0..8 {
        let t = format!("w-{i}");
        create(&*log, &auth, &t, "c", 1).await;
        let mut records = log.watch(&auth, &t, None).await.unwrap().records;
        handles.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(r) = next(&mut records).await {
                got.push(r.seq);
            }
            got
        }));
    }
    for i in 0..8 {
        let t = format!("w-{i}");
        let req = AppendRequest::new(&auth, &t, 1, 1, vec![status(TaskState::Working, 2)]);
        log.append(req).await.unwrap();
        let req = AppendRequest::new(&auth, &t, 2, 1, vec![status(TaskState::Failed, 3)]);
        log.append(req).await.unwrap();
    }
    for h in handles {
        assert_eq!(h.await.unwrap(), [2, 3]);
    }
}

/// Recovery: live tasks are listed (not terminal, not waiting for input),
/// and closing one with a newer epoch succeeds exactly once under a race.
pub async fn recovery(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    for (t, state) in [
        ("r-submitted", None),
        ("r-working", Some(TaskState::Working)),
        ("r-input", Some(TaskState::InputRequired)),
        ("r-auth", Some(TaskState::AuthRequired)),
        ("r-done", Some(TaskState::Completed)),
        ("r-working-2", Some(TaskState::Working)),
    ] {
        create(&*log, &auth, t, "c", 1).await;
        if let Some(s) = state {
            let req = AppendRequest::new(&auth, t, 1, 1, vec![status(s, 2)]);
            log.append(req).await.unwrap();
        }
    }
    let live = live_of(&*log, &auth, 2).await;
    let ids: Vec<&str> = live.iter().map(|l| l.task_id.as_str()).collect();
    assert_eq!(ids, ["r-submitted", "r-working", "r-working-2"]);
    let w = live.iter().find(|l| l.task_id == "r-working").unwrap();
    assert_eq!(
        (w.seq, w.epoch, w.state, w.context_id.as_str()),
        (2, 1, TaskState::Working, "c")
    );

    // Two hosts race to close every live task: exactly one wins each.
    let mut races = Vec::new();
    for task in live.clone() {
        for _ in 0..2 {
            let (log, task) = (log.clone(), task.clone());
            races.push(tokio::spawn(async move {
                let msg = Message::agent(uuid::Uuid::new_v4().to_string(), "server restarted");
                crate::fail_live(&log, &task, msg)
                    .await
                    .unwrap()
                    .map(|a| (task.task_id.clone(), a))
            }));
        }
    }
    let mut closed: Vec<String> = Vec::new();
    for r in races {
        if let Some((t, appended)) = r.await.unwrap() {
            assert_eq!(appended.snapshot.state(), TaskState::Failed);
            closed.push(t);
        }
    }
    closed.sort();
    assert_eq!(closed, ["r-submitted", "r-working", "r-working-2"]);
    for task in &live {
        let snap = log.snapshot(&auth, &task.task_id).await.unwrap();
        assert_eq!(snap.state(), TaskState::Failed);
        assert_eq!(snap.epoch, task.epoch + 1);
        assert_eq!(snap.seq, task.seq + 1);
        let text = snap.task.status.message.as_ref().unwrap().text();
        assert_eq!(text, "server restarted");
        // The old writer is fenced.
        let req = AppendRequest::new(
            &auth,
            &task.task_id,
            snap.seq,
            task.epoch,
            vec![status(TaskState::Working, 9)],
        );
        assert_eq!(kind(log.append(req).await), LogErrorKind::Fenced);
        // A late recovery call is a no-op.
        assert!(
            crate::fail_live(&log, task, Message::agent("x", "late"))
                .await
                .unwrap()
                .is_none()
        );
    }
    assert!(live_of(&*log, &auth, 2).await.is_empty());
    // Interrupted tasks were left alone.
    let snap = log.snapshot(&auth, "r-input").await.unwrap();
    assert_eq!((snap.seq, snap.state()), (2, TaskState::InputRequired));
}

/// Each live task names the host of its latest execution
/// (`Record::ExecutionStarted`); tasks without one have none.
pub async fn live_hosts(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let started = |host: &str| Record::ExecutionStarted { host: host.into() };
    let admitted = || Record::MessageAdmitted {
        message: Message::user(uid("m"), "x"),
    };
    let create_with = |t: &str, extra: Vec<Record>| {
        let mut records = vec![created_at(t, "c", 1)];
        records.extend(extra);
        AppendRequest::create(&auth, t, records)
    };
    log.append(create_with("h-a", vec![admitted(), started("host-a")]))
        .await
        .unwrap();
    log.append(create_with("h-none", vec![admitted()]))
        .await
        .unwrap();
    // A continuation on another host moves the task to that host.
    let out = log
        .append(create_with(
            "h-moved",
            vec![
                admitted(),
                started("host-a"),
                status(TaskState::InputRequired, 2),
            ],
        ))
        .await
        .unwrap();
    assert!(
        live_of(&*log, &auth, 10)
            .await
            .iter()
            .all(|l| l.task_id != "h-moved")
    );
    let req = AppendRequest::new(
        &auth,
        "h-moved",
        out.seq,
        2,
        vec![admitted(), started("host-b"), status(TaskState::Working, 3)],
    );
    log.append(req).await.unwrap();
    // A later record without a host keeps it.
    let snap = log.snapshot(&auth, "h-moved").await.unwrap();
    let req = AppendRequest::new(
        &auth,
        "h-moved",
        snap.seq,
        2,
        vec![status(TaskState::Working, 4)],
    );
    log.append(req).await.unwrap();
    let live = live_of(&*log, &auth, 1).await;
    let hosts: Vec<(&str, Option<&str>)> = live
        .iter()
        .map(|l| (l.task_id.as_str(), l.host.as_deref()))
        .collect();
    assert_eq!(
        hosts,
        [
            ("h-a", Some("host-a")),
            ("h-moved", Some("host-b")),
            ("h-none", None)
        ]
    );
    // The host is not part of the wire task.
    let snap = log.snapshot(&auth, "h-a").await.unwrap();
    assert!(snap.task.metadata.is_none());
    assert_eq!(snap.projection.host(), Some("host-a"));
}

/// The live tasks of `auth`, paging `page` at a time through every authority.
pub(crate) async fn live_of(log: &dyn TaskBackend, auth: &str, page: usize) -> Vec<LiveTask> {
    let mut out = Vec::new();
    let mut after: Option<(String, String)> = None;
    loop {
        let key = after.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
        let batch = log.live_tasks(key, page).await.unwrap();
        assert!(batch.len() <= page);
        let Some(last) = batch.last() else { break };
        after = Some((last.authority.clone(), last.task_id.clone()));
        out.extend(batch.into_iter().filter(|l| l.authority == auth));
    }
    out
}

/// Batches are atomic; nothing follows a terminal status; `Created` comes first.
pub async fn invalid_batches_write_nothing(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t0 = uid("t");
    let no_created = AppendRequest::create(&auth, &t0, vec![status(TaskState::Working, 1)]);
    assert_eq!(kind(log.append(no_created).await), LogErrorKind::Invalid);
    assert_eq!(kind(log.snapshot(&auth, &t0).await), LogErrorKind::NotFound);
    let t1 = uid("t");
    create(&*log, &auth, &t1, "c", 1).await;
    let bad = AppendRequest::new(
        &auth,
        &t1,
        1,
        1,
        vec![
            status(TaskState::Completed, 2),
            status(TaskState::Working, 3),
        ],
    );
    assert_eq!(kind(log.append(bad).await), LogErrorKind::Invalid);
    assert_eq!(log.snapshot(&auth, &t1).await.unwrap().seq, 1, "atomic");
    let end = AppendRequest::new(&auth, &t1, 1, 1, vec![status(TaskState::Failed, 4)]);
    log.append(end).await.unwrap();
    let after = AppendRequest::new(&auth, &t1, 2, 1, vec![text_chunk("x", "1", false)]);
    assert_eq!(kind(log.append(after).await), LogErrorKind::Invalid);
}

/// The snapshot is the projection of the records: reading them back and
/// replaying them gives the same task, and `read` starts after its argument.
pub async fn snapshot_is_the_projection(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let t = uid("t");
    create(&*log, &auth, &t, "c", 1).await;
    let more = vec![
        Record::MessageAdmitted {
            message: Message::user("m-1", "hi"),
        },
        status(TaskState::Working, 2),
        text_chunk("x", "1", false),
        text_chunk("x", "2", true),
        Record::status(TaskStatus {
            state: TaskState::InputRequired,
            message: Some(Message::agent("q", "?")),
            timestamp: Some(Timestamp::from_unix_millis(3)),
        }),
    ];
    log.append(AppendRequest::new(&auth, &t, 1, 1, more))
        .await
        .unwrap();
    let snap = log.snapshot(&auth, &t).await.unwrap();
    let records: Vec<Sequenced> = log.read(&auth, &t, 0).await.unwrap();
    assert_eq!(
        records.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let replayed = crate::Projection::replay(records.iter().map(|r| &*r.record)).unwrap();
    assert_eq!(replayed.task(), &snap.task);
    assert_eq!(snap.task.artifacts[0].parts.len(), 2);
    assert_eq!(log.read(&auth, &t, 4).await.unwrap().len(), 2);
    assert!(log.read(&auth, &t, 6).await.unwrap().is_empty());
}

fn text_chunk(id: &str, text: &str, append: bool) -> Record {
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

/// Instantiates every case of the [suite](crate::suite) as a
/// `#[tokio::test(flavor = "multi_thread", worker_threads = 2)]` named after
/// the case, driven by `$run`: an `async fn run<F, Fut>(case: F)` (with
/// `F: FnOnce(Arc<dyn TaskBackend>) -> Fut`) that builds a log, runs
/// `case(log).await`, and cleans up. Expanded in a test crate with `tokio`
/// (features `macros`, `rt-multi-thread`).
#[macro_export]
#[cfg_attr(docsrs, doc(cfg(feature = "suite")))]
macro_rules! log_suite {
    ($run:path) => {
        $crate::log_suite!(@cases $run;
            append_rules, cas_race_has_one_winner, concurrent_tasks, epochs_fence, projection,
            list_filters_and_pages, list_mixes_running_and_rested, authority_isolation, watch_without_gaps, watch_many, recovery, live_hosts,
            invalid_batches_write_nothing, snapshot_is_the_projection, append_all_commits_together,
            append_all_refusal_writes_nothing, append_all_same_task_twice_or_none,
            append_all_race_one_winner_no_deadlock, deliveries_cursors_follow_the_configs,
            deliveries_advance_is_conditional, deliveries_pending_pages,
            deliveries_lease_is_exclusive_and_expires, deliveries_cleanup_after_the_end,
            streams_are_no_tasks);
    };
    (@cases $run:path; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                $run($crate::suite::$case).await;
            }
        )*
    };
}
