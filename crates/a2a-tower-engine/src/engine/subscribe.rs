//! Fan-out: turns a task-log watch into the event stream of one subscriber.
//!
//! Subscribers never receive pushed events: each is a cursor over the
//! committed log and reads it at its own pace (the logs' watches read page by
//! page), so the producer (the execution) only appends and never waits for
//! anyone, one subscriber cannot slow another or another task, and a reader
//! far behind holds about a page of records. Only a lag limit the host set
//! (`TaskLayer::subscriber_buffer`) cuts a reader: one that falls more than
//! that many records behind the task's head gets an `Unavailable` error
//! event and the stream ends; it can resubscribe. Dropping a stream drops
//! its watch.

use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt as _;

use crate::log::{
    LogError, LogErrorKind, Projection, Record, RecordStream, Sequenced, TaskLog, Watch,
};
use crate::types::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use crate::{A2aError, ErrorKind, EventStream, LastEventId};

/// How a stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// With the watch's snapshot (SubscribeToTask).
    Snapshot,
    /// With the execution's first emission: a lone Message if it is a reply,
    /// else the Task including it (SendStreamingMessage).
    FirstEmission,
    /// With the events after the watch's cursor (SubscribeToTask with
    /// `Last-Event-ID`): a resumed stream.
    Resume,
}

/// The error a subscriber is cut off with.
pub(crate) fn overflow_error() -> A2aError {
    A2aError::new(ErrorKind::Unavailable)
        .with_message("The subscriber fell behind and was disconnected; resubscribe to continue")
}

/// The records of a watch (after `from`) until `stop` completes; then the
/// records the log holds after the last one delivered, read once (the watch
/// is kept meanwhile, so the log cannot compact the task under the read).
/// A stream cut short when its execution is fenced thus still ends with what
/// the new writer committed up to then (after a restart, the FAILED status),
/// whether or not the watch had been woken for it yet. When the log no
/// longer holds the records after the last one delivered (the memory log's
/// window of a live task's records; the watch keeps a terminal task from
/// being compacted), the read's `Compacted` error is passed on: the event
/// stream then continues from the task's snapshot, never ends early.
pub(crate) fn until_then_catch_up(
    records: RecordStream,
    stop: impl Future<Output = ()> + Send + 'static,
    log: Arc<dyn TaskLog>,
    authority: String,
    task_id: String,
    from: u64,
) -> RecordStream {
    let state = CatchUp {
        records,
        stop: Box::pin(stop),
        log,
        authority,
        task_id,
        last: from,
        stopped: false,
        rest: None,
    };
    Box::pin(futures_util::stream::unfold(state, CatchUp::next))
}

struct CatchUp {
    records: RecordStream,
    stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    log: Arc<dyn TaskLog>,
    authority: String,
    task_id: String,
    /// The last sequence number delivered.
    last: u64,
    stopped: bool,
    /// After `stop`: the records read, to deliver.
    rest: Option<std::vec::IntoIter<Result<Sequenced, LogError>>>,
}

impl CatchUp {
    async fn next(mut self) -> Option<(Result<Sequenced, LogError>, Self)> {
        if let Some(rest) = &mut self.rest {
            return rest.next().map(|r| (r, self));
        }
        if !self.stopped {
            tokio::select! {
                biased;
                () = &mut self.stop => self.stopped = true,
                item = self.records.next() => {
                    if let Some(Ok(r)) = &item {
                        self.last = r.seq;
                    }
                    return item.map(|r| (r, self));
                }
            }
        }
        let read = self
            .log
            .read(&self.authority, &self.task_id, self.last)
            .await;
        let rest = match read {
            Ok(records) => records.into_iter().map(Ok).collect(),
            Err(e) => vec![Err(e)],
        };
        let mut rest = rest.into_iter();
        let first = rest.next();
        self.rest = Some(rest);
        first.map(|r| (r, self))
    }
}

/// Where a stream re-reads the task when the log no longer holds the records
/// after its cursor (the memory log's window): a fresh watch, whose snapshot
/// is sent before the records after it.
pub(crate) struct Reopen {
    pub(crate) log: Arc<dyn TaskLog>,
    pub(crate) authority: String,
    pub(crate) task_id: String,
}

/// The event stream of one subscriber. Every event carries the sequence
/// number of the record it shows as its [`LastEventId`]: the snapshot's
/// for a snapshot, the record's for an update.
pub(crate) fn event_stream(
    watch: Watch,
    start: Start,
    buffer: Option<usize>,
    reopen: Option<Reopen>,
) -> EventStream {
    let Watch { snapshot, records } = watch;
    let mut state = Feed {
        task_id: snapshot.task.id.clone(),
        context_id: snapshot.task.context_id.clone(),
        records,
        buffer: buffer.map_or(u64::MAX, |b| u64::try_from(b.max(1)).unwrap_or(u64::MAX)),
        pending: None,
        projection: None,
        done: false,
        reopen,
        _open: Open::new(),
    };
    match start {
        Start::Snapshot => {
            state.pending = Some((StreamResponse::Task((*snapshot.task).clone()), snapshot.seq));
        }
        Start::FirstEmission => state.projection = Some(snapshot.projection),
        Start::Resume => {}
    }
    EventStream::with_ids(futures_util::stream::unfold(state, Feed::next))
}

struct Feed {
    task_id: String,
    context_id: String,
    records: RecordStream,
    buffer: u64,
    /// An event (and its sequence number) to send before reading on.
    pending: Option<(StreamResponse, u64)>,
    /// Until the first emission (FirstEmission streams): the task so far.
    projection: Option<Projection>,
    done: bool,
    reopen: Option<Reopen>,
    /// Counts the stream in the active-subscribers gauge while it lives.
    _open: Open,
}

/// One open subscriber in [`ACTIVE_SUBSCRIBERS`](a2a_tower_core::telemetry::names::ACTIVE_SUBSCRIBERS),
/// from its creation until it is dropped (ended, cut or disconnected).
struct Open;

impl Open {
    fn new() -> Self {
        a2a_tower_core::telemetry::active_subscribers(1.0);
        Self
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        a2a_tower_core::telemetry::active_subscribers(-1.0);
    }
}

type Item = Result<(StreamResponse, LastEventId), A2aError>;

fn ends(record: &Record) -> bool {
    record
        .state()
        .is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

impl Feed {
    async fn next(mut self) -> Option<(Item, Self)> {
        if let Some((ev, seq)) = self.pending.take() {
            return Some((Ok((ev, LastEventId::from_seq(seq))), self));
        }
        loop {
            if self.done {
                return None;
            }
            let seq = match self.records.next().await {
                None => return None,
                Some(Err(e)) if e.kind() == LogErrorKind::Compacted && self.reopen.is_some() => {
                    // Behind the log's window: the snapshot, then on.
                    let r = self.reopen.as_ref()?;
                    match r.log.watch(&r.authority, &r.task_id, None).await {
                        Ok(Watch { snapshot, records }) => {
                            self.records = records;
                            self.projection = None;
                            let task = StreamResponse::Task((*snapshot.task).clone());
                            self.done =
                                snapshot.state().is_terminal() || snapshot.state().is_interrupted();
                            let id = LastEventId::from_seq(snapshot.seq);
                            return Some((Ok((task, id)), self));
                        }
                        Err(e) => {
                            self.done = true;
                            return Some((Err(e.into()), self));
                        }
                    }
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some((Err(e.into()), self));
                }
                Some(Ok(seq)) => seq,
            };
            if seq.head.saturating_sub(seq.seq) >= self.buffer {
                self.done = true;
                return Some((Err(overflow_error()), self));
            }
            let record = &*seq.record;
            let id = LastEventId::from_seq(seq.seq);
            self.done = ends(record);
            if let Some(p) = self.projection.as_mut() {
                // Not started yet: the first emission decides the shape.
                match record {
                    Record::Replied { message, .. } => {
                        self.done = true;
                        let reply = StreamResponse::Message(message.clone());
                        return Some((Ok((reply, id)), self));
                    }
                    Record::StatusChanged { .. } | Record::ArtifactChunk { .. } => {
                        p.apply(record);
                        let task = StreamResponse::Task((**p.task()).clone());
                        self.projection = None;
                        return Some((Ok((task, id)), self));
                    }
                    _ => {
                        p.apply(record);
                        continue;
                    }
                }
            }
            if let Some(ev) = record_event(&self.task_id, &self.context_id, record) {
                return Some((Ok((ev, id)), self));
            }
        }
    }
}

/// The event a record streams as, if any: what SubscribeToTask sends and
/// push notifications deliver. A status change or reply is a status update,
/// an artifact chunk an artifact update, and the task's creation the task as
/// created (push notifications deliver it; streams start from a snapshot
/// instead, so they never meet it).
pub(crate) fn record_event(
    task_id: &str,
    context_id: &str,
    record: &Record,
) -> Option<StreamResponse> {
    let (task_id, context_id) = (task_id.to_owned(), context_id.to_owned());
    Some(match record {
        Record::Created { .. } => {
            let created = Projection::replay([record]).ok()?;
            StreamResponse::Task((**created.task()).clone())
        }
        Record::StatusChanged { status } => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id,
            context_id,
            status: status.clone(),
            metadata: None,
        }),
        Record::Replied { message, at } => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id,
            context_id,
            status: crate::types::TaskStatus {
                state: crate::types::TaskState::Completed,
                message: Some(message.clone()),
                timestamp: Some(*at),
            },
            metadata: None,
        }),
        Record::ArtifactChunk {
            artifact,
            append,
            last_chunk,
        } => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id,
            context_id,
            artifact: artifact.clone(),
            append: *append,
            last_chunk: *last_chunk,
            metadata: None,
        }),
        _ => return None,
    })
}
