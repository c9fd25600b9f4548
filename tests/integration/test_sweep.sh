#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_sweep.sh - `jobtrace sweep` on the store of a real agent run
# (cost.node_hour = 3.6, idle.after = 3 s, signals.stall_after = 3 s,
# samples every 0.5 s): a job whose one process sleeps 8 s (a stall), then
# a quiet node (a node_idle signal), then the agent stops.  Each figure of
# `sweep --format json` is checked against the records' own times, read
# here with sqlite3 and computed in awk:
#  - up_s: the host stop record's time - its start record's time;
#  - idle_s: up_s - (the job's end record - its start record), idle_cost
#    3.6 x idle_s / 3600;
#  - idle_signals and signal_idle_s: the node_idle records' count and sum;
#  - the stuck job: its stall's end record time - its last_progress, and
#    within what the sleep's own process record allows (its run time, less
#    at most the first 1.5 s in which its counters still moved); cost
#    3.6 x that / 3600;
#  - cpu_s: the process records' CPU, each clipped to the period, and cpu
#    over up_s x the node's CPUs (nproc);
#  - saved: idle_cost + the stuck cost.
# idle.cpu_below is 0.35 for the reason test_idle.sh gives (a shared
# machine); when no quiet stretch comes in 90 s the node_idle figures are
# still checked against the records (none then).
#
# Needs root, kernel BTF, sqlite3 and python3.  Exit 0 pass, 1 fail, 99 hard
# error.
#
# Run:  make check TESTS=tests/integration/test_sweep.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands sqlite3 python3
start_watchdog 600
J=jt-sweep-$$
SIGNALS_EXPECTED=stall	# the sleep's, on purpose (lib.sh's finish checks)
SAMPLE_INTERVAL=0.5
export SAMPLE_INTERVAL
SINCE=$(date +%s)
sleep 1

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "idle = { after = 0.05; cpu_below = 0.35; };
signals = { stall_after = 3; };
cost = { node_hour = 3.6; };" || finish

# ---- a job whose process sleeps: a stall ---------------------------------------------

cli run --job "$J" -- sleep 8 2>"$T/run.err"
rc=$?
check "jobtrace run -- sleep 8 exits 0 (got $rc: $(cat "$T/run.err"))" eq "$rc" 0
check "the sleep's stall start and end records are stored" \
	wait_q "select count(*) from record where type = 'signal'
		and json_extract(json, '\$.kind') = 'stall'
		and job_id = '$J';" 2 10

# ---- a quiet node: a node_idle signal (when the machine lets it be quiet) -----------

if ! wait_q "select count(*) > 0 from record where type = 'signal'
	and json_extract(json, '\$.kind') = 'node_idle';" 1 90; then
	note "no node_idle signal in 90 s (a busy shared machine): checked as none"
fi
stop_agent
check "the agent stops cleanly" eq "$?" 0

# ---- the sweep -------------------------------------------------------------------------

cli sweep --since "@$SINCE" --format json >"$T/sweep.json" 2>"$T/sweep.err"
rc=$?
check "jobtrace sweep --format json exits 0 (got $rc: $(cat "$T/sweep.err"))" eq "$rc" 0
cli sweep --since "@$SINCE" >"$T/sweep.txt" 2>&1
rc=$?
check "jobtrace sweep (text) exits 0 (got $rc)" eq "$rc" 0
cli sweep --since "@$SINCE" --format csv >"$T/sweep.csv" 2>&1
rc=$?
check "jobtrace sweep --format csv exits 0 (got $rc)" eq "$rc" 0
note "$(cat "$T/sweep.txt")"
cli sweep --since "@$SINCE" --job x >/dev/null 2>"$T/bad.err"
rc=$?
check "sweep --job is refused with exit 2 (got $rc: $(cat "$T/bad.err"))" eq "$rc" 2

HOST=$(q "select json_extract(json, '\$.host') from record where type = 'host' limit 1;")
# Member $1 of the node of HOST (python3 reads the JSON).
node() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
n = [x for x in r["nodes"] if x["host"] == sys.argv[2]][0]
v = n[sys.argv[3]]
print("" if v is None else v)' "$T/sweep.json" "$HOST" "$1"
}
# Member $1 of the stuck row of job J.
stuck() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
s = [x for x in r["stuck"] if x["job"] == sys.argv[2]][0]
print(s[sys.argv[3]])' "$T/sweep.json" "$J" "$1"
}
SAVED=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print([x["total"] for x in r["saved"] if x["currency"] == "USD"][0])' "$T/sweep.json")

# the records' own times
H_START=$(q "select time from record where type = 'host'
	and json_extract(json, '\$.phase') = 'start';")
H_STOP=$(q "select time from record where type = 'host'
	and json_extract(json, '\$.phase') = 'stop';")
J_START=$(q "select time from record where type = 'job' and job_id = '$J'
	and json_extract(json, '\$.phase') = 'start';")
J_END=$(q "select time from record where type = 'job' and job_id = '$J'
	and json_extract(json, '\$.phase') = 'end';")
UP=$(awk -v a="$H_START" -v b="$H_STOP" 'BEGIN { printf "%.6f", b - a }')
IDLE=$(awk -v u="$UP" -v a="$J_START" -v b="$J_END" 'BEGIN { printf "%.6f", u - (b - a) }')
note "host $HOST start $H_START stop $H_STOP (up $UP s); job $J $J_START to $J_END; idle $IDLE s"
NHOST=$(q "select count(*) from record where type = 'host'
	and json_extract(json, '\$.phase') in ('start', 'stop');")
check "one start and one stop host record ($NHOST), the start after --since" \
	eval '[ "$NHOST" = 2 ] && awk -v a="$H_START" -v s="$SINCE" "BEGIN { exit !(a > s) }"'
check "up_s $(node up_s) = stop - start $UP (0.001)" near "$(node up_s)" "$UP" 0 0.001
check "idle_s $(node idle_s) = up - the job's time = $IDLE (0.001)" \
	near "$(node idle_s)" "$IDLE" 0 0.001
check "idle_cost $(node idle_cost) = 3.6 x $IDLE / 3600 (1e-6)" \
	near "$(node idle_cost)" "$(awk -v s="$IDLE" 'BEGIN { printf "%.9f", 3.6 * s / 3600 }')" 0 0.000001

NI=$(q "select count(*), total(json_extract(json, '\$.evidence.idle_s'))
	from record where type = 'signal' and json_extract(json, '\$.kind') = 'node_idle'
	and time >= $SINCE;" | tr '|' ' ')
check "idle_signals $(node idle_signals) and signal_idle_s $(node signal_idle_s) are the node_idle records' ($NI)" \
	eval 'eq "$(node idle_signals)" "${NI% *}" && near "$(node signal_idle_s)" "${NI#* }" 0 0.000001'

# the stall: [last_progress, its end record]
LP=$(q "select json_extract(json, '\$.evidence.last_progress') from record
	where type = 'signal' and job_id = '$J'
	and json_extract(json, '\$.evidence.phase') = 'start';")
S_END=$(q "select time from record where type = 'signal' and job_id = '$J'
	and json_extract(json, '\$.evidence.phase') = 'end';")
STUCK=$(awk -v a="$(date -d "$LP" +%s.%N)" -v b="$S_END" 'BEGIN { printf "%.6f", b - a }')
SLEEP_RUN=$(q "select end_time - start_time from process where job_id = '$J'
	and comm = 'sleep';")
note "stall: last progress $LP, end record $S_END: $STUCK s; sleep ran $SLEEP_RUN s"
check "stuck_s $(stuck stuck_s) = the stall's end - last_progress = $STUCK (0.001)" \
	near "$(stuck stuck_s)" "$STUCK" 0 0.001
# the stall ends at the sleep's exit (its end record carries the exit's
# time); it began at the sample its counters last moved at, within its
# first 1.5 s (the first samples, 0.5 s apart)
check "stuck_s $(stuck stuck_s) is the sleep's run ($SLEEP_RUN s) less at most 1.5 s" \
	between "$(stuck stuck_s)" "$(awk -v r="$SLEEP_RUN" 'BEGIN { print r - 1.5 }')" \
		"$(awk -v r="$SLEEP_RUN" 'BEGIN { print r + 0.000002 }')"
check "stuck cost $(stuck cost) = 3.6 x $STUCK / 3600 (1e-6), one stall, ended" \
	eval 'near "$(stuck cost)" "$(awk -v s="$STUCK" "BEGIN { printf \"%.9f\", 3.6 * s / 3600 }")" 0 0.000001 &&
		eq "$(stuck stalls)" 1 && eq "$(stuck ongoing)" False'

# CPU: the process records ended in the period, each clipped to it
q "select start_time, end_time, coalesce(cpu_user_s, 0) + coalesce(cpu_sys_s, 0)
	from process where end_time is not null and end_time >= $SINCE
	and host = '$HOST';" | tr '|' ' ' >"$T/procs"
CPU_S=$(awk -v s="$SINCE" -v n="$(python3 -c 'import time; print(time.time())')" '
	{ f = 1; if ($2 > $1) { a = $1 > s ? $1 : s; b = $2 < n ? $2 : n; f = (b - a) / ($2 - $1) }
	  c += $3 * f }
	END { printf "%.6f", c }' "$T/procs")
NCPU=$(nproc)
note "$(wc -l <"$T/procs") process records, $CPU_S s of CPU in the period, $NCPU CPUs"
check "cpu_s $(node cpu_s) = the process records' CPU in the period $CPU_S (0.01)" \
	near "$(node cpu_s)" "$CPU_S" 0 0.01
check "cpu $(node cpu) = cpu_s / (up_s x $NCPU), low_cpu $(node low_cpu) when below 0.05" \
	eval 'near "$(node cpu)" "$(awk -v c="$(node cpu_s)" -v u="$(node up_s)" -v n=$NCPU "BEGIN { printf \"%.9f\", c / (u * n) }")" 0 0.000001 &&
		eq "$(node low_cpu)" "$(awk -v c="$(node cpu)" "BEGIN { print (c < 0.05) ? \"True\" : \"False\" }")"'
# the JSON prints each figure to 6 decimals: the total and the two parts are
# each rounded (at most 5e-7 each), so the printed sum may differ by 1.5e-6
check "saved $SAVED USD = idle_cost + the stuck cost (2e-6: three roundings)" \
	near "$SAVED" "$(awk -v a="$(node idle_cost)" -v b="$(stuck cost)" 'BEGIN { printf "%.9f", a + b }')" 0 0.000002
check "the CSV has the stuck job's row with its seconds" \
	grep -q "^stuck_job,$HOST,$J,USD," "$T/sweep.csv"
finish
