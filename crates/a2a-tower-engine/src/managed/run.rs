//! [`Run`]: one managed run on this host. It is the task's only writer: it
//! appends what the program's processes record (conditional on the sequence
//! number it last saw, with its epoch), folds in what other hosts commit
//! meanwhile (answers, cancel requests) instead of giving up, and publishes
//! the open questions with every change.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::Value;

use super::entry::JournalEntry;
use super::journal::Journal;
use super::pending::{self, Names, OpenWait, Waits};
use super::policy::OutputPolicy;
use super::process::{Process, RunError};
use super::program::Program;
use super::quiet::Quiet;
use crate::engine::Signal;
use crate::log::{AppendRequest, LogErrorKind, Record, TaskLog};
use crate::types::{Artifact, TaskState, TaskStatus, Timestamp};

/// The status message of a run whose program failed.
pub const PROGRAM_FAILED_MESSAGE: &str = "The program failed.";
/// The status message of a run whose result does not match its output schema.
pub const OUTPUT_INVALID_MESSAGE: &str = "The program's result does not match its output schema.";

/// The id of the artifact holding a run's result.
pub const RESULT_ARTIFACT_ID: &str = "result";

/// What a process asks the writer to record.
pub(crate) enum Intent {
    Step {
        process: String,
        name: String,
        output: Value,
    },
    Open {
        process: String,
        key: String,
        question: Option<Value>,
        schema: Option<Value>,
    },
    Child {
        parent: String,
        process: String,
    },
    Exit {
        process: String,
        output: Value,
    },
    Finish(Finish),
}

/// How a run ends.
pub(crate) enum Finish {
    Completed(Value),
    Failed(&'static str),
    Canceled,
}

/// The writer's position: the last sequence number it saw, its epoch, and
/// the waits open as of that sequence number.
pub(crate) struct Head {
    pub(crate) seq: u64,
    pub(crate) epoch: u64,
    pub(crate) waits: Waits,
}

/// One managed run on this host.
pub(crate) struct Run {
    pub(crate) log: Arc<dyn TaskLog>,
    pub(crate) authority: String,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) root: String,
    pub(crate) program: String,
    pub(crate) policy: OutputPolicy,
    head: tokio::sync::Mutex<Head>,
    journal: Mutex<Journal>,
    changed: tokio::sync::watch::Sender<u64>,
    pub(crate) cancel: Signal,
    pub(crate) lost: Signal,
    /// Whether every process waits or exited.
    pub(crate) quiet: Quiet,
}

impl Run {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        log: Arc<dyn TaskLog>,
        authority: String,
        task_id: String,
        context_id: String,
        program: String,
        policy: OutputPolicy,
        head: Head,
        journal: Journal,
        cancel_requested: bool,
    ) -> Arc<Self> {
        let run = Self {
            log,
            authority,
            root: task_id.clone(),
            task_id,
            context_id,
            program,
            policy,
            head: tokio::sync::Mutex::new(head),
            journal: Mutex::new(journal),
            changed: tokio::sync::watch::Sender::new(0),
            cancel: Signal::default(),
            lost: Signal::default(),
            quiet: Quiet::new(),
        };
        if cancel_requested {
            run.cancel.fire();
        }
        Arc::new(run)
    }

    pub(crate) fn names(&self) -> Names<'_> {
        Names {
            program: &self.program,
            root: &self.root,
            task_id: &self.task_id,
            context_id: &self.context_id,
        }
    }

    pub(crate) fn journal(&self) -> MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Folds the committed record `seq` in and wakes the waiting processes.
    fn absorb(&self, seq: u64, record: &Record) {
        if matches!(record, Record::CancelRequested { .. }) {
            self.cancel.fire();
        }
        if self.journal().absorb(seq, record) {
            self.changed.send_modify(|n| *n += 1);
        }
    }

    fn lose(&self) {
        self.lost.fire();
        self.changed.send_modify(|n| *n += 1);
    }

    /// Fails when the run must not record anything new.
    pub(crate) fn check(&self) -> Result<(), RunError> {
        if self.lost.is_set() {
            Err(RunError::Lost)
        } else if self.cancel.is_set() {
            Err(RunError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Waits for the answer to `address`.
    pub(crate) async fn answer(&self, address: &(String, String)) -> Result<Value, RunError> {
        let mut changes = self.changed.subscribe();
        loop {
            if let Some(answer) = self.journal().answer(address) {
                return Ok(answer);
            }
            self.check()?;
            if changes.changed().await.is_err() {
                return Err(RunError::Lost);
            }
        }
    }

    /// The records of `intent` after `head`, and the waits they leave open.
    fn records(&self, head: &Head, intent: &Intent) -> Result<(Vec<Record>, Waits), RunError> {
        let mut waits = head.waits.clone();
        let names = self.names();
        let records = match intent {
            Intent::Step {
                process,
                name,
                output,
            } => vec![
                JournalEntry::StepRecorded {
                    process: process.clone(),
                    name: name.clone(),
                    output: output.clone(),
                }
                .record(),
            ],
            Intent::Open {
                process,
                key,
                question,
                schema,
            } => {
                let address = (process.clone(), key.clone());
                if waits.contains_key(&address) {
                    return Err(RunError::Invalid("a wait key is already open"));
                }
                waits.insert(
                    address,
                    OpenWait {
                        question: question.clone(),
                        schema: schema.clone(),
                    },
                );
                vec![
                    JournalEntry::WaitOpened {
                        process: process.clone(),
                        key: key.clone(),
                        question: question.clone(),
                        schema: schema.clone(),
                    }
                    .record(),
                ]
            }
            Intent::Child { parent, process } => vec![
                JournalEntry::ChildStarted {
                    parent: parent.clone(),
                    process: process.clone(),
                }
                .record(),
            ],
            Intent::Exit { process, output } => vec![
                JournalEntry::ProcessExited {
                    process: process.clone(),
                    output: Some(output.clone()),
                }
                .record(),
            ],
            Intent::Finish(finish) => {
                waits.clear();
                let (state, status, text) = match finish {
                    Finish::Completed(_) => (TaskState::Completed, "completed", None),
                    Finish::Failed(text) => (TaskState::Failed, "failed", Some(*text)),
                    Finish::Canceled => (TaskState::Canceled, "canceled", None),
                };
                let mut records = Vec::with_capacity(4);
                if let Finish::Completed(output) = finish {
                    records.push(Record::ArtifactChunk {
                        artifact: Artifact {
                            artifact_id: RESULT_ARTIFACT_ID.into(),
                            name: "result".into(),
                            parts: vec![self.policy.part(output)],
                            ..Artifact::default()
                        },
                        append: false,
                        last_chunk: true,
                    });
                    records.push(
                        JournalEntry::ProcessExited {
                            process: self.root.clone(),
                            output: Some(output.clone()),
                        }
                        .record(),
                    );
                }
                records.push(Record::MetadataChanged {
                    metadata: pending::metadata(&names, &waits, status, true),
                });
                let message = text.map(|t| {
                    let mut m = pending::agent_message(&names);
                    m.parts = vec![crate::types::Part::text(t)];
                    m
                });
                records.push(Record::status(TaskStatus {
                    state,
                    message,
                    timestamp: Some(Timestamp::now()),
                }));
                return Ok((records, waits));
            }
        };
        let mut records = records;
        if waits != head.waits {
            records.push(Record::MetadataChanged {
                metadata: pending::metadata(&names, &waits, pending::root_status(&waits), false),
            });
            records.push(Record::status(pending::status(&names, self.policy, &waits)));
        }
        Ok((records, waits))
    }

    /// Records `intent`. A conflict means another host committed something
    /// (an answer, a cancel request): it is folded in and the append is made
    /// again on top of it. Being fenced, or a failing log, loses the run.
    pub(crate) async fn commit(&self, intent: Intent) -> Result<(), RunError> {
        let _busy = self.quiet.busy();
        let mut head = self.head.lock().await;
        let mut failures = 0;
        loop {
            if self.lost.is_set() {
                return Err(RunError::Lost);
            }
            let (records, waits) = self.records(&head, &intent)?;
            let request = AppendRequest::new(
                self.authority.clone(),
                self.task_id.clone(),
                head.seq,
                head.epoch,
                records.clone(),
            );
            match self.log.append(request).await {
                Ok(appended) => {
                    head.seq = appended.seq;
                    head.waits = waits;
                    let first = appended.seq + 1 - records.len() as u64;
                    for (seq, r) in (first..).zip(&records) {
                        self.absorb(seq, r);
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == LogErrorKind::Conflict => {
                    if !self.catch_up(&mut head).await {
                        self.lose();
                        return Err(RunError::Lost);
                    }
                }
                Err(e)
                    if matches!(e.kind(), LogErrorKind::Backend | LogErrorKind::Full)
                        && failures < 3 =>
                {
                    failures += 1;
                    tokio::time::sleep(Duration::from_millis(50 << failures)).await;
                }
                Err(_) => {
                    self.lose();
                    return Err(RunError::Lost);
                }
            }
        }
    }

    /// Reads what others committed after `head` and folds it in; `false` if
    /// that is not possible (the task ended or cannot be read).
    async fn catch_up(&self, head: &mut Head) -> bool {
        let Ok(records) = self
            .log
            .read(&self.authority, &self.task_id, head.seq)
            .await
        else {
            return false;
        };
        for s in &records {
            if s.record.is_terminal() {
                return false;
            }
            if let Some(JournalEntry::SignalAdmitted { process, key, .. }) =
                JournalEntry::of(&s.record)
            {
                head.waits.remove(&(process, key));
            }
            self.absorb(s.seq, &s.record);
            head.seq = s.seq;
        }
        true
    }

    /// Folds in what others commit, from `after` on, until the run ends.
    async fn watch(self: Arc<Self>, mut after: u64) {
        let mut failures = 0u32;
        while !self.lost.is_set() && failures < 20 {
            let watched = self
                .log
                .watch(&self.authority, &self.task_id, Some(after))
                .await;
            let Ok(watch) = watched else {
                failures += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let mut records = watch.records;
            while let Some(item) = records.next().await {
                match item {
                    Ok(s) => {
                        after = s.seq;
                        self.absorb(s.seq, &s.record);
                        if s.record.is_terminal() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            failures += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Runs `program` over `run` to its end and commits how it ended. The
/// program's own error text is never recorded: a failure is
/// [`PROGRAM_FAILED_MESSAGE`].
pub(crate) async fn drive(run: Arc<Run>, program: Program, input: Value, watch_from: u64) {
    let watcher = tokio::spawn(run.clone().watch(watch_from));
    let root = Process::new(run.clone(), run.root.clone());
    let result = AssertUnwindSafe(program.start(root, input))
        .catch_unwind()
        .await;
    let finish = match result {
        Ok(Ok(output)) if program.output_schema().check(&output).is_ok() => {
            Finish::Completed(output)
        }
        Ok(Ok(_)) => Finish::Failed(OUTPUT_INVALID_MESSAGE),
        _ if run.cancel.is_set() => Finish::Canceled,
        Ok(Err(e)) => {
            tracing::warn!(task_id = %run.task_id, error.kind = error_kind(&*e), "managed program failed");
            Finish::Failed(PROGRAM_FAILED_MESSAGE)
        }
        Err(_) => {
            tracing::warn!(task_id = %run.task_id, error.kind = "panic", "managed program failed");
            Finish::Failed(PROGRAM_FAILED_MESSAGE)
        }
    };
    if !run.lost.is_set() {
        let _ = run.commit(Intent::Finish(finish)).await;
    }
    watcher.abort();
}

/// A classification of a program's error for traces (never its text).
fn error_kind(e: &(dyn std::error::Error + 'static)) -> &'static str {
    match e.downcast_ref::<RunError>() {
        Some(RunError::Cancelled) => "cancelled",
        Some(RunError::Lost) => "lost",
        Some(RunError::Invalid(_)) => "invalid",
        None => "program",
    }
}
