#!/usr/bin/env bash
# One streamed artifact of N word chunks through the echo example
# (SendStreamingMessage over JSON-RPC, read with curl), on a task log, with
# builds of the example alternated round by round; prints every round and
# then the median seconds per build and N.
#
#   benches/stream_artifact.sh LOG ROUNDS "N..." BINARY...
#
# LOG is sqlite (a fresh database per round), memory (`A2A_LOG=memory`) or
# postgres (a fresh schema of the `test` database at 127.0.0.1:5432, dropped
# afterwards). Each BINARY is a release build of `--example echo` (copy one
# aside before rebuilding to compare two builds). Per round: wall time of
# the stream, the server's CPU time (all threads), data frames received,
# the server's peak RSS, and the last state seen (empty when the stream was
# cut off). Environment: A2A_SUBSCRIBER_BUFFER is passed on to the example
# (leave it unset for the default configuration a user gets); WORD_MOD
# (default 1000) makes the words w0..w(WORD_MOD-1): 10 keeps 1,000,000 words
# (3 bytes each with the space) under the default 4 MiB request body limit.
set -euo pipefail

log=$1 rounds=$2 sizes=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

one() { # BINARY N -> "secs cpu events hwm_kb state"
    local bin=$1 n=$2 dir schema="" url path=/
    dir=$(mktemp -d "$work/r.XXXX")
    case $log in
    memory) A2A_LOG=memory A2A_ADDR=127.0.0.1:0 "$bin" >"$dir/out" 2>&1 & ;;
    sqlite) A2A_DATA_DIR=$dir A2A_ADDR=127.0.0.1:0 "$bin" >"$dir/out" 2>&1 & ;;
    postgres)
        schema=s$RANDOM$RANDOM
        A2A_POSTGRES_URL="host=127.0.0.1 port=5432 dbname=test user=postgres" \
            A2A_POSTGRES_SCHEMA=$schema A2A_ADDR=127.0.0.1:0 "$bin" >"$dir/out" 2>&1 &
        ;;
    *) echo "unknown log $log" >&2; exit 2 ;;
    esac
    local pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    url=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)
    python3 -c '
import json, sys
n, mod = int(sys.argv[1]), int(sys.argv[2])
text = " ".join("w%d" % (i % mod) for i in range(n))
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
    "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}}}))
' "$n" "${WORD_MOD:-1000}" >"$dir/body.json"
    local secs cpu hwm events state
    secs=$(curl -sN -o "$dir/events" -w '%{time_total}' "$url$path" -H 'a2a-version: 1.0' \
        -H 'content-type: application/json' --data-binary @"$dir/body.json")
    cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    events=$(grep -c '^data:' "$dir/events" || true)
    state=$(tail -c 400 "$dir/events" | tr -d '\n' | grep -o 'TASK_STATE_[A-Z_]*' | tail -1 || true)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    if [ -n "$schema" ]; then
        psql -h 127.0.0.1 -U postgres -d test -qc "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1 || true
    fi
    echo "$secs $cpu $events $hwm ${state:-cut-off}"
}

results=$work/results
for r in $(seq "$rounds"); do
    for n in $sizes; do
        b=0
        for bin in "$@"; do
            b=$((b + 1))
            line=$(one "$bin" "$n")
            echo "round $r build $b N=$n: secs cpu events hwm_kb state = $line"
            echo "$b $n $line" >>"$results"
        done
    done
done
echo "median seconds (events/s):"
for n in $sizes; do
    b=0
    for _ in "$@"; do
        b=$((b + 1))
        awk -v b=$b -v n="$n" '$1 == b && $2 == n {print $3}' "$results" | sort -g |
            awk -v b=$b -v n="$n" '{v[NR] = $1} END {m = v[int((NR + 1) / 2)];
                printf "  build %d N=%d: %.2f s (%.0f events/s)\n", b, n, m, n / m}'
    done
done
