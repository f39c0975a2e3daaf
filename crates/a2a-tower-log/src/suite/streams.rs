//! The conformance case of streams (`stream_id`): a feature's records beside
//! the tasks, appended and read like a task's, never seen as a task.

use std::sync::Arc;

use crate::types::TaskState;
use crate::{AppendRequest, ListQuery, LogErrorKind, Record, TaskBackend, stream_id};

use super::{authority, kind, live_of, msg, status, uid};

/// A stream is created, appended to conditionally (alone and in one commit
/// with a task) and read back under its authority; the task views answer
/// `NotFound` for it, `list` never lists it, and the live scan lists it with
/// its feature, so that recovery can tell it apart without reading it.
pub async fn streams_are_no_tasks(log: Arc<dyn TaskBackend>) {
    let (auth, other) = (authority(), authority());
    let id = stream_id("suite", &uid("s"));
    let created = AppendRequest::create(&*auth, &*id, vec![Record::created(&*id, "c-s")]);
    assert_eq!(log.append(created).await.unwrap().seq, 1);
    // Conditional, like a task's.
    let stale = AppendRequest::create(&*auth, &*id, vec![Record::created(&*id, "c-s")]);
    assert_eq!(kind(log.append(stale).await), LogErrorKind::Conflict);
    // In one commit with a task of the same context.
    let task = uid("t");
    let both = vec![
        AppendRequest::new(&*auth, &*id, 1, 1, vec![msg(1)]),
        AppendRequest::create(&*auth, &*task, vec![Record::created(&*task, "c-s")]),
    ];
    let seqs: Vec<u64> = log
        .append_all(both)
        .await
        .unwrap()
        .iter()
        .map(|a| a.seq)
        .collect();
    assert_eq!(seqs, [2, 1]);

    // Read as records, by its authority only.
    let records = log.read(&auth, &id, 0).await.unwrap();
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(kind(log.read(&other, &id, 0).await), LogErrorKind::NotFound);
    // A cached head, where the log has one, is the last commit's, and only
    // for the stream's authority (a task's alike).
    assert!(matches!(log.cached_head(&auth, &id), None | Some(2)));
    assert!(matches!(log.cached_head(&auth, &task), None | Some(1)));
    assert_eq!(log.cached_head(&other, &id), None);

    // Never a task.
    assert_eq!(kind(log.snapshot(&auth, &id).await), LogErrorKind::NotFound);
    assert_eq!(
        kind(log.watch(&auth, &id, None).await.map(|_| ())),
        LogErrorKind::NotFound
    );
    let page = log.list(&auth, &ListQuery::default()).await.unwrap();
    assert_eq!(
        page.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        [task.as_str()]
    );
    assert_eq!(page.total, 1);
    let in_context = ListQuery {
        context_id: Some("c-s".into()),
        ..ListQuery::default()
    };
    assert_eq!(log.list(&auth, &in_context).await.unwrap().total, 1);

    // The live scan lists it, marked.
    let found = live_of(&*log, &auth, 64).await;
    let streams: Vec<_> = found.iter().filter(|t| t.stream().is_some()).collect();
    assert_eq!(streams.len(), 1, "{found:?}");
    assert_eq!(streams[0].task_id, id);
    assert_eq!(streams[0].stream().map(|(f, _)| f), Some("suite"));
    assert_eq!(streams[0].context_id, "c-s");
    assert_eq!(streams[0].seq, 2);
    assert!(
        found
            .iter()
            .any(|t| t.task_id == task && t.stream().is_none())
    );

    // The task goes on as any task; the stream is untouched by it.
    let done = AppendRequest::new(&*auth, &*task, 1, 1, vec![status(TaskState::Completed, 5)]);
    log.append(done).await.unwrap();
    assert_eq!(log.read(&auth, &id, 0).await.unwrap().len(), 2);
}

/// A feature record of the suite's streams (`{"suite": {"n": n}}`),
/// holding the stream when `hold`.
fn suite_record(n: u64, hold: bool) -> Record {
    let f = crate::FeatureRecord::new("suite", &serde_json::json!({ "n": n })).expect("an object");
    Record::Feature(if hold {
        f.holding(crate::Hold::always("suite"))
    } else {
        f
    })
}

/// A stream compacted before a restating record
/// ([`Retention::compact_stream`](crate::Retention::compact_stream)) keeps
/// its head, its snapshot (it stays live and takes appends at its head) and
/// its sequence numbers; a read from before the restatement starts at it;
/// an append at an old revision is still refused. Nothing is dropped for
/// another authority, a position past the head or one already dropped, and
/// a task is refused. (For backends with retention: not in
/// [`log_suite!`](crate::log_suite), whose cases take a `TaskBackend`.)
pub async fn streams_compact<L: crate::Retention + ?Sized>(log: Arc<L>) {
    let (auth, other) = (authority(), authority());
    let id = stream_id("suite", &uid("s"));
    let first = vec![Record::created(&*id, "c-s"), suite_record(0, true)];
    log.append(AppendRequest::create(&*auth, &*id, first))
        .await
        .unwrap();
    // 70 more, one per append (past the snapshot point of stored logs),
    // then the restatement alone, at 73.
    for n in 1..=70u64 {
        let req = AppendRequest::new(&*auth, &*id, n + 1, 1, vec![suite_record(n, false)]);
        log.append(req).await.unwrap();
    }
    let restated = AppendRequest::new(&*auth, &*id, 72, 1, vec![suite_record(999, true)]);
    assert_eq!(log.append(restated).await.unwrap().seq, 73);

    assert_eq!(log.compact_stream(&other, &id, 73).await.unwrap(), 0);
    assert_eq!(log.compact_stream(&auth, &id, 74).await.unwrap(), 0);
    assert_eq!(log.read(&auth, &id, 0).await.unwrap().len(), 73);
    assert_eq!(log.compact_stream(&auth, &id, 73).await.unwrap(), 72);

    // A read from before the kept range starts at the restatement.
    for after in [0, 1, 40, 72] {
        let read = log.read(&auth, &id, after).await.unwrap();
        assert_eq!(
            read.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [73],
            "after {after}"
        );
        assert_eq!(*read[0].record, suite_record(999, true));
    }
    assert!(log.read(&auth, &id, 73).await.unwrap().is_empty());
    // Again: nothing left to drop.
    assert_eq!(log.compact_stream(&auth, &id, 73).await.unwrap(), 0);
    assert_eq!(log.compact_stream(&auth, &id, 20).await.unwrap(), 0);

    // The head is kept: an append at an old revision is refused, at the
    // head it commits after it.
    for stale in [1, 40, 72] {
        let req = AppendRequest::new(&*auth, &*id, stale, 1, vec![suite_record(1, false)]);
        assert_eq!(kind(log.append(req).await), LogErrorKind::Conflict);
    }
    assert!(matches!(log.cached_head(&auth, &id), None | Some(73)));
    let next = AppendRequest::new(&*auth, &*id, 73, 1, vec![suite_record(74, false)]);
    assert_eq!(log.append(next).await.unwrap().seq, 74);
    let read = log.read(&auth, &id, 0).await.unwrap();
    assert_eq!(read.iter().map(|r| r.seq).collect::<Vec<_>>(), [73, 74]);

    // The snapshot is kept: the stream is still live, held, at its head.
    let found = live_of(&*log, &auth, 64).await;
    let stream: Vec<_> = found.iter().filter(|t| t.task_id == id).collect();
    assert_eq!(stream.len(), 1, "{found:?}");
    assert_eq!((stream[0].seq, stream[0].context_id.as_str()), (74, "c-s"));
    assert_eq!(stream[0].stream().map(|(f, _)| f), Some("suite"));

    // Compacted again at a later restatement.
    let again = AppendRequest::new(&*auth, &*id, 74, 1, vec![suite_record(1000, true)]);
    assert_eq!(log.append(again).await.unwrap().seq, 75);
    assert_eq!(log.compact_stream(&auth, &id, 75).await.unwrap(), 2);
    let read = log.read(&auth, &id, 10).await.unwrap();
    assert_eq!(read.iter().map(|r| r.seq).collect::<Vec<_>>(), [75]);

    // A task is no stream.
    let task = uid("t");
    log.append(AppendRequest::create(
        &*auth,
        &*task,
        vec![Record::created(&*task, "c-s")],
    ))
    .await
    .unwrap();
    let refused = log.compact_stream(&auth, &task, 1).await;
    assert_eq!(kind(refused), LogErrorKind::Invalid);
    assert_eq!(
        log.compact_stream(&auth, &stream_id("suite", "none"), 1)
            .await
            .unwrap(),
        0
    );
}
