//! The A2A tool: one remote agent as a [`Tool`]. Built by
//! [`ToolSet::open`](super::ToolSet::open) from an [`Endpoint`](super::Endpoint)
//! and the agent's card.
//!
//! - Description: the card's description, then its skills (name,
//!   description, examples).
//! - Input: exactly `{"message": string}` ([`input_schema`]), decoded
//!   strictly: an unknown member or a wrong type is
//!   [`InvalidInput`](ToolErrorKind::InvalidInput) before any call.
//! - A call is one blocking SendMessage (`returnImmediately` unset) of a user
//!   message with a fresh message id; the result is projected (see
//!   `project`). A resume sends the answer to the same task (see
//!   `continuation`), then projects the same way.
//! - Errors of the exchange: an unreachable agent (or one answering
//!   UNAVAILABLE) is [`Transport`](ToolErrorKind::Transport); any other
//!   protocol error, complete as the agent sent it, is
//!   [`Protocol`](ToolErrorKind::Protocol).
//! - Trace: a span `a2a.tool` with the tool's name, the operation (`call`,
//!   `resume`) and the outcome's classification only, never remote text.
//!
//! ```
//! use a2a_tower::tool::input_schema;
//! assert_eq!(
//!     input_schema().to_string(),
//!     r#"{"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false}"#
//! );
//! ```

use std::sync::{LazyLock, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};
use tower_service::Service;
use tracing::Instrument;

use super::continuation::Bound;
use super::contract::{
    Answer, Concurrency, Effect, InputRequest, Invocation, Outcome, Tool, ToolError, ToolErrorKind,
    ToolFuture,
};
use super::endpoint::ConcurrencyPolicy;
use super::project::project;
use crate::client::{A2aClient, HttpService};
use crate::types::{AgentCard, Message, SendMessageConfiguration, SendMessageRequest};
use crate::{A2aError, A2aRequest, A2aResponse, ErrorKind, Operation};

/// The input schema of every A2A tool: `{"message": string}`, nothing else.
pub fn input_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
            "additionalProperties": false
        })
    });
    &SCHEMA
}

/// The decoded arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    message: String,
}

fn decode(arguments: Value) -> Result<Input, ToolError> {
    let invalid = |why: &dyn std::fmt::Display| {
        ToolError::new(
            ToolErrorKind::InvalidInput,
            format!("the arguments must be {{\"message\": string}} and nothing else: {why}"),
        )
    };
    // serde would also read a struct from an array; only an object will do.
    if !arguments.is_object() {
        return Err(invalid(&"not an object"));
    }
    serde_json::from_value(arguments).map_err(|e| invalid(&e))
}

/// The tool description of `card`: its description, then its skills.
pub(crate) fn describe(card: &AgentCard) -> String {
    let mut d = card.description.trim().to_owned();
    if !card.skills.is_empty() {
        if !d.is_empty() {
            d.push_str("\n\n");
        }
        d.push_str("Skills:");
        for s in &card.skills {
            d.push_str("\n- ");
            d.push_str(s.name.trim());
            if !s.description.trim().is_empty() {
                d.push_str(": ");
                d.push_str(s.description.trim());
            }
            if !s.examples.is_empty() {
                d.push_str("\n  Examples: ");
                d.push_str(&s.examples.join("; "));
            }
        }
    }
    d
}

/// The class of an error of the exchange.
pub(crate) fn exchange_error(e: A2aError) -> ToolError {
    let kind = match e.kind() {
        ErrorKind::Unavailable => ToolErrorKind::Transport,
        _ => ToolErrorKind::Protocol,
    };
    ToolError::new(kind, e)
}

/// Something a tool set closes: its client, dropped.
pub(crate) trait Close: Send + Sync {
    fn close(&self);
}

/// One remote agent as a tool; see the module docs.
pub(crate) struct AgentTool<S> {
    pub(crate) description: String,
    pub(crate) bound: Bound,
    pub(crate) concurrency: Option<ConcurrencyPolicy>,
    pub(crate) effect: Effect,
    pub(crate) client: Mutex<Option<A2aClient<S>>>,
}

impl<S: Send> Close for AgentTool<S> {
    fn close(&self) {
        let client = self.client.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(client);
    }
}

impl<S> AgentTool<S>
where
    S: HttpService,
{
    fn connected(&self) -> Result<A2aClient<S>, ToolError> {
        let client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        client.clone().ok_or_else(|| {
            ToolError::new(ToolErrorKind::Closed, "the tool set of this tool is closed")
        })
    }

    /// Sends `message` (blocking) and projects the result.
    async fn send(&self, message: Message) -> Result<Outcome, ToolError> {
        let mut client = self.connected()?;
        let send = SendMessageRequest {
            message,
            configuration: Some(SendMessageConfiguration {
                return_immediately: false,
                ..SendMessageConfiguration::default()
            }),
            ..SendMessageRequest::default()
        };
        futures_util::future::poll_fn(|cx| client.poll_ready(cx))
            .await
            .map_err(exchange_error)?;
        let res = client
            .call(A2aRequest::new(Operation::SendMessage(send)))
            .await
            .map_err(exchange_error)?;
        match res {
            A2aResponse::SendMessage(r) => project(r, &self.bound),
            _ => Err(ToolError::new(
                ToolErrorKind::Protocol,
                "the client answered SendMessage with another operation's result",
            )),
        }
    }

    fn traced<'a>(
        &'a self,
        operation: &'static str,
        work: impl Future<Output = Result<Outcome, ToolError>> + Send + 'a,
    ) -> ToolFuture<'a> {
        let span = tracing::info_span!(
            "a2a.tool",
            tool = %self.bound.binding.tool,
            operation,
            outcome = tracing::field::Empty,
        );
        let record = span.clone();
        // A combinator, not an `async` block awaiting `work` (which would
        // keep it twice in the box).
        let work = futures_util::FutureExt::inspect(work, move |out| {
            let outcome = match out {
                Ok(Outcome::Output(_)) => "output",
                Ok(Outcome::InputRequired(_)) => "input_required",
                Ok(Outcome::Failed(_)) => "failed",
                Err(e) => error_class(e.kind()),
            };
            record.record("outcome", outcome);
        });
        Box::pin(work.instrument(span))
    }
}

/// The classification of an error kind, for spans (and the class
/// `tool::mcp` gives MCP clients).
pub(super) fn error_class(kind: ToolErrorKind) -> &'static str {
    match kind {
        ToolErrorKind::Configuration => "configuration",
        ToolErrorKind::InvalidInput => "invalid_input",
        ToolErrorKind::InvalidAnswer => "invalid_answer",
        ToolErrorKind::Continuation => "continuation",
        ToolErrorKind::UnsupportedContent => "unsupported_content",
        ToolErrorKind::Incomplete => "incomplete",
        ToolErrorKind::Protocol => "protocol",
        ToolErrorKind::Transport => "transport",
        ToolErrorKind::Closed => "closed",
    }
}

impl<S> Tool for AgentTool<S>
where
    S: HttpService,
{
    fn name(&self) -> &str {
        &self.bound.binding.tool
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        input_schema()
    }

    fn concurrency(&self, invocation: &Invocation) -> Concurrency {
        match &self.concurrency {
            Some(policy) => policy(invocation),
            None => Concurrency::exclusive(self.name()),
        }
    }

    fn effect(&self) -> Effect {
        self.effect
    }

    fn call(&self, invocation: Invocation) -> ToolFuture<'_> {
        self.traced("call", async move {
            let input = decode(invocation.arguments)?;
            let message = Message::user(uuid::Uuid::new_v4().to_string(), input.message);
            self.send(message).await
        })
    }

    fn resume(&self, request: InputRequest, answer: Answer) -> ToolFuture<'_> {
        self.traced("resume", async move {
            let continuation = self.bound.check(&request)?;
            let message = continuation.reply(answer)?;
            self.send(message).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentSkill;

    #[test]
    fn input_is_decoded_strictly() {
        assert_eq!(decode(json!({"message": "hi"})).unwrap().message, "hi");
        for bad in [
            json!({"message": "hi", "extra": 1}),
            json!({"message": 1}),
            json!({"message": null}),
            json!({}),
            json!("hi"),
            json!(["hi"]),
        ] {
            let e = decode(bad.clone()).err().unwrap();
            assert_eq!(e.kind(), ToolErrorKind::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn descriptions_list_the_skills() {
        let mut skill = AgentSkill::new("fx", "Convert", "Converts amounts");
        skill.examples = vec!["100 USD in EUR".into(), "1 BTC in CHF".into()];
        let card = AgentCard::new("FX", "Currency conversion.", "1")
            .with_skill(skill)
            .with_skill(AgentSkill::new("rates", "Rates", ""));
        assert_eq!(
            describe(&card),
            "Currency conversion.\n\nSkills:\n- Convert: Converts amounts\n  \
             Examples: 100 USD in EUR; 1 BTC in CHF\n- Rates"
        );
        assert_eq!(
            describe(&AgentCard::new("A", "Only this.", "1")),
            "Only this."
        );
    }

    #[test]
    fn exchange_errors_are_classified() {
        let e = exchange_error(A2aError::new(ErrorKind::Unavailable));
        assert_eq!(e.kind(), ToolErrorKind::Transport);
        let e = exchange_error(A2aError::task_not_found("t"));
        assert_eq!(e.kind(), ToolErrorKind::Protocol);
        let inner = e.get_ref().downcast_ref::<A2aError>().unwrap();
        assert_eq!(inner.kind(), ErrorKind::TaskNotFound);
    }
}
