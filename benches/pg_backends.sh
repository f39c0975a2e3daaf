#!/usr/bin/env bash
# PostgreSQL CPU per SendMessage by backend kind, with N echo hosts on one
# fresh schema of the `test` database (dropped afterwards): after 2 s of
# warm-up, SECS of `loadgen closed` (32 connections over every host's URL);
# the CPU of every `postgres` process is read from /proc before and after,
# each pid attributed by `pg_stat_activity` (`commit`: the committer
# connections, `a2a_commit <schema>`; `listen`: a connection whose last
# statement was a LISTEN, as hosts before schema 7 had; `pool`: other client
# backends; the rest by backend type), and divided by the requests answered.
# Also printed: the hosts' commit metrics from `/metrics` (appends per batch,
# time per batch, how busy the committers were) and `xact_commit` per request
# (approximate: backends report it late).
#
#   benches/pg_backends.sh ECHO_BIN HOSTS [SECS]
#
# ECHO_BIN is a release build of `--example echo --features postgres`;
# TOOLS_DIR holds `loadgen` (default benches/external/target/release).
# Alternate two builds by calling it for each in turn.
set -euo pipefail
bin=$1 n=$2 secs=${3:-8}
tools=${TOOLS_DIR:-benches/external/target/release}
pg_url="host=127.0.0.1 port=5432 dbname=test user=postgres"
schema=attr_$RANDOM$RANDOM
work=$(mktemp -d)
pids=(); urls=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql -h 127.0.0.1 -U postgres -d test -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
for i in $(seq "$n"); do
  out=$work/$i.out
  A2A_POSTGRES_URL=$pg_url A2A_POSTGRES_SCHEMA=$schema A2A_HOST_ID=host-$i A2A_ADDR=127.0.0.1:0 "$bin" >"$out" 2>&1 &
  pids+=("$!")
  for _ in $(seq 200); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
  urls+=("$(grep -o 'http://[0-9.:]*' "$out" | head -1)")
done
largs=(closed --conns 32 --warmup 0)
for u in "${urls[@]}"; do largs+=(--url "$u"); done
for p in "${pids[@]}"; do largs+=(--pid "$p"); done
"$tools/loadgen" "${largs[@]}" --secs 2 >/dev/null
snap() { # pid kind ticks
  psql -h 127.0.0.1 -U postgres -d test -AtF' ' -c "select pid, case when application_name like 'a2a_commit%' then 'commit' when query like 'LISTEN%' then 'listen' when backend_type='client backend' then 'pool' else replace(backend_type,' ','_') end from pg_stat_activity" |
  while read -r pid kind; do t=$(awk '{print $14+$15}' /proc/$pid/stat 2>/dev/null || echo 0); echo "$pid $kind $t"; done
  for p in $(pgrep -x postgres); do echo "$p other $(awk '{print $14+$15}' /proc/$p/stat)"; done
}
xact() { psql -h 127.0.0.1 -U postgres -d test -At -c "select xact_commit from pg_stat_database where datname='test'"; }
mets() { for u in "${urls[@]}"; do curl -s "$u/metrics"; done | awk '/^a2a_log_commit_batch_size_(sum|count)\{log="postgres"\}/ { split($1,a,"{"); v[a[1]]+=$2 } /^a2a_log_commit_duration_seconds_sum\{log="postgres"\}/ {v["dur"]+=$2} END { printf "%s %s %s", v["a2a_log_commit_batch_size_sum"]+0, v["a2a_log_commit_batch_size_count"]+0, v["dur"]+0 }'; }
m0=$(mets); snap >"$work/a"; x0=$(xact)
line=$("$tools/loadgen" "${largs[@]}" --secs "$secs")
snap >"$work/b"; m1=$(mets); sleep 1.2; x1=$(xact)
req=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")
echo "$n hosts: $line"
awk -v req="$req" -v hz=$(getconf CLK_TCK) '
 NR==FNR { if (!($1 in k) || k[$1]=="other") k[$1]=$2; a[$1]=$3; next }
 { if (!($1 in k) || k[$1]=="other") k[$1]=$2; if (!seen[$1]++) d[k[$1]] += $3 - ($1 in a ? a[$1] : 0) }
 END { for (x in d) { printf "  pg %-20s %7.1f us/req\n", x, d[x]/hz*1e6/req; t+=d[x] } printf "  pg total %.1f us/req\n", t/hz*1e6/req }' "$work/a" "$work/b"
echo "  xact_commit per req (approx): $(awk -v a=$x0 -v b=$x1 -v r=$req 'BEGIN{printf "%.3f",(b-a)/r}')"
read s0 c0 d0 <<<"$m0"; read s1 c1 d1 <<<"$m1"
awk -v s0=$s0 -v c0=$c0 -v d0=$d0 -v s1=$s1 -v c1=$c1 -v d1=$d1 -v secs=$secs -v n=$n 'BEGIN { c=c1-c0; if (c>0) printf "  batches %d, appends/batch %.1f, ms/batch %.2f, committers busy %.0f%%\n", c, (s1-s0)/c, (d1-d0)/c*1000, (d1-d0)/secs/n*100 }'
