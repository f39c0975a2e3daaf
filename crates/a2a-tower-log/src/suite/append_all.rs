//! The conformance cases of `TaskLog::append_all`: several tasks committed
//! as one, all or nothing, without deadlock between concurrent calls.

use std::sync::Arc;
use std::time::Duration;

use crate::types::TaskState;
use crate::{AppendRequest, LogErrorKind, Record, RecordStream, TaskBackend, TaskLog};
use futures_util::StreamExt;

use super::{GUARD, authority, create, kind, msg, next, status, uid};

/// How long a watch is given to show a record that must not exist (a
/// refused commit): only a too-short wait could hide a failure.
const QUIET: Duration = Duration::from_millis(300);

/// Nothing arrives on `s` within [`QUIET`].
async fn quiet(s: &mut RecordStream, what: &str) {
    if let Ok(got) = tokio::time::timeout(QUIET, s.next()).await {
        panic!("{what}: the watch got {got:?} from a refused commit");
    }
}

/// A creation and a continuation (of another authority) commit together,
/// each answered in request order and seen by its own watcher only.
pub async fn append_all_commits_together(log: Arc<dyn TaskBackend>) {
    let (auth, other) = (authority(), authority());
    let (t1, t2) = (uid("t"), uid("t"));
    create(&*log, &other, &t1, "c", 1).await;
    let mut w1 = log.watch(&other, &t1, None).await.unwrap().records;
    let out = log
        .append_all(vec![
            AppendRequest::create(&auth, &t2, vec![Record::created(&t2, "q"), msg(1)]),
            AppendRequest::new(&other, &t1, 1, 1, vec![msg(2)]),
        ])
        .await
        .unwrap();
    assert_eq!(out.iter().map(|a| a.seq).collect::<Vec<_>>(), [2, 2]);
    assert_eq!(out[0].snapshot.task.id, t2);
    assert_eq!(out[1].snapshot.task.id, t1);
    assert_eq!(out[1].snapshot.task.history[0].message_id, "m2");
    let s2 = log.snapshot(&auth, &t2).await.unwrap();
    assert_eq!((s2.seq, s2.task.history.len()), (2, 1));
    assert_eq!(log.read(&other, &t1, 1).await.unwrap().len(), 1);
    assert_eq!(
        kind(log.snapshot(&other, &t2).await),
        LogErrorKind::NotFound
    );
    let got = next(&mut w1).await.unwrap();
    assert_eq!((got.seq, got.record.as_ref()), (2, &msg(2)));

    // Both continued, both watched: each watcher gets its own records.
    let mut w2 = log.watch(&auth, &t2, None).await.unwrap().records;
    let out = log
        .append_all(vec![
            AppendRequest::new(&other, &t1, 2, 1, vec![status(TaskState::Completed, 2)]),
            AppendRequest::new(&auth, &t2, 2, 3, vec![msg(3), msg(4)]),
        ])
        .await
        .unwrap();
    assert_eq!(out.iter().map(|a| a.seq).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(out[1].snapshot.epoch, 3);
    let got = next(&mut w1).await.unwrap();
    assert_eq!((got.seq, got.record.is_terminal()), (3, true));
    assert!(
        next(&mut w1).await.is_none(),
        "ends after the terminal record"
    );
    let seqs = [next(&mut w2).await.unwrap(), next(&mut w2).await.unwrap()];
    assert_eq!(
        seqs.map(|r| (r.seq, (*r.record).clone())),
        [(3, msg(3)), (4, msg(4))]
    );
    let s1 = log.snapshot(&other, &t1).await.unwrap();
    assert_eq!((s1.seq, s1.state()), (3, TaskState::Completed));
}

/// A refused request (stale, fenced, invalid, an existing task created
/// again, a missing task) fails the whole call with its own error, first or
/// last: the other tasks are unchanged, a new one is not created, and their
/// watchers receive nothing. With two refusals, the first one's error wins.
pub async fn append_all_refusal_writes_nothing(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let (ok, bad, new) = (uid("ok"), uid("bad"), uid("new"));
    create(&*log, &auth, &ok, "c", 1).await;
    create(&*log, &auth, &bad, "c", 1).await;
    // `bad` is at sequence number 1, epoch 2.
    log.append(AppendRequest::new(&auth, &bad, 1, 2, vec![]))
        .await
        .unwrap();
    let mut watch = log.watch(&auth, &ok, None).await.unwrap().records;
    let refusals = [
        (
            AppendRequest::new(&auth, &bad, 5, 2, vec![msg(1)]),
            LogErrorKind::Conflict,
        ),
        (
            AppendRequest::new(&auth, &bad, 1, 1, vec![msg(1)]),
            LogErrorKind::Fenced,
        ),
        (
            AppendRequest::new(&auth, &bad, 1, 2, vec![Record::created(&bad, "c")]),
            LogErrorKind::Invalid,
        ),
        (
            AppendRequest::create(&auth, &bad, vec![Record::created(&bad, "c")]),
            LogErrorKind::Conflict,
        ),
        (
            AppendRequest::new(authority(), &bad, 1, 2, vec![msg(1)]),
            LogErrorKind::NotFound,
        ),
    ];
    for (refused, want) in refusals {
        let good = || {
            [
                AppendRequest::new(&auth, &ok, 1, 1, vec![msg(2)]),
                AppendRequest::create(&auth, &new, vec![Record::created(&new, "c")]),
            ]
        };
        let [a, b] = good();
        let first = vec![refused.clone(), a, b];
        let [a, b] = good();
        let last = vec![a, b, refused.clone()];
        for (at, requests) in [("first", first), ("last", last)] {
            let err = log.append_all(requests).await.unwrap_err();
            assert_eq!(err.kind(), want, "{want:?} refused {at}");
            assert_eq!(log.snapshot(&auth, &ok).await.unwrap().seq, 1, "{at}");
            assert!(log.read(&auth, &ok, 1).await.unwrap().is_empty(), "{at}");
            assert_eq!(
                kind(log.snapshot(&auth, &new).await),
                LogErrorKind::NotFound
            );
            let b = log.snapshot(&auth, &bad).await.unwrap();
            assert_eq!((b.seq, b.epoch), (1, 2), "{want:?} refused {at}");
        }
    }
    // Two refusals: the first request's error, whichever it is.
    let stale = AppendRequest::new(&auth, &bad, 7, 2, vec![msg(1)]);
    let fenced = AppendRequest::new(&auth, &ok, 1, 0, vec![msg(1)]);
    let both = vec![stale.clone(), fenced.clone()];
    assert_eq!(kind(log.append_all(both).await), LogErrorKind::Conflict);
    assert_eq!(
        kind(log.append_all(vec![fenced, stale]).await),
        LogErrorKind::Fenced
    );
    quiet(&mut watch, "refused").await;
    // The watch is live: the next commit reaches it.
    log.append_all(vec![AppendRequest::new(&auth, &ok, 1, 1, vec![msg(9)])])
        .await
        .unwrap();
    let got = next(&mut watch).await.unwrap();
    assert_eq!((got.seq, got.record.as_ref()), (2, &msg(9)));
}

/// An append of no record at the task's epoch is a check of its position:
/// beside others it commits with them, changing nothing of its task (no
/// record, its sequence number and epoch kept, nothing to its watchers);
/// once the task has moved on it is refused `Conflict`, and so is the whole
/// call.
pub async fn append_all_checks_a_task_unchanged(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let (t, made, refused) = (uid("t"), uid("made"), uid("refused"));
    create(&*log, &auth, &t, "c", 1).await;
    let mut watch = log.watch(&auth, &t, None).await.unwrap().records;
    let check = |at| AppendRequest::new(&auth, &t, at, 1, vec![]);
    let out = log
        .append_all(vec![
            AppendRequest::create(&auth, &made, vec![Record::created(&made, "c"), msg(1)]),
            check(1),
        ])
        .await
        .unwrap();
    assert_eq!((out[0].seq, out[1].seq), (2, 1));
    let snap = log.snapshot(&auth, &t).await.unwrap();
    assert_eq!((snap.seq, snap.epoch), (1, 1));
    assert_eq!(log.read(&auth, &t, 0).await.unwrap().len(), 1);
    quiet(&mut watch, "checked").await;
    // Moved on: the check at its old position is refused, with its call.
    log.append(AppendRequest::new(&auth, &t, 1, 1, vec![msg(2)]))
        .await
        .unwrap();
    let err = log
        .append_all(vec![
            AppendRequest::create(&auth, &refused, vec![Record::created(&refused, "c")]),
            check(1),
        ])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), LogErrorKind::Conflict);
    assert_eq!(
        kind(log.snapshot(&auth, &refused).await),
        LogErrorKind::NotFound
    );
    // At its new position it holds again.
    assert_eq!(log.append(check(2)).await.unwrap().seq, 2);
    let got = next(&mut watch).await.unwrap();
    assert_eq!((got.seq, got.record.as_ref()), (2, &msg(2)));
    quiet(&mut watch, "checked again").await;
}

/// The same task twice is invalid, and nothing of the call is written;
/// no request at all commits nothing.
pub async fn append_all_same_task_twice_or_none(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let (t, new) = (uid("t"), uid("new"));
    create(&*log, &auth, &t, "c", 1).await;
    let twice = vec![
        AppendRequest::create(&auth, &new, vec![Record::created(&new, "c")]),
        AppendRequest::new(&auth, &t, 1, 1, vec![msg(1)]),
        AppendRequest::new(&auth, &t, 2, 1, vec![msg(2)]),
    ];
    assert_eq!(kind(log.append_all(twice).await), LogErrorKind::Invalid);
    let created_twice = vec![
        AppendRequest::create(&auth, &new, vec![Record::created(&new, "c")]),
        AppendRequest::create(&auth, &new, vec![Record::created(&new, "c")]),
    ];
    assert_eq!(
        kind(log.append_all(created_twice).await),
        LogErrorKind::Invalid
    );
    assert_eq!(log.snapshot(&auth, &t).await.unwrap().seq, 1);
    assert_eq!(
        kind(log.snapshot(&auth, &new).await),
        LogErrorKind::NotFound
    );
    assert!(log.append_all(vec![]).await.unwrap().is_empty());
    assert_eq!(log.snapshot(&auth, &t).await.unwrap().seq, 1);
}

/// Many calls over the same two tasks at the same sequence numbers, in both
/// orders: exactly one wins. Then writers that re-read and retry, in
/// opposite orders, all get through (no deadlock: bounded by the guard).
pub async fn append_all_race_one_winner_no_deadlock(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    let (a, b) = (uid("a"), uid("b"));
    create(&*log, &auth, &a, "c", 1).await;
    create(&*log, &auth, &b, "c", 1).await;
    let pair = |i: u64, (ea, eb): (u64, u64)| {
        let ra = AppendRequest::new(&auth, &a, ea, 1, vec![msg(i)]);
        let rb = AppendRequest::new(&auth, &b, eb, 1, vec![msg(i)]);
        if i.is_multiple_of(2) {
            vec![ra, rb]
        } else {
            vec![rb, ra]
        }
    };
    let mut calls = Vec::new();
    for i in 0..16 {
        let (log, requests) = (log.clone(), pair(i, (1, 1)));
        calls.push(tokio::spawn(async move {
            log.append_all(requests).await.map_err(|e| e.kind())
        }));
    }
    let outcomes = tokio::time::timeout(GUARD, futures_util::future::join_all(calls))
        .await
        .expect("concurrent append_all calls deadlocked");
    let mut wins = 0;
    for outcome in outcomes {
        match outcome.unwrap() {
            Ok(out) => {
                assert_eq!(out.iter().map(|o| o.seq).collect::<Vec<_>>(), [2, 2]);
                wins += 1;
            }
            Err(k) => assert_eq!(k, LogErrorKind::Conflict),
        }
    }
    assert_eq!(wins, 1);

    const WRITERS: u64 = 4;
    const COMMITS: u64 = 5;
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (log, auth, a, b) = (log.clone(), auth.clone(), a.clone(), b.clone());
        writers.push(tokio::spawn(async move {
            let mut done = 0;
            for _attempt in 0..1000 {
                let ea = log.snapshot(&auth, &a).await.unwrap().seq;
                let eb = log.snapshot(&auth, &b).await.unwrap().seq;
                let ra = AppendRequest::new(&auth, &a, ea, 1, vec![msg(w)]);
                let rb = AppendRequest::new(&auth, &b, eb, 1, vec![msg(w)]);
                let requests = if w.is_multiple_of(2) {
                    vec![ra, rb]
                } else {
                    vec![rb, ra]
                };
                match log.append_all(requests).await {
                    Ok(_) => done += 1,
                    Err(e) => assert_eq!(e.kind(), LogErrorKind::Conflict),
                }
                if done == COMMITS {
                    break;
                }
            }
            done
        }));
    }
    let done = tokio::time::timeout(GUARD, futures_util::future::join_all(writers))
        .await
        .expect("append_all writers in opposite orders deadlocked");
    for d in done {
        assert_eq!(d.unwrap(), COMMITS);
    }
    let seq = 2 + WRITERS * COMMITS;
    assert_eq!(log.snapshot(&auth, &a).await.unwrap().seq, seq);
    assert_eq!(log.snapshot(&auth, &b).await.unwrap().seq, seq);
}
