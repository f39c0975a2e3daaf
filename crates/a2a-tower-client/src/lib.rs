//! The A2A client of [`a2a-tower`](https://docs.rs/a2a-tower), and remote
//! agents as tools.
//!
//! - [`client`]: [`A2aClient`](client::A2aClient), a `Service<A2aRequest>`
//!   over any HTTP `Service` (hyper-util's client by default), card
//!   resolution with its own limits, the JSON-RPC and HTTP+JSON transports,
//!   SSE reading;
//! - `tool` (feature `tools`): the `Tool` contract, `ToolSet` and
//!   continuations, and `tool::mcp` (feature `mcp`), tools served as an MCP
//!   server.
//!
//! This crate depends on `a2a-tower-core` only: never on the task engine,
//! the task logs or the server's bindings. Applications use it through the
//! `a2a-tower` facade, which re-exports it under the same paths
//! (`a2a_tower::client`, `a2a_tower::tool`) and feature names.
//!
//! ```
//! use a2a_tower::client::{A2aClient, Transport};
//! use a2a_tower::types::{AgentCard, AgentInterface};
//!
//! // The configuration is checked at construction; `connect()` then fetches
//! // the card and picks the interface.
//! let connector = A2aClient::builder("https://agent.example/.well-known/agent-card.json")
//!     .transport(Transport::HttpJson)
//!     .build()
//!     .unwrap();
//! # let _ = connector;
//! // The interface a client picks from a card: the first it speaks, in card order.
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0")
//!     .with_interface(AgentInterface::http_json("https://agent.example/rest"))
//!     .with_interface(AgentInterface::jsonrpc("https://agent.example/rpc"));
//! let (transport, interface) = Transport::select(&card, None).unwrap();
//! assert_eq!(transport, Transport::HttpJson);
//! assert_eq!(interface.url, "https://agent.example/rest");
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

// The core's items under the paths the modules name (`crate::types`,
// `crate::A2aError`, ...), as in the facade.
#[cfg(test)]
use a2a_tower_core::ExtensionRequest;
#[cfg(feature = "signing")]
use a2a_tower_core::signing;
use a2a_tower_core::{
    A2aError, A2aRequest, A2aResponse, BoxError, ConfigError, ErrorKind, EventStream,
    IdentifiedEvent, LastEventId, Operation, OperationKind, ProtocolVersion, ResponseKind,
    protocol, types, v03,
};
#[cfg(feature = "tools")]
use a2a_tower_core::{external_wait, schema};

pub mod client;
#[cfg(feature = "tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
pub mod tool;

#[cfg(test)]
mod tests {
    /// The crate line: of the a2a-tower crates, the client depends on the
    /// core only, never on the engine, the task logs or the bindings.
    #[test]
    fn the_core_is_the_only_a2a_tower_dependency() {
        let manifest = include_str!("../Cargo.toml");
        let (_, rest) = manifest.split_once("\n[dependencies]\n").unwrap();
        let table = rest.split("\n[").next().unwrap();
        let ours: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("a2a-tower"))
            .map(|l| l.split(['.', ' ', '=']).next().unwrap())
            .collect();
        assert_eq!(ours, ["a2a-tower-core"]);
    }
}
