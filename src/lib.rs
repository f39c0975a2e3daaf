//! Agent2Agent (A2A) protocol 1.0 as composable [Tower] layers.
//!
//! `a2a-tower` turns any `tower::Service<http::Request<_>>` host (hyper, axum,
//! actix through an adapter) into a conformant A2A endpoint, built from layers
//! the host can reorder and interleave with its own, around a core that is a
//! `Service<A2aRequest>`: the task engine over a durable task log, or your own.
//!
//! ```text
//! HTTP request (the host's server)
//!  └ host layers: TLS, authentication, timeouts, rate limits      (the host's own)
//!    └ AgentCardLayer        GET /.well-known/agent-card.json, frozen bytes, ETag
//!      └ BodyLimitLayer      bounds the request body before anything decodes it (4 MiB)
//!        └ VersionLayer      A2A-Version header / query → negotiated version
//!          └ ExtensionsLayer     A2A-Extensions → activated extensions, required ones enforced
//!            └ JsonRpcLayer | RestLayer   HTTP ⇄ A2aRequest / A2aResponse, SSE for streams
//!              └ host A2aRequest layers: authority, quotas, audit   (the host's own)
//!                └ the core, one of:
//!                    TaskLayer → TaskService   the task engine: admission, executions,
//!                    │                         reads and subscriptions from the task log
//!                    ├ host layers over executions: timeouts, concurrency limits
//!                    ├ Executor / text Agent   your code (status, artifacts, questions)
//!                    └ TaskLog                 memory | SQLite (embedded) | PostgreSQL (hosts)
//!                    ManagedService            a durable Program (steps, waits, children)
//!                                              journaled in the same task log
//!                    your own Service<A2aRequest>          (see [`A2aService`])
//! ```
//!
//! Everything above the binding is `Service<http::Request<B>>` and answers
//! HTTP-level faults with a response shaped for the binding (a JSON-RPC error
//! object or the REST error body). Everything below it is
//! `Service<A2aRequest>` and never touches HTTP framing.
//! [`server::A2aServer`] assembles the whole stack in one call;
//! [`server::A2aServiceBuilderExt`] adds the layers one by one to a
//! `tower::ServiceBuilder`.
//!
//! ```
//! # #[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use a2a_tower::engine::{AgentInput, agent_fn};
//! use a2a_tower::server::A2aServer;
//! use a2a_tower::types::{AgentCard, AgentInterface, AgentSkill};
//!
//! let card = AgentCard::new("Echo", "Echoes text", "1.0.0")
//!     .with_interface(AgentInterface::jsonrpc("http://localhost:8080/"))
//!     .with_interface(AgentInterface::http_json("http://localhost:8080/rest"))
//!     .with_skill(AgentSkill::new("echo", "Echo", "Echoes text"));
//! let echo = agent_fn(|input: AgentInput| async move { Ok(input.text) });
//! // A Service<http::Request<B>>, ready for hyper, axum, an actix adapter
//! // or `server::serve`.
//! let app = A2aServer::builder(card).agent(echo).await?;
//! # let _ = app;
//! # Ok::<(), a2a_tower::BoxError>(())
//! # }).unwrap();
//! ```
//!
//! # Modules
//!
//! The layout follows which part may use which: each row uses only the rows
//! above it (and `http` where it says so); the task engine and the task logs
//! never see HTTP, and the bindings see the core only as an [`A2aService`].
//!
//! | part | modules | may use |
//! |---|---|---|
//! | wire model | [`types`] | serde, serde_json |
//! | protocol core | `A2aRequest`, [`A2aResponse`], [`A2aService`], [`A2aError`], [`ConfigError`], the operation table ([`OperationKind`]), the operation rules | the wire model |
//! | HTTP plumbing | [`Body`], [`NotFound`], routes, response futures | the above, `http` |
//! | edge layers | [`card`], [`limit`], [`version`], [`extensions`] | the above |
//! | bindings | `jsonrpc`, `rest`, `grpc`, the bindings router ([`server::BindingsLayer`]) | the above; the core only as an [`A2aService`] |
//! | task engine | `engine` | the wire model, the protocol core, the `log::TaskLog` trait |
//! | managed tasks | `managed` | the same as the engine, and the engine's reads |
//! | task logs | `log` (memory, SQLite, PostgreSQL) | the `TaskLog` trait and the wire model |
//! | assembly | [`server`] | all of the above |
//! | client | `client` (`A2aClient`, card resolution, SSE reading) | the wire model, the protocol core, `http`, an HTTP client (hyper-util); never the engine or the task logs |
//! | tools | `tool` (`Tool`, `ToolSet`, continuations) | the client |
//! | push | `push` (`PushSender`, `WebhookGuard`, the `outbox` over the task log) | the wire model, the `log::TaskLog` trait, `http`, an HTTP client (hyper-util) |
//!
//! Each protocol rule lives once: the required parameters, ranges and
//! capability checks of an operation are applied by the bindings before the
//! core, and by the engine again for callers that reach it without a binding,
//! through the same functions. An operation's names, routes, capability and
//! answer are one row of [`OperationKind`], which the bindings, the client
//! and the extension-method checks read.
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `jsonrpc` | yes | the JSON-RPC 2.0 binding (`JsonRpcLayer`), SSE streaming |
//! | `rest` | yes | the HTTP+JSON binding (`RestLayer`), SSE streaming |
//! | `engine` | yes | the task engine (`engine::TaskLayer`, executors, text agents), the task log with its bounded in-memory backend (`log`), and the per-context delivery queue for teams of agents (`queue`) |
//! | `sqlite` | yes | the durable SQLite task log (`log::SqliteTaskLog`), SQLite compiled in |
//! | `postgres` | no | the PostgreSQL task log (`log::PostgresTaskLog`) for several hosts sharing tasks |
//! | `client` | yes | the A2A client (`client::A2aClient`): JSON-RPC and HTTP+JSON over any HTTP `Service`, hyper-util's by default |
//! | `managed` | yes | managed tasks (`managed`): durable programs served as A2A tasks, JSON Schema checks through `jsonschema` |
//! | `tools` | yes | remote agents as tools (`tool`): the `Tool` contract, `ToolSet` and continuations, with the client and `jsonschema` |
//! | `push` | yes | push notifications (`push`): the outbox over the task log, `PushSender` delivering task events to webhooks (hyper-util, rustls) behind the `WebhookGuard` SSRF guard, `A2aServerBuilder::push_notifications` |
//! | `grpc` | no | the gRPC binding (`GrpcBindingLayer`, `grpc`): the spec's `a2a.proto` through tonic, generated at build time without `protoc`; `A2aServer` serves it for a `GRPC` interface; with `client`, also the client's gRPC transport (`client::Transport::Grpc`) |
//! | `serve` | yes | [`server::serve`]: an app on a Tokio TCP listener through hyper-util (HTTP/1.1 and HTTP/2, graceful shutdown) |
//! | `signing` | yes | agent card signatures (`signing`): JWS (ES256, RS256, EdDSA on `ring`) over the RFC 8785 form of the card; `A2aServerBuilder::sign_card`, and the client's `CardTrust` |
//! | `mcp` | no | tools served as an MCP server (`tool::mcp::McpServer`) through the official Rust MCP SDK, `rmcp` |
//! | `metrics` | yes | request, client-call, execution and push metrics through the `metrics` facade (`telemetry`); the host installs the exporter |
//! | `otel` | no | W3C Trace Context across calls (`telemetry`): call spans parented on a request's `traceparent`, the client and push deliveries send theirs, through `opentelemetry` and `tracing-opentelemetry` |
//! | `auth-jwt` | no | `auth::jwt::JwtLayer`: bearer JWTs checked against the host's JWKS (ES256, RS256, EdDSA; issuer, audience, expiry, clock skew), declared in the served card by `A2aServerBuilder::authenticate` |
//! | `auth-api-key` | no | `auth::api_key::ApiKeyLayer`: API keys in a header, query parameter or cookie, compared in constant time, mapped to the host's principal; declared the same way |
//!
//! With `jsonrpc` and `rest`, [`server`] has the bindings router; with
//! `engine` as well, the one-call [`server::A2aServer`]. The edge layers and
//! [`server::A2aServiceBuilderExt`] need no feature.
//!
//! The wire model ([`types`]) is ProtoJSON of `a2a.proto` exactly; errors
//! ([`A2aError`]) come from one table of codes, statuses and reasons.
//!
//! [Tower]: https://docs.rs/tower

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub use a2a_tower_client::client;
#[cfg(any(feature = "auth-jwt", feature = "auth-api-key"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "auth-jwt", feature = "auth-api-key"))))]
pub use a2a_tower_http::auth;
pub use a2a_tower_http::card;
pub use a2a_tower_http::{extensions, limit};
pub mod server;
#[cfg(feature = "tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
pub use a2a_tower_client::tool;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use a2a_tower_core::signing;
pub use a2a_tower_core::telemetry;
pub use a2a_tower_core::types;
pub use a2a_tower_http::v03;
pub use a2a_tower_http::version;

#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub use a2a_tower_engine::engine;
#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub mod log;
#[cfg(feature = "managed")]
#[cfg_attr(docsrs, doc(cfg(feature = "managed")))]
pub use a2a_tower_engine::managed;
#[cfg(feature = "push")]
#[cfg_attr(docsrs, doc(cfg(feature = "push")))]
pub use a2a_tower_engine::push;
#[cfg(feature = "engine")]
#[cfg_attr(docsrs, doc(cfg(feature = "engine")))]
pub use a2a_tower_engine::queue;

#[cfg(feature = "grpc")]
pub use a2a_tower_http::grpc;
#[cfg(feature = "jsonrpc")]
pub use a2a_tower_http::jsonrpc;
#[cfg(feature = "rest")]
pub use a2a_tower_http::rest;
#[cfg(feature = "grpc")]
#[allow(deprecated)]
pub use grpc::{GrpcBindingLayer, GrpcBindingService, GrpcLayer, GrpcService};

#[cfg(any(feature = "jsonrpc", feature = "rest"))]
pub use a2a_tower_core::ExtensionMethod;
pub use a2a_tower_core::{
    A2aError, A2aRequest, A2aResponse, A2aService, ActivatedExtensions, BoxError, CallContext,
    Capability, ConfigError, ERROR_DOMAIN, ErrorKind, EventStream, ExtensionRequest, GrpcCall,
    HttpRoute, HttpVerb, IdentifiedEvent, InvalidVersion, LastEventId, Operation, OperationKind,
    ProtocolVersion, ResponseKind,
};
pub use a2a_tower_http::{Body, NotFound};
pub use card::AgentCardLayer;
#[allow(deprecated)]
pub use extensions::{A2aExtensionsLayer, ExtensionsLayer};
#[cfg(feature = "jsonrpc")]
pub use jsonrpc::{JsonRpcLayer, JsonRpcService};
#[allow(deprecated)]
pub use limit::{A2aBodyLimitLayer, BodyLimitLayer};
#[cfg(feature = "rest")]
pub use rest::{RestLayer, RestService};
#[allow(deprecated)]
pub use version::{A2aVersionLayer, VersionLayer};

/// The README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
