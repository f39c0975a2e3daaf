//! [`Journal`]: what replay needs from a run's committed records.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::pending::{OpenWait, Waits};
use crate::log::Record;

/// What replay needs: everything the program recorded, and the answers
/// admitted so far.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// The last sequence number folded in: every record up to it is, each
    /// once, whichever path (the writer's own commit, its catch-up, the
    /// watch, replay) brought it.
    seq: u64,
    steps: HashMap<(String, String), Vec<Value>>,
    opened: HashSet<(String, String)>,
    answers: HashMap<(String, String), Value>,
    children: HashSet<String>,
    exited: HashMap<String, Value>,
}

impl Journal {
    /// A journal that starts after `seq` (a new run: nothing to replay).
    pub(crate) fn after(seq: u64) -> Self {
        Self {
            seq,
            ..Self::default()
        }
    }

    /// Folds in the committed record `seq` unless it was already; `true` if
    /// it may wake a process.
    pub(crate) fn absorb(&mut self, seq: u64, record: &Record) -> bool {
        if seq <= self.seq {
            return false;
        }
        self.seq = seq;
        match record {
            Record::StepRecorded {
                process,
                name,
                output,
            } => {
                self.record_step(process, name, output.clone());
                false
            }
            Record::WaitOpened { process, key, .. } => {
                self.opened.insert((process.clone(), key.clone()));
                false
            }
            Record::SignalAdmitted {
                process,
                key,
                answer,
                ..
            } => {
                self.answers
                    .entry((process.clone(), key.clone()))
                    .or_insert_with(|| answer.clone());
                true
            }
            Record::ChildStarted { process, .. } => {
                self.children.insert(process.clone());
                false
            }
            Record::ProcessExited {
                process,
                output: Some(output),
            } => {
                self.exited.insert(process.clone(), output.clone());
                false
            }
            Record::CancelRequested { .. } => true,
            _ => false,
        }
    }

    pub(crate) fn step(&self, process: &str, name: &str, occurrence: usize) -> Option<Value> {
        self.steps
            .get(&(process.to_owned(), name.to_owned()))
            .and_then(|v| v.get(occurrence))
            .cloned()
    }

    fn record_step(&mut self, process: &str, name: &str, output: Value) {
        self.steps
            .entry((process.to_owned(), name.to_owned()))
            .or_default()
            .push(output);
    }

    pub(crate) fn answer(&self, address: &(String, String)) -> Option<Value> {
        self.answers.get(address).cloned()
    }

    pub(crate) fn is_open(&self, address: &(String, String)) -> bool {
        self.opened.contains(address)
    }

    pub(crate) fn has_child(&self, id: &str) -> bool {
        self.children.contains(id)
    }

    pub(crate) fn exited(&self, id: &str) -> Option<Value> {
        self.exited.get(id).cloned()
    }

    /// The waits opened and not answered.
    pub(crate) fn open_waits(&self, records: &[Record]) -> Waits {
        let mut waits = Waits::new();
        for r in records {
            if let Record::WaitOpened {
                process,
                key,
                question,
                schema,
            } = r
            {
                let address = (process.clone(), key.clone());
                if !self.answers.contains_key(&address) {
                    waits.insert(
                        address,
                        OpenWait {
                            question: question.clone(),
                            schema: schema.clone(),
                        },
                    );
                }
            }
        }
        waits
    }
}
