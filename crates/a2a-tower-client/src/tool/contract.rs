//! The tool contract: what a tool-calling host needs from a tool, and what a
//! call can end in, independent of any agent framework.
//!
//! A call ends in one of four ways, and hosts must tell them apart:
//!
//! - [`Outcome::Output`]: the tool's answer, as text for the model;
//! - [`Outcome::InputRequired`]: the tool needs an answer first; the
//!   [`InputRequest`] is serialisable, so a durable host can save it and
//!   [`Tool::resume`] it later, possibly in another process;
//! - [`Outcome::Failed`]: a definite failure (the work was reached and ended
//!   badly, e.g. a remote task FAILED), carrying its cause and any partial
//!   output; retrying it is a new piece of work;
//! - `Err(`[`ToolError`]`)`: anything else (bad input, transport, protocol,
//!   a remote task that may still advance): the outcome is not known.
//!
//! ```
//! use a2a_tower::tool::{Concurrency, Effect, Invocation, Outcome, Tool, ToolError, ToolFuture, ToolOutput};
//! use serde_json::{json, Value};
//!
//! struct Upper { schema: Value }
//! impl Tool for Upper {
//!     fn name(&self) -> &str { "upper" }
//!     fn description(&self) -> &str { "Upper-cases a message." }
//!     fn input_schema(&self) -> &Value { &self.schema }
//!     fn effect(&self) -> Effect { Effect::ReadOnly }
//!     fn call(&self, invocation: Invocation) -> ToolFuture<'_> {
//!         Box::pin(async move {
//!             let text = invocation.arguments["message"].as_str().unwrap_or_default();
//!             Ok(Outcome::Output(ToolOutput::new(text.to_uppercase())))
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let tool = Upper { schema: json!({"type": "object"}) };
//! let call = Invocation::new("call-1", json!({"message": "hi"}));
//! assert_eq!(tool.concurrency(&call), Concurrency::exclusive("upper"));
//! match tool.call(call).await {
//!     Ok(Outcome::Output(out)) => assert_eq!(out.text, "HI"),
//!     _ => unreachable!(),
//! }
//! # });
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::BoxError;

/// The future a [`Tool`] call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Outcome, ToolError>> + Send + 'a>>;

/// A tool a model can call.
pub trait Tool: Send + Sync {
    /// The model-visible name (unique within a tool set).
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The JSON Schema of [`Invocation::arguments`].
    fn input_schema(&self) -> &Value;

    /// The host's scheduling declaration for `invocation`: calls with the same
    /// key must not overlap unless both say they may. Deterministic and free
    /// of side effects. Exclusive on the tool's name by default.
    fn concurrency(&self, invocation: &Invocation) -> Concurrency {
        let _ = invocation;
        Concurrency::exclusive(self.name())
    }

    /// What replaying a call does. [`Effect::Unsafe`] by default.
    fn effect(&self) -> Effect {
        Effect::Unsafe
    }

    /// Calls the tool.
    fn call(&self, invocation: Invocation) -> ToolFuture<'_>;

    /// Continues `request` (an [`Outcome::InputRequired`] of this tool, or of
    /// an equivalent one built later) with `answer`. Tools that never ask
    /// refuse with [`ToolErrorKind::Continuation`].
    fn resume(&self, request: InputRequest, answer: Answer) -> ToolFuture<'_> {
        let _ = (request, answer);
        let name = self.name().to_owned();
        Box::pin(async move {
            Err(ToolError::new(
                ToolErrorKind::Continuation,
                format!("tool {name} does not take answers"),
            ))
        })
    }
}

/// One call of a tool, as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// The host's id of this call (a model's tool-call id).
    pub id: String,
    /// The arguments, which the tool checks against its input schema.
    pub arguments: Value,
}

impl Invocation {
    /// A call with `id` and `arguments`.
    pub fn new(id: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            arguments,
        }
    }
}

/// A scheduling declaration: which calls may run at the same time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Concurrency {
    /// Calls with different keys are independent.
    pub key: String,
    /// Whether calls with this key may overlap each other.
    pub concurrent: bool,
}

impl Concurrency {
    /// Calls with `key` run one at a time.
    pub fn exclusive(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            concurrent: false,
        }
    }

    /// Calls with `key` may overlap.
    pub fn concurrent(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            concurrent: true,
        }
    }
}

/// What replaying a call (after a crash, a timeout, a retry) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// A replay may repeat the call's effects. The default: a message id or a
    /// task id alone proves no deduplication on the other side.
    #[default]
    Unsafe,
    /// A replay of the same invocation is deduplicated by the callee (the
    /// host has checked that it is).
    Idempotent,
    /// The call changes nothing; replays are free.
    ReadOnly,
}

/// How a call ended, when its outcome is known.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// The answer.
    Output(ToolOutput),
    /// The tool needs an answer to go on.
    InputRequired(InputRequest),
    /// A definite failure.
    Failed(Failure),
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The answer as text, for the model.
    pub text: String,
}

impl ToolOutput {
    /// An answer of `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

/// A question a tool needs answered before it can go on. Serialisable, so a
/// durable host can keep it across a restart and resume it then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequest {
    /// The name of the tool that asked.
    pub tool: String,
    /// The question, for the model or the user.
    pub question: String,
    /// When set, the answer must be JSON valid against this schema
    /// ([`Answer::Json`]); otherwise it is non-empty text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_schema: Option<Value>,
    /// What the tool needs to continue (its binding): opaque to hosts, checked
    /// by the tool on [`Tool::resume`].
    pub continuation: Value,
}

/// An answer to an [`InputRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A text answer (an ordinary question).
    Text(String),
    /// A JSON answer (a question with an answer schema).
    Json(Value),
}

/// A definite failure: the work was reached and did not succeed.
#[derive(Debug)]
pub struct Failure {
    cause: BoxError,
    partial: Option<String>,
}

impl Failure {
    /// A failure because of `cause`, with the output produced before it.
    pub fn new(cause: impl Into<BoxError>, partial: Option<String>) -> Self {
        Self {
            cause: cause.into(),
            partial,
        }
    }

    /// Why it failed (for A2A tools, a `RemoteAgentError`).
    pub fn cause(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.cause
    }

    /// The output produced before the failure, if any.
    pub fn partial(&self) -> Option<&str> {
        self.partial.as_deref()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.cause.fmt(f)
    }
}

/// The class of a [`ToolError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The tool (set) is configured wrongly: an invalid endpoint, a tool
    /// name that is empty or used twice.
    Configuration,
    /// The arguments do not match the input schema.
    InvalidInput,
    /// An answer does not fit its question (empty text, JSON not valid
    /// against the answer schema).
    InvalidAnswer,
    /// A continuation does not belong to this tool, its binding or its
    /// identity changed, or the tool takes no answers. Refused before any
    /// remote call.
    Continuation,
    /// The tool's output cannot be given as text (data, raw or URL parts).
    UnsupportedContent,
    /// The remote work did not finish and may still advance (e.g. a task
    /// still WORKING), or needs the host (AUTH_REQUIRED).
    Incomplete,
    /// The remote side answered with a protocol error, or an answer that is
    /// not valid.
    Protocol,
    /// The remote side could not be reached, or the exchange broke.
    Transport,
    /// The tool set was closed.
    Closed,
}

/// A call whose outcome is not known.
#[derive(Debug)]
pub struct ToolError {
    kind: ToolErrorKind,
    source: BoxError,
}

impl ToolError {
    /// An error of `kind` because of `source`.
    pub fn new(kind: ToolErrorKind, source: impl Into<BoxError>) -> Self {
        Self {
            kind,
            source: source.into(),
        }
    }

    /// The class.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The underlying error (e.g. an [`A2aError`](crate::A2aError) with the
    /// remote code, message and details, or a `RemoteAgentError`).
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.source
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_requests_round_trip_through_json() {
        let r = InputRequest {
            tool: "t".into(),
            question: "which?".into(),
            answer_schema: Some(json!({"type": "integer"})),
            continuation: json!({"task": "x"}),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"answerSchema\""), "{text}");
        assert_eq!(serde_json::from_str::<InputRequest>(&text).unwrap(), r);
    }

    #[test]
    fn effect_is_unsafe_unless_declared() {
        assert_eq!(Effect::default(), Effect::Unsafe);
        assert_eq!(
            serde_json::to_value(Effect::ReadOnly).unwrap(),
            json!("read_only")
        );
    }

    #[test]
    fn errors_keep_their_kind_and_source() {
        let e = ToolError::new(ToolErrorKind::Transport, "refused");
        assert_eq!(e.kind(), ToolErrorKind::Transport);
        assert_eq!(e.to_string(), "refused");
        assert!(std::error::Error::source(&e).is_some());
    }
}
