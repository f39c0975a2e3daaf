//! The conformance cases of the suite: watches: every record after the cursor, live, no gap.

use super::*;

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
