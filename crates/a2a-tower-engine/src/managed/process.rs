//! [`Process`]: what a program runs over: journaled steps, waits for external
//! answers, child processes, cancellation.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::quiet::Parking;
use super::run::{Intent, Run};
use crate::BoxError;
use crate::schema::Schema;

/// Why a process call did not return a result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunError {
    /// The task was canceled: the program should return (with any error).
    Cancelled,
    /// This host no longer runs the task (another host took it over, or the
    /// task log failed): the program must stop; nothing more is recorded.
    Lost,
    /// The program asked for something impossible (a wait key opened twice
    /// at once, a schema that does not compile, a result that is not JSON).
    Invalid(&'static str),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled => f.write_str("the task was canceled"),
            Self::Lost => f.write_str("this host no longer runs the task"),
            Self::Invalid(what) => write!(f, "invalid program request: {what}"),
        }
    }
}

impl std::error::Error for RunError {}

/// A wait: an external question addressed by its process and `key` (unique
/// within the process), with an optional question value and an optional JSON
/// Schema for the answer (absent: any JSON).
#[derive(Debug, Clone)]
pub struct Wait {
    key: String,
    question: Option<Value>,
    schema: Option<Value>,
}

impl Wait {
    /// A wait with this key, no question and no schema.
    pub fn new(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            question: None,
            schema: None,
        }
    }

    /// The question shown to whoever answers.
    pub fn question(mut self, question: Value) -> Self {
        self.question = Some(question);
        self
    }

    /// The JSON Schema the answer must match.
    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }
}

/// A process of a managed run: the root, or a child started with
/// [`child`](Self::child). Cheap to clone.
#[derive(Clone)]
pub struct Process {
    run: Arc<Run>,
    id: Arc<str>,
    /// How many steps of each name this process has reached (replay matches
    /// a step by its name and occurrence).
    steps: Arc<Mutex<HashMap<String, usize>>>,
    /// Its calls that wait (for an answer, for a child).
    parking: Parking,
}

impl fmt::Debug for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Process").field("id", &self.id).finish()
    }
}

impl Process {
    pub(crate) fn new(run: Arc<Run>, id: String) -> Self {
        Self {
            run,
            id: id.into(),
            steps: Arc::default(),
            parking: Parking::default(),
        }
    }

    /// The process id (the task id for the root, `parent/name` for a child).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task was canceled: finish soon.
    pub fn is_cancelled(&self) -> bool {
        self.run.cancel.is_set()
    }

    /// Completes when the task is canceled.
    pub async fn cancelled(&self) {
        self.run.cancel.wait().await;
    }

    /// Runs `f` once and journals its result; on replay the journaled result
    /// is returned and `f` is not run. An error of `f` is returned and not
    /// journaled (the step runs again on replay).
    pub async fn step<T, F, Fut>(&self, name: &str, f: F) -> Result<T, BoxError>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BoxError>>,
    {
        let occurrence = {
            let mut steps = self.steps.lock().unwrap_or_else(|p| p.into_inner());
            let n = steps.entry(name.to_owned()).or_insert(0);
            *n += 1;
            *n - 1
        };
        if let Some(v) = self.run.journal().step(&self.id, name, occurrence) {
            return Ok(serde_json::from_value(v)?);
        }
        self.run.check()?;
        let _work = self.run.quiet.busy();
        let out = f().await?;
        let output = serde_json::to_value(&out)
            .map_err(|_| RunError::Invalid("a step result is not JSON"))?;
        // Committing journals it (the commit folds its own records in).
        self.run
            .commit(Intent::Step {
                process: self.id.to_string(),
                name: name.to_owned(),
                output,
            })
            .await?;
        Ok(out)
    }

    /// Opens `wait` (unless it is already open) and waits for its answer,
    /// which was validated against the wait's schema when it was admitted.
    pub async fn wait(&self, wait: Wait) -> Result<Value, RunError> {
        let address = (self.id.to_string(), wait.key.clone());
        if let Some(answer) = self.run.journal().answer(&address) {
            return Ok(answer);
        }
        if !self.run.journal().is_open(&address) {
            if let Some(schema) = &wait.schema {
                Schema::new(schema.clone())
                    .map_err(|_| RunError::Invalid("a wait's schema does not compile"))?;
            }
            self.run.check()?;
            self.run
                .commit(Intent::Open {
                    process: address.0.clone(),
                    key: address.1.clone(),
                    question: wait.question,
                    schema: wait.schema,
                })
                .await?;
        }
        let _parked = self.parking.park(&self.run.quiet);
        self.run.answer(&address).await
    }

    /// Runs a child process named `name` (unique within this process) to its
    /// result; children run concurrently when their futures are joined. On
    /// replay, a child that already returned gives its journaled result
    /// without running.
    pub async fn child<F, Fut>(&self, name: &str, f: F) -> Result<Value, BoxError>
    where
        F: FnOnce(Process) -> Fut,
        Fut: Future<Output = Result<Value, BoxError>>,
    {
        let id = format!("{}/{name}", self.id);
        if let Some(out) = self.run.journal().exited(&id) {
            return Ok(out);
        }
        if !self.run.journal().has_child(&id) {
            self.run.check()?;
            self.run
                .commit(Intent::Child {
                    parent: self.id.to_string(),
                    process: id.clone(),
                })
                .await?;
        }
        // The child is counted at work before its parent parks on it, and
        // until its exit is committed (see `quiet`).
        let _child = self.run.quiet.busy();
        let parked = self.parking.park(&self.run.quiet);
        let out = f(Process::new(self.run.clone(), id.clone())).await?;
        drop(parked);
        self.run
            .commit(Intent::Exit {
                process: id.clone(),
                output: out.clone(),
            })
            .await?;
        Ok(out)
    }
}
