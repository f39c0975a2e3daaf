#!/usr/bin/env bash
# Host and PostgreSQL CPU per SendMessage: the echo example on PostgreSQL (a
# fresh schema of the `test` database at 127.0.0.1:5432, dropped afterwards),
# driven closed-loop by the external generator (32 connections, 2 s warm-up,
# then SECS); the CPU of every `postgres` process is read from /proc before
# and after the run (the database's whole cost: backends, WAL writer,
# checkpointer), divided by the requests answered.
#
#   benches/pg_cpu.sh ECHO_BIN [SECS] [ROUNDS]
#
# Prints per round: `rps=… host_cpu_us=… pg_cpu_us=…`. ECHO_BIN is a release
# build of `--example echo --features postgres`; LOADGEN_BIN as in
# benches/external.sh. Alternate two builds by calling it for each in turn.
set -euo pipefail

bin=$1 secs=${2:-5} rounds=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
PG_CONN=${PG_CONN:-host=127.0.0.1 port=5432 dbname=test user=postgres}
hz=$(getconf CLK_TCK)

pg_ticks() {
    local t=0 p s
    for p in $(pgrep -x postgres); do
        s=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
        t=$((t + s))
    done
    echo "$t"
}
val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

for _ in $(seq "$rounds"); do
    schema=a2a_pgcpu_$$_$RANDOM
    dir=$(mktemp -d)
    A2A_POSTGRES_URL=$PG_CONN A2A_POSTGRES_SCHEMA=$schema A2A_HOST_ID=h1 \
        A2A_ADDR=127.0.0.1:0 "$bin" >"$dir/out" 2>&1 &
    pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    url=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)/
    "$LOADGEN_BIN" closed --url "$url" --conns 32 --secs 2 --warmup 0 --pid "$pid" >/dev/null
    before=$(pg_ticks)
    line=$("$LOADGEN_BIN" closed --url "$url" --conns 32 --secs "$secs" --warmup 0 --pid "$pid")
    after=$(pg_ticks)
    n=$(val requests "$line")
    echo "rps=$(val rps "$line") host_cpu_us=$(val server_cpu_us "$line") pg_cpu_us=$(
        awk -v a="$before" -v b="$after" -v n="${n:-0}" -v hz="$hz" \
            'BEGIN { printf "%.1f", (n > 0 ? (b - a) / hz * 1e6 / n : 0) }'
    ) errors=$(val errors "$line")"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    psql "$PG_CONN" -qc "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1 || true
    rm -rf "$dir"
done
