#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_wait.sh - where a process's time went (issue 28), against the
# kernel's own figures read by the workloads themselves:
#   a. two CPU-bound jobs pinned to one core beside each other (taskset),
#      both SCHED_RR at one priority so that they share the core between
#      themselves in 100 ms slices and whatever else runs on the node (a
#      loaded CI machine) does not add to their wait:
#      each one's wait.run_queue_s against the run-queue wait of its own
#      /proc/self/schedstat (2nd field) read as its last act (burn prints
#      it, and raises itself to SCHED_FIFO one priority above its sibling
#      just before, so that no 100 ms slice of run-queue wait can fall
#      between that read and the exit), within 0.05 s (the only wait
#      that can still come there is the kernel's RT throttling, 50 ms a
#      second); each about half its wall time
#      (0.35 to 0.65); nvcsw/nivcsw against its getrusage(RUSAGE_SELF)
#      within 5; a cpu_starved signal for each that names the other job;
#   b. one CPU-bound job alone on the other core, SCHED_FIFO so that it is
#      alone there even on a loaded node (the kernel's RT throttling can
#      still hold it 50 ms a second: 0.05 of its wall): its run_queue_s
#      against schedstat the same way, below 0.25 of its wall, and no
#      cpu_starved;
#   c. a process in a memory cgroup (v1's memory controller where it is
#      mounted, else cgroup v2's memory.max) whose limit (48 MiB) is below
#      the file it reads over and over (60 MiB, each chunk twice so that
#      its pages are the working set) for 6 s (a window of
#      signals.io_window, 2 s, from its first sample, at most
#      sample_interval, 1 s, after its start, is over before it ends, with
#      3 s to spare for a late pass): its wait.reclaim_s, thrashing_s,
#      swapin_s and compact_s against delay accounting's own figures, which
#      it reads over netlink taskstats as its last act (tests/workload/
#      memwait, as the kernel's getdelays does), within 0.005 s; reclaim +
#      thrashing over 0.1 of its wall, and a memory_pressure signal.  Its
#      re-reads go to the disk, so an io_bound signal for it is expected:
#      for no other process;
#   d. a reader of a TCP socket on loopback whose writer (its child) sends
#      20 bursts, each after a 200 ms pause, then sleeps 700 ms before it
#      exits (tests/workload/netwait): the reader's wait.net_s within 10 %
#      of the 4 s of pauses, and within what it timed around its own
#      accept and read calls (at most that + 0.005 s: the agent counts from
#      the switch out to the wakeup, the call also holds the run-queue wait
#      after the wakeup: at least that - its wait.run_queue_s - 0.02 s);
#      its wait.children_s the same way against what it timed around its
#      waitpid; a net_wait signal for it; the writer, which sleeps in
#      nanosleep and whose writes never block, none of either (0.02 s);
#      and `sleep 1` none at all.
#   e. a task (jobtrace run --pipeline P --task T) of one burn 1.2 run three
#      times alone on core 0 (SCHED_FIFO), then a fourth time SCHED_RR on
#      core 0 beside a second CPU-bound process pinned there with the same
#      policy and priority (outside any job), so that its extra time is
#      run-queue wait even on a loaded node: one slower_than_usual for the
#      fourth (signals.slower_factor 1.5) whose evidence.grew is run_queue,
#      grew_s within 0.001 s of the fourth run's usage.wait.run_queue_s
#      minus the median of the three earlier ones' (their job end records),
#      each part's median_s the median of the earlier records' figure, and
#      the run's run-queue part against what its burn read from
#      /proc/self/schedstat (0.05 s); report's Signals section says
#      "+N s waiting for a CPU".
#
# Needs root, kernel BTF, taskset and the sqlite3 CLI.  Exit 0 pass, 1
# fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_wait.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/memwait" "$WL/netwait"
need_commands taskset chrt
J=wait$$
SIGNALS_EXPECTED="cpu_starved memory_pressure io_bound slower_than_usual"
MEMCG=
MPID=
WDIR=$T		# the file read must be on a disk (tmpfs pages are not cache)
if [ "$(stat -f -c %T "$T")" = tmpfs ]; then
	WDIR=$top_builddir
fi

# Remove the memory cgroup and the file.
extra_cleanup() {
	[ -n "$MEMCG" ] && remove_cgroup "$MEMCG"
	rm -f "$WDIR/memwait.$$"
}

# The signals of kind $1 as "time|json" lines, oldest first.
sigs() {
	q "select time, json from record where type = 'signal'
	   and json_extract(json, '\$.kind') = '$1' order by time;"
}

# Member $2 of the newest process record of pid $1.
pmember() {
	row "$1" "json_extract(json, '\$.$2')"
}

start_watchdog 300
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "signals = {
	io_window = 2; cpu_starved_above = 0.25;
	slower_factor = 1.5; slower_min_runs = 3;
};" || finish

# ---- a. two jobs on one core ----------------------------------------------------

chrt -r 10 taskset -c 0 "$CLI" --config "$CONF" run --job "$J-a" -- "$WL/burn" 3 >"$T/a.out" 2>&1 &
A=$!
chrt -r 10 taskset -c 0 "$CLI" --config "$CONF" run --job "$J-b" -- "$WL/burn" 3 >"$T/b.out" 2>&1 &
B=$!
BG_PIDS="$BG_PIDS $A $B"
wait "$A"
wait "$B"
for x in a b; do
	line=$(grep '^pid=' "$T/$x.out")
	note "$x: $line"
	pid=$(kv "$line" pid)
	check "$x: burn's record is stored" test -n "$(row_wait "$pid" id)"
	rq=$(pmember "$pid" wait.run_queue_s)
	ref=$(kv "$line" run_queue_s)
	wall=$(kv "$line" wall_s)
	check "$x: wait.run_queue_s $rq = its /proc/self/schedstat run_delay $ref (0.05 s)" \
		near "$rq" "$ref" 0 0.05
	check "$x: run_queue_s $rq is about half its wall $wall (0.35 to 0.65)" \
		between "$(awk -v a="$rq" -v b="$wall" 'BEGIN { print a / b }')" 0.35 0.65
	check "$x: wait.nvcsw $(pmember "$pid" wait.nvcsw) = getrusage's $(kv "$line" nvcsw) (5)" \
		near "$(pmember "$pid" wait.nvcsw)" "$(kv "$line" nvcsw)" 0 5
	check "$x: wait.nivcsw $(pmember "$pid" wait.nivcsw) = getrusage's $(kv "$line" nivcsw) (5)" \
		near "$(pmember "$pid" wait.nivcsw)" "$(kv "$line" nivcsw)" 0 5
	eval "PID_$x=$pid"
done
for x in a b; do
	eval "pid=\$PID_$x"
	other=$J-b
	[ "$x" = b ] && other=$J-a
	s=$(sigs cpu_starved | grep "\"pid\":$pid," | head -n 1)
	note "$x cpu_starved: ${s:-none}"
	check "$x: a cpu_starved signal for burn (pid $pid)" test -n "$s"
	check "$x: its jobs are the other job alone (local:$other)" \
		eval 'printf "%s" "$s" | grep -q "\"jobs\":\[\"local:$other\"\]"'
	check "$x: its run_queue_s / window_s over 0.25 (fraction $(printf '%s' "${s#*|}" | sed -n 's/.*"fraction":\([0-9.]*\).*/\1/p'))" \
		between "$(printf '%s' "${s#*|}" | sed -n 's/.*"fraction":\([0-9.]*\).*/\1/p')" 0.25 1
done

# ---- b. one job alone on the other core -----------------------------------------

chrt -f 10 taskset -c 1 "$CLI" --config "$CONF" run --job "$J-c" -- "$WL/burn" 3 >"$T/c.out" 2>&1
line=$(grep '^pid=' "$T/c.out")
note "c: $line"
pid=$(kv "$line" pid)
check "c: burn's record is stored" test -n "$(row_wait "$pid" id)"
rq=$(pmember "$pid" wait.run_queue_s)
check "c: wait.run_queue_s $rq = its /proc/self/schedstat run_delay $(kv "$line" run_queue_s) (0.05 s)" \
	near "$rq" "$(kv "$line" run_queue_s)" 0 0.05
check "c: alone, run_queue_s $rq is below 0.25 of its wall $(kv "$line" wall_s)" \
	between "$(awk -v a="$rq" -v b="$(kv "$line" wall_s)" 'BEGIN { print a / b }')" 0 0.25
check "c: no cpu_starved signal for it" \
	test -z "$(sigs cpu_starved | grep "\"pid\":$pid,")"

# ---- c. page cache reclaimed under a memory cgroup's limit -----------------------

if [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	MEMCG=/sys/fs/cgroup/memory/jt_wait_$$
	LIMIT_FILE=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	MEMCG=/sys/fs/cgroup/jt_wait_$$
	LIMIT_FILE=memory.max
fi
if [ -n "$MEMCG" ] && mkdir "$MEMCG" && echo $((48 * MIB)) >"$MEMCG/$LIMIT_FILE"; then
	head -c $((60 * MIB)) /dev/urandom >"$WDIR/memwait.$$"
	"$CLI" --config "$CONF" run --job "$J-m" -- sh -c \
		'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" 6' sh "$MEMCG" \
		"$WL/memwait" "$WDIR/memwait.$$" >"$T/m.out" 2>&1
	line=$(grep '^pid=' "$T/m.out")
	note "m ($MEMCG): $line $(cat "$T/m.out" | grep -v '^pid=')"
	pid=$(kv "$line" pid)
	MPID=$pid
	check "m: memwait's record is stored" test -n "$(row_wait "$pid" id)"
	for k in reclaim_s thrashing_s swapin_s compact_s; do
		check "m: wait.$k $(pmember "$pid" "wait.$k") = taskstats' $(kv "$line" "$k") (0.005 s)" \
			near "$(pmember "$pid" "wait.$k")" "$(kv "$line" "$k")" 0 0.005
	done
	check "m: reclaim + thrashing over 0.1 of its wall $(kv "$line" wall_s) (the page cache was reclaimed)" \
		between "$(awk -v a="$(kv "$line" reclaim_s)" -v b="$(kv "$line" thrashing_s)" \
			-v w="$(kv "$line" wall_s)" 'BEGIN { print (a + b) / w }')" 0.1 1
	s=$(sigs memory_pressure | grep "\"pid\":$pid," | head -n 1)
	note "m memory_pressure: ${s:-none}"
	check "m: a memory_pressure signal for memwait (pid $pid)" test -n "$s"
	check "m: its memory_wait_s / window_s over 0.1" \
		between "$(printf '%s' "${s#*|}" | sed -n 's/.*"fraction":\([0-9.]*\).*/\1/p')" 0.1 1
else
	check "a memory cgroup with a limit (v1 $MEMCG or v2 memory.max)" false
fi
# ---- d. network and child waits ---------------------------------------------

"$CLI" --config "$CONF" run --job "$J-n" -- "$WL/netwait" 20 200 700 >"$T/n.out" 2>&1
line=$(grep '^pid=' "$T/n.out")
note "n: $line $(grep -v '^pid=' "$T/n.out")"
pid=$(kv "$line" pid)
child=$(kv "$line" child)
check "n: netwait's record is stored" test -n "$(row_wait "$pid" id)"
check "n: its writer's record is stored" test -n "$(row_wait "$child" id)"
net=$(pmember "$pid" wait.net_s)
ref=$(kv "$line" net_s)
rq=$(pmember "$pid" wait.run_queue_s)
note "n: reader net_s $net children_s $(pmember "$pid" wait.children_s) run_queue_s $rq; writer net_s $(pmember "$child" wait.net_s) children_s $(pmember "$child" wait.children_s)"
check "n: wait.net_s $net within 10% of the pauses $(kv "$line" pauses_s)" \
	near "$net" "$(kv "$line" pauses_s)" 10 0
check "n: wait.net_s $net within its own accept + read time $ref (+0.005, - run_queue_s $rq - 0.02)" \
	between "$net" "$(awk -v a="$ref" -v r="$rq" 'BEGIN { print a - r - 0.02 }')" \
	"$(awk -v a="$ref" 'BEGIN { print a + 0.005 }')"
ch=$(pmember "$pid" wait.children_s)
ref=$(kv "$line" children_s)
check "n: wait.children_s $ch within its own waitpid time $ref (+0.005, - run_queue_s $rq - 0.02)" \
	between "$ch" "$(awk -v a="$ref" -v r="$rq" 'BEGIN { print a - r - 0.02 }')" \
	"$(awk -v a="$ref" 'BEGIN { print a + 0.005 }')"
check "n: the writer (nanosleep, writes that do not block): net_s and children_s under 0.02 s" \
	eval 'between "$(pmember "$child" wait.net_s)" 0 0.02 &&
	      between "$(pmember "$child" wait.children_s)" 0 0.02'
s=$(sigs net_wait | grep "\"pid\":$pid," | head -n 1)
note "n net_wait: ${s:-none}"
check "n: a net_wait signal for netwait (pid $pid)" test -n "$s"
check "n: its net_wait_s / window_s over 0.5" \
	between "$(printf '%s' "${s#*|}" | sed -n 's/.*"fraction":\([0-9.]*\).*/\1/p')" 0.5 1
check "n: no net_wait signal for the writer" \
	test -z "$(sigs net_wait | grep "\"pid\":$child,")"
"$CLI" --config "$CONF" run --job "$J-s" -- sh -c 'echo pid=$$; exec sleep 1' >"$T/s.out" 2>&1
pid=$(kv "$(grep '^pid=' "$T/s.out")" pid)
check "s: sleep's record is stored" test -n "$(row_wait "$pid" id)"
check "s: sleep 1: net_s $(pmember "$pid" wait.net_s) and children_s $(pmember "$pid" wait.children_s) are 0" \
	eval 'between "$(pmember "$pid" wait.net_s)" 0 0 &&
	      between "$(pmember "$pid" wait.children_s)" 0 0'
# ---- e. a slower run whose extra time is run-queue wait -----------------------------

# Member $2 of job $1's end record, once it is stored.
jmember() {
	local v
	for _ in $(seq 1 50); do
		v=$(q "select json_extract(json, '\$.$2') from record where type = 'job'
			and job_id = '$1' and json_extract(json, '\$.phase') = 'end';")
		[ -n "$v" ] && break
		sleep 0.1
	done
	printf '%s' "$v"
}

# The median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for i in 1 2 3; do
	chrt -f 10 taskset -c 0 "$CLI" --config "$CONF" run --job "$J-s$i" \
		--pipeline "waitp-$$" --task waitt -- "$WL/burn" 1.2 >"$T/s$i.out" 2>&1
	note "s$i alone: $(grep '^pid=' "$T/s$i.out") usage $(jmember "$J-s$i" usage)"
done
chrt -r 10 taskset -c 0 "$WL/burn" 4 >"$T/busy.out" 2>&1 &
BUSY=$!
BG_PIDS="$BG_PIDS $BUSY"
sleep 0.2	# the busy loop is on the core first
chrt -r 10 taskset -c 0 "$CLI" --config "$CONF" run --job "$J-s4" \
	--pipeline "waitp-$$" --task waitt -- "$WL/burn" 1.2 >"$T/s4.out" 2>&1
line=$(grep '^pid=' "$T/s4.out")
note "s4 beside a busy loop: $line usage $(jmember "$J-s4" usage)"
s=
for _ in $(seq 1 50); do
	s=$(sigs slower_than_usual | grep "\"id\":\"$J-s4\"" | head -n 1)
	[ -n "$s" ] && break
	sleep 0.2
done
note "d slower_than_usual: ${s:-none}"
check "e: a slower_than_usual signal for $J-s4" test -n "$s"
ev=$(printf '%s' "${s#*|}")
RQ4=$(jmember "$J-s4" usage.wait.run_queue_s)
RQMED=$(for i in 1 2 3; do jmember "$J-s$i" usage.wait.run_queue_s; echo; done | median)
GREW_S=$(sqlite3 -batch -noheader :memory: "select json_extract('${ev//\'/\'\'}', '\$.evidence.grew_s');")
check "e: evidence.grew is run_queue ($(sqlite3 -batch -noheader :memory: "select json_extract('${ev//\'/\'\'}', '\$.evidence.grew');"))" \
	eq "$(sqlite3 -batch -noheader :memory: "select json_extract('${ev//\'/\'\'}', '\$.evidence.grew');")" run_queue
check "e: grew_s $GREW_S = the run's usage.wait.run_queue_s $RQ4 - the earlier runs' median $RQMED (0.001 s)" \
	near "$GREW_S" "$(awk -v a="$RQ4" -v b="$RQMED" 'BEGIN { printf "%.6f", a - b }')" 0 0.001
check "e: the extra wait is real: grew_s $GREW_S is over 0.5 s (burn 1.2 sharing its core with a busy loop)" \
	between "$GREW_S" 0.5 100
PARTS=$(sqlite3 -batch -noheader :memory: "select p.value ->> '\$.part' || '=' || (p.value ->> '\$.s') || '/' || (p.value ->> '\$.median_s')
	from json_each(json_extract('${ev//\'/\'\'}', '\$.evidence.parts')) p;" | paste -sd' ')
note "d parts (run/earlier median): $PARTS"
rqpart=$(printf '%s\n' $PARTS | sed -n 's/^run_queue=\([^/]*\)\/.*/\1/p')
check "e: the run_queue part $rqpart is the run's usage.wait.run_queue_s $RQ4 (0.000002)" \
	near "$rqpart" "$RQ4" 0 0.000002
check "e: the run's run-queue wait $RQ4 covers its burn's own (/proc/self/schedstat: $(kv "$line" run_queue_s), 0.05 s)" \
	near "$RQ4" "$(kv "$line" run_queue_s)" 0 0.05
CPUMED=$(for i in 1 2 3; do jmember "$J-s$i" usage.cpu_s; echo; done | median)
cpumed=$(printf '%s\n' $PARTS | sed -n 's/^cpu=[^/]*\/\(.*\)/\1/p')
check "e: the cpu part's median_s $cpumed is the median of the earlier records' usage.cpu_s $CPUMED (0.000002)" \
	near "$cpumed" "$CPUMED" 0 0.000002
"$CLI" --config "$CONF" report --job "$J-s4" >"$T/s4.report" 2>&1
check "e: report's Signals section says the run-queue wait grew ($(grep -o '+[0-9.]* s waiting for a CPU' "$T/s4.report"))" \
	grep -q "slower_than_usual.*; +[0-9.]* s waiting for a CPU" "$T/s4.report"
wait "$BUSY"

# io_bound is in SIGNALS_EXPECTED for memwait's re-reads from the disk alone
check "io_bound signals only for memwait (pid ${MPID:-none}): $(sigs io_bound | sed -n 's/.*"pid":\([0-9]*\),.*/\1/p' | sort -u | paste -sd' ')" \
	test -z "$(sigs io_bound | grep -v "\"pid\":${MPID:-none},")"

finish
