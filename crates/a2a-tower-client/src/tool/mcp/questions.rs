//! The open questions: input requests waiting for an answer, by request id,
//! for the server's lifetime or until they expire (a host-set age, counted
//! from the question; an expired question is dropped the next time the
//! questions are touched).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::tool::{Concurrency, InputRequest};

/// An open question: the tool that asked (its index), the request to resume,
/// and the declaration of the call that asked (which the answer runs under).
pub(super) struct Pending {
    pub(super) tool: usize,
    pub(super) request: InputRequest,
    pub(super) concurrency: Concurrency,
}

/// The open questions, by request id (a random UUID, so ids cannot be
/// guessed from one another).
#[derive(Default)]
pub(super) struct Questions {
    open: Mutex<HashMap<String, (Pending, Instant)>>,
    /// The age at which a question expires, in milliseconds (0: never).
    ttl_ms: AtomicU64,
}

impl Questions {
    /// Questions older than `ttl` expire.
    pub(super) fn expire_after(&self, ttl: Duration) {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.ttl_ms.store(ms, Ordering::Relaxed);
    }

    /// Saves `pending`; returns its new request id.
    pub(super) fn ask(&self, pending: Pending) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.open().insert(id.clone(), (pending, Instant::now()));
        id
    }

    /// Takes question `id` out while it is answered, so one answer runs at a
    /// time. `None` if no question has that id (or it is being answered).
    pub(super) fn take(&self, id: &str) -> Option<Taken<'_>> {
        let (pending, asked) = self.open().remove(id)?;
        Some(Taken {
            questions: self,
            id: id.to_owned(),
            pending: Some(pending),
            asked,
        })
    }

    /// How many questions are open.
    pub(super) fn len(&self) -> usize {
        self.open().len()
    }

    /// The open questions, the expired ones dropped.
    fn open(&self) -> MutexGuard<'_, HashMap<String, (Pending, Instant)>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let ttl = self.ttl_ms.load(Ordering::Relaxed);
        if ttl > 0 {
            let ttl = Duration::from_millis(ttl);
            open.retain(|_, (_, asked)| asked.elapsed() < ttl);
        }
        open
    }
}

/// A question being answered: open again on drop (an answer that ended in an
/// error, or a call the client cancelled), unless [`Taken::answered`].
pub(super) struct Taken<'a> {
    questions: &'a Questions,
    id: String,
    pending: Option<Pending>,
    asked: Instant,
}

impl Taken<'_> {
    /// The question.
    pub(super) fn pending(&self) -> &Pending {
        self.pending.as_ref().expect("present until answered")
    }

    /// The answer got an outcome: the question is closed.
    pub(super) fn answered(mut self) {
        self.pending = None;
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            let id = std::mem::take(&mut self.id);
            self.questions.open().insert(id, (pending, self.asked));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question() -> Pending {
        Pending {
            tool: 0,
            request: InputRequest {
                tool: "t".into(),
                question: "?".into(),
                answer_schema: None,
                continuation: json!(null),
            },
            concurrency: Concurrency::exclusive("t"),
        }
    }

    #[test]
    fn a_question_is_answered_once_and_reopens_when_not_answered() {
        let questions = Questions::default();
        let id = questions.ask(question());
        assert_ne!(id, questions.ask(question()));
        let taken = questions.take(&id).unwrap();
        assert!(questions.take(&id).is_none(), "being answered");
        drop(taken);
        assert_eq!(questions.len(), 2);
        questions.take(&id).unwrap().answered();
        assert!(questions.take(&id).is_none());
        assert_eq!(questions.len(), 1);
    }

    #[test]
    fn questions_older_than_the_age_expire() {
        let questions = Questions::default();
        let old = questions.ask(question());
        questions.expire_after(Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(80));
        let new = questions.ask(question());
        assert!(questions.take(&old).is_none(), "expired");
        assert_eq!(questions.len(), 1);
        assert!(questions.take(&new).is_some());
    }
}
