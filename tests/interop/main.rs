//! Interoperability with the official Python SDK (its client against our
//! servers, our client against its server, card signatures both ways); the
//! Python scripts they run live beside this file.
//!
//! One test binary: `support` compiles once for all of its modules.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "engine", feature = "jsonrpc", feature = "rest"))]
mod interop_python;
#[cfg(all(
    feature = "grpc",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest"
))]
mod interop_python_grpc;
#[cfg(feature = "client")]
mod interop_python_server;
#[cfg(all(feature = "client", feature = "grpc"))]
mod interop_python_server_grpc;
#[cfg(all(
    feature = "client",
    feature = "signing",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "sqlite",
    feature = "serve",
    feature = "push"
))]
mod interop_python_signing;
#[cfg(all(feature = "engine", feature = "jsonrpc", feature = "rest"))]
mod interop_v03;
#[cfg(all(
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest",
    feature = "client"
))]
mod interop_v03_server;
