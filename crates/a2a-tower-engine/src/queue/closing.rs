//! A run settled in the commit that ends its task, with what its end lets
//! the head do. The closing commit of a run the queue admitted carries the
//! run's `settled` record (appended at the view's revision, under the
//! context's lock, atomically with the task's end) and, when inputs wait,
//! what the drain would commit next for the head, decided on the queue
//! with the run settled: the head's admission (its run starts once the
//! commit is made), its visible failure, or its removal (canceled while
//! queued). A message into an idle context then costs two commits (its
//! enqueue with its admission, its run's end with its settlement), and a
//! context with a queue admits its next input in the commit that ends the
//! run before it: one commit per message on its critical path, not two.
//! If a head behind the one admitted can run too (another agent's), the
//! drain is woken for it; otherwise the end drains nothing.
//!
//! Anything else is settled by the drain as before: a run whose reply may
//! hand off (text with an `@`: the handoff's new inputs are committed with
//! the settlement), or whose carrying commit is refused (the task's end is
//! then committed alone, and what moved the stream or the head's task, or
//! the log error, is the drain's to meet).
//!
//! The closing commit waits for the context's lock under its writer's: no
//! holder of a context's lock waits for a writer's lock (a drain, a cancel
//! of a queued input and a reorder only call the log; a run is started by
//! spawning it, a run is canceled once the lock is released). The one wait
//! on a writer under the lock, an enqueue's for the first commit of the run
//! it admits at once (`at_once`), is for a commit that takes no context
//! lock: what this rider would board there, its companion carries.

use std::sync::{Arc, Weak};

use tokio::sync::OwnedMutexGuard;

use super::admit::resolve_agent;
use super::core::Core;
use super::drain::{Plan, head};
use super::record::QueueRecord;
use super::state::ContextQueue;
use super::stream::Slot;
use crate::engine::ride::{Boarded, Boarding, Rider};
use crate::engine::writer::Writer;
use crate::log::{AppendRequest, Appended, Record};
use crate::types::{Message, Part, TaskState};

/// The queue's [`Rider`]: the writers of the runs it admits carry their
/// settlement when they can.
pub(crate) struct Settle {
    pub(crate) core: Weak<Core>,
}

impl Rider for Settle {
    fn bars(&self, records: &[Record]) -> bool {
        records.iter().any(may_name_an_agent)
    }

    fn board<'a>(&'a self, writer: &'a Writer, state: TaskState) -> Boarding<'a> {
        Box::pin(async move {
            let core = self.core.upgrade()?;
            let slot = core.slots.get(&writer.authority, &writer.context_id);
            let mut st = slot.state.clone().lock_owned().await;
            slot.catch_up(&*core.shared.log, &mut st).await.ok()?;
            let agent = st
                .active()
                .iter()
                .find(|(_, run)| run.task_id == writer.task_id)
                .map(|(agent, _)| agent.clone())?;
            let completed = state == TaskState::Completed;
            let mut plan = Plan::default();
            plan.records.push(QueueRecord::Settled {
                task_id: writer.task_id.clone(),
                agent: agent.clone(),
                completed,
            });
            if st.len() > 0 {
                // What the head does next, decided on the queue with the
                // run settled, as the drain would decide it; a log error
                // leaves it to the drain.
                let undo = st.settle(&agent, completed);
                let headed = head(&core, &slot, &st, &mut plan).await;
                st.undo(undo);
                headed.ok()?;
            }
            Some(Box::new(Settling {
                core,
                slot,
                st,
                plan,
            }) as Box<dyn Boarded>)
        })
    }
}

/// A settlement boarded on a closing commit, with what the head does next
/// (`plan`), the context's queue locked.
struct Settling {
    core: Arc<Core>,
    slot: Arc<Slot>,
    st: OwnedMutexGuard<ContextQueue>,
    plan: Plan,
}

impl Boarded for Settling {
    fn requests(&mut self, requests: &mut Vec<AppendRequest>) {
        requests.append(&mut self.plan.tasks);
        requests.push(self.slot.append(&self.st, &self.plan.records));
    }

    fn landed(mut self: Box<Self>, mut appended: Vec<Appended>) {
        let Self {
            core,
            slot,
            st,
            plan,
        } = &mut *self;
        Slot::applied(st, &plan.records);
        plan.kept = None;
        if let Some(start) = plan.start.take() {
            // Its task's append is the first of the plan's.
            start.run(core, slot, appended.swap_remove(0));
        }
        // A head behind the one admitted (or removed) may be admissible
        // too: that is the drain's (a head that waits is woken by what it
        // waits for).
        if st
            .head()
            .is_some_and(|h| resolve_agent(core, st, h).is_ok())
        {
            core.wake(slot.clone());
        }
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        // Not committed: the head's task as its enqueue committed it may
        // be what failed; it is read next time.
        if let Some(task_id) = self.plan.kept.take() {
            self.st.forget_task(&task_id);
        }
    }
}

/// Whether `record` carries text that may name an agent as `@name` (a
/// reply's text is its status message's or its artifacts', see
/// `handoff::reply_text`).
fn may_name_an_agent(record: &Record) -> bool {
    let parts = |parts: &[Part]| {
        parts
            .iter()
            .any(|p| p.as_text().is_some_and(|t| t.contains('@')))
    };
    let message = |m: &Option<Message>| m.as_ref().is_some_and(|m| parts(&m.parts));
    match record {
        Record::ArtifactChunk { artifact, .. } => parts(&artifact.parts),
        Record::StatusChanged { status } => message(&status.message),
        Record::Replied { message, .. } => parts(&message.parts),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::may_name_an_agent;
    use crate::log::Record;
    use crate::types::{Artifact, Message, Part, TaskState, TaskStatus, Timestamp};

    #[test]
    fn text_with_an_at_sign_bars_the_settlement() {
        let chunk = |text: &str| Record::ArtifactChunk {
            artifact: Artifact {
                parts: vec![Part::text(text)],
                ..Artifact::default()
            },
            append: true,
            last_chunk: false,
        };
        assert!(may_name_an_agent(&chunk("ask @upper")));
        assert!(!may_name_an_agent(&chunk("hello")));
        let replied = |text: &str| Record::Replied {
            message: Message::agent("m", text),
            at: Timestamp::now(),
        };
        assert!(may_name_an_agent(&replied("@")));
        assert!(!may_name_an_agent(&replied("done")));
        let status = Record::status(TaskStatus {
            state: TaskState::Completed,
            message: Some(Message::agent("m", "to @upper")),
            timestamp: None,
        });
        assert!(may_name_an_agent(&status));
        assert!(!may_name_an_agent(&Record::status(TaskStatus::new(
            TaskState::Completed
        ))));
    }
}
