//! Serve remote A2A agents to any MCP host, as tools, over stdio:
//!
//! ```text
//! cargo run --example mcp --features mcp -- CARD_URL [CARD_URL...]
//! ```
//!
//! Each `CARD_URL` (an agent card's full URL) becomes one tool
//! ([`ToolSet`]): named after the card (`Echo` → `echo`), described by its
//! description and skills, taking `{"message": string}`. The set is served
//! as an MCP server ([`McpServer`]) on stdin/stdout until the host closes
//! them; a question from an agent (INPUT_REQUIRED) is answered through the
//! `answer_input_request` tool. Diagnostics go to stderr, never stdout.
//!
//! ```text
//! cargo run --example echo &
//! cargo run --example mcp --features mcp -- http://127.0.0.1:8080/.well-known/agent-card.json
//! ```
//!
//! An MCP host runs the built binary (`target/debug/examples/mcp`) with the
//! card URLs as its arguments, e.g. in a host's JSON configuration:
//! `{"command": "/path/to/mcp", "args": ["http://127.0.0.1:8080/.well-known/agent-card.json"]}`.

use std::process::ExitCode;

use a2a_tower::BoxError;
use a2a_tower::tool::mcp::McpServer;
use a2a_tower::tool::{Endpoint, ToolSet};
use rmcp::ServiceExt as _;

/// The usage text.
const USAGE: &str = "usage: mcp CARD_URL [CARD_URL...]";

#[tokio::main]
async fn main() -> ExitCode {
    let card_urls: Vec<String> = std::env::args().skip(1).collect();
    if card_urls.is_empty() || card_urls.iter().any(|a| a.starts_with('-')) {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    }
    match serve(card_urls).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Opens the agents and serves them until the host hangs up.
async fn serve(card_urls: Vec<String>) -> Result<(), BoxError> {
    let set = ToolSet::open(card_urls.into_iter().map(Endpoint::new)).await?;
    let tools = set.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    eprintln!("mcp: serving {} on stdio", names.join(", "));
    let server = McpServer::new(tools.clone())?;
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    running.waiting().await?;
    set.close();
    Ok(())
}
