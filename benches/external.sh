#!/usr/bin/env bash
# SendMessage throughput, latency and server CPU per request of the example
# servers, driven over loopback by the external load generator
# (benches/external, `loadgen closed`: one thread, CONNS keep-alive HTTP/1.1
# connections) running in a process of its own, so that a server's CPU per
# request is its own. Each side is compared with the raw baseline server
# (`raw`: a hyper handler, no layers, no store) measured right before it.
#
#   benches/external.sh ROUNDS SECS SIDE...
#
# SIDE is one of
#   hyper         the hyper example (memory log; JSON-RPC at /a2a)
#   echo          the echo example on SQLite (a fresh data directory)
#   echo-memory   the echo example with A2A_LOG=memory (bounded at 100 000 tasks)
#   echo-pg       the echo example on PostgreSQL (a fresh schema in PG_CONN's
#                 database, dropped afterwards)
#   bin:PATH      another build of the echo example on SQLite (a fresh data
#                 directory), e.g. a copy made before a change: give `echo` and
#                 `bin:/tmp/echo-before` to alternate the two builds (A/B)
#   hyper-bin:PATH  another build of the hyper example (memory log), for the
#                 same A/B of the memory-log stack: `hyper hyper-bin:/tmp/hyper-before`
#   pg-bin:PATH   another build of the echo example on PostgreSQL (as echo-pg),
#                 for the A/B of the PostgreSQL log: `echo-pg pg-bin:/tmp/echo-before`
#
# Every server (raw included) is started once, as a fresh process, and warmed
# up (WARMUP seconds of load); then ROUNDS rounds, in each of which every side
# runs right after a raw run of its own (raw, side1, raw, side2, …; the order
# of the sides reversed every other round). Each run is SECS seconds after
# RUN_WARMUP seconds of uncounted load. Printed: every run's `closed` line
# (requests, errors, rps, p50/p90/p99/max µs, server CPU µs per request, the
# generator's CPU per request, the machine's idle %, server RSS), the ratio
# side/raw by throughput and by inverse server CPU per request, and at the
# end the median per side of both ratios, rps, p50, p99 and CPU per request;
# with two sides or more, each side after the first against the first, round
# by round: the median of the per-round ratios of req/s and of server CPU per
# request, how many rounds were faster, and the ratios' range (the A/B of two
# builds: `hyper-bin:/tmp/before hyper-bin:/tmp/after`).
#
# Nothing is built unless BUILD=1. Binaries (override by environment):
#   HYPER_BIN, ECHO_BIN  default $CARGO_TARGET_DIR or target/, release/examples/
#                        (cargo build --release --features postgres --example echo --example hyper)
#   RAW_BIN, LOADGEN_BIN default $CARGO_TARGET_DIR or benches/external/target/, release/
#                        (cargo build --release --manifest-path benches/external/Cargo.toml)
# Other settings: CONNS (32), WARMUP (2), RUN_WARMUP (1), PG_CONN (libpq
# connection string, default host=127.0.0.1 port=5432 dbname=test user=postgres),
# CONTEXTS (unset: every message opens a context of its own; M: connection i
# sends every message into context i % M, e.g. `CONNS=1024 CONTEXTS=64` for
# the delivery queue's 64 x 16 load: `bin:…/team` against `echo`).
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 ROUNDS SECS SIDE..." >&2; exit 2; }
rounds=$1 secs=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ext_target=${CARGO_TARGET_DIR:-$root/benches/external/target}
HYPER_BIN=${HYPER_BIN:-$target/release/examples/hyper}
ECHO_BIN=${ECHO_BIN:-$target/release/examples/echo}
RAW_BIN=${RAW_BIN:-$ext_target/release/raw}
LOADGEN_BIN=${LOADGEN_BIN:-$ext_target/release/loadgen}
CONNS=${CONNS:-32} WARMUP=${WARMUP:-2} RUN_WARMUP=${RUN_WARMUP:-1}
PG_CONN=${PG_CONN:-host=127.0.0.1 port=5432 dbname=test user=postgres}

if [ "${BUILD:-0}" = 1 ]; then
    (cd "$root" && cargo build --release --features postgres --example echo --example hyper)
    cargo build --release --manifest-path "$root/benches/external/Cargo.toml"
fi
for b in "$HYPER_BIN" "$ECHO_BIN" "$RAW_BIN" "$LOADGEN_BIN"; do
    [ -x "$b" ] || { echo "missing binary $b (build it, or BUILD=1)" >&2; exit 2; }
done

work=$(mktemp -d)
declare -A PID URL
schemas=()
cleanup() {
    for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PID[@]}"; do wait "$p" 2>/dev/null || true; done
    for s in "${schemas[@]}"; do
        psql "$PG_CONN" -qc "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() { # NAME KIND: starts the server, sets PID[NAME] and URL[NAME]
    local name=$1 kind=$2 dir path=/ schema
    dir=$(mktemp -d "$work/s.XXXX")
    case $kind in
    raw) A2A_ADDR=127.0.0.1:0 "$RAW_BIN" >"$dir/out" 2>&1 & ;;
    hyper) path=/a2a; A2A_ADDR=127.0.0.1:0 "$HYPER_BIN" >"$dir/out" 2>&1 & ;;
    echo) A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 & ;;
    echo-memory) A2A_LOG=memory A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 & ;;
    echo-pg)
        schema=a2a_ext_$$_$RANDOM
        schemas+=("$schema")
        A2A_POSTGRES_URL=$PG_CONN A2A_POSTGRES_SCHEMA=$schema A2A_HOST_ID=$name \
            A2A_ADDR=127.0.0.1:0 "$ECHO_BIN" >"$dir/out" 2>&1 &
        ;;
    pg-bin:*)
        [ -x "${kind#pg-bin:}" ] || { echo "missing binary ${kind#pg-bin:}" >&2; exit 2; }
        schema=a2a_ext_$$_$RANDOM
        schemas+=("$schema")
        A2A_POSTGRES_URL=$PG_CONN A2A_POSTGRES_SCHEMA=$schema A2A_HOST_ID=$name \
            A2A_ADDR=127.0.0.1:0 "${kind#pg-bin:}" >"$dir/out" 2>&1 &
        ;;
    bin:*)
        [ -x "${kind#bin:}" ] || { echo "missing binary ${kind#bin:}" >&2; exit 2; }
        A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "${kind#bin:}" >"$dir/out" 2>&1 &
        ;;
    hyper-bin:*)
        [ -x "${kind#hyper-bin:}" ] || { echo "missing binary ${kind#hyper-bin:}" >&2; exit 2; }
        path=/a2a; A2A_ADDR=127.0.0.1:0 "${kind#hyper-bin:}" >"$dir/out" 2>&1 &
        ;;
    *) echo "unknown side $kind" >&2; exit 2 ;;
    esac
    PID[$name]=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    grep -q listening "$dir/out" || { echo "$name did not start:" >&2; cat "$dir/out" >&2; exit 1; }
    URL[$name]=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)$path
    echo "started $name ($kind): pid ${PID[$name]}, ${URL[$name]}"
}

run() { # NAME SECS WARMUP: one closed-loop run, prints its `closed` line
    "$LOADGEN_BIN" closed --url "${URL[$1]}" --conns "$CONNS" --secs "$2" --warmup "$3" \
        ${CONTEXTS:+--contexts "$CONTEXTS"} --pid "${PID[$1]}"
}

val() { # KEY LINE: the value of KEY=… in a report line
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

# Side names: the kind, or a bin:PATH side's file name (made unique).
names=() kinds=()
for kind in "$@"; do
    name=$kind
    case $kind in
    hyper | echo | echo-memory | echo-pg) ;;
    bin:?*) name=$(basename "${kind#bin:}") ;;
    pg-bin:?*) name=pg-$(basename "$(dirname "${kind#pg-bin:}")")-$(basename "${kind#pg-bin:}") ;;
    hyper-bin:?*) name=$(basename "${kind#hyper-bin:}") ;;
    *) echo "unknown side $kind (hyper, echo, echo-memory, echo-pg, bin:PATH, hyper-bin:PATH or pg-bin:PATH)" >&2; exit 2 ;;
    esac
    base=$name n=1
    while [ "$name" = raw ] || printf '%s\n' "${names[@]}" | grep -qx -- "$name"; do
        n=$((n + 1)) name=$base-$n
    done
    names+=("$name") kinds+=("$kind")
done

start raw raw
for i in "${!names[@]}"; do start "${names[$i]}" "${kinds[$i]}"; done
for name in raw "${names[@]}"; do
    echo "warm-up $name: $(run "$name" "$WARMUP" 0)"
done

results=$work/results paired=$work/paired
for r in $(seq "$rounds"); do
    order=("${names[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=()
        for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[$i]}"); done
    fi
    for name in "${order[@]}"; do
        raw=$(run raw "$secs" "$RUN_WARMUP")
        echo "round $r raw: $raw"
        side=$(run "$name" "$secs" "$RUN_WARMUP")
        echo "round $r $name: $side"
        for line in "$raw" "$side"; do
            [ "$(val errors "$line")" = 0 ] || echo "round $r: WARNING: errors in: $line"
        done
        ratios=$(awk -v sr="$(val rps "$side")" -v rr="$(val rps "$raw")" \
            -v sc="$(val server_cpu_us "$side")" -v rc="$(val server_cpu_us "$raw")" \
            'BEGIN { printf "%.3f %.3f", (rr > 0 ? sr / rr : 0), (sc > 0 ? rc / sc : 0) }')
        echo "round $r: ratio $name/raw ${ratios% *} (throughput), ${ratios#* } (inverse CPU per request)"
        echo "$r $name $(val rps "$side") $(val server_cpu_us "$side")" >>"$paired"
        for row in "raw - -|$raw" "$name $ratios|$side"; do
            line=${row#*|}
            echo "${row%%|*} $(val rps "$line") $(val p50_us "$line") $(val p99_us "$line") \
$(val server_cpu_us "$line") $(val errors "$line")" >>"$results"
        done
    done
done

median() { # FORMAT: the median of the numbers on stdin, printf-formatted
    sort -g | awk -v f="$1" '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf f "\n", m }'
}
col() { # NAME COLUMN: the column of NAME's results
    awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results"
}
echo "medians over $rounds round(s) of $secs s, $CONNS connections:"
for name in raw "${names[@]}"; do
    ratio=""
    [ "$name" = raw ] ||
        ratio="ratio $(col "$name" 2 | median %.2f) (throughput) $(col "$name" 3 | median %.2f) (inverse CPU);"
    printf '  %-16s %s rps %s p50_us %s p99_us %s server_cpu_us %s errors %s\n' "$name" "$ratio" \
        "$(col "$name" 4 | median %.0f)" "$(col "$name" 5 | median %.0f)" "$(col "$name" 6 | median %.0f)" \
        "$(col "$name" 7 | median %.1f)" "$(col "$name" 8 | awk '{ s += $1 } END { print s + 0 }')"
done

# Two builds or more: each side after the first against the first, round by
# round (both ran in the same round, minutes apart at most), which the VM's
# drift between rounds disturbs less than the medians above.
if [ ${#names[@]} -ge 2 ]; then
    echo "paired rounds against ${names[0]} (medians of the per-round ratios):"
    for name in "${names[@]:1}"; do
        pairs=$(awk -v a="${names[0]}" -v b="$name" '
            $2 == a { ra[$1] = $3; ca[$1] = $4 }
            $2 == b { rb[$1] = $3; cb[$1] = $4 }
            END { for (r in rb) if (ra[r] > 0 && rb[r] > 0) printf "%.4f %s\n", rb[r] / ra[r],
                (ca[r] + 0 > 0 && cb[r] + 0 > 0) ? sprintf("%.4f", cb[r] / ca[r]) : "-" }' "$paired")
        read -r faster lo hi < <(awk 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
            $1 > 1 { n++ } END { printf "%d %.2f %.2f\n", n, lo, hi }' <<<"$pairs")
        printf '  %-16s rps x%s (%s of %s rounds faster, rounds %s-%s), server CPU x%s\n' \
            "$name" "$(cut -d' ' -f1 <<<"$pairs" | median %.3f)" "$faster" "$(wc -l <<<"$pairs")" \
            "$lo" "$hi" "$(cut -d' ' -f2 <<<"$pairs" | grep -v '^-$' | median %.3f)"
    done
fi
