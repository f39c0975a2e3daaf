#!/usr/bin/env bash
# The SQLite file under retention: the echo example on SQLite (a fresh data
# directory) driven open-loop at RATE SendMessage/s for SECS seconds by the
# external load generator (benches/external, `loadgen open`), once with
# A2A_RETENTION_SECS=RETENTION (60: terminal tasks older than a minute are
# deleted in the background, 256 per transaction, then an incremental vacuum)
# and once without retention, one after the other.
#
#   benches/retention.sh RATE SECS
#
# Printed per side: the size of tasks.db, tasks.db-wal and their sum every
# SAMPLE (30) seconds (`size t=… db=… wal=… total=…`, bytes), the
# generator's `open` summary (p50/p99/p99.9/max from each request's due
# time, errors, requests over 100 ms) and, from its per-second lines, the
# worst second after the first RETENTION seconds (when deletions run).
# Every task completes at once, so with retention the tasks kept are those of
# the last minute and the file should be flat after it.
#
# Binaries as in benches/external.sh (ECHO_BIN, LOADGEN_BIN; nothing is
# built). Other settings: RETENTION (60), SAMPLE (30), MAX_CONNS (512),
# NONE_SECS (SECS: the length of the run without retention).
set -euo pipefail

[ $# = 2 ] || { echo "usage: $0 RATE SECS" >&2; exit 2; }
rate=$1 secs=$2
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
ECHO_BIN=${ECHO_BIN:-$target/release/examples/echo}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
RETENTION=${RETENTION:-60} SAMPLE=${SAMPLE:-30} MAX_CONNS=${MAX_CONNS:-512}
NONE_SECS=${NONE_SECS:-$secs}
for b in "$ECHO_BIN" "$LOADGEN_BIN"; do
    [ -x "$b" ] || { echo "missing binary $b" >&2; exit 2; }
done

work=$(mktemp -d)
pid="" gen=""
cleanup() {
    for p in $gen $pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

side() { # NAME RETENTION_SECS (empty: none) SECS
    local name=$1 keep=$2 secs=$3 dir url t0 t db wal
    dir=$(mktemp -d "$work/s.XXXX")
    if [ -n "$keep" ]; then
        A2A_RETENTION_SECS=$keep A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 &
    else
        A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 &
    fi
    pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    grep -q listening "$dir/out" || { echo "$name did not start:" >&2; cat "$dir/out" >&2; exit 1; }
    url=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)/
    echo "side $name: pid $pid, $url, $rate requests/s for $secs s, retention ${keep:-none}"
    "$LOADGEN_BIN" open --url "$url" --rate "$rate" --secs "$secs" --pid "$pid" \
        --max-conns "$MAX_CONNS" >"$dir/open" &
    gen=$!
    t0=$(date +%s)
    while kill -0 "$gen" 2>/dev/null; do
        sleep "$SAMPLE" & wait $! || true
        kill -0 "$gen" 2>/dev/null || break
        t=$(($(date +%s) - t0)) db=$(size "$dir/tasks.db") wal=$(size "$dir/tasks.db-wal")
        echo "size $name t=$t db=$db wal=$wal total=$((db + wal))"
    done
    wait "$gen" || true
    gen=""
    db=$(size "$dir/tasks.db") wal=$(size "$dir/tasks.db-wal")
    echo "size $name t=end db=$db wal=$wal total=$((db + wal))"
    grep '^open ' "$dir/open" | sed "s/^/$name: /"
    grep '^open: ' "$dir/open" | sed "s/^/$name: /" || true
    awk -v from="$RETENTION" -v name="$name" '/^open-second/ {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            if (v["t"] + 0 > from) { n++; if (v["max_us"] + 0 > worst) { worst = v["max_us"]; at = v["t"] }
                over += v["over100ms"] }
        } END { printf "%s: after %d s: %d seconds, worst second max_us=%d at t=%s, over100ms=%d\n",
            name, from, n, worst, at, over }' "$dir/open"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
    rm -rf "$dir"
}

side retention "$RETENTION" "$secs"
side none "" "$NONE_SECS"
