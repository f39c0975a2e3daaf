#!/usr/bin/env bash
# Instructions and simulated cache misses per SendMessage, from outside, without
# the VM's noise: each server runs under `valgrind --tool=callgrind` with its
# cache simulation, driven over loopback by the external load generator
# (benches/external, `loadgen closed`). Counts, not seconds: the same binary
# and load give about the same figures whatever else the machine is doing.
# Instructions repeat within 0.3 % between processes, so a change of 1-2 %
# (a smaller future, fewer copies) shows here where `external.sh`'s ±15 %
# rounds hide it. Last-level misses vary about ±15 % between processes (each
# has its own hash seeds and heap layout): compare them over several runs.
#
#   benches/cachesim.sh SIDE...
#
# SIDE is one of
#   hyper           the hyper example (memory log, its default bound: 100 000 tasks)
#   raw             the raw baseline (a hyper handler, no layers, no store)
#   hyper-bin:PATH  another build of the hyper example, for an A/B
#
# Each side is started as a fresh process under callgrind with instrumentation
# off (valgrind's core only, ≈ 5 000 req/s here), filled for FILL_SECS
# (default 30: ≈ 140 000 SendMessages, so the memory log is at its bound and
# every new task evicts one, as in a long-running server), then
# instrumented (`callgrind_control -i on`, ≈ 300 req/s), warmed up for
# WARMUP_SECS (2), its counters zeroed, driven for SECS (10) and dumped.
# Printed per side: the requests measured and, per request, the instructions
# (Ir), the L1 data misses (D1mr + D1mw) and the last-level misses (DLmr +
# DLmw) of callgrind's simulated caches: L1 as detected, the last level as
# LL (default 2097152,16,64: this VM's 2 MiB L2 per 2 cores, the level the
# retained tasks overflow; give LL= to use callgrind's detection, e.g. the
# 32 MiB L3). A last-level miss costs about 100 ns on this VM; an
# instruction about 0.3 ns.
#
# Caveats: valgrind runs the server's threads one at a time, so what
# contention and the second core would cost is not counted; `rep movsb`
# copies count each iteration as an instruction (a large memcpy looks far
# costlier in Ir than in cycles, see docs/performance.md). Compare sides
# measured the same way, never with `external.sh`'s figures.
#
# Binaries as in external.sh: HYPER_BIN (target/release/examples/hyper),
# RAW_BIN and LOADGEN_BIN (benches/external/target/release/). CONNS (16).
# KEEP=DIR keeps each side's dump there (DIR/N-SIDE.callgrind, SIDE's `/`
# as `_`): `callgrind_annotate --inclusive=no --sort=DLmr DIR/1-hyper.callgrind`
# lists the functions by their last-level read misses.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 SIDE..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
HYPER_BIN=${HYPER_BIN:-$target/release/examples/hyper}
RAW_BIN=${RAW_BIN:-$ext_target/release/raw}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
CONNS=${CONNS:-16} FILL_SECS=${FILL_SECS:-30} WARMUP_SECS=${WARMUP_SECS:-2} SECS=${SECS:-10}
LL=${LL-2097152,16,64}

for tool in valgrind callgrind_control; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done
[ -x "$LOADGEN_BIN" ] || { echo "missing $LOADGEN_BIN: build benches/external first" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# load SECS URL: one closed-loop run; prints its request count.
load() {
    "$LOADGEN_BIN" closed --url "$2" --conns "$CONNS" --secs "$1" --warmup 0 |
        grep -o 'requests=[0-9]*' | cut -d= -f2
}

n=0
for side in "$@"; do
    path=/a2a
    case $side in
    hyper) bin=$HYPER_BIN ;;
    raw) bin=$RAW_BIN path=/ ;;
    hyper-bin:*) bin=${side#hyper-bin:} ;;
    *) echo "unknown side $side" >&2; exit 2 ;;
    esac
    [ -x "$bin" ] || { echo "missing binary $bin" >&2; exit 2; }
    out=$work/$$.$RANDOM
    A2A_ADDR=127.0.0.1:0 valgrind --tool=callgrind --instr-atstart=no --cache-sim=yes \
        ${LL:+--LL=$LL} --callgrind-out-file="$out.cg" "$bin" >"$out.log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do grep -q listening "$out.log" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$out.log" || { echo "$side did not start:" >&2; cat "$out.log" >&2; exit 1; }
    url=$(grep -o 'http://[0-9.:]*' "$out.log" | head -1)$path
    filled=$(load "$FILL_SECS" "$url")
    callgrind_control -i on "$pid" >/dev/null 2>&1
    load "$WARMUP_SECS" "$url" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    requests=$(load "$SECS" "$url")
    callgrind_control -d "$pid" >/dev/null 2>&1
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    # The dump's `events:` and `summary:` lines (the first dump after the zeroing).
    dump=$(ls "$out".cg.* 2>/dev/null | head -1)
    [ -n "$dump" ] || { echo "$side: no callgrind dump" >&2; exit 1; }
    n=$((n + 1))
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP"
        cp "$dump" "$KEEP/$n-${side//\//_}.callgrind"
    fi
    awk -v side="$side" -v n="$requests" -v filled="$filled" '
        /^events:/ { for (i = 2; i <= NF; i++) name[i] = $i }
        /^summary:/ { for (i = 2; i <= NF; i++) v[name[i]] = $i }
        END {
            if (n == 0) { print side ": no request measured"; exit 1 }
            printf "%s: filled=%d requests=%d ir=%.0f d1_misses=%.1f ll_misses=%.1f\n",
                side, filled, n, v["Ir"] / n, (v["D1mr"] + v["D1mw"]) / n,
                (v["DLmr"] + v["DLmw"]) / n
        }' "$dump"
done
