//! The conformance cases of the suite: the live-task scan of start-up recovery.

use super::*;

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
