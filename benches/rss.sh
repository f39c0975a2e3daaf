#!/usr/bin/env bash
# The server's RSS under sustained full load: closed-loop SendMessage from the
# external load generator (benches/external, `loadgen closed`, CONNS
# keep-alive connections) for SECS seconds, the RSS read every EVERY seconds.
# The soak (benches/soak.sh) runs at a fixed, moderate rate; this runs as fast
# as the server answers, so the memory log passes its bound within seconds and
# then evicts a task for every one it takes in, tens of thousands a second: a
# leak or a drift of the eviction shows within two minutes here (the shards'
# sizes walking apart grew the `hyper` example's RSS 131 -> 157 MiB over two
# minutes at 80 000 req/s, while soak.sh's 4 000 req/s saw it flat).
#
#   benches/rss.sh SECS SIDE...
#
# SIDE is one of
#   hyper           the hyper example (memory log, its default bound: 100 000 tasks)
#   echo-memory     the echo example with A2A_LOG=memory
#   hyper-bin:PATH  another build of the hyper example, e.g. one made before a change
#
# Each side runs alone, one after the other, as a fresh process. Printed per
# side: the RSS readings (MiB), the `closed` summary (req/s, server CPU per
# request) and a verdict: RSS flat or growing. It counts as flat when its
# growth from the first reading to the end is at most RSS_TOL_PCT (10) % of
# the first reading or RSS_TOL_MIB (8) MiB, whichever is larger (the first
# reading is taken after EVERY seconds, the log full by then). The exit
# status is 1 if any side grew.
#
# Binaries as in benches/external.sh (HYPER_BIN, ECHO_BIN, LOADGEN_BIN;
# nothing is built unless BUILD=1). Other settings: EVERY (15), CONNS (32),
# RSS_TOL_PCT (10), RSS_TOL_MIB (8).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 SECS SIDE..." >&2; exit 2; }
secs=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
HYPER_BIN=${HYPER_BIN:-$target/release/examples/hyper}
ECHO_BIN=${ECHO_BIN:-$target/release/examples/echo}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
EVERY=${EVERY:-15} CONNS=${CONNS:-32}
RSS_TOL_PCT=${RSS_TOL_PCT:-10} RSS_TOL_MIB=${RSS_TOL_MIB:-8}
[ "$secs" -ge $((2 * EVERY)) ] || { echo "SECS must be at least 2 x EVERY ($EVERY)" >&2; exit 2; }

if [ "${BUILD:-0}" = 1 ]; then
    (cd "$root" && cargo build --release --example echo --example hyper)
    cargo build --release --manifest-path "$root/benches/external/Cargo.toml"
fi
[ -x "$LOADGEN_BIN" ] || { echo "missing binary $LOADGEN_BIN (build it, or BUILD=1)" >&2; exit 2; }

work=$(mktemp -d)
pid="" gen=""
cleanup() {
    for p in $gen $pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss_mib() { # PID: its resident set, MiB
    awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$1/status"
}

grew=0
for side in "$@"; do
    out="$work/out" path=/a2a bin=""
    case $side in
    hyper) bin=$HYPER_BIN ;;
    hyper-bin:*) bin=${side#hyper-bin:} ;;
    echo-memory) bin=$ECHO_BIN path="" ;;
    *) echo "unknown side $side" >&2; exit 2 ;;
    esac
    [ -x "$bin" ] || { echo "missing binary $bin (build it, or BUILD=1)" >&2; exit 2; }
    A2A_LOG=memory A2A_ADDR=127.0.0.1:0 "$bin" >"$out" 2>&1 &
    pid=$!
    for _ in $(seq 200); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
    grep -q listening "$out" || { echo "$side did not start:" >&2; cat "$out" >&2; exit 1; }
    url=$(grep -o 'http://[0-9.:]*' "$out" | head -1)$path
    "$LOADGEN_BIN" closed --url "$url" --conns "$CONNS" --secs "$secs" --warmup 0 \
        --pid "$pid" >"$work/load" 2>&1 &
    gen=$!
    readings=()
    for _ in $(seq $((secs / EVERY))); do
        sleep "$EVERY"
        readings+=("$(rss_mib "$pid")")
    done
    wait "$gen" || { echo "$side: the load generator failed:" >&2; cat "$work/load" >&2; exit 1; }
    gen=""
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
    first=${readings[0]} last=${readings[-1]}
    tol=$((first * RSS_TOL_PCT / 100))
    [ "$tol" -ge "$RSS_TOL_MIB" ] || tol=$RSS_TOL_MIB
    if [ $((last - first)) -le "$tol" ]; then verdict=flat; else verdict=growing grew=1; fi
    echo "$side: rss_mib every ${EVERY} s: ${readings[*]}"
    echo "$side: $(grep '^closed' "$work/load")"
    echo "$side: RSS $verdict ($first -> $last MiB, tolerance $tol MiB)"
done
exit "$grew"
