//! Group commit of a context's enqueues: the inputs that arrive while the
//! context's queue is busy (its lock held by a commit or a drain pass) wait
//! together and are committed at once, each task with its entry, in one
//! append to the queue stream (`enqueue::commit`).
//! Each input is still answered only once the commit holding it is made;
//! their arrival order is their entries' order in the stream, as if they
//! had been committed one after another with nothing between them.
//! Leading inputs of a batch that the idle context would admit at once
//! (`enqueue::leads_at_once`) are committed one at a time first: a quick
//! run ends in its first commit, so each costs what it costs sent alone.
//!
//! One flusher per context at a time: it takes the lock, takes every
//! waiting input, commits them, answers each, and goes on while inputs
//! wait. It runs in the future of the input that started it (an enqueue
//! alone costs no task to spawn and no wake to hand its answer over) until
//! that input is answered; then, or if that future is dropped first, what
//! is left of it goes on in a task of its own, so a caller that goes away
//! never takes a commit, or the others' answers, with it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Context;

use tokio::sync::oneshot;

use super::core::Core;
use super::enqueue::{Enqueued, Input, commit, leads_at_once};
use super::stream::Slot;
use crate::{A2aError, ErrorKind};

/// The answer an input waits for.
type Answer = Result<Enqueued, A2aError>;

/// An input waiting for its commit, and where its answer goes.
struct Waiting {
    input: Input,
    answer: oneshot::Sender<Answer>,
}

/// The inputs of one context waiting for their enqueue commit.
#[derive(Default)]
pub(crate) struct Pending {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    waiting: Vec<Waiting>,
    /// A flusher runs (and takes whatever waits before it ends).
    flushing: bool,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("waiting", &self.lock().waiting.len())
            .finish_non_exhaustive()
    }
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// No input waits and no flusher runs.
    pub(crate) fn is_empty(&self) -> bool {
        let inner = self.lock();
        inner.waiting.is_empty() && !inner.flushing
    }

    /// The waiting inputs, all of them; `None` (and the flusher ends) when
    /// none waits.
    fn take(&self) -> Option<Vec<Waiting>> {
        let mut inner = self.lock();
        if inner.waiting.is_empty() {
            inner.flushing = false;
            return None;
        }
        Some(std::mem::take(&mut inner.waiting))
    }
}

/// Commits `input` with whatever else waits for `slot`'s queue, and answers
/// once that commit is made (or refused).
pub(crate) async fn submit(core: &Arc<Core>, slot: &Arc<Slot>, input: Input) -> Answer {
    let (answer, answered) = oneshot::channel();
    let start = {
        let mut inner = slot.pending.lock();
        inner.waiting.push(Waiting { input, answer });
        !std::mem::replace(&mut inner.flushing, true)
    };
    let mut flusher = Flusher {
        flush: start.then(|| Box::pin(flush(core.clone(), slot.clone())) as _),
        runtime: start.then(tokio::runtime::Handle::current),
    };
    let mut answered = std::pin::pin!(answered);
    let out = std::future::poll_fn(|cx| {
        flusher.poll(cx);
        answered.as_mut().poll(cx)
    })
    .await;
    // Answered: the rest of the flush (others' inputs) goes on apart.
    drop(flusher);
    out.unwrap_or_else(|_| {
        Err(A2aError::new(ErrorKind::Internal).with_message("The enqueue was interrupted"))
    })
}

/// A flusher run in a caller's future; what is left of it when that is
/// dropped is spawned.
struct Flusher {
    flush: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    runtime: Option<tokio::runtime::Handle>,
}

impl Flusher {
    fn poll(&mut self, cx: &mut Context<'_>) {
        if let Some(flush) = self.flush.as_mut()
            && flush.as_mut().poll(cx).is_ready()
        {
            self.flush = None;
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        let (Some(flush), Some(runtime)) = (self.flush.take(), self.runtime.take()) else {
            return;
        };
        // A flusher that panicked is not polled again (its `Reset` has
        // answered what it held when it was dropped).
        if !std::thread::panicking() {
            drop(runtime.spawn(flush));
        }
    }
}

/// The flusher of `slot`: commits what waits, batch after batch, until
/// nothing does.
async fn flush(core: Arc<Core>, slot: Arc<Slot>) {
    // A flusher that panics leaves the next input to start another one.
    let _reset = Reset(&slot);
    loop {
        let mut st = slot.state.lock().await;
        let Some(batch) = slot.pending.take() else {
            return;
        };
        let mut batch = batch.into_iter().peekable();
        // Leading blocking inputs that an idle context would admit at once
        // go one at a time, each answered as its run's first commit is
        // made: a quick run ends in that commit and leaves the context idle
        // for the next (two appends per input), where queued together they
        // would each be created, admitted and ended apart (four).
        while batch.len() > 1
            && let Some(next) = batch.peek()
            && leads_at_once(&core, &slot, &mut st, &next.input).await
        {
            let Some(Waiting { input, answer }) = batch.next() else {
                break;
            };
            let out = commit(&core, &slot, &mut st, vec![input]).await;
            if let Some(result) = out.into_iter().next() {
                let _ = answer.send(result);
            }
        }
        let (inputs, answers): (Vec<Input>, Vec<_>) = batch.map(|w| (w.input, w.answer)).unzip();
        let out = commit(&core, &slot, &mut st, inputs).await;
        // Answered under the lock: what the next holder sees is committed.
        for (answer, result) in answers.into_iter().zip(out) {
            let _ = answer.send(result);
        }
        drop(st);
    }
}

/// On a flusher's unwinding: no flusher runs, and the inputs it would have
/// taken are answered with an error (their senders dropped).
struct Reset<'a>(&'a Slot);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut inner = self.0.pending.lock();
            inner.waiting.clear();
            inner.flushing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures_core::Stream;
    use tower::ServiceExt as _;

    use super::super::{QueueRecord, Team, TeamService};
    use crate::engine::{Agent, AgentInput, TaskLayer};
    use crate::log::{Appended, MemoryTaskLog, TaskLog as _, TaskStore};
    use crate::types::{
        AgentCard, Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
        TaskState,
    };
    use crate::{A2aError, A2aRequest, A2aResponse, BoxError, CallContext, ErrorKind, Operation};

    struct Echo;

    impl Agent for Echo {
        fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
            futures_util::stream::iter([Ok(input.text)])
        }
    }

    /// The sequence number of every committed append, by task.
    type Seen = Arc<Mutex<Vec<(String, u64)>>>;

    /// The text of an input too large for [`team`]'s log: refused `Full`.
    fn too_large() -> String {
        "x".repeat(256 * 1024)
    }

    /// A team of one echo agent over a memory log bounded at 128 KiB (in one
    /// shard, so the bound is the log's), and what it commits.
    async fn team() -> (TeamService, Seen) {
        let seen = Seen::default();
        let s = seen.clone();
        let log = MemoryTaskLog::builder()
            .shards(1)
            .max_bytes(128 * 1024)
            .build()
            .unwrap();
        let store = TaskStore::from(log).observe(move |_: &str, a: &Appended| {
            s.lock().unwrap().push((a.snapshot.task.id.clone(), a.seq));
        });
        let team = Team::builder().agent("echo", Echo).build().unwrap();
        let card = AgentCard::new("Team", "Agents behind one endpoint", "1.0.0");
        let svc = team.service(TaskLayer::new(card, store).unwrap());
        svc.recover().await.unwrap();
        (svc, seen)
    }

    /// A `returnImmediately` SendMessage of `text` into `ctx`.
    fn queued(ctx: &str, text: &str) -> A2aRequest {
        let mut message = Message::user(uuid::Uuid::new_v4().to_string(), text);
        message.context_id = ctx.into();
        let configuration = SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        };
        let send = SendMessageRequest {
            message,
            configuration: Some(configuration),
            ..Default::default()
        };
        A2aRequest::new(Operation::SendMessage(send))
    }

    /// Sends `texts` into one context while its queue is held, and lets it go
    /// once every input waits: each answer, and the entries committed.
    async fn sent_together(texts: &[String]) -> (Vec<Result<String, A2aError>>, Vec<String>, Seen) {
        let (svc, seen) = team().await;
        let authority = svc.core.shared.authority.resolve(&CallContext::default());
        let slot = svc.core.slots.get(&authority.unwrap(), "ctx");
        let held = slot.state.lock().await;
        let sends: Vec<_> = texts
            .iter()
            .map(|t| tokio::spawn(svc.clone().oneshot(queued("ctx", t))))
            .collect();
        while slot.pending.lock().waiting.len() < texts.len() {
            tokio::task::yield_now().await;
        }
        drop(held);
        let mut answers = Vec::new();
        for send in sends {
            answers.push(send.await.unwrap().map(|res| {
                let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = res else {
                    panic!("{res:?}")
                };
                assert_eq!(task.status.state, TaskState::Submitted);
                task.into_inner().id
            }));
        }
        let log = &svc.core.shared.log;
        let stream = log.read(&slot.authority, &slot.id, 0).await.unwrap();
        let entered = stream
            .iter()
            .filter_map(|r| match QueueRecord::of(&r.record) {
                Some(QueueRecord::Entered { task_id, .. }) => Some(task_id),
                _ => None,
            })
            .collect();
        let stream_id = slot.id.clone();
        seen.lock().unwrap().retain(|(id, _)| *id == stream_id);
        (answers, entered, seen)
    }

    #[tokio::test]
    async fn inputs_waiting_for_the_queue_share_one_commit() {
        let texts = ["m0", "m1", "m2"].map(String::from);
        let (answers, entered, stream) = sent_together(&texts).await;
        let ids: Vec<String> = answers.into_iter().map(Result::unwrap).collect();
        // Each answered with its own task, entered in the order they came.
        assert_eq!(entered[..3], ids[..]);
        // The stream's first append: its creation and the three entries.
        assert_eq!(stream.lock().unwrap()[0].1, 4);
    }

    #[tokio::test]
    async fn a_caller_that_goes_away_strands_no_input() {
        let (svc, _) = team().await;
        let authority = svc.core.shared.authority.resolve(&CallContext::default());
        let slot = svc.core.slots.get(&authority.unwrap(), "ctx");
        let held = slot.state.lock().await;
        let waiting = |n: usize| {
            let slot = slot.clone();
            async move {
                while slot.pending.lock().waiting.len() < n {
                    tokio::task::yield_now().await;
                }
            }
        };
        // The first input flushes in its caller's future, waiting for the
        // lock; the second waits for that flush.
        let first = tokio::spawn(svc.clone().oneshot(queued("ctx", "m0")));
        waiting(1).await;
        let second = tokio::spawn(svc.clone().oneshot(queued("ctx", "m1")));
        waiting(2).await;
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        drop(held);
        // The flush goes on without its caller: both are committed.
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), second)
            .await
            .expect("the second input is answered")
            .unwrap();
        assert!(answer.is_ok(), "{answer:?}");
        let log = &svc.core.shared.log;
        let stream = log.read(&slot.authority, &slot.id, 0).await.unwrap();
        let entered = stream
            .iter()
            .filter(|r| {
                matches!(
                    QueueRecord::of(&r.record),
                    Some(QueueRecord::Entered { .. })
                )
            })
            .count();
        assert_eq!(entered, 2);
    }

    #[tokio::test]
    async fn a_refused_input_fails_alone() {
        // Together they exceed the log's bound; the batch is refused `Full`
        // and committed again input by input, where only the large one is.
        let texts = ["m0".to_owned(), too_large(), "m2".to_owned()];
        let (answers, entered, stream) = sent_together(&texts).await;
        assert_eq!(
            answers[1].as_ref().unwrap_err().kind(),
            ErrorKind::Unavailable
        );
        let ids: Vec<&String> = [&answers[0], &answers[2]]
            .into_iter()
            .map(|a| a.as_ref().unwrap())
            .collect();
        assert_eq!(entered.iter().take(2).collect::<Vec<_>>(), ids);
        // Committed one by one after the batch was refused.
        assert_eq!(stream.lock().unwrap()[0].1, 2);
    }
}
