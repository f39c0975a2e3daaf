//! Tools served as an MCP server: [`McpServer`] implements the official Rust
//! MCP SDK's ([`rmcp`](https://docs.rs/rmcp)) `ServerHandler` over any set of
//! [`Tool`]s, so any MCP host can call them (remote A2A agents included).
//!
//! - `tools/list` lists each tool's name, description and input schema, with
//!   hints from [`Tool::effect`]: [`Effect::ReadOnly`] → `readOnlyHint`,
//!   [`Effect::Idempotent`] → `idempotentHint`, [`Effect::Unsafe`] →
//!   `destructiveHint` and not idempotent. One more tool,
//!   [`ANSWER_TOOL`], answers the tools' questions.
//! - `tools/call` calls [`Tool::call`] with the arguments (`{}` when absent)
//!   and a fresh invocation id:
//!   - [`Outcome::Output`] → the text, as text content;
//!   - [`Outcome::Failed`] → an error result (`isError`) with the cause, then
//!     the partial output, if any, as a second text block;
//!   - [`Outcome::InputRequired`] → a result that is not an error: the
//!     question, a request id, how to answer, and the answer schema when there
//!     is one. The server keeps the request (its clones share it) until an
//!     answer gets an outcome, or until it expires
//!     ([`McpServer::expire_questions_after`]);
//!   - a [`ToolError`] → an error result `"{kind}: {message}"` (kinds in snake
//!     case: `invalid_answer`, `transport`, ...), except
//!     [`ToolErrorKind::InvalidInput`](crate::tool::ToolErrorKind::InvalidInput) and unknown tools, which are the MCP
//!     invalid-params error (`-32602`).
//!
//!   Non-text results also carry `structuredContent`: `{"inputRequired":
//!   {"requestId", "tool", "question", "answerSchema"?}}`, `{"failed":
//!   {"cause", "partial"?}}` or `{"error": {"kind", "message"}}`.
//! - [`ANSWER_TOOL`] takes `{"request_id": string, "answer": string}` and
//!   calls [`Tool::resume`] on the saved request: with [`Answer::Text`], or,
//!   when the question has an answer schema, [`Answer::Json`] parsed from the
//!   answer string. Its result reads like a call's (it may be another
//!   question). A request whose answer ends in an error (say, JSON the schema
//!   rejects) stays open for another answer.
//!
//! # Concurrency
//!
//! Calls run as the client sends them, each subject to its
//! [`Tool::concurrency`] declaration: two calls with the same key overlap
//! only when both declare `concurrent`; otherwise the later one waits (first
//! come, first served) until the earlier one ends. Keys are global to the
//! server and its clones, across tools and client sessions, so a host policy
//! may give several tools one key. An answer runs under the declaration of
//! the call that asked. A call the client cancels stops waiting at once.
//!
//! ```
//! use std::sync::Arc;
//! use a2a_tower::tool::mcp::McpServer;
//! use a2a_tower::tool::{Effect, Invocation, Outcome, Tool, ToolFuture, ToolOutput};
//! use rmcp::model::CallToolRequestParams;
//! use rmcp::ServiceExt;
//! use serde_json::{json, Value};
//!
//! struct Upper(Value);
//! impl Tool for Upper {
//!     fn name(&self) -> &str { "upper" }
//!     fn description(&self) -> &str { "Upper-cases a message." }
//!     fn input_schema(&self) -> &Value { &self.0 }
//!     fn effect(&self) -> Effect { Effect::ReadOnly }
//!     fn call(&self, invocation: Invocation) -> ToolFuture<'_> {
//!         Box::pin(async move {
//!             let text = invocation.arguments["message"].as_str().unwrap_or_default();
//!             Ok(Outcome::Output(ToolOutput::new(text.to_uppercase())))
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}});
//! let server = McpServer::new([Arc::new(Upper(schema)) as Arc<dyn Tool>])?;
//!
//! // Any AsyncRead + AsyncWrite pair is a transport: stdio, a socket, a pipe.
//! let (here, there) = tokio::io::duplex(64 * 1024);
//! tokio::spawn(async move { server.serve(there).await.unwrap().waiting().await });
//! let client = ().serve(here).await?;
//! let tools = client.list_all_tools().await?;
//! assert_eq!(tools[0].name, "upper");
//! assert_eq!(tools[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
//! let args = json!({"message": "hi"}).as_object().unwrap().clone();
//! let result = client.call_tool(CallToolRequestParams::new("upper").with_arguments(args)).await?;
//! assert_eq!(result.content[0].as_text().unwrap().text, "HI");
//! client.cancel().await?;
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```

mod locks;
mod questions;
mod result;

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;

use futures_util::future::{Either, select};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{Value, json};

use self::locks::KeyLocks;
use self::questions::{Pending, Questions};
use crate::ConfigError;
use crate::tool::{Answer, Concurrency, Effect, Invocation, Outcome, Tool, ToolError};

/// The name of the extra tool that answers a tool's question:
/// `{"request_id": string, "answer": string}`.
pub const ANSWER_TOOL: &str = "answer_input_request";

/// A set of [`Tool`]s as an MCP server (an `rmcp::ServerHandler`); serve it
/// with `rmcp::ServiceExt::serve` over any transport. Clones share the tools,
/// the open questions and the concurrency keys. See the [module
/// docs](self).
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    info: Implementation,
}

struct Shared {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
    /// What `tools/list` says: the tools in order, then [`ANSWER_TOOL`].
    listed: Vec<rmcp::model::Tool>,
    locks: KeyLocks,
    questions: Questions,
}

/// The arguments of [`ANSWER_TOOL`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerArguments {
    request_id: String,
    answer: String,
}

impl McpServer {
    /// Serves `tools`. Fails when two tools share a name, a tool is named
    /// [`ANSWER_TOOL`], or an input schema is not a JSON object.
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Result<Self, ConfigError> {
        let tools: Vec<Arc<dyn Tool>> = tools.into_iter().collect();
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut listed = Vec::with_capacity(tools.len() + 1);
        for (index, tool) in tools.iter().enumerate() {
            let name = tool.name();
            if name == ANSWER_TOOL || by_name.insert(name.to_owned(), index).is_some() {
                return Err(ConfigError::new(format!(
                    "mcp: two tools are named {name:?} (the server's own answer tool is {ANSWER_TOOL:?})"
                )));
            }
            let Value::Object(schema) = tool.input_schema() else {
                return Err(ConfigError::new(format!(
                    "mcp: the input schema of tool {name:?} is not a JSON object"
                )));
            };
            listed.push(
                rmcp::model::Tool::new(
                    name.to_owned(),
                    tool.description().to_owned(),
                    Arc::new(schema.clone()),
                )
                .with_annotations(annotations(tool.effect())),
            );
        }
        listed.push(answer_tool());
        Ok(Self {
            shared: Arc::new(Shared {
                tools,
                by_name,
                listed,
                locks: KeyLocks::default(),
                questions: Questions::default(),
            }),
            info: Implementation::new("a2a-tower", env!("CARGO_PKG_VERSION")),
        })
    }

    /// Names the server to clients (`serverInfo`); `a2a-tower` and the
    /// crate's version by default.
    #[must_use]
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Open questions older than `ttl` expire (an answer to one then finds
    /// no open question); without it they are kept for the server's
    /// lifetime.
    #[must_use]
    pub fn expire_questions_after(self, ttl: std::time::Duration) -> Self {
        self.shared.questions.expire_after(ttl);
        self
    }

    /// The number of questions waiting for an answer.
    pub fn open_requests(&self) -> usize {
        self.shared.questions.len()
    }

    async fn call(&self, name: &str, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        let Some(&index) = self.shared.by_name.get(name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            ));
        };
        let tool = &self.shared.tools[index];
        let invocation =
            Invocation::new(uuid::Uuid::new_v4().to_string(), Value::Object(arguments));
        let concurrency = tool.concurrency(&invocation);
        let permit = self.shared.locks.acquire(&concurrency).await;
        let outcome = tool.call(invocation).await;
        drop(permit);
        self.conclude(name, index, concurrency, outcome)
    }

    async fn answer(&self, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        let AnswerArguments { request_id, answer } =
            serde_json::from_value(Value::Object(arguments))
                .map_err(|e| ErrorData::invalid_params(format!("{ANSWER_TOOL}: {e}"), None))?;
        let Some(taken) = self.shared.questions.take(&request_id) else {
            let message = format!("no open question has request id {request_id:?}");
            return Ok(result::error_result("continuation", &message));
        };
        let pending = taken.pending();
        let answer = match &pending.request.answer_schema {
            None => Answer::Text(answer),
            Some(_) => match serde_json::from_str(&answer) {
                Ok(json) => Answer::Json(json),
                Err(e) => {
                    let message = format!("the answer is not JSON: {e}");
                    return Ok(result::error_result("invalid_answer", &message));
                }
            },
        };
        let (index, concurrency) = (pending.tool, pending.concurrency.clone());
        let tool = &self.shared.tools[index];
        let permit = self.shared.locks.acquire(&concurrency).await;
        let outcome = tool.resume(pending.request.clone(), answer).await;
        drop(permit);
        if outcome.is_ok() {
            taken.answered();
        }
        self.conclude(tool.name(), index, concurrency, outcome)
    }

    /// The result of a call or an answer; a new question is saved.
    fn conclude(
        &self,
        name: &str,
        index: usize,
        concurrency: Concurrency,
        outcome: Result<Outcome, ToolError>,
    ) -> Result<CallToolResult, ErrorData> {
        let class = match &outcome {
            Ok(Outcome::Output(_)) => "output",
            Ok(Outcome::InputRequired(_)) => "input_required",
            Ok(Outcome::Failed(_)) => "failed",
            Err(e) => super::agent::error_class(e.kind()),
        };
        tracing::debug!(tool = name, outcome = class, "mcp tool call");
        match outcome {
            Ok(Outcome::Output(output)) => Ok(result::output(output)),
            Ok(Outcome::Failed(failure)) => Ok(result::failed(&failure)),
            Ok(Outcome::InputRequired(request)) => {
                let id = self.shared.questions.ask(Pending {
                    tool: index,
                    request: request.clone(),
                    concurrency,
                });
                Ok(result::input_required(&id, &request))
            }
            Err(error) => result::tool_error(&error),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.info.clone())
            .with_instructions(format!(
                "A tool may ask a question instead of answering; answer it with \
                 {ANSWER_TOOL}, giving the request id from the tool's result."
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.shared.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let work = async {
            if request.name == ANSWER_TOOL {
                self.answer(arguments).await
            } else {
                self.call(&request.name, arguments).await
            }
        };
        match select(pin!(work), pin!(context.ct.cancelled())).await {
            Either::Left((result, _)) => result.map(CallToolResponse::from),
            Either::Right(_) => Err(ErrorData::internal_error("the call was cancelled", None)),
        }
    }
}

/// The MCP hints for a replay effect.
fn annotations(effect: Effect) -> ToolAnnotations {
    match effect {
        Effect::ReadOnly => ToolAnnotations::new().read_only(true),
        Effect::Idempotent => ToolAnnotations::new().read_only(false).idempotent(true),
        Effect::Unsafe => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false),
    }
}

/// The listing of [`ANSWER_TOOL`].
fn answer_tool() -> rmcp::model::Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "request_id": {
                "type": "string",
                "description": "The request id from the result of the tool that asked."
            },
            "answer": {
                "type": "string",
                "description": "The answer. When the question gives an answer schema, JSON valid against it, as a string."
            }
        },
        "required": ["request_id", "answer"],
        "additionalProperties": false
    });
    let Value::Object(schema) = schema else {
        unreachable!("a literal object")
    };
    rmcp::model::Tool::new(
        ANSWER_TOOL,
        "Answers a question a tool asked instead of answering (its result gave a request id). \
         The result reads like the tool's own: its answer, a failure, or another question.",
        Arc::new(schema),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use rmcp::model::ErrorCode;
    use rmcp::service::{RoleClient, RunningService};
    use rmcp::{ServiceError, ServiceExt};

    use crate::tool::{Failure, InputRequest, ToolErrorKind, ToolFuture, ToolOutput};

    /// A tool whose calls end as `behave` says for the arguments; answers
    /// are echoed back (JSON answers must be integers).
    struct Scripted {
        name: &'static str,
        effect: Effect,
        schema: Value,
        behave: fn(&Value) -> Result<Outcome, ToolError>,
    }

    impl Scripted {
        fn new(name: &'static str, behave: fn(&Value) -> Result<Outcome, ToolError>) -> Self {
            Self {
                name,
                effect: Effect::Unsafe,
                schema: json!({"type": "object", "properties": {"message": {"type": "string"}}}),
                behave,
            }
        }
    }

    impl Tool for Scripted {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "A scripted tool."
        }
        fn input_schema(&self) -> &Value {
            &self.schema
        }
        fn effect(&self) -> Effect {
            self.effect
        }
        fn call(&self, invocation: Invocation) -> ToolFuture<'_> {
            let outcome = (self.behave)(&invocation.arguments);
            Box::pin(async move { outcome })
        }
        fn resume(&self, request: InputRequest, answer: Answer) -> ToolFuture<'_> {
            Box::pin(async move {
                assert_eq!(request.tool, self.name);
                let text = match answer {
                    Answer::Text(t) if t.is_empty() => {
                        return Err(ToolError::new(ToolErrorKind::InvalidAnswer, "empty answer"));
                    }
                    Answer::Text(t) => t,
                    Answer::Json(Value::Number(n)) if n.is_i64() => format!("number {n}"),
                    Answer::Json(_) => {
                        return Err(ToolError::new(
                            ToolErrorKind::InvalidAnswer,
                            "not an integer",
                        ));
                    }
                };
                if text == "again" {
                    return Ok(ask(None));
                }
                Ok(Outcome::Output(ToolOutput::new(format!(
                    "answered: {text}"
                ))))
            })
        }
    }

    fn ask(schema: Option<Value>) -> Outcome {
        Outcome::InputRequired(InputRequest {
            tool: "asker".into(),
            question: "Which one?".into(),
            answer_schema: schema,
            continuation: json!({"task": "t-1"}),
        })
    }

    fn echo(arguments: &Value) -> Result<Outcome, ToolError> {
        match arguments["message"].as_str() {
            Some(text) => Ok(Outcome::Output(ToolOutput::new(text))),
            None => Err(ToolError::new(
                ToolErrorKind::InvalidInput,
                "message is required",
            )),
        }
    }

    fn asker(arguments: &Value) -> Result<Outcome, ToolError> {
        let schema = (arguments["message"] == "number").then(|| json!({"type": "integer"}));
        Ok(ask(schema))
    }

    fn tools() -> Vec<Arc<dyn Tool>> {
        let mut read_only = Scripted::new("echo", echo);
        read_only.effect = Effect::ReadOnly;
        let mut idempotent = Scripted::new("failing", |_| {
            let partial = Some("half an answer".to_owned());
            Ok(Outcome::Failed(Failure::new("remote task FAILED", partial)))
        });
        idempotent.effect = Effect::Idempotent;
        vec![
            Arc::new(read_only),
            Arc::new(idempotent),
            Arc::new(Scripted::new("asker", asker)),
            Arc::new(Scripted::new("broken", |_| {
                Err(ToolError::new(
                    ToolErrorKind::Transport,
                    "connection refused",
                ))
            })),
        ]
    }

    type Client = RunningService<RoleClient, ()>;

    async fn connect(server: McpServer) -> Client {
        let (here, there) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move { server.serve(there).await.unwrap().waiting().await });
        ().serve(here).await.unwrap()
    }

    async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
        try_call(client, name, arguments).await.unwrap()
    }

    async fn try_call(
        client: &Client,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ServiceError> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        client.call_tool(params).await
    }

    fn texts(result: &CallToolResult) -> Vec<&str> {
        let text = |c| match rmcp::model::ContentBlock::as_text(c) {
            Some(t) => t.text.as_str(),
            None => panic!("not text: {c:?}"),
        };
        result.content.iter().map(text).collect()
    }

    fn invalid_params(error: ServiceError) -> String {
        match error {
            ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS => e.message.into(),
            other => panic!("not invalid params: {other:?}"),
        }
    }

    fn request_id(result: &CallToolResult) -> String {
        let asked = &result.structured_content.as_ref().unwrap()["inputRequired"];
        asked["requestId"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn lists_every_tool_with_its_hints_then_the_answer_tool() {
        let client = connect(McpServer::new(tools()).unwrap()).await;
        let listed = client.list_all_tools().await.unwrap();
        let names: Vec<_> = listed.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["echo", "failing", "asker", "broken", ANSWER_TOOL]);
        assert_eq!(listed[0].description.as_deref(), Some("A scripted tool."));
        assert_eq!(
            listed[0].input_schema["properties"]["message"]["type"],
            "string"
        );
        let hints = |i: usize| listed[i].annotations.clone().unwrap();
        assert_eq!(hints(0).read_only_hint, Some(true));
        assert_eq!(hints(1).idempotent_hint, Some(true));
        assert_eq!(hints(1).read_only_hint, Some(false));
        assert_eq!(hints(2).destructive_hint, Some(true));
        assert_eq!(hints(2).idempotent_hint, Some(false));
        let answer_schema = &listed[4].input_schema;
        assert_eq!(answer_schema["required"], json!(["request_id", "answer"]));
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "a2a-tower");
        assert!(info.capabilities.tools.is_some());
    }

    #[tokio::test]
    async fn an_output_is_text_content() {
        let client = connect(McpServer::new(tools()).unwrap()).await;
        let result = call(&client, "echo", json!({"message": "hello"})).await;
        assert_eq!(result.is_error, Some(false));
        assert_eq!(texts(&result), ["hello"]);
    }

    #[tokio::test]
    async fn invalid_arguments_and_unknown_tools_are_invalid_params() {
        let client = connect(McpServer::new(tools()).unwrap()).await;
        let error = try_call(&client, "echo", json!({})).await.unwrap_err();
        assert_eq!(invalid_params(error), "message is required");
        let error = try_call(&client, "nope", json!({})).await.unwrap_err();
        assert!(invalid_params(error).contains("unknown tool"));
        let error = try_call(&client, ANSWER_TOOL, json!({"request_id": "x"}))
            .await
            .unwrap_err();
        assert!(invalid_params(error).contains("answer"));
    }

    #[tokio::test]
    async fn a_failure_is_an_error_result_with_cause_and_partial_output() {
        let client = connect(McpServer::new(tools()).unwrap()).await;
        let result = call(&client, "failing", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            texts(&result),
            ["The tool failed: remote task FAILED", "half an answer"]
        );
        let failed = &result.structured_content.unwrap()["failed"];
        assert_eq!(failed["cause"], "remote task FAILED");
        assert_eq!(failed["partial"], "half an answer");
    }

    #[tokio::test]
    async fn a_tool_error_is_an_error_result_with_its_class() {
        let client = connect(McpServer::new(tools()).unwrap()).await;
        let result = call(&client, "broken", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(texts(&result), ["transport: connection refused"]);
        let error = &result.structured_content.unwrap()["error"];
        assert_eq!(error["kind"], "transport");
    }

    #[tokio::test]
    async fn a_text_question_is_answered_through_the_answer_tool() {
        let server = McpServer::new(tools()).unwrap();
        let client = connect(server.clone()).await;
        let asked = call(&client, "asker", json!({"message": "text"})).await;
        assert_eq!(asked.is_error, Some(false));
        let id = request_id(&asked);
        let text = texts(&asked)[0];
        assert!(text.contains("Which one?") && text.contains(&id), "{text}");
        assert!(!text.contains("schema"), "{text}");
        assert_eq!(server.open_requests(), 1);

        // An answer the tool rejects leaves the question open.
        let answer = json!({"request_id": id, "answer": ""});
        let rejected = call(&client, ANSWER_TOOL, answer).await;
        assert_eq!(texts(&rejected), ["invalid_answer: empty answer"]);
        assert_eq!(server.open_requests(), 1);

        let answer = json!({"request_id": id, "answer": "the red one"});
        let answered = call(&client, ANSWER_TOOL, answer.clone()).await;
        assert_eq!(answered.is_error, Some(false));
        assert_eq!(texts(&answered), ["answered: the red one"]);
        assert_eq!(server.open_requests(), 0);

        // Answered once: the id is spent.
        let again = call(&client, ANSWER_TOOL, answer).await;
        assert_eq!(again.is_error, Some(true));
        assert_eq!(
            again.structured_content.unwrap()["error"]["kind"],
            "continuation"
        );
    }

    #[tokio::test]
    async fn a_question_with_a_schema_takes_json_and_states_the_schema() {
        let server = McpServer::new(tools()).unwrap();
        let client = connect(server.clone()).await;
        let asked = call(&client, "asker", json!({"message": "number"})).await;
        assert!(texts(&asked)[0].contains(r#"{"type":"integer"}"#));
        let structured = asked.structured_content.clone().unwrap();
        assert_eq!(
            structured["inputRequired"]["answerSchema"],
            json!({"type": "integer"})
        );
        let id = request_id(&asked);

        let answer = json!({"request_id": id, "answer": "seven"});
        let not_json = call(&client, ANSWER_TOOL, answer).await;
        assert_eq!(not_json.is_error, Some(true));
        assert!(texts(&not_json)[0].starts_with("invalid_answer: the answer is not JSON"));

        let answer = json!({"request_id": id, "answer": "\"7\""});
        let wrong = call(&client, ANSWER_TOOL, answer).await;
        assert_eq!(texts(&wrong), ["invalid_answer: not an integer"]);

        let answer = json!({"request_id": id, "answer": "7"});
        let answered = call(&client, ANSWER_TOOL, answer).await;
        assert_eq!(texts(&answered), ["answered: number 7"]);
        assert_eq!(server.open_requests(), 0);
    }

    #[tokio::test]
    async fn an_answer_may_bring_another_question() {
        let server = McpServer::new(tools()).unwrap();
        let client = connect(server.clone()).await;
        let first = request_id(&call(&client, "asker", json!({})).await);
        let answer = json!({"request_id": first, "answer": "again"});
        let second = call(&client, ANSWER_TOOL, answer).await;
        let second = request_id(&second);
        assert_ne!(first, second);
        assert_eq!(server.open_requests(), 1);
        let answer = json!({"request_id": second, "answer": "done"});
        assert_eq!(
            texts(&call(&client, ANSWER_TOOL, answer).await),
            ["answered: done"]
        );
    }

    #[test]
    fn duplicate_names_and_non_object_schemas_are_refused() {
        let twice = [tools()[0].clone(), tools()[0].clone()];
        assert!(McpServer::new(twice).is_err());
        let clash: Arc<dyn Tool> = Arc::new(Scripted::new(ANSWER_TOOL, echo));
        assert!(McpServer::new([clash]).is_err());
        let mut odd = Scripted::new("odd", echo);
        odd.schema = json!(true);
        assert!(McpServer::new([Arc::new(odd) as Arc<dyn Tool>]).is_err());
    }

    /// A tool that counts the calls in flight and waits at a barrier (when
    /// it has one) or for a moment, or for ever when asked to `hang`; its
    /// arguments give the declaration.
    struct Gate {
        running: AtomicUsize,
        most: AtomicUsize,
        barrier: Option<tokio::sync::Barrier>,
        schema: Value,
    }

    impl Gate {
        fn new(barrier: Option<usize>) -> Arc<Self> {
            Arc::new(Self {
                running: AtomicUsize::new(0),
                most: AtomicUsize::new(0),
                barrier: barrier.map(tokio::sync::Barrier::new),
                schema: json!({"type": "object"}),
            })
        }
    }

    impl Tool for Gate {
        fn name(&self) -> &str {
            "gate"
        }
        fn description(&self) -> &str {
            "Waits."
        }
        fn input_schema(&self) -> &Value {
            &self.schema
        }
        fn concurrency(&self, invocation: &Invocation) -> Concurrency {
            let key = invocation.arguments["key"].as_str().unwrap_or("gate");
            match invocation.arguments["concurrent"].as_bool() {
                Some(true) => Concurrency::concurrent(key),
                _ => Concurrency::exclusive(key),
            }
        }
        fn call(&self, invocation: Invocation) -> ToolFuture<'_> {
            Box::pin(async move {
                if invocation.arguments["hang"] == true {
                    std::future::pending::<()>().await;
                }
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.most.fetch_max(now, Ordering::SeqCst);
                match &self.barrier {
                    Some(barrier) => {
                        barrier.wait().await;
                    }
                    None => tokio::time::sleep(Duration::from_millis(20)).await,
                }
                self.running.fetch_sub(1, Ordering::SeqCst);
                Ok(Outcome::Output(ToolOutput::new("through")))
            })
        }
    }

    async fn call_three(gate: &Arc<Gate>, arguments: [Value; 3]) {
        let client = connect(McpServer::new([gate.clone() as Arc<dyn Tool>]).unwrap()).await;
        let calls = arguments.map(|a| call(&client, "gate", a));
        let all = futures_util::future::join_all(calls);
        let results = tokio::time::timeout(Duration::from_secs(10), all)
            .await
            .expect("the calls finish");
        assert!(results.iter().all(|r| texts(r) == ["through"]));
    }

    #[tokio::test]
    async fn exclusive_calls_with_one_key_run_one_at_a_time() {
        let gate = Gate::new(None);
        let exclusive = json!({"key": "k"});
        let shared = json!({"key": "k", "concurrent": true});
        call_three(&gate, [exclusive.clone(), shared, exclusive]).await;
        assert_eq!(gate.most.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn calls_that_may_overlap_do() {
        // Each call waits for the other two: they must all run at once.
        let gate = Gate::new(Some(3));
        let shared = json!({"key": "k", "concurrent": true});
        call_three(&gate, [shared.clone(), shared.clone(), shared]).await;
        let gate = Gate::new(Some(3));
        call_three(
            &gate,
            [
                json!({"key": "a"}),
                json!({"key": "b"}),
                json!({"key": "c"}),
            ],
        )
        .await;
        assert_eq!(gate.most.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_cancelled_call_frees_its_key() {
        let gate = Gate::new(None);
        let client = connect(McpServer::new([gate as Arc<dyn Tool>]).unwrap()).await;
        // Dropping the client's call sends notifications/cancelled.
        let hung = try_call(&client, "gate", json!({"hang": true}));
        assert!(
            tokio::time::timeout(Duration::from_millis(200), hung)
                .await
                .is_err()
        );
        let next = call(&client, "gate", json!({}));
        let next = tokio::time::timeout(Duration::from_secs(10), next).await;
        assert_eq!(texts(&next.expect("the key is free again")), ["through"]);
    }

    #[test]
    fn the_server_is_send_sync_and_clone() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<McpServer>();
    }
}
