//! The Python interpreter of the interop tests: `A2A_PYTHON`, else
//! `.venv/bin/python` at the repository root (`scripts/test.sh` creates it
//! with the official `a2a-sdk`). A missing interpreter or module fails the
//! test with the command that installs it; these tests never skip.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What `scripts/test.sh` installs into `.venv`.
pub(crate) const INSTALL: &str = "python3 -m venv .venv && .venv/bin/pip install \
     'a2a-sdk[http-server,grpc]>=1.3,<2' 'uvicorn>=0.30,<1'";

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
