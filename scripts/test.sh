#!/usr/bin/env bash
# The whole test suite: README.md's test command, which .ci/run runs on a
# clean clone as root; it installs everything the tests need itself.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL=0

echo "== rustfmt"
cargo fmt --all --check

echo "== clippy (all targets, all features, warnings denied)"
cargo clippy --all-targets --all-features -- -D warnings

echo "== each feature on its own (clippy, warnings denied)"
for features in "" jsonrpc rest engine sqlite postgres managed client tools mcp push grpc serve; do
    cargo clippy --no-default-features ${features:+--features "$features"} -- -D warnings
done

echo "== rustdoc (broken intra-doc links denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features

echo "== python interop venv (.venv with the official a2a-sdk client and server, uvicorn)"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check 'a2a-sdk[http-server,grpc]>=1.3,<2' 'uvicorn>=0.30,<1'

echo "== postgresql (the PostgreSQL tests fail, never skip, without it)"
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
if ! pg_up; then
    if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
        for version in $(ls /etc/postgresql); do
            pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
        done
        for _ in $(seq 1 30); do
            pg_up && break
            sleep 1
        done
    fi
fi
if ! pg_up; then
    echo "error: PostgreSQL is not reachable at 127.0.0.1:5432 and could not be started" >&2
    echo "       (the tests need A2A_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)" >&2
    exit 1
fi
if [ -z "${A2A_TEST_POSTGRES_URL:-}" ] &&
    ! psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
    createdb -h 127.0.0.1 -U postgres test
fi

echo "== examples (the end-to-end tests spawn these binaries)"
cargo build --examples --all-features

echo "== tests (nextest, all features)"
cargo nextest run --all-features --no-fail-fast

echo "== doc tests"
cargo test --doc --all-features

echo "== external load tools (benches/external, their own workspace: fmt, clippy, tests)"
cargo fmt --manifest-path benches/external/Cargo.toml --check
cargo clippy --manifest-path benches/external/Cargo.toml --all-targets -- -D warnings
cargo test --manifest-path benches/external/Cargo.toml
