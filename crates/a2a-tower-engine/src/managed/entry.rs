//! [`JournalEntry`]: the records a managed run commits beside its task's,
//! kept by the log as [feature records](crate::log::FeatureRecord).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::log::{FeatureRecord, Hold, Record};
use crate::types::Message;

/// The name of the managed runs' [`Hold`] on their tasks.
pub const MANAGED_FEATURE: &str = "managed";

/// One entry of a managed run's journal. In the log it is a
/// [`Record::Feature`] named by the entry's variant (`runStarted`,
/// `stepRecorded`, …); [`record`](Self::record) makes it, [`of`](Self::of)
/// reads it back. The run's start holds its task for the managed runs, for
/// good: the engine's recovery never closes a run, managed recovery resumes
/// it.
///
/// ```
/// use a2a_tower::managed::JournalEntry;
/// let entry = JournalEntry::StepRecorded { process: "p0".into(), name: "fetch".into(), output: 7.into() };
/// let record = entry.record();
/// assert_eq!(
///     serde_json::to_string(&record).unwrap(),
///     r#"{"stepRecorded":{"process":"p0","name":"fetch","output":7}}"#
/// );
/// assert_eq!(JournalEntry::of(&record), Some(entry));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum JournalEntry {
    /// A managed program run started (the journal's first entry): the
    /// program's name, the root process id and the admitted input, with its
    /// numbers' exact text.
    RunStarted {
        /// The program's name.
        program: String,
        /// The root process id.
        root: String,
        /// The input.
        input: Value,
    },
    /// A step of a managed process finished with `output`; on replay the
    /// output is returned and the step is not run again.
    StepRecorded {
        /// The process.
        process: String,
        /// The step's name (its occurrences are counted in order).
        name: String,
        /// The step's result.
        output: Value,
    },
    /// A managed process opened a wait: an external question addressed by
    /// `(process, key)`.
    WaitOpened {
        /// The process.
        process: String,
        /// The wait's key, unique within its process.
        key: String,
        /// The question, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<Value>,
        /// The answer's JSON Schema, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
    },
    /// An answer to a wait was admitted (by any host, without a writer
    /// epoch); the message that carried it joins the history (the record's
    /// [`message`](FeatureRecord::message), see [`signal`](Self::signal)).
    SignalAdmitted {
        /// The process of the wait.
        process: String,
        /// The wait's key.
        key: String,
        /// The answer, validated against the wait's schema.
        answer: Value,
    },
    /// A managed process started a child process.
    ChildStarted {
        /// The parent process.
        parent: String,
        /// The child process.
        process: String,
    },
    /// A managed child process returned `output` (or failed, without one).
    ProcessExited {
        /// The process.
        process: String,
        /// Its result, when it returned one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
    },
}

impl JournalEntry {
    /// The names of the entries' records.
    const NAMES: [&'static str; 6] = [
        "runStarted",
        "stepRecorded",
        "waitOpened",
        "signalAdmitted",
        "childStarted",
        "processExited",
    ];

    /// The entry as a record of the log (a run's start holds its task).
    pub fn record(&self) -> Record {
        let f = FeatureRecord::tagged(self).expect("a journal entry is a tagged object");
        Record::Feature(match self {
            Self::RunStarted { .. } => f.holding(Hold::always(MANAGED_FEATURE)),
            _ => f,
        })
    }

    /// The record of an answer admitted with the `message` that carried it.
    pub fn signal(process: String, key: String, answer: Value, message: Message) -> Record {
        let entry = Self::SignalAdmitted {
            process,
            key,
            answer,
        };
        let f = FeatureRecord::tagged(&entry).expect("a journal entry is a tagged object");
        Record::Feature(f.admitting(message))
    }

    /// The entry a record is, if it is one.
    pub fn of(record: &Record) -> Option<Self> {
        match record {
            Record::Feature(f) if Self::NAMES.contains(&f.name()) => f.decode_tagged().ok(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_form_is_the_journals_before_feature_records() {
        // The JSON main wrote as `Record::SignalAdmitted` reads as a signal
        // whose message joins the history.
        let json = r#"{"signalAdmitted":{"process":"p0","key":"k","answer":"yes","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"yes"}]}}}"#;
        let record: Record = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), json);
        let Record::Feature(f) = &record else {
            panic!("{record:?}")
        };
        assert_eq!(f.message().unwrap().message_id, "m");
        assert!(matches!(
            JournalEntry::of(&record),
            Some(JournalEntry::SignalAdmitted { .. })
        ));
        let start = JournalEntry::RunStarted {
            program: "p".into(),
            root: "r".into(),
            input: Value::Null,
        }
        .record();
        let Record::Feature(f) = &start else {
            unreachable!()
        };
        assert_eq!(f.hold().unwrap().by, MANAGED_FEATURE);
        assert_eq!(JournalEntry::of(&Record::canceled()[0]), None);
    }
}
