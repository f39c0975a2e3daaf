//! Fan-out: turns a task-log watch into the event stream of one subscriber.
//!
//! Every subscriber reads the committed log at its own pace through a pump
//! task and a bounded buffer. The producer (the execution) never waits for a
//! subscriber: it only appends to the log. A subscriber whose buffer fills up
//! (it stopped reading) is cut off: its next read yields an error event and
//! the stream ends; it can resubscribe. Other subscribers and tasks are not
//! affected, and the pump stops as soon as the subscriber is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt as _;
use tokio::sync::mpsc;

use crate::log::{Projection, Record, Watch};
use crate::types::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use crate::{A2aError, ErrorKind, EventStream};

/// How a stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// With the watch's snapshot (SubscribeToTask).
    Snapshot,
    /// With the execution's first emission: a lone Message if it is a reply,
    /// else the Task including it (SendStreamingMessage).
    FirstEmission,
}

/// The error a subscriber is cut off with.
pub(crate) fn overflow_error() -> A2aError {
    A2aError::new(ErrorKind::Unavailable)
        .with_message("The subscriber fell behind and was disconnected; resubscribe to continue")
}

/// The event stream of one subscriber.
pub(crate) fn event_stream(watch: Watch, start: Start, buffer: usize) -> EventStream {
    let (tx, rx) = mpsc::channel(buffer.max(1));
    let overflowed = Arc::new(AtomicBool::new(false));
    tokio::spawn(pump(watch, start, tx, overflowed.clone()));
    let stream = futures_util::stream::unfold(Some(rx), move |rx| {
        let overflowed = overflowed.clone();
        async move {
            let mut rx = rx?;
            if overflowed.load(Ordering::Acquire) {
                return Some((Err(overflow_error()), None));
            }
            match rx.recv().await {
                Some(item) => {
                    let end = item.is_err();
                    Some((item, (!end).then_some(rx)))
                }
                None if overflowed.load(Ordering::Acquire) => Some((Err(overflow_error()), None)),
                None => None,
            }
        }
    });
    EventStream::new(stream)
}

type Item = Result<StreamResponse, A2aError>;

/// `false` when the subscriber is gone or cut off.
fn send(tx: &mpsc::Sender<Item>, item: Item, overflowed: &AtomicBool) -> bool {
    match tx.try_send(item) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            overflowed.store(true, Ordering::Release);
            false
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

fn ends(record: &Record) -> bool {
    record
        .state()
        .is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

async fn pump(watch: Watch, start: Start, tx: mpsc::Sender<Item>, overflowed: Arc<AtomicBool>) {
    let Watch {
        snapshot,
        mut records,
    } = watch;
    let task_id = snapshot.task.id.clone();
    let context_id = snapshot.task.context_id.clone();
    let mut projection: Option<Projection> = None;
    if start == Start::Snapshot {
        let first = StreamResponse::Task((*snapshot.task).clone());
        if !send(&tx, Ok(first), &overflowed) {
            return;
        }
    } else {
        projection = Some(snapshot.projection);
    }
    loop {
        let next = tokio::select! {
            next = records.next() => next,
            () = tx.closed() => return,
        };
        let seq = match next {
            None => return,
            Some(Err(e)) => {
                send(&tx, Err(e.into()), &overflowed);
                return;
            }
            Some(Ok(seq)) => seq,
        };
        let record = &*seq.record;
        if let Some(p) = projection.as_mut() {
            // Not started yet: the first emission decides the stream's shape.
            match record {
                Record::Replied { message, .. } => {
                    send(
                        &tx,
                        Ok(StreamResponse::Message(message.clone())),
                        &overflowed,
                    );
                    return;
                }
                Record::StatusChanged { .. } | Record::ArtifactChunk { .. } => {
                    p.apply(record);
                    let task = StreamResponse::Task((**p.task()).clone());
                    if !send(&tx, Ok(task), &overflowed) || ends(record) {
                        return;
                    }
                    projection = None;
                }
                _ => p.apply(record),
            }
            continue;
        }
        let event = match record {
            Record::StatusChanged { status } => {
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task_id.clone(),
                    context_id: context_id.clone(),
                    status: status.clone(),
                    metadata: None,
                })
            }
            Record::Replied { message, at } => {
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task_id.clone(),
                    context_id: context_id.clone(),
                    status: crate::types::TaskStatus {
                        state: crate::types::TaskState::Completed,
                        message: Some(message.clone()),
                        timestamp: Some(*at),
                    },
                    metadata: None,
                })
            }
            Record::ArtifactChunk {
                artifact,
                append,
                last_chunk,
            } => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: task_id.clone(),
                context_id: context_id.clone(),
                artifact: artifact.clone(),
                append: *append,
                last_chunk: *last_chunk,
                metadata: None,
            }),
            _ => continue,
        };
        if !send(&tx, Ok(event), &overflowed) || ends(record) {
            return;
        }
    }
}
