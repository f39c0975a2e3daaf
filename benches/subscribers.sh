#!/usr/bin/env bash
# Many SubscribeToTask streams against the echo example on SQLite (issue 18,
# item 4), driven by the external `subscribers` tool (its own process; see
# benches/external/src/bin/subscribers.rs for what it checks and reports).
# Each scenario runs against a fresh server (a fresh database), so the RSS
# figures are its own; each prints the tool's `subscribers key=value …` line.
#
#   cargo build --release --example echo
#   cargo build --release --manifest-path benches/external/Cargo.toml
#   benches/subscribers.sh [SCENARIO...]
#
# Scenarios (all by default, in this order):
#   spread   SPREAD_TASKS tasks × SPREAD_PER_TASK subscribers, 20 words each
#            (default 1 000 × 10: 10 000 streams)
#   one      1 task × ONE_SUBS subscribers (default 10 000), 20 words
#   stall    1 task, STALL_SUBS subscribers and a text of STALL_WORDS words,
#            first without, then with STALL_K stalled subscribers (they read
#            the response head and never read again, on a 4 KiB receive
#            buffer): compare the two lines' spread_* figures. The server
#            side of a stalled socket buffers about 2.8 MB on loopback here
#            (`ss -tn`, Send-Q), and an event is about 220 bytes, so the text
#            must be well over 13 000 words for the stalled streams to block
#            the server's writes. The server runs with the default
#            configuration (no reader is cut off for being slow: a reader
#            behind the live buffer continues from the log); STALL_BUFFER, if
#            set, is passed as A2A_SUBSCRIBER_BUFFER (a host's explicit limit).
#
# The server and the tool each need an open file per connection (10 000 and
# more): the script raises its own soft limit to the hard one (`ulimit -n`)
# before starting the server, and fails if that is below the largest
# scenario's streams + 100; the tool raises its own limit at start.
#
# Environment (the scenario sizes above, and): ECHO_BIN (default target/release/examples/echo), TOOLS_DIR
# (default benches/external/target/release), SUBS_SLEEP (seconds each task
# stays WORKING before answering in spread and one, default 15: it must cover
# creating the tasks and opening every subscription, or the tool reports
# late=), STALL_SUBS (100), STALL_K (10), STALL_WORDS (40000), STALL_SLEEP
# (3), STALL_BUFFER (unset). The `tool_cpu_s` field says whether the tool
# itself was the bound (close to the run's wall time).
set -euo pipefail

echo_bin=${ECHO_BIN:-target/release/examples/echo}
tools=${TOOLS_DIR:-benches/external/target/release}
sleep_s=${SUBS_SLEEP:-15}
spread_tasks=${SPREAD_TASKS:-1000}
spread_per_task=${SPREAD_PER_TASK:-10}
one_subs=${ONE_SUBS:-10000}
stall_subs=${STALL_SUBS:-100}
stall_k=${STALL_K:-10}
stall_words=${STALL_WORDS:-40000}
stall_sleep=${STALL_SLEEP:-3}
stall_buffer=${STALL_BUFFER:-}
scenarios=${*:-spread one stall}

for b in "$echo_bin" "$tools/subscribers"; do
    [ -x "$b" ] || { echo "missing $b: build it first (see the top of $0)" >&2; exit 2; }
done
ulimit -n "$(ulimit -Hn)"
need=$(printf '%s\n' $((spread_tasks * spread_per_task)) "$one_subs" $((stall_subs + stall_k)) |
    sort -n | tail -1)
if [ "$(ulimit -n)" -lt $((need + 100)) ]; then
    echo "open-file limit $(ulimit -n) is below $((need + 100)): raise the hard limit" >&2
    exit 2
fi

work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# start [ENV=VALUE...]: a fresh echo server on SQLite; sets pid and url.
start() {
    local dir
    dir=$(mktemp -d "$work/s.XXXX")
    env "$@" A2A_DATA_DIR="$dir" A2A_ADDR=127.0.0.1:0 "$echo_bin" >"$dir/out" 2>&1 &
    pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
    url=$(grep -o 'http://[0-9.:]*' "$dir/out" | head -1)
    [ -n "$url" ] || { echo "the server did not start:" >&2; cat "$dir/out" >&2; exit 1; }
}

stop() {
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
}

# run LABEL ARGS...: the tool against the running server, its line labelled.
run() {
    local label=$1 line
    shift
    line=$("$tools/subscribers" --url "$url" --pid "$pid" "$@")
    echo "$label: $line"
}

for s in $scenarios; do
    case $s in
    spread)
        start
        run "$spread_tasks tasks x $spread_per_task" --tasks "$spread_tasks" \
            --per-task "$spread_per_task" --words 20 --sleep "$sleep_s"
        stop
        ;;
    one)
        start
        run "1 task x $one_subs" --tasks 1 --per-task "$one_subs" --words 20 --sleep "$sleep_s"
        stop
        ;;
    stall)
        for k in 0 "$stall_k"; do
            start ${stall_buffer:+A2A_SUBSCRIBER_BUFFER="$stall_buffer"}
            run "1 task x $stall_subs, $stall_words words, $k stalled" --tasks 1 \
                --per-task "$stall_subs" --words "$stall_words" --sleep "$stall_sleep" --stalled "$k"
            stop
        done
        ;;
    *) echo "unknown scenario $s (spread, one, stall)" >&2; exit 2 ;;
    esac
done
