#!/usr/bin/env bash
# The whole test suite: README.md's test command, which .ci/run runs on a
# clean clone as root; it installs everything the tests need itself.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL=0

# `step NAME` starts a step; each step's end prints its wall time and the CPU
# time its commands used (user + system, from the shell's reaped children), so
# a slow run shows where the time went even on a busy machine.
cpu_seconds() {
    local stat
    if read -ra stat </proc/$$/stat 2>/dev/null; then
        echo $(((stat[15] + stat[16]) / $(getconf CLK_TCK)))
    else
        echo 0
    fi
}
step_name=""
step_end() {
    if [ -n "$step_name" ]; then
        echo "-- $step_name: $((SECONDS - step_wall)) s wall, $(($(cpu_seconds) - step_cpu)) s CPU"
    fi
}
step() {
    step_end
    step_name="$1" step_wall=$SECONDS step_cpu=$(cpu_seconds)
    echo "== $1"
}
trap 'step_end; echo "-- total: $SECONDS s wall"' EXIT

step "rustfmt"
cargo fmt --all --check

# The Python venv downloads and installs while the crate compiles (network and
# disk, little CPU); the tests wait for it below.
venv_log=$(mktemp)
(
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    .venv/bin/pip install --quiet --disable-pip-version-check 'a2a-sdk[http-server,grpc,signing]>=1.3,<2' 'uvicorn>=0.30,<1'
) >"$venv_log" 2>&1 &
venv_pid=$!
# Beside it, the 0.3 clients and server of tests/interop/interop_v03*.rs: the
# Python a2a-sdk 0.3.x in .venv03 and @a2a-js/sdk 0.3.x in tests/interop/js03.
venv03_log=$(mktemp)
(
    if [ ! -x .venv03/bin/python ]; then
        python3 -m venv .venv03
    fi
    .venv03/bin/pip install --quiet --disable-pip-version-check 'a2a-sdk[http-server]>=0.3.26,<0.4' 'uvicorn>=0.30,<1'
    (cd tests/interop/js03 && npm ci --no-audit --no-fund --silent)
) >"$venv03_log" 2>&1 &
venv03_pid=$!

step "clippy (all targets, all features, warnings denied)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "each feature on its own (clippy, warnings denied)"
for features in "" jsonrpc rest engine sqlite postgres managed client tools mcp push grpc serve metrics otel signing auth-jwt auth-api-key; do
    cargo clippy --no-default-features ${features:+--features "$features"} -- -D warnings
done
# The log crate without the durable logs' shared code, with it alone, and
# with the conformance suite alone (the SQLite and PostgreSQL crates have no
# features of their own).
for features in "" durable suite seal; do
    cargo clippy -p a2a-tower-log ${features:+--features "$features"} -- -D warnings
done
# The engine crate with its backend suites alone (the facade's `engine`,
# `managed` and `push` runs above lint it with none, `managed` and `push`).
cargo clippy -p a2a-tower-engine --features suite -- -D warnings

step "rustdoc (broken intra-doc links denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

step "interop clients (.venv: a2a-sdk 1.x and uvicorn; .venv03: a2a-sdk 0.3.x; tests/interop/js03: @a2a-js/sdk 0.3.x)"
venv_status=0
wait "$venv_pid" || venv_status=$?
cat "$venv_log"
rm -f "$venv_log"
if [ "$venv_status" -ne 0 ]; then
    echo "error: creating .venv or installing a2a-sdk failed (status $venv_status)" >&2
    exit "$venv_status"
fi
wait "$venv03_pid" || venv_status=$?
cat "$venv03_log"
rm -f "$venv03_log"
if [ "$venv_status" -ne 0 ]; then
    echo "error: creating .venv03 (a2a-sdk 0.3) or npm ci in tests/interop/js03 failed (status $venv_status)" >&2
    exit "$venv_status"
fi

step "postgresql (the PostgreSQL tests fail, never skip, without it)"
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

step "examples (the end-to-end tests spawn these binaries)"
cargo build --workspace --examples --all-features

step "tests (nextest, all features)"
cargo nextest run --workspace --all-features --no-fail-fast

step "doc tests"
cargo test --workspace --doc --all-features

# Their lockfile pins the crate's versions, and they build into the crate's
# target directory: dependencies built with the same features are reused.
step "external load tools (benches/external, their own workspace: fmt, clippy, tests)"
cargo fmt --manifest-path benches/external/Cargo.toml --check
CARGO_TARGET_DIR="$PWD/target" cargo clippy --manifest-path benches/external/Cargo.toml --all-targets -- -D warnings
CARGO_TARGET_DIR="$PWD/target" cargo test --manifest-path benches/external/Cargo.toml
