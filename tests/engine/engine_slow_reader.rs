//! A reader is never cut for being slow: a stream whose reader pauses while
//! the agent writes 100,000 chunks still delivers every event, in order, on
//! each of the three logs (the reader continues from the log at its cursor,
//! page by page); the agent never waits for it. On the memory log the agent
//! commits every chunk alone (100,000 records against its window); on SQLite
//! and PostgreSQL, where 100,000 sequential durable commits take minutes, it
//! is a text [`Agent`] whose adapter commits the chunks ready at once (up to
//! 256 an append), as an agent streaming tokens would.

use std::time::Duration;

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentExecutor, AgentInput, Execution, TaskLayer};
use a2a_tower::log::{MemoryTaskLog, SqliteTaskLog, TaskStore};
use a2a_tower::types::{Artifact, Part, StreamResponse, TaskState};
use a2a_tower::{EventStream, Operation};
use futures_util::StreamExt as _;

use crate::support;
use support::engine::{Svc, boxed, card, engine_with, get, send_req, stream, user};
use support::server::TempDir;

fn chunker(chunks: usize) -> support::engine::Inner {
    boxed(move |ex: Execution| async move {
        ex.emit.working().await?;
        for i in 0..chunks {
            let art = Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text(i.to_string())],
                ..Artifact::default()
            };
            ex.emit.artifact(art, i > 0, i + 1 == chunks).await?;
        }
        ex.emit.complete().await?;
        Ok(())
    })
}

/// Opens the stream, reads its first event, pauses until the task has
/// completed (every chunk written while nobody reads), then reads the rest.
async fn pause_then_read_all(svc: Svc, chunks: usize) {
    let mut events: EventStream =
        stream(&svc, Operation::SendStreamingMessage(send_req(user("go"))))
            .await
            .unwrap();
    let Some(Ok(StreamResponse::Task(task))) = events.next().await else {
        panic!("the stream starts with the task")
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        let t = get(&svc, &task.id).await.unwrap();
        if t.status.state == TaskState::Completed {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent never finished"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut next_chunk = 0;
    let mut last = None;
    while let Some(item) = events.next().await {
        match item.unwrap() {
            StreamResponse::ArtifactUpdate(u) => {
                assert_eq!(
                    u.artifact.parts[0].as_text(),
                    Some(next_chunk.to_string().as_str())
                );
                next_chunk += 1;
            }
            StreamResponse::StatusUpdate(u) => last = Some(u.status.state),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(next_chunk, chunks, "every chunk, in order");
    assert_eq!(last, Some(TaskState::Completed), "then the terminal event");
}

fn svc(store: impl Into<TaskStore>, chunks: usize) -> Svc {
    engine_with(TaskLayer::new(card(), store).unwrap(), chunker(chunks))
}

/// The engine over `store` with a [`Counter`] of `chunks` as its agent.
fn counter(store: impl Into<TaskStore>, chunks: usize) -> Svc {
    let agent = AgentExecutor::service(Counter(chunks));
    engine_with(
        TaskLayer::new(card(), store).unwrap(),
        tower::util::BoxCloneSyncService::new(agent),
    )
}

/// A text agent yielding `0`, `1`, … as its chunks, all ready at once.
struct Counter(usize);

impl Agent for Counter {
    fn run(
        &self,
        _: AgentInput,
    ) -> impl futures_core::Stream<Item = Result<String, BoxError>> + Send {
        futures_util::stream::iter((0..self.0).map(|i| Ok(i.to_string())))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_reader_gets_everything_memory() {
    pause_then_read_all(svc(MemoryTaskLog::new(), 100_000), 100_000).await;
}

// The memory log keeps a window of a live task's records: a reader that
// falls behind it gets the task's snapshot (with every chunk so far), then
// the events after it; nothing is lost and the log holds the window only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_reader_behind_the_memory_window_gets_the_snapshot() {
    let log = MemoryTaskLog::builder().window(1_000).build().unwrap();
    let svc = svc(log, 20_000);
    let mut events: EventStream =
        stream(&svc, Operation::SendStreamingMessage(send_req(user("go"))))
            .await
            .unwrap();
    let Some(Ok(StreamResponse::Task(task))) = events.next().await else {
        panic!("the stream starts with the task")
    };
    loop {
        if get(&svc, &task.id).await.unwrap().status.state == TaskState::Completed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut next_chunk = 0;
    let mut snapshot = None;
    while let Some(item) = events.next().await {
        match item.unwrap() {
            StreamResponse::ArtifactUpdate(u) if snapshot.is_none() => {
                assert_eq!(
                    u.artifact.parts[0].as_text(),
                    Some(next_chunk.to_string().as_str())
                );
                next_chunk += 1;
            }
            StreamResponse::Task(t) => snapshot = Some(t),
            other => panic!("after the snapshot of a completed task: {other:?}"),
        }
    }
    let t = snapshot.expect("a reader behind the window gets the snapshot");
    assert!(next_chunk < 20_000, "it fell behind: {next_chunk}");
    assert_eq!(t.status.state, TaskState::Completed);
    // Every chunk, as one text part (appended text chunks continue it).
    let text: String = (0..20_000).map(|i| i.to_string()).collect();
    assert_eq!(t.artifacts[0].parts, [Part::text(text)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_reader_gets_everything_sqlite() {
    let dir = TempDir::new("slow-reader");
    let log = SqliteTaskLog::open(dir.0.join("tasks.db")).unwrap();
    pause_then_read_all(counter(log, 100_000), 100_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_reader_gets_everything_postgres() {
    support::postgres::with_schema(|schema| async move {
        let log = support::postgres::connect(&schema).await;
        pause_then_read_all(counter(log, 100_000), 100_000).await;
    })
    .await;
}
