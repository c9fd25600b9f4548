#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/top-fleet.sh BUILD_DIR
#
# What one frame of `jobtrace top --source clickhouse` costs on a fleet
# store: NODES nodes each running a job of run fleet-1 (pipeline rnaseq,
# tests/integration/gen-run.py --now: about 50 live processes a node (18 tasks at a time) with
# two samples each, and the finished ones' records), beside HIST earlier
# runs of the pipeline (finished, for the expected times), all written into
# a throw-away ClickHouse (Debian's clickhouse-server, tests/clickhouse/
# ch-env.sh) as the agent's sink writes them (chrow).  Then FRAMES frames
# each of:
#   default   top --once --format json --source clickhouse (the runs of
#             the last 15 minutes)
#   run       the same with --run fleet-1
#   sqlite    the default frame from a SQLite store holding the same records
# timed one after the other (wall time of the CLI: its start, the queries,
# the temporary store, the tree and its JSON), with the CPU the CLI and the
# ClickHouse server used over all the frames of each, per frame.  Needs root
# (ch-env runs the server as user clickhouse), python3, clickhouse-server.
set -u
BUILD=$(cd "${1:?usage: bench/top-fleet.sh BUILD_DIR}" && pwd) || exit 2
SRC=$(cd "$(dirname "$0")/.." && pwd)
NODES=${NODES:-20}
PROCS=${PROCS:-200}	# gen-run.py --procs per node
HIST=${HIST:-5}
FRAMES=${FRAMES:-10}
OUT=${BENCH_OUT:-$SRC/bench/top-fleet-latest.txt}
T=$(mktemp -d /tmp/jobtrace-benchfleet.XXXXXX)
chmod 755 "$T"
. "$SRC/tests/clickhouse/ch-env.sh"
trap 'ch_destroy; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
CLI=$BUILD/jobtrace
GEN=$SRC/tests/integration/gen-run.py
for f in "$CLI" "$BUILD/tests/integration/store-put" "$BUILD/tests/clickhouse/chrow"; do
	[ -x "$f" ] || { echo "missing $f (make check builds it)" >&2; exit 2; }
done

ch_pick_ports && ch_start "$T/ch" || exit 1
"$CLI" schema clickhouse | ch_multiquery >/dev/null
mkdir -p "$T/state" "$T/rows"
cat >"$T/conf" <<EOF
agent = { state_dir = "$T/state"; run_dir = "$T/run"; };
sinks = ( { type = "clickhouse"; name = "fleet"; url = "$CH_URL"; } );
EOF
NOW=$(( ($(date +%s) / 30 + 1) * 30 + 1 ))
for i in $(seq 1 "$HIST"); do
	python3 "$GEN" --procs 300 --job "h$i" --run "hist-$i" \
		--host "node$(printf %02d "$i")" --seed "$i" \
		--t0 $((NOW - 86400 * i)) 2>/dev/null
done >"$T/all.ndjson"
LIVE=0
for i in $(seq 1 "$NODES"); do
	python3 "$GEN" --procs "$PROCS" --job "f$i" --run fleet-1 \
		--host "node$(printf %02d "$i")" --seed $((100 + i)) \
		--t0 $((NOW - 200)) --now "$NOW" --cpus 18 >>"$T/all.ndjson" 2>"$T/truth"
	LIVE=$((LIVE + $(sed 's/.*live=\([0-9]*\).*/\1/' "$T/truth")))
done
"$BUILD/tests/clickhouse/chrow" "$T/rows" <"$T/all.ndjson" >"$T/counts"
for t in process sample job signal; do
	ch_http "INSERT INTO jobtrace.$t FORMAT JSONEachRow" \
		input_format_skip_unknown_fields=1 <"$T/rows/$t.rows" >/dev/null || exit 1
done
"$BUILD/tests/integration/store-put" "$T/state/jobtrace.db" <"$T/all.ndjson" >/dev/null

# utime + stime of a pid, in ticks
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# the children's CPU in the output of bash's times ($1), in ticks of 10 ms
# (times runs in this shell: a subshell's children are its own)
cli_ticks() { awk 'NR == 2 { gsub(/[ms]/, " "); print int(($1 * 60 + $2 + $3 * 60 + $4) * 100) }' "$1"; }
HZ=$(getconf CLK_TCK)

# $1 the name, the rest the CLI's arguments: FRAMES frames, one line
frames() {
	local name=$1 t0 t1 c0 c1 s0 s1 walls=
	shift
	s0=$(ticks "$CH_PID")
	times >"$T/times0"
	for _ in $(seq 1 "$FRAMES"); do
		t0=$EPOCHREALTIME
		"$CLI" --config "$T/conf" top --once --format json "$@" >"$T/$name.json" || return 1
		t1=$EPOCHREALTIME
		walls="$walls $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')"
	done
	times >"$T/times1"
	s1=$(ticks "$CH_PID")
	c0=$(cli_ticks "$T/times0")
	c1=$(cli_ticks "$T/times1")
	python3 - "$name" "$FRAMES" "$HZ" "$(((c1 - c0) * HZ / 100))" "$((s1 - s0))" "$T/$name.json" $walls <<'PY'
import json, statistics, sys
name, n, hz, cli, srv, js = sys.argv[1:7]
w = sorted(float(x) for x in sys.argv[7:])
n, hz = int(n), float(hz)
d = json.load(open(js))
procs = 0
def walk(l):
    global procs
    procs += l["kind"] == "process" and l["state"] == "running"
    for c in l["children"]:
        walk(c)
for r in d["runs"]:
    walk(r)
print("%-8s  median %7.1f ms  max %7.1f ms  CLI CPU %6.1f ms  ClickHouse CPU %6.1f ms"
      "  (a frame; %d runs, %d running processes)"
      % (name, statistics.median(w), w[-1], float(cli) / hz * 1000 / n,
         float(srv) / hz * 1000 / n, len(d["runs"]), procs))
PY
}

{
	echo "# bench/top-fleet.sh $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs, $(ch_query 'SELECT version()' | head -n1)"
	echo "# $NODES nodes of run fleet-1 with $LIVE live processes (gen-run.py --procs $PROCS --cpus 18 --now), $HIST earlier runs; rows: $(echo $(cat "$T/counts"))"
	echo "# $FRAMES frames each, one after the other; CPU per frame over all of them"
	frames default --source clickhouse
	frames run --source clickhouse --run fleet-1
	frames sqlite
} | tee "$OUT"
