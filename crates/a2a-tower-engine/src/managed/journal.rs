//! [`Journal`]: what replay needs from a run's committed records.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::entry::JournalEntry;
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
        if matches!(record, Record::CancelRequested { .. }) {
            return true;
        }
        match JournalEntry::of(record) {
            Some(JournalEntry::StepRecorded {
                process,
                name,
                output,
            }) => {
                self.record_step(&process, &name, output);
                false
            }
            Some(JournalEntry::WaitOpened { process, key, .. }) => {
                self.opened.insert((process, key));
                false
            }
            Some(JournalEntry::SignalAdmitted {
                process,
                key,
                answer,
            }) => {
                self.answers.entry((process, key)).or_insert(answer);
                true
            }
            Some(JournalEntry::ChildStarted { process, .. }) => {
                self.children.insert(process);
                false
            }
            Some(JournalEntry::ProcessExited {
                process,
                output: Some(output),
            }) => {
                self.exited.insert(process, output);
                false
            }
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
            if let Some(JournalEntry::WaitOpened {
                process,
                key,
                question,
                schema,
            }) = JournalEntry::of(r)
            {
                let address = (process, key);
                if !self.answers.contains_key(&address) {
                    waits.insert(address, OpenWait { question, schema });
                }
            }
        }
        waits
    }
}
