#!/usr/bin/env bash
# Open-loop soak of the echo example: SendMessage at a fixed RATE for SECS
# seconds from the external load generator (benches/external, `loadgen
# open`: each request sent at its due time, latency measured from that due
# time, so a stalled server shows as slow requests, not fewer), on
#   (a) echo on SQLite (a fresh data directory), and
#   (b) echo with A2A_LOG=memory, its log first filled to its bound of
#       100 000 tasks by closed-loop runs until FILL (110 000) requests have
#       succeeded, so that the soak runs while the log evicts.
#
#   benches/soak.sh RATE SECS
#
# Printed per side: the generator's `open-second` lines (sent, answered,
# errors, slowest, requests over 100 ms and the server's RSS, each second),
# its `open` summary, and a verdict line: errors (failed and unanswered
# requests), requests over 100 ms, whether the server's RSS is flat after the
# warm-up, and whether the generator kept to its schedule (if not, the run is
# invalid). RSS counts as flat when its growth from 10 s to the end is at
# most RSS_TOL_PCT (10) % of the 10 s reading or RSS_TOL_KIB (8192) KiB,
# whichever is larger; runs shorter than 10 s give no RSS verdict.
#
# Binaries as in benches/external.sh (ECHO_BIN, LOADGEN_BIN; nothing is built
# unless BUILD=1). Other settings: MAX_CONNS (512), FILL (110000), FILL_SECS
# (5, per closed-loop fill run), CONNS (32, of the fill runs).
set -euo pipefail

[ $# = 2 ] || { echo "usage: $0 RATE SECS" >&2; exit 2; }
rate=$1 secs=$2
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
ECHO_BIN=${ECHO_BIN:-$target/release/examples/echo}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
MAX_CONNS=${MAX_CONNS:-512} FILL=${FILL:-110000} FILL_SECS=${FILL_SECS:-5} CONNS=${CONNS:-32}
RSS_TOL_PCT=${RSS_TOL_PCT:-10} RSS_TOL_KIB=${RSS_TOL_KIB:-8192}

if [ "${BUILD:-0}" = 1 ]; then
    (cd "$root" && cargo build --release --features postgres --example echo)
    cargo build --release --manifest-path "$root/benches/external/Cargo.toml"
fi
for b in "$ECHO_BIN" "$LOADGEN_BIN"; do
    [ -x "$b" ] || { echo "missing binary $b (build it, or BUILD=1)" >&2; exit 2; }
done

work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

val() { # KEY LINE: the value of KEY=… in a report line
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

soak() { # SIDE: start the server, (fill it,) soak it, give the verdict
    local side=$1 dir url summary
    dir=$(mktemp -d "$work/s.XXXX")
    if [ "$side" = echo-memory ]; then
        A2A_LOG=memory A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 &
    else
        A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 &
    fi
    pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    grep -q listening "$dir/out" || { echo "$side did not start:" >&2; cat "$dir/out" >&2; exit 1; }
    url=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)/
    echo "soak $side: pid $pid, $url, $rate requests/s for $secs s"
    if [ "$side" = echo-memory ]; then
        local filled=0 line
        while [ "$filled" -lt "$FILL" ]; do
            line=$("$LOADGEN_BIN" closed --url "$url" --conns "$CONNS" --secs "$FILL_SECS" \
                --warmup 0 --pid "$pid")
            echo "fill: $line"
            filled=$((filled + $(val requests "$line")))
        done
        echo "fill: $filled requests succeeded (the log holds at most 100 000 tasks)"
    fi
    "$LOADGEN_BIN" open --url "$url" --rate "$rate" --secs "$secs" --pid "$pid" \
        --max-conns "$MAX_CONNS" | tee "$dir/open"
    summary=$(grep '^open ' "$dir/open")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
    awk -v side="$side" -v pct="$RSS_TOL_PCT" -v kib="$RSS_TOL_KIB" \
        -v e="$(val errors "$summary")" -v u="$(val unfinished "$summary")" \
        -v over="$(val over100ms "$summary")" -v r10="$(val rss_10s_kib "$summary")" \
        -v rend="$(val rss_end_kib "$summary")" -v gen="$(val generator "$summary")" 'BEGIN {
        if (r10 == "-" || rend == "-") flat = "unknown (no reading at 10 s)";
        else {
            tol = r10 * pct / 100; if (tol < kib) tol = kib;
            flat = (rend - r10 <= tol ? "flat" : "GROWING") sprintf(" (%+d KiB from 10 s to the end, tolerance %d KiB)", rend - r10, tol);
        }
        printf "verdict %s: errors=%d over100ms=%d rss=%s generator=%s%s\n", side, e + u, over,
            flat, gen, (gen == "kept-up" ? "" : " (INVALID RUN: the generator fell behind)");
    }'
}

soak echo
soak echo-memory
