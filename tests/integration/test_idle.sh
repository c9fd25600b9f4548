#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_idle.sh - the node_idle signal of a real agent (idle.after = 0.05
# minutes = 3 s, cost.node_hour = 3.6, samples every 0.5 s):
#  1. while a job runs (`jobtrace run --job ID -- sleep 12`) there is no
#     node_idle signal and the status says a job runs;
#  2. after it, on a quiet node, one signal: idle_s >= 3 s (and at most a
#     few sample intervals more), cost = 3.6 x idle_s / 3600, USD, and a CPU
#     fraction that agrees with the test's own reading of /proc/stat over
#     the same span; the episode began after the job ended;
#  3. while a process of no job burns one core of the two (>= 50 % of the
#     node) there is none, and the status gives the CPU as the reason;
#     after it, a new episode (begun after the burn) is signalled again;
#  4. after `jobtrace reload` with node_hour = 3600, the episode after a
#     second job costs 3600 x idle_s / 3600.
#
# idle.cpu_below is 0.35 here, not the default 0.05: other tests share
# this 2-core machine and keep it busier than 5 % for seconds at a time,
# which would make the quiet case wait forever.  0.35 still fails the test
# if the CPU condition is broken: the burn alone is 50 % of the node, and
# the test reads /proc/stat itself to check the signal's figure.  The quiet
# phases wait up to 180 s each for 3 s below 35 %; when none comes, the
# test's own readings decide: a quiet stretch the agent let pass fails the
# test, a node that was never quiet (or ran other jobs' processes, as
# `jobtrace ps` shows them) leaves that phase unchecked and the test
# skipped (77) unless something else failed.
#
# Needs root, kernel BTF and the sqlite3 CLI.  Exit 0 pass, 1 fail, 77
# skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_idle.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/burn"
start_watchdog 900
J=jt-idle-$$
BELOW=0.35
AFTER_S=3
SAMPLE_INTERVAL=0.5
export SAMPLE_INTERVAL
CPULOG=$T/cpu.log
SKIPPED=

# The node's CPU counters every 50 ms as "epoch busy total" lines (the
# agent's columns: guest time is already in user), forking nothing.
cpu_sampler() {
	local u n s i w x y z rest
	mkfifo "$T/never"
	exec 3<>"$T/never"
	while :; do
		read -r _ u n s i w x y z rest </proc/stat
		echo "$EPOCHREALTIME $((u + n + s + x + y + z)) $((u + n + s + i + w + x + y + z))"
		read -r -t 0.05 -u 3 _
	done >"$CPULOG"
}

# The node's CPU fraction from epoch $1 to $2 by the sampler's lines
# nearest to each.
cpu_between() {
	awk -v a="$1" -v b="$2" '
		function d(x, y) { return x > y ? x - y : y - x }
		{ if (da == "" || d($1, a) < da) { da = d($1, a); ba = $2; ta = $3 }
		  if (db == "" || d($1, b) < db) { db = d($1, b); bb = $2; tb = $3 } }
		END { if (tb > ta) printf "%.4f", (bb - ba) / (tb - ta) }' "$CPULOG"
}

# The node_idle signals stored, oldest first: "time idle_s cpu cost currency".
signals() {
	q "select time, json_extract(json, '\$.evidence.idle_s'),
		json_extract(json, '\$.evidence.cpu'),
		json_extract(json, '\$.evidence.cost'),
		json_extract(json, '\$.evidence.currency')
	   from record where type = 'signal'
	   and json_extract(json, '\$.kind') = 'node_idle' order by time;" |
		tr '|' ' '
}

# Wait up to $2 s until there are at least $1 node_idle signals.
wait_signals() {
	for _ in $(seq 1 $(($2 * 5))); do
		[ "$(signals | grep -c .)" -ge "$1" ] && return 0
		sleep 0.2
	done
	return 1
}

# Why the node was not idle since epoch $1, when no signal came: printed
# when the agent was right (other jobs' processes run, or the test's own
# /proc/stat readings hold no 3.5 s of 0.5 s steps each under 0.9 x
# idle.cpu_below); nothing when a quiet stretch went by unsignalled.
not_quiet() {
	local jobs
	status_get node_idle
	if [ "$REPLY" = "no (a job runs)" ]; then
		# this test's own jobs have ended: a process of theirs still
		# counted is the agent's error, not a reason to skip
		jobs=$(cli ps 2>/dev/null | awk -v mine="$J" \
			'NR > 1 && $4 != "-" && index($4, mine) != 1 { print $1 ":" $4 }' | head -n 5)
		[ -n "$jobs" ] && echo "other jobs' processes run on the node ($(echo $jobs))"
		return
	fi
	awk -v from="$1" -v lim="$(awk -v b=$BELOW 'BEGIN { print 0.9 * b }')" '
		$1 < from { next }
		t0 == "" { t0 = $1; b0 = $2; a0 = $3; next }
		$1 - t0 >= 0.5 {
			if ($3 > a0 && ($2 - b0) / ($3 - a0) < lim) run += $1 - t0
			else run = 0
			if (run >= 3.5) found = 1
			t0 = $1; b0 = $2; a0 = $3
		}
		END { if (!found) printf "the node was never quiet: no 3.5 s under %.0f %% of CPU in the test'"'"'s own /proc/stat readings", 100 * lim }' "$CPULOG"
}

# Wait up to 180 s for node_idle signal number $1, in a quiet stretch
# after epoch $2; false (a failed check, or a phase left unchecked with
# the reason in SKIPPED) when none came.
wait_quiet() {
	local why
	wait_signals "$1" 180 && return 0
	why=$(not_quiet "$2")
	if [ -n "$why" ]; then
		note "no node_idle signal $1 in 180 s: $why"
		SKIPPED="$SKIPPED${SKIPPED:+; }signal $1 unchecked: $why"
	else
		check "node_idle signal $1 within 180 s of a quiet stretch (status: $(status_of node_idle))" false
	fi
	return 1
}

# Field $2 (1: time ... 5: currency) of node_idle signal number $1.
sig() {
	signals | sed -n "${1}p" | awk -v f="$2" '{ print $f }'
}

# True if A < B (numbers).
lt() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") exit 1; exit !(a + 0 < b + 0) }'
}

# True if the cost $1 is the price $3 x idle_s $2 / 3600, relative 1e-6
# (money has 12 decimals in records; idle_s, with 6, is off by 2e-7 of 3 s
# at most).
cost_ok() {
	awk -v c="$1" -v s="$2" -v p="$3" 'BEGIN {
		if (c == "" || s == "") exit 1
		w = p * s / 3600; d = c - w; if (d < 0) d = -d
		exit !(d <= 1e-6 * w) }'
}

# Check signal $1: its figures at the price $4 an hour, and that its
# episode began at or after epoch $2, when $3 ended (less $5 s: the
# time an interval below idle.cpu_below may still hold of it).
check_signal() {
	local n=$1 price=$4 t idle cpu cost cur mine
	t=$(sig "$n" 1)
	idle=$(sig "$n" 2)
	cpu=$(sig "$n" 3)
	cost=$(sig "$n" 4)
	cur=$(sig "$n" 5)
	mine=$(cpu_between "$(awk -v t="$t" -v s="$idle" 'BEGIN { printf "%.6f", t - s }')" "$t")
	note "signal $n: time $t idle_s $idle cpu $cpu cost $cost $cur; /proc/stat read by the test over the span: $mine"
	check "signal $n: idle_s $idle is idle.after ($AFTER_S s) or at most 2 sample intervals more" \
		between "$idle" "$AFTER_S" "$(awk -v a=$AFTER_S -v i=$SAMPLE_INTERVAL 'BEGIN { print a + 2 * i }')"
	check "signal $n: cost $cost = $price x $idle / 3600, currency USD" \
		eval 'cost_ok "$cost" "$idle" "$price" && [ "$cur" = USD ]'
	check "signal $n: cpu $cpu is below idle.cpu_below $BELOW" \
		eval 'between "$cpu" 0 1 && lt "$cpu" "$BELOW"'
	check "signal $n: cpu $cpu agrees with the test's own /proc/stat reading $mine (0.05)" \
		near "$cpu" "$mine" 0 0.05
	check "signal $n: its episode began ($t - $idle) after $3 ended ($2${5:+ - $5})" \
		awk -v t="$t" -v s="$idle" -v e="$2" -v m="${5:-0}" \
			'BEGIN { exit !(t - s >= e - m - 0.001) }'
}

# The end time (epoch) of job $1's end record, waited for up to 10 s.
job_end() {
	local t
	for _ in $(seq 1 50); do
		t=$(q "select time from record where type = 'job' and job_id = '$1'
			and json_extract(json, '\$.phase') = 'end';")
		[ -n "$t" ] && break
		sleep 0.2
	done
	echo "$t"
}

# The status's node_idle line, into $T/idle.status (appended).
idle_line() {
	status_get node_idle
	echo "$REPLY" >>"$T/idle.status"
}

cpu_sampler &
SAMPLER=$!
BG_PIDS="$BG_PIDS $SAMPLER"
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "idle = { after = 0.05; cpu_below = $BELOW; };
cost = { node_hour = 3.6; };" || finish

# ---- 1. a job runs: no signal ------------------------------------------------------

"$CLI" --config "$CONF" run --job "$J" -- sleep 12 2>"$T/run.err" &
RUN=$!
BG_PIDS="$BG_PIDS $RUN"
: >"$T/idle.status"
for w in 4 4 3; do
	sleep "$w"
	idle_line
done
wait $RUN
st=$?
reaped $RUN
check "jobtrace run -- sleep 12 exits 0 (got $st: $(cat "$T/run.err"))" eq "$st" 0
note "status while the job ran: $(tr '\n' ';' <"$T/idle.status")"
check "the status said 'no (a job runs)' three times while the job ran" \
	eq "$(grep -cx 'no (a job runs)' "$T/idle.status")" 3
JOB_END=$(job_end "$J")
check "job $J's end record is stored" test -n "$JOB_END"
# whatever the quiet phases find, the job's time raised no signal
check "no node_idle signal with a time before the job's end" \
	eq "$(signals | awk -v e="$JOB_END" '$1 <= e' | wc -l)" 0

# ---- 2. quiet: one signal ------------------------------------------------------------

if wait_quiet 1 "$JOB_END"; then
	check "a node_idle signal while no job runs" true
	check "no signal before the job ended and idle.after passed" \
		awk -v t="$(sig 1 1)" -v e="$JOB_END" -v a=$AFTER_S 'BEGIN { exit !(t >= e + a - 0.001) }'
	check_signal 1 "$JOB_END" "the job" 3.6
	status_get node_idle_signals
	check "status: node_idle_signals 1 (got '$REPLY')" eq "$REPLY" 1
	status_get node_idle_last_signal
	check "status: node_idle_last_signal names a time (got '$REPLY')" \
		eval '[[ "$REPLY" == 20*Z\ \(idle\ since\ 20*Z\) ]]'
fi

# ---- 3. a process of no job burns a core: no signal, then one after it ----------------

N1=$(signals | grep -c .)
: >"$T/idle.status"
BURN_T0=$(now)
"$WL/burn" 9 >"$T/burn.out" 2>&1 &
BURN=$!
BG_PIDS="$BG_PIDS $BURN"
for w in 2 3 3; do
	sleep "$w"
	idle_line
done
wait $BURN
reaped $BURN
BURN_T1=$(now)
note "status while burning: $(tr '\n' ';' <"$T/idle.status")"
check "the status gave the CPU (>= 35 %) as the reason three times while burning" \
	eq "$(sed -n 's/^no (cpu \([0-9.]*\)% over the last sample interval, idle.cpu_below is 35.0%)$/\1/p' \
		"$T/idle.status" | awk '$1 >= 35' | wc -l)" 3
check "no new signal while burning ($N1 before, signals with a time in the burn: none)" \
	eq "$(signals | awk -v a="$BURN_T0" -v b="$BURN_T1" '$1 > a + 1 && $1 <= b' | wc -l)" 0
if wait_quiet $((N1 + 1)) "$BURN_T1"; then
	# the burn's own end, from the kernel's exit event.  The interval the
	# episode began with may hold the burn's last 0.7 of it: one core of
	# two for a fraction f of the interval is f / 2 of the node, below
	# 0.35 only while f < 0.7.  An interval is the sample interval plus
	# the pass's own time, and longer on a loaded machine (passes 0.5 to
	# 0.6 s apart were seen, and a CI run began an episode 0.373 s before
	# the burn's end): allow twice the sample interval.  A broken CPU
	# condition begins it during the burn, seconds before.
	BURN_END=$(q "select end_time from process where pid = $BURN and comm = 'burn'
		order by start_time desc limit 1;")
	check_signal $((N1 + 1)) "$BURN_END" "the burn" 3.6 \
		"$(awk -v i=$SAMPLE_INTERVAL -v b=$BELOW 'BEGIN { printf "%.3f", 2 * i * 2 * b }')"
fi

# ---- 4. a new price on reload: the next episode's cost uses it ----------------------

sed -i 's/node_hour = 3.6;/node_hour = 3600.0;/' "$CONF"
cli reload >"$T/reload.out" 2>&1
st=$?
check "jobtrace reload takes the new price (exit $st: $(cat "$T/reload.out"))" eq "$st" 0
N2=$(signals | grep -c .)
"$CLI" --config "$CONF" run --job "$J-2" -- sleep 1 2>"$T/run2.err"
check "a second job runs and ends (sleep 1)" eq "$?" 0
JOB2_END=$(job_end "$J-2")
if wait_quiet $((N2 + 1)) "$JOB2_END"; then
	check_signal $((N2 + 1)) "$JOB2_END" "the second job" 3600
fi

stop_agent
check "the agent stops cleanly" eq "$?" 0
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
reaped "$SAMPLER"
if [ -n "$SKIPPED" ] && [ "$failed" -eq 0 ]; then
	cleanup
	echo "$passed passed, $failed failed"
	echo "# skipped: $SKIPPED"
	exit 77
fi
finish
