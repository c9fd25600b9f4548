#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_top_fleet.sh - `jobtrace top --source clickhouse`: the fleet's view,
# a run spread over three nodes read back from a real ClickHouse (Debian's
# clickhouse-server on loopback), with the node as one more level.
#
# The records are tests/integration/gen-run.py's, written into ClickHouse
# as the agent's sink writes them (chrow: the same conversion) and into a
# SQLite store (store-put):
#  - an earlier run of the pipeline (hist-1, a day ago, on node07): every
#    instance finished;
#  - 22 later runs of a pipeline and tasks of the same names by another
#    user (mallory, m-1..m-22, an hour ago, on node09): more than the 21
#    latest runs an expected time is of, none of them alice's: they count
#    for nothing, in ClickHouse as in SQLite;
#  - the run watched (fleet-1), a job on each of node01..node03 started 2
#    and a half minutes before the time it is seen at (gen-run.py --now): finished
#    processes have their records, running ones their samples only.
# References, computed by the test from the records themselves:
#  - per node, the running processes are the ones the generator left
#    running with a sample (its line of truth, live=N);
#  - a running process's cores are its CPU between its two latest samples
#    over their interval (1e-6 relative), a node's the sum of its lines;
#  - a task's expected time is the median (nearest rank) of its instances'
#    wall times in hist-1 (a job script's bash spans its instance);
#  - waiting: the tasks of hist-1 no node of fleet-1 has started;
#  - the same frame from the SQLite store holding the same records has the
#    same lines, figures and states, without the node lines (one figure,
#    one value in every view).
# The full-screen view (tmux, 120x40) draws the same: the run, its nodes,
# a node's instances under it; / node02 leaves that node's lines.
# ClickHouse stopped: `top --once --source clickhouse` exits 1 and names
# the URL, and the view says so on its last rows.
#
# Needs root, kernel BTF, the sqlite3 CLI, python3, clickhouse-server
# (scripts/install-deps.sh installs them).  Exit 0 pass, 1 fail, 77
# skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_top_fleet.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/clickhouse/ch-env.sh"
PUT=$top_builddir/tests/integration/store-put
CHROW=$top_builddir/tests/clickhouse/chrow
GEN=$top_srcdir/tests/integration/gen-run.py
need_built "$CLI" "$PUT" "$CHROW"
need_commands python3 tmux /usr/sbin/clickhouse-server
start_watchdog 300
chmod 755 "$T"	# the clickhouse user reaches its folder in it
SIGNALS_EXPECTED=stall	# the generator's runs have one; no agent runs here

TMUX_S=jt-fleet-$$
extra_cleanup() {
	tmux kill-session -t "$TMUX_S" >/dev/null 2>&1
	ch_destroy
}

# ---- ClickHouse -----------------------------------------------------------------
ch_pick_ports
if ! ch_start "$T/ch"; then
	check "clickhouse-server starts on 127.0.0.1:$CH_HTTP_PORT" false
	finish
fi
"$CLI" schema clickhouse | ch_multiquery >"$T/schema.out" 2>&1
mkdir -p "$T/state"
cat >"$CONF" <<EOF
agent = { state_dir = "$T/state"; run_dir = "$T/run"; };
sinks = ( { type = "clickhouse"; name = "fleet"; url = "$CH_URL"; } );
EOF

# ---- the records ------------------------------------------------------------------
# Seen at NOW: one second after a sample time (they are multiples of 30 s),
# so every running process's latest sample is one second old at NOW and
# the frames below, made within a minute of it, find them all live.
NOW=$(( ($(date +%s) / 30 + 1) * 30 + 1 ))
python3 "$GEN" --procs 300 --job h1 --run hist-1 --host node07 \
	--t0 $((NOW - 86400)) >"$T/hist.ndjson" 2>"$T/hist.truth"
: >"$T/fleet.ndjson"
for i in 1 2 3; do
	python3 "$GEN" --procs 150 --job "f$i" --run fleet-1 --host "node0$i" \
		--seed $((20 + i)) --t0 $((NOW - 150)) --now "$NOW" \
		>>"$T/fleet.ndjson" 2>"$T/truth.$i"
	note "node0$i: $(cat "$T/truth.$i")"
done
: >"$T/other.ndjson"
for k in $(seq 1 22); do
	python3 "$GEN" --procs 20 --job "m$k" --run "m-$k" --host node09 \
		--user mallory --seed $((40 + k)) --t0 $((NOW - 3600 + 60 * k)) \
		>>"$T/other.ndjson" 2>/dev/null
done
cat "$T/hist.ndjson" "$T/other.ndjson" "$T/fleet.ndjson" >"$T/all.ndjson"
mkdir -p "$T/rows"
"$CHROW" "$T/rows" <"$T/all.ndjson" >"$T/rows.counts" 2>"$T/chrow.err"
check "chrow converts every record ($(echo $(cat "$T/rows.counts")))" \
	eval '[ ! -s "$T/chrow.err" ]'
ins=ok
for t in process sample job signal; do
	[ -s "$T/rows/$t.rows" ] || continue
	ch_http "INSERT INTO jobtrace.$t FORMAT JSONEachRow" \
		input_format_skip_unknown_fields=1 <"$T/rows/$t.rows" \
		>>"$T/insert.out" 2>&1 || ins="$t failed"
done
check "the rows go into ClickHouse ($ins)" eq "$ins" ok
"$PUT" "$DB" <"$T/all.ndjson" >/dev/null
check "the same records go into the SQLite store" \
	eq "$(q "select (select count(*) from record) + (select count(*) from process);")" \
	"$(wc -l <"$T/all.ndjson")"

# ---- the frames -----------------------------------------------------------------------
cli top --once --format json --run fleet-1 --source clickhouse \
	>"$T/ch.json" 2>"$T/ch.err"
st=$?
check "top --once --format json --source clickhouse exits 0 (got $st)" eq "$st" 0
[ "$st" = 0 ] || note "$(cat "$T/ch.err")"
cli top --once --format json --run fleet-1 >"$T/local.json" 2>"$T/local.err"
check "the same frame from the SQLite store exits 0" eq "$?" 0
cli top --once --run fleet-1 --source clickhouse >"$T/ch.txt" 2>&1
note "$(head -n 14 "$T/ch.txt")"
check "the text frame has a line per node: [node01] .. [node03]" \
	eq "$(grep -cE '^\S+ +\[node0[123]\]' "$T/ch.txt")" 3

# The checks, computed from the records: one "ok|not ok - ..." line each.
python3 - "$T" <<'PY' >"$T/checks"
import json, math, sys
T = sys.argv[1]
ch = json.load(open(T + "/ch.json"))
local = json.load(open(T + "/local.json"))
recs = [json.loads(l) for l in open(T + "/fleet.ndjson")]
hist = [json.loads(l) for l in open(T + "/hist.ndjson")]

def say(ok, msg):
    print(("ok - " if ok else "not ok - ") + msg)

def walk(line, up=()):
    yield line, up
    for c in line["children"]:
        yield from walk(c, up + (line,))

runs = [r for r in ch["runs"] if r["name"] == "fleet-1"]
say(len(runs) == 1, "one run fleet-1 in the fleet's frame (%d)" % len(runs))
run = runs[0]
nodes = [c for c in run["children"] if c["kind"] == "node"]
say([n["name"] for n in nodes] == ["node01", "node02", "node03"],
    "the run's nodes, by name: %s" % [n["name"] for n in nodes])

# running processes per node against the generator's live=N
for i, n in enumerate(nodes, 1):
    truth = dict(kv.split("=") for kv in
                 open("%s/truth.%d" % (T, i)).read().split())
    procs = [l for l, _ in walk(n) if l["kind"] == "process"]
    run_n = sum(1 for l in procs if l["state"] == "running")
    say(run_n == int(truth["live"]) and
        all(l["host"] == n["name"] for l in procs),
        "%s: %d running processes, the generator's live=%s; all its"
        " processes on it" % (n["name"], run_n, truth["live"]))

# cores from the two latest samples of each running process
samples = {}
for r in recs:
    if r["type"] == "sample":
        samples.setdefault((r["host"], r["pid"]), []).append(r)
def cpu(r):
    return r["cpu"]["user_s"] + r["cpu"]["sys_s"]
def epoch(s):
    import datetime
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
bad, n_cores = [], 0
for n in nodes:
    tot = 0.0
    for l, _ in walk(n):
        if l["kind"] != "process" or l["state"] != "running":
            continue
        s = sorted(samples[(l["host"], l["pid"])], key=lambda r: r["time"])
        if len(s) < 2:
            ref = None
        else:
            ref = (cpu(s[-1]) - cpu(s[-2])) / (epoch(s[-1]["time"]) -
                                               epoch(s[-2]["time"]))
        got = l["cores"]
        if (ref is None) != (got is None) or \
           (ref is not None and abs(got - ref) > 1e-6 * max(1, ref)):
            bad.append((l["host"], l["pid"], got, ref))
        n_cores += 1
        tot += got or 0
    if abs((n["cores"] or 0) - tot) > 1e-6 * max(1, tot):
        bad.append((n["name"], "sum", n["cores"], tot))
say(not bad and n_cores > 0, "cores of %d running processes = CPU between"
    " their two latest samples over the interval, each node the sum %s"
    % (n_cores, bad[:3]))

# expected: median (nearest rank) of hist-1's instances, by bash's life
wall = {}
for r in hist:
    if r["type"] == "process" and r["comm"] == "bash" and r["job"]["task"]:
        wall.setdefault(r["job"]["task"], []).append(
            epoch(r["end_time"]) - epoch(r["start_time"]))
def median(v):
    v = sorted(v)
    return v[max(1, (50 * len(v) + 99) // 100) - 1]
bad, n_inst = [], 0
started = set()
for l, up in walk(run):
    if l["kind"] != "task":
        continue
    ref = median(wall[l["name"]])
    if abs((l["expected_s"] or -1) - ref) > 0.01 or \
       l["expected_runs"] != len(wall[l["name"]]):
        bad.append((l["name"], l["expected_s"], ref))
    if l["state"] != "waiting":
        started.add(l["name"])
        n_inst += 1
say(not bad and n_inst > 0, "expected time of %d instances = the median of"
    " the task in hist-1 %s" % (n_inst, bad[:3]))
waiting = sorted(l["name"] for l in run["children"]
                 if l["kind"] == "task" and l["state"] == "waiting")
say(waiting == sorted(set(wall) - started),
    "waiting: the tasks of hist-1 not started on any node: %s" % waiting)

# the same lines from the SQLite store, without the node level
def flat(run, skip_nodes):
    out = []
    for l, up in walk(run):
        if l["kind"] == "node":
            continue
        out.append((l["kind"], l["name"], l["state"], l.get("pid"),
                    l["host"], l["expected_s"], l["cores"], l["rss_bytes"],
                    l["peak_rss_bytes"], round(l["cpu_s"] or 0, 6),
                    tuple(l["signals"])))
    return sorted(out, key=repr)
lrun = [r for r in local["runs"] if r["name"] == "fleet-1"][0]
a, b = flat(run, True), flat(lrun, False)
diff = [x for x in a if x not in b] + [x for x in b if x not in a]
say(a == b and not any(c["kind"] == "node" for c in lrun["children"]),
    "the SQLite store's frame has the same %d lines and figures, no node"
    " level (%d differ: %s)" % (len(b), len(diff), diff[:2]))
PY
while IFS= read -r line; do
	check "${line#*ok - }" eval "[ '${line%% - *}' = ok ]"
done <"$T/checks"

# ---- the view -------------------------------------------------------------------------
tmux new-session -d -s "$TMUX_S" -x 120 -y 40 "env PS1='PROMPT\$ ' bash --norc --noprofile"
tmux send-keys -t "$TMUX_S" "$CLI --config $CONF top --source clickhouse --run fleet-1 -d 1" Enter
check "view: the run, a node (siblings by CPU), a task under it" \
	eval 'screen_has "^running +-fleet-1 rnaseq" && screen_has "^running +- \[node0[123]\]" &&
		screen_has "^[a-z-]+ +- +(fastqc|trim|align|markdup|call) "'
note "$(screen | head -n 8)"
tmux send-keys -t "$TMUX_S" / n o d e 0 2 Enter
check "view: the filter node02 leaves node02, not node01" \
	eval 'screen_has "\[node02\]" && screen_lacks "\[node01\]"'

# ---- ClickHouse down --------------------------------------------------------------------
ch_stop
check "view: ClickHouse stopped, the view says it cannot connect, keeps its frame" \
	eval 'screen_has "^! .*127.0.0.1:$CH_HTTP_PORT" && screen_has "\[node02\]"'
note "$(screen | tail -n 3)"
tmux send-keys -t "$TMUX_S" q
check "view: q ends it" screen_has "^PROMPT\\$ *$"
cli top --once --source clickhouse >"$T/down.out" 2>"$T/down.err"
st=$?
check "ClickHouse stopped: top --once --source clickhouse exits 1 (got $st) and names $CH_URL" \
	eval '[ "$st" = 1 ] && grep -q "jobtrace top: .*127.0.0.1:$CH_HTTP_PORT" "$T/down.err"'
note "$(cat "$T/down.err")"

finish
