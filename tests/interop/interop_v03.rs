//! Interoperability with the 0.3 SDKs: the official Python `a2a-sdk` 0.3.x
//! client (`tests/interop/python03_client.py`) and the `@a2a-js/sdk` 0.3.x
//! client (`tests/interop/js03/client.mjs`) against the echo example with
//! `A2A_V03=1`, over JSON-RPC and HTTP+JSON: the 0.3 card, a blocking and a
//! streaming send, get, resubscription, cancel, an unknown task, and (from
//! Python) a task created over 0.3 read by a 1.0 request; and the Python
//! client's INPUT_REQUIRED continuation against the conformance example
//! (`tests/interop/python03_input.py`).
//!
//! Python 0.3 comes from `A2A_PYTHON03`, else `.venv03/bin/python` at the
//! repository root (`scripts/test.sh` creates it with
//! `a2a-sdk[http-server]>=0.3.26,<0.4`); the JS client needs `npm ci` in
//! `tests/interop/js03` (also done by `scripts/test.sh`). A missing
//! interpreter or package fails these tests; they never skip.

use crate::support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use support::python::repo;
use support::server::Server;

/// What `scripts/test.sh` installs into `.venv03`.
pub(crate) const INSTALL03: &str = "python3 -m venv .venv03 && .venv03/bin/pip install \
     'a2a-sdk[http-server]>=0.3.26,<0.4' 'uvicorn>=0.30,<1'";

/// The Python with a2a-sdk 0.3.x.
pub(crate) fn python03() -> PathBuf {
    let python = match std::env::var_os("A2A_PYTHON03") {
        Some(p) => PathBuf::from(p),
        None => repo().join(".venv03").join("bin").join("python"),
    };
    assert!(
        python.exists(),
        "no Python with a2a-sdk 0.3 at {}: set A2A_PYTHON03 or run `{INSTALL03}`",
        python.display()
    );
    python
}

/// Runs `program args... BASE BINDING` against the echo example serving
/// 0.3; it must exit 0 and print `{done} ({binding})`.
async fn drive(program: PathBuf, args: &[PathBuf], binding: &str, done: &str) {
    drive_example("echo", program, args, binding, done).await;
}

/// [`drive`] against the example `example`.
async fn drive_example(
    example: &str,
    program: PathBuf,
    args: &[PathBuf],
    binding: &str,
    done: &str,
) {
    let server = Server::start_with(example, &[("A2A_V03", "1"), ("A2A_LOG", "memory")]);
    let child = tokio::process::Command::new(&program)
        .args(args)
        .arg(&server.base)
        .arg(binding)
        .current_dir(repo().join("tests").join("interop").join("js03"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), child)
        .await
        .expect("the 0.3 client ran over two minutes")
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(&format!("{done} ({binding})")),
        "{} over {binding} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        program.display(),
        out.status
    );
    drop(server);
}

async fn python(binding: &str) {
    let script = support::python::script("python03_client.py");
    drive(python03(), &[script], binding, "PYTHON03 INTEROP OK").await;
}

async fn js(binding: &str) {
    let dir = repo().join("tests").join("interop").join("js03");
    assert!(
        dir.join("node_modules")
            .join("@a2a-js")
            .join("sdk")
            .exists(),
        "@a2a-js/sdk 0.3 is not installed: run `npm ci` in {}",
        dir.display()
    );
    drive(
        "node".into(),
        &[dir.join("client.mjs")],
        binding,
        "JS03 INTEROP OK",
    )
    .await;
}

#[tokio::test]
async fn python_sdk_03_client_over_jsonrpc() {
    python("JSONRPC").await;
}

#[tokio::test]
async fn python_sdk_03_client_over_http_json() {
    python("HTTP+JSON").await;
}

#[tokio::test]
async fn js_sdk_03_client_over_jsonrpc() {
    js("JSONRPC").await;
}

#[tokio::test]
async fn js_sdk_03_client_over_http_json() {
    js("HTTP+JSON").await;
}

async fn python_input(binding: &str) {
    let script = support::python::script("python03_input.py");
    drive_example(
        "conformance",
        python03(),
        &[script],
        binding,
        "PYTHON03 INPUT OK",
    )
    .await;
}

#[tokio::test]
async fn python_sdk_03_input_required_continuation_over_jsonrpc() {
    python_input("JSONRPC").await;
}

#[tokio::test]
async fn python_sdk_03_input_required_continuation_over_http_json() {
    python_input("HTTP+JSON").await;
}
