//! Interoperability with the official Python `a2a-sdk[grpc]` 1.x client over
//! the gRPC binding: the built `grpc` example (the echo agent on JSON-RPC,
//! HTTP+JSON and gRPC) is driven by `tests/interop/python_grpc.py`, which
//! resolves the card over HTTP, lets the SDK pick the card's GRPC interface,
//! and checks a blocking send, a streaming send, get, cancel and an unknown
//! task (TaskNotFoundError from the ErrorInfo reason). Once with gRPC on the
//! same listener as the HTTP bindings (h2c), once on a listener of its own.
//!
//! Python comes from `A2A_PYTHON`, else `.venv/bin/python` at the repository
//! root (`scripts/test.sh` installs `a2a-sdk[http-server,grpc]>=1.3,<2`). A
//! missing interpreter or SDK fails these tests; they never skip.
#![cfg(all(
    feature = "grpc",
    feature = "engine",
    feature = "jsonrpc",
    feature = "rest"
))]

mod support;

use std::process::Stdio;
use std::time::Duration;

use support::python::python_with;
use support::server::Server;
use tokio::process::Command;

/// A generous bound on one script run (it normally takes about a second).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

async fn run_against(server: Server) {
    let python = python_with("a2a.client, a2a.types, grpc, httpx");
    let script = support::python::script("python_grpc.py");
    let child = Command::new(&python)
        .arg(&script)
        .arg(&server.base)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(SCRIPT_TIMEOUT, child)
        .await
        .unwrap_or_else(|_| panic!("{} ran over {SCRIPT_TIMEOUT:?}", script.display()))
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("PYTHON INTEROP OK (GRPC)"),
        "{} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        script.display(),
        out.status
    );
    drop(server);
}

#[tokio::test]
async fn python_sdk_grpc_client_on_the_shared_listener() {
    run_against(Server::start("grpc")).await;
}

#[tokio::test]
async fn python_sdk_grpc_client_on_a_grpc_listener() {
    run_against(Server::start_with(
        "grpc",
        &[("A2A_GRPC_ADDR", "127.0.0.1:0")],
    ))
    .await;
}
