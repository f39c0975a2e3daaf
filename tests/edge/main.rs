//! The HTTP edge: the card, the layers in front of a core (limit, version,
//! extensions), the three bindings, and the assembled `A2aServer`.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod answer_json;
#[cfg(all(
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "auth-jwt",
    feature = "auth-api-key"
))]
mod auth_layers;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod authorization;
mod card;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod extended_card;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod extension_methods;
mod extensions;
#[cfg(all(
    feature = "grpc",
    feature = "managed",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest"
))]
mod grpc;
#[cfg(feature = "jsonrpc")]
mod jsonrpc;
mod limit;
#[cfg(all(
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "metrics"
))]
mod metrics;
#[cfg(all(
    feature = "jsonrpc",
    feature = "rest",
    feature = "engine",
    feature = "client"
))]
mod mount_nested;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine", unix))]
mod mounting;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod operations;
#[cfg(all(feature = "jsonrpc", feature = "rest"))]
mod rest;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod resume;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod server;
mod streaming;
#[cfg(all(feature = "jsonrpc", feature = "rest", feature = "engine"))]
mod v03;
mod version;
mod wire;
