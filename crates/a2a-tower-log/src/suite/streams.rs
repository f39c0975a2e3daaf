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
