#!/usr/bin/env bash
# Several echo hosts sharing one PostgreSQL task log (issue 18, item 5):
# throughput with 1, 2 and 3 hosts, and the latency of an event written on
# one host reaching a subscriber on another, idle and under load. Both are
# measured by the external tools (their own processes): `loadgen` (closed
# loop of SendMessage over all hosts' URLs, `closed requests=.. errors=..
# rps=.. p50_us=.. p99_us=.. …`) and `xhost` (see
# benches/external/src/bin/xhost.rs: `xhost p50_us=.. p99_us=.. …`, B's
# arrival minus A's per artifact chunk; goal p99 ≤ 50 ms under load).
#
#   cargo build --release --features postgres --example echo
#   cargo build --release --manifest-path benches/external/Cargo.toml
#   benches/hosts.sh
#
# Needs the `test` database at 127.0.0.1:5432 (user postgres, trust auth):
# the hosts share a fresh schema of it (every host its own A2A_HOST_ID),
# dropped at the end. In order:
#   1. host A alone: loadgen on A;
#   2. host B added: loadgen on A and B; xhost A → B, idle;
#   3. host C added: loadgen on A, B and C; xhost A → B, idle; then xhost
#      A → B while loadgen drives A, B and C for XHOST_LOAD_SECS (started
#      LOAD_WARMUP + 1 s before xhost; a warning if xhost outlasts it).
# Around each loadgen run the script sums the CPU time of every process
# named `postgres` (from /proc; a backend that exits meanwhile takes its
# CPU with it) and prints it as `pg_cpu_s` and `pg_cores` (per second of
# the run, warm-up included): near the machine's core count (`nproc`),
# PostgreSQL is the bound; far below it while the hosts' CPU is high, the
# hosts are. `wal_syncs` is how many WAL flushes PostgreSQL made meanwhile
# (`pg_stat_wal.wal_sync`, the whole server's; `-` where it cannot be read):
# about one per batch of every host, the per-batch cost that smaller batches
# multiply (docs/performance.md, "Why two hosts are slower here").
#
# Environment: ECHO_BIN (default target/release/examples/echo, built with
# the postgres feature), TOOLS_DIR (default benches/external/target/release:
# loadgen and xhost), LOAD_CONNS (32), LOAD_SECS (10), LOAD_WARMUP (1),
# XHOST_TASKS (200), XHOST_WORDS (20), XHOST_CONCURRENCY (4), XHOST_LOAD_SECS
# (30), PG_URL (the hosts' A2A_POSTGRES_URL, default
# "host=127.0.0.1 port=5432 dbname=test user=postgres").
set -euo pipefail

echo_bin=${ECHO_BIN:-target/release/examples/echo}
tools=${TOOLS_DIR:-benches/external/target/release}
conns=${LOAD_CONNS:-32}
secs=${LOAD_SECS:-10}
warmup=${LOAD_WARMUP:-1}
xtasks=${XHOST_TASKS:-200}
xwords=${XHOST_WORDS:-20}
xconc=${XHOST_CONCURRENCY:-4}
xload_secs=${XHOST_LOAD_SECS:-30}
pg_url=${PG_URL:-"host=127.0.0.1 port=5432 dbname=test user=postgres"}

for b in "$echo_bin" "$tools/loadgen" "$tools/xhost"; do
    [ -x "$b" ] || { echo "missing $b: build it first (see the top of $0)" >&2; exit 2; }
done

schema=hosts_$RANDOM$RANDOM
work=$(mktemp -d)
pids=()
urls=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    psql -h 127.0.0.1 -U postgres -d test -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# start NAME: one more echo host on the shared schema.
start() {
    local out=$work/$1.out url
    A2A_POSTGRES_URL=$pg_url A2A_POSTGRES_SCHEMA=$schema A2A_HOST_ID=host-$1 \
        A2A_ADDR=127.0.0.1:0 "$echo_bin" >"$out" 2>&1 &
    pids+=("$!")
    for _ in $(seq 200); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
    url=$(grep -o 'http://[0-9.:]*' "$out" | head -1)
    [ -n "$url" ] || { echo "host $1 did not start:" >&2; cat "$out" >&2; exit 1; }
    urls+=("$url")
}

# The CPU seconds of every `postgres` process so far.
pg_cpu() {
    awk '$2 == "(postgres)" { s += $14 + $15 } END { printf "%.2f", s / 100 }' \
        /proc/[0-9]*/stat 2>/dev/null || true
}

# load_args SECS: sets largs, loadgen's arguments for every host so far.
load_args() {
    largs=(closed --conns "$conns" --secs "$1" --warmup "$warmup")
    for u in "${urls[@]}"; do largs+=(--url "$u"); done
    for p in "${pids[@]}"; do largs+=(--pid "$p"); done
}

# The WAL flushes PostgreSQL has made so far, or `-`.
wal_syncs() {
    psql -h 127.0.0.1 -U postgres -d test -Atc "SELECT wal_sync FROM pg_stat_wal" 2>/dev/null || echo -
}

# pg_line BEFORE AFTER SECS SYNCS_BEFORE SYNCS_AFTER: the PostgreSQL fields.
pg_line() {
    awk -v a="$1" -v b="$2" -v s="$3" -v w0="$4" -v w1="$5" 'BEGIN {
        printf "pg_cpu_s=%.2f pg_cores=%.2f wal_syncs=%s", b - a, (b - a) / s,
            (w0 ~ /^[0-9]+$/ && w1 ~ /^[0-9]+$/) ? w1 - w0 : "-"
    }'
}

throughput() {
    local before after line syncs
    load_args "$secs"
    before=$(pg_cpu) syncs=$(wal_syncs)
    line=$("$tools/loadgen" "${largs[@]}")
    after=$(pg_cpu)
    echo "${#urls[@]} hosts, loadgen: $line $(pg_line "$before" "$after" $((secs + warmup)) "$syncs" "$(wal_syncs)")"
}

xhost() {
    "$tools/xhost" --writer "${urls[0]}" --reader "${urls[1]}" --tasks "$xtasks" \
        --words "$xwords" --concurrency "$xconc"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); schema $schema"
start a
throughput
start b
throughput
echo "2 hosts, idle: $(xhost)"
start c
throughput
echo "3 hosts, idle: $(xhost)"

# Under load: loadgen in the background, xhost inside its measured window.
load_args "$xload_secs"
before=$(pg_cpu) syncs=$(wal_syncs)
"$tools/loadgen" "${largs[@]}" >"$work/load.out" &
load=$!
sleep $((warmup + 1))
t0=$(date +%s)
line=$(xhost)
t1=$(date +%s)
wait "$load"
after=$(pg_cpu)
echo "3 hosts, under load: $line"
echo "3 hosts, the load meanwhile: $(cat "$work/load.out") $(pg_line "$before" "$after" $((xload_secs + warmup)) "$syncs" "$(wal_syncs)")"
if [ $((t1 - t0)) -gt $((xload_secs - 1)) ]; then
    echo "warning: xhost took $((t1 - t0)) s, longer than the load: raise XHOST_LOAD_SECS" >&2
fi
