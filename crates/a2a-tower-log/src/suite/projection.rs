//! The conformance cases of the suite: the projection the log keeps of a task's records.

use super::*;

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
        vec![Part::text("hello world")],
        "an appended text chunk continues the text part"
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
    assert_eq!(snap.task.artifacts[0].parts, vec![Part::text("12")]);
    assert_eq!(log.read(&auth, &t, 4).await.unwrap().len(), 2);
    assert!(log.read(&auth, &t, 6).await.unwrap().is_empty());
}
