//! The echo agent and card shared by the mounting examples (axum, hyper,
//! actix, composition), so that they answer the same calls with the same bytes.

#![allow(dead_code)]

use a2a_tower::BoxError;
use a2a_tower::engine::{Agent, AgentInput};
use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
use futures_core::Stream;

/// Where the A2A service is mounted: JSON-RPC at `MOUNT`, HTTP+JSON under
/// `MOUNT/rest`. The card advertises exactly these paths.
pub(crate) const MOUNT: &str = "/a2a";

/// The authenticated caller, as a host auth layer records it in the HTTP
/// request's extensions (the A2A bindings copy those into
/// `CallContext::extensions`).
#[derive(Clone, Debug)]
pub(crate) struct Principal(pub(crate) String);

/// The message text that makes [`Echo`] wait, after its echo, until the task
/// is canceled: a live stream to watch (and to test that hosts flush SSE
/// event by event).
pub(crate) const HOLD: &str = "hold";

/// Echoes the message text; when a host layer authenticated the caller, the
/// reply names the principal (`"alice: hi"`). After echoing [`HOLD`] it waits
/// for CancelTask.
pub(crate) struct Echo;

impl Agent for Echo {
    fn run(&self, input: AgentInput) -> impl Stream<Item = Result<String, BoxError>> + Send {
        use futures_util::StreamExt as _;
        let hold = input.text == HOLD;
        let reply = match input.call.extensions.get::<Principal>() {
            Some(p) => format!("{}: {}", p.0, input.text),
            None => input.text,
        };
        let echo = futures_util::stream::iter([Ok(reply)]);
        // Dropping the stream is how the engine stops a canceled agent.
        let wait = futures_util::stream::pending().take(usize::from(hold));
        echo.chain(wait)
    }
}

/// The public base URL for a bound address.
pub(crate) fn base_url(addr: std::net::SocketAddr) -> String {
    format!("http://{addr}")
}

/// The card of the echo agent served at `base_url`: JSON-RPC at
/// `{base_url}/a2a`, HTTP+JSON at `{base_url}/a2a/rest`, streaming.
pub(crate) fn card(base_url: &str) -> AgentCard {
    AgentCard::new("Echo", "Echoes the text it receives", "1.0.0")
        .with_interface(AgentInterface::jsonrpc(format!("{base_url}{MOUNT}")))
        .with_interface(AgentInterface::http_json(format!("{base_url}{MOUNT}/rest")))
        .with_skill(AgentSkill::new(
            "echo",
            "Echo",
            "Answers with the input text (after `hold`, waits to be canceled)",
        ))
        .with_streaming(true)
}

/// The address to listen on: `A2A_ADDR`, else `127.0.0.1:8080`.
pub(crate) fn addr() -> std::net::SocketAddr {
    std::env::var("A2A_ADDR")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 8080)))
}
