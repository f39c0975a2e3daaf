//! SubscribeToTask with `Last-Event-ID` on a task that ended meanwhile: the
//! replay is exactly the events after the cursor, ending with the terminal
//! event (on SQLite, which keeps every record); every event carries its id.

use a2a_tower::engine::{Execution, TaskLayer};
use a2a_tower::log::SqliteTaskLog;
use a2a_tower::types::{Artifact, Part, StreamResponse, SubscribeToTaskRequest, TaskState};
use a2a_tower::{A2aRequest, A2aResponse, ErrorKind, LastEventId, Operation};
use tower::ServiceExt as _;

use crate::support;
use support::engine::{boxed, card, engine_with, send_req, stream, user};
use support::server::TempDir;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_after_the_end_replays_up_to_the_terminal_event() {
    let dir = TempDir::new("resume");
    let log = SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap();
    let inner = boxed(|ex: Execution| async move {
        ex.emit.working().await?;
        for i in 0..5 {
            let art = Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text(i.to_string())],
                ..Artifact::default()
            };
            ex.emit.artifact(art, i > 0, i == 4).await?;
        }
        ex.emit.complete().await?;
        Ok(())
    });
    let svc = engine_with(TaskLayer::new(card(), log).unwrap(), inner);
    let mut all = stream(&svc, Operation::SendStreamingMessage(send_req(user("go"))))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(item) = all.next_with_id().await {
        let (event, id) = item.unwrap();
        seen.push((id.expect("every event has an id"), event));
    }
    assert_eq!(seen.len(), 7, "task, 5 chunks, completed");
    let StreamResponse::Task(task) = &seen[0].1 else {
        panic!("starts with the task")
    };
    let subscribe = |last: Option<&LastEventId>| {
        let mut req = A2aRequest::new(Operation::SubscribeToTask(SubscribeToTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }));
        if let Some(id) = last {
            req.context
                .headers
                .insert(LastEventId::HEADER, id.as_str().parse().unwrap());
        }
        svc.clone().oneshot(req)
    };
    for k in [0, 2, 5] {
        let Ok(A2aResponse::Stream(mut replay)) = subscribe(Some(&seen[k].0)).await else {
            panic!("a replay after event {k}")
        };
        let mut got = Vec::new();
        while let Some(item) = replay.next_with_id().await {
            got.push(item.unwrap());
        }
        let want: Vec<_> = seen[k + 1..]
            .iter()
            .map(|(id, e)| (id.clone(), Some(e.clone())))
            .collect();
        let got: Vec<_> = got
            .into_iter()
            .map(|(e, id)| (id.unwrap(), Some(e)))
            .collect();
        assert_eq!(got, want, "exactly the events after event {k}");
    }
    // After the terminal event there is nothing to resume: the
    // specification's answer for a terminal task, as without a cursor.
    let last = &seen[6].0;
    let err = subscribe(Some(last)).await.err().unwrap();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    let err = subscribe(None).await.err().unwrap();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperation);
    // A cursor this agent never sent is refused.
    let bogus = LastEventId::new("not-a-cursor").unwrap();
    let err = subscribe(Some(&bogus)).await.err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidParams);
    let done = matches!(&seen[6].1, StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Completed);
    assert!(done);
}
