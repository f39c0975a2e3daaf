//! The Python interpreter of the interop tests: `A2A_PYTHON`, else
//! `.venv/bin/python` at the repository root (`scripts/test.sh` creates it
//! with the official `a2a-sdk`). A missing interpreter or module fails the
//! test with the command that installs it; these tests never skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::server::Server;

/// What `scripts/test.sh` installs into `.venv`.
pub(crate) const INSTALL: &str = "python3 -m venv .venv && .venv/bin/pip install \
     'a2a-sdk[http-server,grpc,signing]>=1.3,<2' 'uvicorn>=0.30,<1'";

/// The repository root.
pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/interop/{name}`.
pub(crate) fn script(name: &str) -> PathBuf {
    repo().join("tests").join("interop").join(name)
}

/// The interpreter, after checking that it imports `modules` (a
/// comma-separated `import` list); panics with [`INSTALL`] otherwise.
pub(crate) fn python_with(modules: &str) -> PathBuf {
    let python = match std::env::var_os("A2A_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo().join(".venv").join("bin").join("python"),
    };
    assert!(
        python.exists(),
        "no Python for the interop tests at {}: set A2A_PYTHON, or create the venv with \
         `{INSTALL}` (scripts/test.sh does this)",
        python.display()
    );
    let out = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "{} cannot import {modules} (install them: `{INSTALL}`):\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    python
}

/// A generous bound on one script run (it normally takes about a second).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `tests/interop/{script} BASE BINDING` against the running `server`;
/// it must exit 0 and print `{done} ({binding})`. The server is stopped
/// after.
pub(crate) async fn run_script(server: Server, script: &str, binding: &str, done: &str) {
    let modules = if binding == "GRPC" {
        "a2a.client, a2a.types, httpx, grpc"
    } else {
        "a2a.client, a2a.types, httpx"
    };
    let python = python_with(modules);
    let script = self::script(script);
    let child = tokio::process::Command::new(&python)
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
