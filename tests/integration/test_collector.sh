#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_collector.sh - run the real agent against the real kernel and compare
# what it stored with what the workloads in tests/workload/ measured about
# themselves (getrusage, /proc/self/status, /proc/self/io).
#
# Needs root, kernel BTF and the sqlite3 CLI.  Exit 0 pass, 1 fail,
# 77 skipped (not root / no BTF), 99 hard error (a prerequisite is missing).
# Prints one "ok - ..." / "not ok - ..." line per assertion, "# ..." lines of
# evidence, and ends with "N passed, M failed".
#
# Run:  top_builddir=BUILD top_srcdir=SRC bash tests/integration/test_collector.sh
# or    make check TESTS=tests/integration/test_collector.sh   (in BUILD)
# Set JOBTRACE_TEST_KEEP=1 to keep the temporary folder (it is always kept
# when an assertion fails).

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/touchmem" "$WL/writefsync" \
	"$WL/forktree" "$WL/threads" "$WL/netio" "$WL/spawnstorm"
OOM_CG=

# The OOM cgroup and the written file are this test's own leftovers.
extra_cleanup() {
	remove_cgroup "$OOM_CG"
	rm -f "$T/written.dat"
}
start_watchdog 240

# ---- a process that exists before the agent starts ------------------------------

sleep 6 &
PRE_PID=$!
BG_PIDS="$BG_PIDS $PRE_PID"

# ---- start the agent ----------------------------------------------------------------

T0=$(now)
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
note "agent up after $(awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s;" \
	"sleep 6 (pid $PRE_PID) still running then: $(kill -0 "$PRE_PID" 2>/dev/null && echo yes || echo no)"

# ---- workloads -------------------------------------------------------------------------

# jobtrace ps while a burn runs
"$WL/burn" 3 >"$T/burn3.out" &
BURN3_PID=$!
BG_PIDS="$BG_PIDS $BURN3_PID"
sleep 1
cli ps >"$T/ps.out" 2>&1
ps_st=$?
check "'jobtrace ps' (exit $ps_st) lists the running 'burn 3' (pid $BURN3_PID)" \
	eq "$ps_st:$(grep -qw "$BURN3_PID" "$T/ps.out" && echo y)" "0:y"
if [ "$ps_st" -ne 0 ] || ! grep -qw "$BURN3_PID" "$T/ps.out"; then
	note "$(head -n 20 "$T/ps.out")"
fi
wait "$BURN3_PID"
reaped "$BURN3_PID"

# CPU time of a single-threaded process
BURN_OUT=$("$WL/burn" 2)
BURN_PID=$(kv "$BURN_OUT" pid)

# peak RSS
TOUCH_OUT=$("$WL/touchmem" 200 300)
TOUCH_PID=$(kv "$TOUCH_OUT" pid)

# peak RSS of a child that execs after a fat parent forked it
PRE_OUT=$("$WL/touchmem" --prefork 100 8)
PRE_CHILD_LINE=$(printf '%s\n' "$PRE_OUT" | grep -v 'role=prefork')
PRE_PARENT_LINE=$(printf '%s\n' "$PRE_OUT" | grep 'role=prefork')
PRE_CHILD_PID=$(kv "$PRE_PARENT_LINE" child_pid)

# block I/O: the file must be on a disk file system (tmpfs counts nothing)
WDIR=$T
if [ "$(stat -f -c %T "$T")" = tmpfs ]; then
	WDIR=$top_builddir
fi
WFILE=$WDIR/written.dat
WRITE_OUT=$("$WL/writefsync" "$WFILE" $((64 * MIB)))
WRITE_PID=$(kv "$WRITE_OUT" pid)
rm -f "$WFILE"

# process tree: sh stays the parent of the tree's root, so the root's
# parent also ends (and gets a row) during the test
sh -c '"$0" 3 2 >"$1"; exit 0' "$WL/forktree" "$T/forktree.out" &
TREE_SH_PID=$!
wait "$TREE_SH_PID"

# exit code
sh -c 'exit 3' &
EXIT3_PID=$!
wait "$EXIT3_PID"
EXIT3_ST=$?

# killed by a signal
sleep 30 &
SIG_PID=$!
BG_PIDS="$BG_PIDS $SIG_PID"
sleep 0.3
kill -TERM "$SIG_PID"
{ wait "$SIG_PID"; } 2>/dev/null
SIG_ST=$?
reaped "$SIG_PID"

# OOM kill in a memory cgroup limited to 64 MiB
OOM_PID=
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	# pure cgroup v2
	OOM_CG=/sys/fs/cgroup/jobtrace_test_oom_$$
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	if mkdir "$OOM_CG" 2>/dev/null; then
		echo $((64 * MIB)) >"$OOM_CG/memory.max"
		[ -e "$OOM_CG/memory.swap.max" ] && echo 0 >"$OOM_CG/memory.swap.max"
	else
		OOM_CG=
	fi
elif [ -d /sys/fs/cgroup/memory ]; then
	# hybrid or legacy: the memory controller is on v1
	OOM_CG=/sys/fs/cgroup/memory/jobtrace_test_oom_$$
	if mkdir "$OOM_CG" 2>/dev/null; then
		echo $((64 * MIB)) >"$OOM_CG/memory.limit_in_bytes"
		[ -e "$OOM_CG/memory.memsw.limit_in_bytes" ] &&
			echo $((64 * MIB)) >"$OOM_CG/memory.memsw.limit_in_bytes"
	else
		OOM_CG=
	fi
fi
if [ -n "$OOM_CG" ]; then
	(echo "$BASHPID" >"$OOM_CG/cgroup.procs" &&
		exec "$WL/touchmem" 256 >"$T/oom.out") &
	OOM_PID=$!
	{ wait "$OOM_PID"; } 2>/dev/null
	OOM_ST=$?
	note "touchmem 256 in $OOM_CG: pid $OOM_PID, shell status $OOM_ST"
else
	note "could not create a memory cgroup for the OOM case"
fi

# threads: one process, not one row per thread
THR_T0=$(now)
THR_OUT=$("$WL/threads" 100 2)
THR_PID=$(kv "$THR_OUT" pid)

# TCP over loopback
NET_OUT=$("$WL/netio" $((10 * MIB)))
NET_PID=$(kv "$NET_OUT" pid)

# argv with bytes that are not UTF-8, a control byte, quotes and a backslash
/bin/true $'\xff\x01' 'say "hi"' "it's" 'back\slash' &
ODD_PID=$!
wait "$ODD_PID"

# a program exec'd through a path longer than the 255 bytes the kernel side
# sends (7 nested folders of 40 bytes), and the same program through a short
# path; a name no rule knows, so the engine's default names the tool
LONG_PATH=$T
for i in 1 2 3 4 5 6 7; do
	LONG_PATH=$LONG_PATH/$(printf 'long-path-component-%02d-xxxxxxxxxxxxxxxx' "$i")
done
mkdir -p "$LONG_PATH"
LONG_PATH=$LONG_PATH/jt-longpath-prog
cp /bin/true "$LONG_PATH"
# at the edge: paths of exactly 255 bytes (whole) and 256 (cut by one byte)
EDGE_DIR=$T/$(printf "%$((241 - ${#T}))s" '' | tr ' ' e)
mkdir -p "$EDGE_DIR"
ln -s "$LONG_PATH" "$T/jt-shortpath-prog"
ln -s "$LONG_PATH" "$EDGE_DIR/jt-edge-prog"
ln -s "$LONG_PATH" "$EDGE_DIR/jt-edge-prog2"
# Run program $1 (no arguments) to its end; prints its pid.
run_pid() { "$1" & echo $!; wait; }
LONG_PID=$(run_pid "$LONG_PATH")
SHORT_PID=$(run_pid "$T/jt-shortpath-prog")
EDGE255_PID=$(run_pid "$EDGE_DIR/jt-edge-prog")
EDGE256_PID=$(run_pid "$EDGE_DIR/jt-edge-prog2")

# the process that was there before the agent
wait "$PRE_PID"
PRE_ST=$?
reaped "$PRE_PID"

note "burn: $BURN_OUT" "touchmem: $TOUCH_OUT" "prefork: $PRE_OUT" \
	"writefsync: $WRITE_OUT" "threads: $THR_OUT" "netio: $NET_OUT"

# ---- what the agent says while running ---------------------------------------------------

sleep 2	# several flush intervals, and one sample interval
cli status >"$T/status.out" 2>&1
st=$?
note "jobtrace status (exit $st):" "$(cat "$T/status.out")"
if [ "$st" -ne 0 ]; then
	note "agent pid $AGENT_PID alive: $(kill -0 "$AGENT_PID" 2>/dev/null && echo yes || echo no)" \
		"run dir: $(ls -la "$T/run" 2>&1)" \
		"agent's socket fds: $(find /proc/"$AGENT_PID"/fd -lname 'socket:*' 2>/dev/null | wc -l)"
fi
missing=
for k in uptime_s events_seen events_dropped records_spooled tracked last_error; do
	grep -Eq "^[[:space:]]*$k:" "$T/status.out" || missing="$missing $k"
done
check "'jobtrace status' prints uptime_s, events_seen, events_dropped, records_spooled, tracked, last_error${missing:+ (missing:$missing)}" \
	eq "$st:$missing" "0:"
check "'jobtrace status' shows events_dropped: 0" \
	grep -Eq '^[[:space:]]*events_dropped:[[:space:]]*0[[:space:]]*$' "$T/status.out"

TREE_ROOT=$(sed -n 's/^pid=\([0-9]*\) .*depth=0$/\1/p' "$T/forktree.out" | head -n 1)
cli report --pid "$TREE_ROOT" >"$T/report.out" 2>&1
st=$?
missing=
for p in $(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/forktree.out"); do
	grep -qw "$p" "$T/report.out" || missing="$missing $p"
done
check "'jobtrace report --pid $TREE_ROOT' (exit $st) names all $(wc -l <"$T/forktree.out") pids of the forktree${missing:+ (missing:$missing)}" \
	eq "$st:$missing" "0:"
[ "$st:$missing" = "0:" ] || note "$(head -n 40 "$T/report.out")"

SINCE=$(date -u -d "@${T0%.*}" +%Y-%m-%dT%H:%M:%SZ)
cli export --since "$SINCE" --format ndjson >"$T/export.ndjson" 2>"$T/export.err"
st=$?
US=$'\x1f'	# one line per row: no column separator occurs in JSON text
res=$(sqlite3 -batch -noheader :memory: '.mode ascii' ".separator \"$US\" \"\\n\"" \
	'create table l(t text);' ".import $T/export.ndjson l" '.mode list' \
	"select count(*), total(json_valid(t)), total(case when json_valid(t) then json_extract(t, '\$.pid') = $BURN_PID end) from l;" 2>&1)
note "export: $(wc -l <"$T/export.ndjson") lines; count|valid|burn records: $res"
check "'jobtrace export --since $SINCE --format ndjson' (exit $st): at least one line, every line json_valid, burn pid $BURN_PID among them ($res)" \
	eq "$st:$(printf '%s' "$res" | awk -F'|' 'NF == 3 && $1 > 0 && $2 == $1 && $3 >= 1 { print "y" }')" "0:y"
[ "$st" -eq 0 ] || note "$(head -n 5 "$T/export.err")"

# ---- the agent's own CPU in status, against the kernel's /proc/PID/stat ---------------
# cpu_ns is the whole process's (all threads); /proc/PID/stat gives the same
# runtime in clock ticks (utime and stime, each cut to whole ticks: up to
# two ticks short), read just before and just after the status call.
# cpu_main_ns is the event loop's thread's, which its schedstat gives in
# ns; the sinks' threads are among the others.  Together never more than
# the whole.
tick_ns=$((1000000000 / $(getconf CLK_TCK)))
proc_cpu_ns() { awk -v t="$tick_ns" '{ print ($14 + $15) * t }' "/proc/$AGENT_PID/stat"; }
# Each thread's runtime in ns (schedstat: exact, but for a slice the
# kernel has not added yet while it runs: 10 ms, the longest tick, of
# slack), "main=NS others=NS" (the event loop's thread, the rest).
thread_ns() {
	awk -v m="/proc/$AGENT_PID/task/$AGENT_PID/schedstat" \
		'FILENAME == m { a += $1; next } { o += $1 }
		END { printf "main=%d others=%d\n", a, o }' /proc/"$AGENT_PID"/task/*/schedstat
}
t0=$(thread_ns)
c0=$(proc_cpu_ns)
stat_out=$(cli status)
c1=$(proc_cpu_ns)
t1=$(thread_ns)
cpu=$(printf '%s\n' "$stat_out" | sed -n 's/^cpu_ns: //p')
main=$(printf '%s\n' "$stat_out" | sed -n 's/^cpu_main_ns: //p')
sinks=$(printf '%s\n' "$stat_out" | sed -n 's/^sink\..*\.cpu_ns: //p' | awk '{ s += $1 } END { print s + 0 }')
check "status cpu_ns ($cpu) is the agent's CPU in /proc/PID/stat: from $c0 ns before to $c1 ns (+ 2 ticks) after" \
	between "${cpu:-0}" "$c0" $((c1 + 2 * tick_ns))
check "status cpu_main_ns ($main) is the event loop thread's in its schedstat: from $(kv "$t0" main) ns before to $(kv "$t1" main) ns (+ 10 ms) after" \
	between "${main:-0}" "$(kv "$t0" main)" $(($(kv "$t1" main) + 10000000))
check "status: the sinks' CPU ($sinks) is more than 0 and at most that of the agent's other threads in their schedstat ($(kv "$t1" others) ns + 10 ms)" \
	test "$sinks" -gt 0 -a "$sinks" -le $(($(kv "$t1" others) + 10000000))
check "status: the event loop's ($main) and the sinks' ($sinks) CPU are parts of cpu_ns ($cpu), not more (a tick of slack: the threads are read one after the other)" \
	test $(( ${main:-0} + sinks )) -le $(( ${cpu:-0} + tick_ns ))

# ---- stop the agent; it flushes on SIGTERM ----------------------------------------------

stop_agent
st=$?
check "agent exits 0 within 10 s of SIGTERM (status $st)" eq "$st" 0

check "database $DB has a process table with rows" \
	between "$(q 'select count(*) from process;')" 1 1000000000

# ---- compare the database with the workloads' own figures --------------------------------

# CPU
r=$(row "$BURN_PID" 'cpu_user_s + cpu_sys_s')
want=$(kv "$BURN_OUT" cpu_s)
check "burn 2: cpu_user_s+cpu_sys_s $r within 5% or 20 ms of getrusage $want" \
	near "$r" "$want" 5 0.02

# peak RSS
r=$(row "$TOUCH_PID" peak_rss_bytes)
want=$(kv "$TOUCH_OUT" vmhwm_bytes)
check "touchmem 200: peak_rss_bytes $r within 5% of VmHWM $want and >= 200 MiB" \
	eq "$(near "$r" "$want" 5 0 && between "$r" $((200 * MIB)) 1e15 && echo y)" y

r=$(row "$PRE_CHILD_PID" peak_rss_bytes)
check "touchmem --prefork 100 8: child $PRE_CHILD_PID peak_rss_bytes $r < 30 MiB (own mm, VmHWM $(kv "$PRE_CHILD_LINE" vmhwm_bytes))" \
	between "$r" 1 $((30 * MIB))
r=$(row "$PRE_CHILD_PID" "json_extract(json, '\$.mem.maxrss_kernel_bytes')")
check "touchmem --prefork 100 8: child mem.maxrss_kernel_bytes $r >= 100 MiB (getrusage says $(kv "$PRE_CHILD_LINE" maxrss_bytes))" \
	between "$r" $((100 * MIB)) 1e15

# block I/O
r=$(row "$WRITE_PID" 'write_bytes, wchar')
check "writefsync 64 MiB: write_bytes ${r%%|*} in [64 MiB, 65 MiB] (workload's /proc/self/io: $(kv "$WRITE_OUT" io_write_bytes))" \
	between "${r%%|*}" $((64 * MIB)) $((65 * MIB))
check "writefsync 64 MiB: wchar ${r#*|} >= 64 MiB" \
	between "${r#*|}" $((64 * MIB)) 1e15

# process tree
bad=0
n=0
while read -r line; do
	pid=$(kv "$line" pid)
	ppid=$(kv "$line" ppid)
	n=$((n + 1))
	r=$(row "$pid" 'ppid, parent_id')
	pr=$(row "$ppid" id)
	if [ "${r%%|*}" != "$ppid" ] || [ -z "$pr" ] || [ "${r#*|}" != "$pr" ]; then
		bad=$((bad + 1))
		note "forktree pid $pid: want ppid $ppid parent_id $pr, db has '$r'"
	fi
done <"$T/forktree.out"
check "forktree 3 2: all $n (pid, ppid) pairs stored with that ppid and parent_id = parent's id ($bad wrong)" \
	eq "$n:$bad" "15:0"

# exit status
r=$(row "$EXIT3_PID" 'exit_code, exit_signal')
check "sh -c 'exit 3' (shell saw $EXIT3_ST): exit_code|exit_signal '$r' = '3|0'" eq "$r" "3|0"
r=$(row "$SIG_PID" 'exit_code, exit_signal')
check "sleep 30 + kill -TERM (shell saw $SIG_ST): exit_code|exit_signal '$r' = '-1|15'" eq "$r" "-1|15"

# OOM
if [ -n "$OOM_PID" ]; then
	r=$(row "$OOM_PID" "oom_killed, exit_signal, cgroup like '%jobtrace_test_oom%', cgroup")
	check "touchmem 256 in a 64 MiB cgroup: oom_killed|exit_signal|cgroup-matches '${r%|*}' = '1|9|1' (cgroup '${r##*|}')" \
		eq "${r%|*}" "1|9|1"
else
	check "touchmem 256 in a 64 MiB cgroup: could create the cgroup" false
fi

# threads
r=$(q "select count(*) from process where comm = 'threads' and start_time >= $THR_T0 - 1;")
check "threads 100 x 2 s: $r process row(s) with comm 'threads', want 1" eq "$r" 1
r=$(row "$THR_PID" 'cpu_user_s + cpu_sys_s')
want=$(kv "$THR_OUT" cpu_s)
check "threads 100 x 2 s: cpu_user_s+cpu_sys_s $r within 5% or 20 ms of getrusage $want" \
	near "$r" "$want" 5 0.02

# network
r=$(row "$NET_PID" 'rx_bytes, tx_bytes')
check "netio 10 MiB: rx_bytes|tx_bytes '$r' both in [10 MiB, 11 MiB]" \
	eq "$(between "${r%%|*}" $((10 * MIB)) $((11 * MIB)) &&
		between "${r#*|}" $((10 * MIB)) $((11 * MIB)) && echo y)" y

# argv with odd bytes
r=$(row "$ODD_PID" 'json_valid(json), json_valid(argv), json_array_length(argv)')
check "argv with \\xff\\x01, quotes, backslash: json_valid(json)|json_valid(argv)|elements '$r' = '1|1|5'" \
	eq "$r" "1|1|5"
[ "$r" = "1|1|5" ] || note "argv column: $(row "$ODD_PID" argv)"

# an exe path longer than 255 bytes: cut, flagged, the tool named from argv[0]
# Check "exe_truncated|tool_name|exe" of pid $1 against $3 (exec'd through $2).
exe_check() {
	local r
	r=$(row "$1" "exe_truncated, tool_name, exe")
	check "exec through a ${#2}-byte path: exe_truncated|tool|exe '$r' = '$3'" \
		eq "$r" "$3"
}
exe_check "$LONG_PID" "$LONG_PATH" "1|jt-longpath-prog|${LONG_PATH:0:255}"
exe_check "$SHORT_PID" "$T/jt-shortpath-prog" "0|jt-shortpath-prog|$T/jt-shortpath-prog"
exe_check "$EDGE255_PID" "$EDGE_DIR/jt-edge-prog" "0|jt-edge-prog|$EDGE_DIR/jt-edge-prog"
exe_check "$EDGE256_PID" "$EDGE_DIR/jt-edge-prog2" "1|jt-edge-prog2|$EDGE_DIR/jt-edge-prog"

# the process that predates the agent
r=$(row "$PRE_PID" 'exit_code, comm')
check "sleep 6 started before the agent (shell saw $PRE_ST): exit_code|comm '$r' = '0|sleep'" \
	eq "$r" "0|sleep"

# ---- user errors: clear messages and the documented exit status -------------------------
printf 'collector = {\n\tsample_interval = 1.0;\n\tmax_trackd = 10;\n};\n' >"$T/bad.conf"
out=$("$AGENT" --config "$T/bad.conf" --foreground 2>&1)
st=$?
check "jobtraced with an unknown key exits 2 naming file:line and key ($st: $out)" \
	eq "$st:$(printf '%s' "$out" | grep -c "$T/bad.conf:3: .*max_trackd")" "2:1"
out=$(timeout 20 "$CLI" --config "$T/jobtrace.conf" status 2>&1)
st=$?
check "jobtrace status with the agent stopped exits 1 and says it cannot reach it ($st)" \
	eq "$st:$(printf '%s' "$out" | grep -c 'cannot reach jobtraced')" "1:1"
out=$(timeout 20 "$CLI" --config "$T/jobtrace.conf" report --pid 2>&1)
st=$?
check "jobtrace report --pid without a value exits 2 ($st)" eq "$st" 2

# ---- agent log -----------------------------------------------------------------------------
errs=$(grep -Eic '(^|[^a-z])(error|warn)' "$T/agent.log")
note "agent.log: $(wc -l <"$T/agent.log") lines, $errs warning/error lines"
[ "$errs" -eq 0 ] || note "$(grep -Ei '(^|[^a-z])(error|warn)' "$T/agent.log" | head -n 20)"

finish
