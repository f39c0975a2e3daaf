//! Interoperability with the official Python `a2a-sdk` 1.x client, over each
//! binding: the built echo example is driven by
//! `tests/interop/python_client.py` (card resolution, blocking send, streaming
//! send, get, cancel, unknown task), and the managed example's refund flow by
//! `tests/interop/python_managed.py` (start, the pending questions read from
//! task metadata, an invalid answer refused, each wait answered through
//! message metadata `scope.wait`, the COMPLETED task with the amount's exact
//! text).
//!
//! Python comes from `A2A_PYTHON`, else `.venv/bin/python` at the repository
//! root (`scripts/test.sh` creates it with `a2a-sdk[http-server]>=1.3,<2`). A missing
//! interpreter or SDK fails these tests; they never skip.

use crate::support;

use support::server::Server;

/// Runs `tests/interop/{script}` against the example `example` over
/// `binding`; it must exit 0 and print `{done} ({binding})`.
async fn run_script(example: &str, script: &str, binding: &str, done: &str) {
    support::python::run_script(Server::start(example), script, binding, done).await;
}

const ECHO: &str = "python_client.py";
const ECHO_DONE: &str = "PYTHON INTEROP OK";

#[tokio::test]
async fn python_sdk_client_over_jsonrpc() {
    run_script("echo", ECHO, "JSONRPC", ECHO_DONE).await;
}

#[tokio::test]
async fn python_sdk_client_over_http_json() {
    run_script("echo", ECHO, "HTTP+JSON", ECHO_DONE).await;
}

#[cfg(all(feature = "managed", feature = "sqlite"))]
const MANAGED: &str = "python_managed.py";
#[cfg(all(feature = "managed", feature = "sqlite"))]
const MANAGED_DONE: &str = "PYTHON MANAGED INTEROP OK";

#[cfg(all(feature = "managed", feature = "sqlite"))]
#[tokio::test]
async fn python_sdk_client_runs_a_managed_task_over_jsonrpc() {
    run_script("managed", MANAGED, "JSONRPC", MANAGED_DONE).await;
}

#[cfg(all(feature = "managed", feature = "sqlite"))]
#[tokio::test]
async fn python_sdk_client_runs_a_managed_task_over_http_json() {
    run_script("managed", MANAGED, "HTTP+JSON", MANAGED_DONE).await;
}
