//! The single writer of one execution, its signals, and the registry of live
//! executions on this host.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::executor::EmitError;
use crate::log::{AppendRequest, Appended, LogErrorKind, Record, TaskLog};
use crate::types::{Message, TaskState, TaskStatus, Timestamp};

/// A one-shot, level-triggered signal.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    set: AtomicBool,
    notify: Notify,
}

impl Signal {
    pub(crate) fn fire(&self) {
        if !self.set.swap(true, Ordering::AcqRel) {
            self.notify.notify_waiters();
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// Writes the records of one execution. All appends go through its lock, so
/// the executor's emissions, a cancel and the driver's final status are
/// serialized; the first terminal or interrupted status closes it.
pub(crate) struct Writer {
    log: Arc<dyn TaskLog>,
    pub(crate) authority: String,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// `(seq, epoch)`.
    state: tokio::sync::Mutex<(u64, u64)>,
    open: AtomicBool,
    /// Asks the executor to stop.
    pub(crate) cancel: Signal,
    /// The writer accepts nothing more.
    pub(crate) closed: Signal,
    /// Another writer took the task over: calls waiting on this execution
    /// stop waiting.
    pub(crate) fenced: Signal,
    started: Instant,
    last_ms: AtomicU64,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("task_id", &self.task_id)
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

impl Writer {
    pub(crate) fn new(
        log: Arc<dyn TaskLog>,
        authority: String,
        task_id: String,
        context_id: String,
        seq: u64,
        epoch: u64,
    ) -> Self {
        Self {
            log,
            authority,
            task_id,
            context_id,
            state: tokio::sync::Mutex::new((seq, epoch)),
            open: AtomicBool::new(true),
            cancel: Signal::default(),
            closed: Signal::default(),
            fenced: Signal::default(),
            started: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    fn touch(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// When the execution counts as inactive if nothing is emitted before.
    pub(crate) fn idle_deadline(&self, timeout: Duration) -> Instant {
        self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + timeout
    }

    /// Commits records. A terminal or interrupted state closes the writer; it
    /// is marked closed before the commit becomes visible, so whoever sees the
    /// commit also sees the writer closed.
    pub(crate) async fn commit(&self, records: Vec<Record>) -> Result<Appended, EmitError> {
        let mut st = self.state.lock().await;
        if !self.is_open() {
            return Err(EmitError::Closed);
        }
        let closes = records
            .iter()
            .filter_map(Record::state)
            .any(|s| s.is_terminal() || s.is_interrupted());
        if closes {
            self.open.store(false, Ordering::Release);
        }
        let req = AppendRequest::new(
            self.authority.clone(),
            self.task_id.clone(),
            st.0,
            st.1,
            records,
        );
        match self.log.append(req).await {
            Ok(appended) => {
                st.0 = appended.seq;
                self.touch();
                if closes {
                    self.closed.fire();
                }
                Ok(appended)
            }
            Err(e) => match e.kind() {
                LogErrorKind::Conflict | LogErrorKind::Fenced | LogErrorKind::NotFound => {
                    // Another writer owns the task now: stop for good.
                    self.open.store(false, Ordering::Release);
                    self.fenced.fire();
                    self.closed.fire();
                    self.cancel.fire();
                    Err(EmitError::Superseded)
                }
                kind => {
                    if closes {
                        self.open.store(true, Ordering::Release);
                    }
                    Err(if kind == LogErrorKind::Invalid {
                        EmitError::Invalid
                    } else {
                        EmitError::Log(kind)
                    })
                }
            },
        }
    }

    /// Commits a final status if the writer is still open.
    pub(crate) async fn finish(&self, state: TaskState, text: Option<&str>) -> bool {
        let message = text.map(|t| self.agent_message(Message::agent("", t)));
        let status = TaskStatus {
            state,
            message,
            timestamp: Some(Timestamp::now()),
        };
        self.commit(vec![Record::status(status)]).await.is_ok()
    }

    /// Cancels the execution: commits CANCELED and signals the executor.
    pub(crate) async fn cancel(&self) -> Option<Appended> {
        let records = vec![
            Record::CancelRequested {
                at: Timestamp::now(),
            },
            Record::status(TaskStatus::new(TaskState::Canceled)),
        ];
        let out = self.commit(records).await.ok();
        if out.is_some() {
            self.cancel.fire();
        }
        out
    }

    /// Stamps an agent message with the task's ids, the agent role and an id.
    pub(crate) fn agent_message(&self, mut m: Message) -> Message {
        m.role = crate::types::Role::Agent;
        m.task_id.clone_from(&self.task_id);
        m.context_id.clone_from(&self.context_id);
        if m.message_id.is_empty() {
            m.message_id = uuid::Uuid::new_v4().to_string();
        }
        m
    }
}

/// The live executions of this host, by task id.
#[derive(Debug, Default)]
pub(crate) struct Registry(Mutex<HashMap<String, Arc<Writer>>>);

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Writer>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a writer unless an open one already runs the task.
    pub(crate) fn claim(&self, writer: &Arc<Writer>) -> bool {
        let mut map = self.lock();
        match map.get(&writer.task_id) {
            Some(w) if w.is_open() => false,
            _ => {
                map.insert(writer.task_id.clone(), writer.clone());
                true
            }
        }
    }

    pub(crate) fn get(&self, task_id: &str) -> Option<Arc<Writer>> {
        self.lock().get(task_id).cloned()
    }

    pub(crate) fn remove(&self, writer: &Arc<Writer>) {
        let mut map = self.lock();
        if map
            .get(&writer.task_id)
            .is_some_and(|w| Arc::ptr_eq(w, writer))
        {
            map.remove(&writer.task_id);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn signal_wakes_waiters_and_stays_set() {
        let s = Arc::new(Signal::default());
        let waiter = tokio::spawn({
            let s = s.clone();
            async move { s.wait().await }
        });
        tokio::task::yield_now().await;
        s.fire();
        waiter.await.unwrap();
        s.wait().await; // already set: returns at once
        assert!(s.is_set());
    }
}
