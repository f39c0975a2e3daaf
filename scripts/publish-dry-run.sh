#!/usr/bin/env bash
# Every crate of the workspace as crates.io would receive it: each package's
# file list is checked (only sources, the build's protos and user pages), then
# `cargo publish --workspace --dry-run` packages the crates in dependency
# order and builds each from its package against its unpublished siblings.
# Extra arguments go to cargo publish (`--allow-dirty` on a work tree).
# cargo warns that it leaves out the examples, tests and benches: on purpose,
# they need the repository (the Python venv, PostgreSQL, fixtures).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_INCREMENTAL=0

crates=(a2a-tower-core a2a-tower-log a2a-tower-sqlite a2a-tower-postgres a2a-tower-engine a2a-tower-http a2a-tower-client a2a-tower)
allowed='^(Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|\.cargo_vcs_info\.json|README\.md|CHANGELOG\.md|build\.rs|src/.*\.rs|proto/.*\.proto)$'

for crate in "${crates[@]}"; do
    list=$(cargo package --list -p "$crate" --allow-dirty)
    extra=$(grep -Ev "$allowed" <<<"$list" || true)
    if [ -n "$extra" ]; then
        echo "error: the package of $crate holds files it does not need:" >&2
        echo "$extra" >&2
        exit 1
    fi
    echo "$crate: $(wc -l <<<"$list") files"
done

cargo publish --workspace --dry-run "$@"
