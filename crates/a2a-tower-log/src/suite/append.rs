//! The conformance cases of the suite: conditional appends: sequence numbers, CAS races, epochs, concurrent tasks, invalid batches.

use super::*;

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
