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
#![cfg(all(feature = "engine", feature = "jsonrpc", feature = "rest"))]

mod support;

use std::process::Stdio;
use std::time::Duration;

use support::python::python_with;
use support::server::Server;
use tokio::process::Command;

/// A generous bound on one script run (it normally takes about a second).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `tests/interop/{script}` against the example `example` over
/// `binding`; it must exit 0 and print `{done} ({binding})`.
async fn run_script(example: &str, script: &str, binding: &str, done: &str) {
    let python = python_with("a2a.client, a2a.types, httpx");
    let server = Server::start(example);
    let script = support::python::script(script);
    let child = Command::new(&python)
        .arg(&script)
        .arg(&server.base)
        .arg(binding)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(SCRIPT_TIMEOUT, child)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{} over {binding} ran over {SCRIPT_TIMEOUT:?}",
                script.display()
            )
        })
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} over {binding} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        script.display(),
        out.status
    );
    assert!(
        stdout.contains(&format!("{done} ({binding})")),
        "{} over {binding} did not finish:\n{stdout}\n{stderr}",
        script.display()
    );
    drop(server);
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
