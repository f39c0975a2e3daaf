//! [`Program`]: a named, durable run with an input and an output schema.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::process::Process;
use crate::schema::Schema;
use crate::{BoxError, ConfigError};

type RunFn = dyn Fn(Process, Value) -> Pin<Box<dyn Future<Output = Result<Value, BoxError>> + Send>>
    + Send
    + Sync;

/// A durable program: its name (published as `scope.program`), the JSON
/// Schemas of its input and output, and the async function that runs it over
/// a [`Process`].
///
/// # Determinism
///
/// A run is resumed after a crash by running the function again over its
/// journal: every step already recorded returns its recorded result without
/// running, every wait already opened is not opened again, every answer
/// already admitted is delivered again. So between steps the function must be
/// deterministic: the same input and the same step results and answers must
/// lead to the same steps (by process and name), waits (by key) and children
/// (by name), in the same order within a process. Anything that can differ
/// between two runs (the clock, randomness, I/O, other services) goes in a
/// [`step`](Process::step), whose result is journaled. Steps of one name in
/// one process are matched by their order, so do not race two steps of the
/// same name in one process.
///
/// ```
/// use a2a_tower::managed::{Process, Program, Wait};
/// use serde_json::{Value, json};
///
/// let greet = Program::new(
///     "example.greet",
///     json!({"type": "string"}),
///     json!({"type": "string"}),
///     |p: Process, name: Value| async move {
///         let greeting: String = p.step("compose", || async move {
///             Ok(format!("Hello, {}!", name.as_str().unwrap_or("you")))
///         }).await?;
///         let ok = p.wait(Wait::new("confirm").question(json!(greeting.clone()))).await?;
///         Ok(if ok == json!(true) { json!(greeting) } else { json!("") })
///     },
/// ).unwrap();
/// assert_eq!(greet.name(), "example.greet");
/// ```
#[derive(Clone)]
pub struct Program {
    name: Arc<str>,
    input: Schema,
    output: Schema,
    run: Arc<RunFn>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Program {
    /// A program named `name` whose input and output match the given JSON
    /// Schemas; an empty name or a schema that does not compile (or refers to
    /// a document outside itself) is a configuration error.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        input_schema: Value,
        output_schema: Value,
        run: F,
    ) -> Result<Self, ConfigError>
    where
        F: Fn(Process, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, BoxError>> + Send + 'static,
    {
        let name = name.into();
        if name.is_empty() {
            return Err(ConfigError::new("a program needs a name"));
        }
        Ok(Self {
            name: name.into(),
            input: Schema::new(input_schema)?,
            output: Schema::new(output_schema)?,
            run: Arc::new(move |p, v| Box::pin(run(p, v))),
        })
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input schema.
    pub fn input_schema(&self) -> &Schema {
        &self.input
    }

    /// The output schema.
    pub fn output_schema(&self) -> &Schema {
        &self.output
    }

    pub(crate) fn start(
        &self,
        process: Process,
        input: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, BoxError>> + Send>> {
        (self.run)(process, input)
    }
}
