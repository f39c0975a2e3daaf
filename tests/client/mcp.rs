//! The `mcp` example as a process: it opens example agents as a tool set and
//! serves it over stdio, driven here by the official Rust MCP SDK's client
//! (`rmcp`): initialize, list the tools, call them, answer their questions.
//! Needs the example binaries (see `support/server.rs`).

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt as _};
use serde_json::{Value, json};

use support::server::{Server, closed_port, example_binary};

/// How long starting the example, or one call, may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// The `mcp` example serving `card_urls`, and an MCP client connected to it
/// over its stdin/stdout; the process is killed when dropped.
struct Mcp {
    client: RunningService<RoleClient, ()>,
    _child: tokio::process::Child,
}

impl Mcp {
    async fn start(card_urls: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(example_binary("mcp"))
            .args(card_urls)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the mcp example");
        let pipes = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = tokio::time::timeout(PATIENCE, ().serve(pipes))
            .await
            .expect("initialized in time")
            .expect("the MCP handshake");
        Self {
            client,
            _child: child,
        }
    }

    async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let call = self.client.call_tool(params);
        tokio::time::timeout(PATIENCE, call)
            .await
            .expect("answered in time")
    }
}

/// The result's text blocks.
fn texts(result: &CallToolResult) -> Vec<&str> {
    let text = |c| match rmcp::model::ContentBlock::as_text(c) {
        Some(t) => t.text.as_str(),
        None => panic!("not text: {c:?}"),
    };
    result.content.iter().map(text).collect()
}

fn card_url(server: &Server) -> String {
    format!("{}/.well-known/agent-card.json", server.base)
}

#[tokio::test]
async fn echo_is_listed_and_called_over_stdio() {
    let echo = Server::start("echo");
    let mcp = Mcp::start(&[&card_url(&echo)]).await;
    let info = mcp.client.peer_info().expect("the server's info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "a2a-tower");

    let tools = mcp.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["echo", "answer_input_request"]);
    let description = tools[0].description.as_deref().unwrap_or_default();
    assert!(
        description.contains("Streams its input back"),
        "{description}"
    );
    assert_eq!(tools[0].input_schema["required"], json!(["message"]));

    let result = mcp.call("echo", json!({"message": "hello there"})).await;
    let result = result.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(texts(&result), ["hello there"]);

    // The A2A tool decodes its input strictly: the MCP invalid-params error.
    match mcp.call("echo", json!({"text": "hi"})).await {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("not invalid params: {other:?}"),
    }
}

#[tokio::test]
async fn a_managed_agents_questions_are_answered_with_json() {
    let managed = Server::start("managed");
    let mcp = Mcp::start(&[&card_url(&managed)]).await;
    let order = r#"{"order":"A-1","amount":12.5}"#;
    let mut result = mcp
        .call("refunds", json!({"message": order}))
        .await
        .unwrap();
    let mut asked = Vec::new();
    // Two waits (`approve` and `score`, in either order), each with its
    // answer schema; then the program's output, which is JSON (a data part):
    // the A2A tool gives text only, so that is an `unsupported_content` error.
    while let Some(question) = result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("inputRequired"))
        .cloned()
    {
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let schema = &question["answerSchema"];
        let answer = if schema["type"] == "integer" {
            "7"
        } else {
            assert!(
                texts(&result)[0].contains("Refund 12.5 for A-1?"),
                "{result:?}"
            );
            r#"{"approved": true, "note": "ok"}"#
        };
        asked.push(answer);
        let id = question["requestId"].as_str().unwrap();
        let answer = json!({"request_id": id, "answer": answer});
        result = mcp.call("answer_input_request", answer).await.unwrap();
        assert!(asked.len() <= 2, "asked a third time: {result:?}");
    }
    assert_eq!(asked.len(), 2, "{result:?}");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let error = &result.structured_content.as_ref().unwrap()["error"];
    assert_eq!(error["kind"], "unsupported_content", "{result:?}");
}

#[test]
fn an_unreachable_card_exits_1_with_the_reason() {
    let port = closed_port();
    let out = std::process::Command::new(example_binary("mcp"))
        .arg(format!(
            "http://127.0.0.1:{port}/.well-known/agent-card.json"
        ))
        .stdin(Stdio::null())
        .output()
        .expect("run the mcp example");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("mcp: "),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}
