#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_smklog_stuck.sh - a Snakemake log that cannot be read never stalls
# the agent (agent/daemon/track/smklogq.h).
#
# A local user (nobody) runs a process named snakemake (a copy of bash)
# that keeps open, as .snakemake/log/NAME.snakemake.log, the file of a
# FUSE file system (hangfs, mounted by the test) whose reads never return,
# and starts a `sh -c` child every 50 ms: each is a lookup of the agent's.
#  1. For 8 s the agent answers `jobtrace status` every time it is asked
#     (every 0.2 s) within 1 s; 20 burn processes run meanwhile are all
#     stored, and so are the engine's sh -c children (no task).
#  2. status says `smklog: stuck on PATH since T` with the hung file's
#     path; hangfs saw the read, from the reader that status names; the
#     engine's later lookups are skipped (counted), not queued.
#  3. After SMKLOGQ_REPLACE_MS (5 s) the reader is replaced: a real
#     Snakemake local run then names each of its 3 rules' shells.
#  4. A second user engine whose log hangs at open (hangfs open): the
#     new reader is stuck there, and status names that file.
#  5. SIGTERM: the agent stops within 3 s with status 0, while both
#     readers are still alive, stuck in the kernel.
#  6. A new agent, then collector.snakemake_log = false and SIGHUP: status
#     says off, the engine's file is not opened by anyone but its owner
#     (hangfs's word), and Snakemake's rules are not named.
#  7. Under two busy loops, 5 local runs of 8 short rules (an echo each):
#     how many of the 40 shells get their rule (printed; every one must).
#
# Before the fix the loop read the log itself: it hung in step 1 for
# ever (status unanswered, nothing recorded), and SIGTERM could not stop
# it.  Needs root, kernel BTF, FUSE (/dev/fuse), snakemake, setpriv.
# Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_smklog_stuck.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"

HANGFS=$top_builddir/tests/integration/hangfs
need_built "$AGENT" "$CLI" "$HANGFS" "$WL/burn"
need_commands snakemake setpriv
[ -c /dev/fuse ] || { echo "# skipped: no /dev/fuse"; exit 77; }
start_watchdog 400

NOBODY=$(id -u nobody)
LOGNAME1=2026-11-27T120000.000001.snakemake.log
FS_PIDS=
MOUNTS=

extra_cleanup() {
	local p m
	# the file systems' end frees every reader stuck in them
	for p in $FS_PIDS; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.5
	for p in $FS_PIDS; do kill -KILL "$p" 2>/dev/null; done
	for m in $MOUNTS; do umount -l "$m" 2>/dev/null; done
}

# Mount hangfs (mode $2) on $1/.snakemake/log; its output in $1.fs.
mount_hang() {
	local dir=$1/.snakemake/log
	mkdir -p "$dir"
	chmod 0755 "$1" "$1/.snakemake" "$dir"
	"$HANGFS" "$dir" "$LOGNAME1" "$NOBODY" "$2" >"$1.fs" 2>&1 &
	FS_PIDS="$FS_PIDS $!"
	MOUNTS="$MOUNTS $dir"
	for _ in $(seq 1 50); do
		grep -q '^ready' "$1.fs" && return 0
		sleep 0.1
	done
	note "hangfs did not mount on $dir: $(cat "$1.fs")"
	return 1
}

# Start the user's engine on $1's log: a bash named snakemake, as
# nobody, holding the file open and starting `sh -c` children; prints
# its pid.
start_engine() {
	setpriv --reuid="$NOBODY" --regid="$(id -g nobody)" --clear-groups \
		"$T/bin/snakemake" -c 'exec 3<"$1"; i=0
			while :; do i=$((i + 1)); sh -c "true $i"; sleep 0.05; done' \
		engine "$1/.snakemake/log/$LOGNAME1" >/dev/null 2>&1 &
	echo $!
}

# Wait up to $2 s until the status line of key $1 matches the ERE $3.
wait_status() {
	for _ in $(seq 1 $(($2 * 10))); do
		status_get "$1"
		printf '%s\n' "$REPLY" | grep -Eq "$3" && return 0
		sleep 0.1
	done
	note "after $2 s: $1: '$REPLY' (want /$3/)"
	return 1
}

# A Snakefile of $2 short rules (r1 ... rN, an echo each) in folder $1.
snakefile() {
	local i all=
	mkdir -p "$1"
	for i in $(seq 1 "$2"); do all="$all\"out/r$i.txt\", "; done
	{
		echo "rule all:"
		echo "    input: ${all%, }"
		for i in $(seq 1 "$2"); do
			printf '\nrule r%s:\n    output: "out/r%s.txt"\n' "$i" "$i"
			printf '    shell: "echo r%s > {output}"\n' "$i"
		done
	} >"$1/Snakefile"
}

# Run Snakemake in $1 (local mode, 2 cores); 0 when it exits 0.
run_snakemake() {
	(cd "$1" && snakemake --cores 2 --forceall >"$1/run.out" 2>&1) && return 0
	note "snakemake in $1 failed: $(tail -n 5 "$1/run.out")"
	return 1
}

# The rule shells (bash -c) stored since $1 as "named/all".
named_shells() {
	q "select sum(job_task is not null and json_extract(argv, '\$[2]') like '%echo ' || job_task || ' >%')
		|| '/' || count(*) from process where since_time >= $1 and comm = 'bash'
		and json_extract(argv, '\$[1]') = '-c' and json_extract(argv, '\$[2]') like '%echo r%';"
}

mkdir -p "$T/bin"
chmod 0755 "$T" "$T/bin"
cp /bin/bash "$T/bin/snakemake"
snakefile "$T/wf" 3
mount_hang "$T/evil1" read || finish
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"cloud = { imds = \"off\"; }; docker = { enabled = false; };" || finish

# ---- 1. the loop goes on while the reader hangs -------------------------------------
T0=$(now)
E1=$(start_engine "$T/evil1")
BG_PIDS="$BG_PIDS $E1"
worst=0 asked=0 unanswered=0 b=0 stuck= sk= lk=
while awk -v a="$T0" -v b="$(now)" 'BEGIN { exit !(b - a < 8) }'; do
	s=$(now)
	cli status >"$T/status.loop" 2>&1 || unanswered=$((unanswered + 1))
	worst=$(awk -v a="$s" -v b="$(now)" -v w="$worst" 'BEGIN { d = b - a; print (d > w ? d : w) }')
	asked=$((asked + 1))
	# the last status of the stuck reader, before its replacement
	if grep -q '^smklog: stuck on' "$T/status.loop"; then
		stuck=$(sed -n 's/^smklog: //p' "$T/status.loop")
		sk=$(sed -n 's/^smklog_skipped_busy: //p' "$T/status.loop")
		lk=$(sed -n 's/^smklog_lookups: //p' "$T/status.loop")
	fi
	if [ "$b" -lt 20 ]; then
		"$WL/burn" 0 >/dev/null
		b=$((b + 1))
	fi
	sleep 0.2
done
note "status asked $asked times in 8 s, slowest answer $worst s, $unanswered unanswered"
check "the agent answered all $asked status requests within 1 s while its reader hung (slowest $worst s)" \
	eval '[ "$unanswered" = 0 ] && [ "$asked" -ge 20 ] && awk -v w="$worst" "BEGIN { exit !(w < 1) }"'
check "the 20 burn processes run meanwhile are stored" \
	wait_q "select count(*) from process where since_time >= $T0 and comm = 'burn';" 20 10
n=$(q "select count(*) from process where since_time >= $T0 and uid = $NOBODY and comm = 'sh'
	and json_extract(argv, '\$[1]') = '-c' and job_task is null;")
check "the engine's sh -c children are stored, with no task ($n, at least 50 in 8 s)" \
	eval '[ "${n:-0}" -ge 50 ]'

# ---- 2. the stuck reader is reported ---------------------------------------------------
note "smklog: $stuck"
check "status: smklog: stuck on the hung file since the first lookup" \
	eval 'case "$stuck" in "stuck on $T/evil1/.snakemake/log/$LOGNAME1 since "*"(engine pid $E1, uid $NOBODY;"*) true ;; *) false ;; esac'
reader1=$(printf '%s\n' "$stuck" | sed -n 's/.*reader pid \([0-9]*\)).*/\1/p')
check "hangfs saw the read from the reader status names (pid $reader1): $(grep -v ready "$T/evil1.fs" | sort | uniq -c | tr '\n' ' ')" \
	grep -qx "read $reader1" "$T/evil1.fs"
check "the engine's later lookups were skipped at once, not queued ($sk of $lk, about 20 a second)" \
	eval '[ "${sk:-0}" -ge 20 ] && [ "$sk" -lt "$lk" ]'
check "the stuck reader (pid $reader1), killed, is in the kernel's uninterruptible wait" \
	eval '[ "$(awk "{ print \$3 }" /proc/$reader1/stat 2>/dev/null)" = D ]'

# ---- 3. replaced: Snakemake's jobs are named again ------------------------------------------
check "5 s after the lookup the stuck reader was replaced" \
	wait_status smklog_readers_replaced 1 '^1$'
check "status: smklog: on, a new reader" wait_status smklog 5 '^on \(reader pid'
check "the replaced reader is still alive (killed, stuck in the FUSE read)" \
	test -d "/proc/$reader1"
T1=$(now)
check "a Snakemake local run of 3 rules exits 0" run_snakemake "$T/wf"
check "its 3 rule shells are stored" \
	wait_q "select count(*) from process where since_time >= $T1 and comm = 'bash'
		and json_extract(argv, '\$[1]') = '-c' and json_extract(argv, '\$[2]') like '%echo r%';" 3 10
got=$(named_shells "$T1")
check "its 3 rule shells are named, each by its rule ($got)" eq "$got" 3/3
status_get smklog_skipped_given_up
check "the first engine is given up: its lookups are skipped ($REPLY)" \
	eval '[ "${REPLY:-0}" -ge 1 ]'

# ---- 4. a log whose open hangs --------------------------------------------------------------
mount_hang "$T/evil2" open || finish
E2=$(start_engine "$T/evil2")
BG_PIDS="$BG_PIDS $E2"
check "status: smklog: stuck on the second file, whose open hangs" \
	wait_status smklog 5 "^stuck on $T/evil2/\\.snakemake/log/$LOGNAME1 since .*engine pid $E2,"
reader2=$(printf '%s\n' "$REPLY" | sed -n 's/.*reader pid \([0-9]*\)).*/\1/p')
check "hangfs saw the engine's open and the reader's (pid $reader2): $(grep -v ready "$T/evil2.fs" | tr '\n' ' ')" \
	eval 'grep -qx "open $E2" "$T/evil2.fs" && grep -qx "open $reader2" "$T/evil2.fs"'

# ---- 5. SIGTERM with two readers stuck --------------------------------------------------------
s=$(now)
stop_agent
st=$?
took=$(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
check "SIGTERM: the agent stops within 3 s with status 0 (status $st, $took s)" \
	eval '[ "$st" = 0 ] && awk -v t="$took" "BEGIN { exit !(t < 3) }"'
check "both readers (pids $reader1, $reader2) are still stuck in the kernel after the agent stopped" \
	eval '[ -d "/proc/$reader1" ] && [ -d "/proc/$reader2" ]'
grep -E 'smklog' "$T/agent.log" | sed 's/^/# agent.log: /'

# ---- 6. collector.snakemake_log = false ------------------------------------------------------
kill -KILL "$E1" "$E2" 2>/dev/null
mount_hang "$T/evil3" read || finish
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"cloud = { imds = \"off\"; }; docker = { enabled = false; };" || finish
sed -i 's/^collector = {/collector = { snakemake_log = false;/' "$CONF"
kill -HUP "$AGENT_PID"
check "after SIGHUP with collector.snakemake_log = false, status says off" \
	wait_status smklog 5 '^off \(collector.snakemake_log = false\)$'
E3=$(start_engine "$T/evil3")
BG_PIDS="$BG_PIDS $E3"
T3=$(now)
check "a Snakemake local run exits 0" run_snakemake "$T/wf"
sleep 1
check "nobody but the engine (pid $E3) opened or read its file: $(grep -v ready "$T/evil3.fs" | sort | uniq -c | tr '\n' ' ')" \
	eval '[ "$(grep -v ready "$T/evil3.fs" | sort -u)" = "open $E3" ]'
check "the agent answers status (its loop never touched the file)" \
	eval 'cli status >/dev/null 2>&1'
check "Snakemake's rule shells are stored, none named (off)" \
	wait_q "select sum(job_task is not null) || '/' || count(*) from process where since_time >= $T3
		and comm = 'bash' and json_extract(argv, '\$[1]') = '-c'
		and json_extract(argv, '\$[2]') like '%echo r%';" "0/3" 10
kill -KILL "$E3" 2>/dev/null

# ---- 7. under two busy loops: how often a short rule gets its task ---------------------------
sed -i 's/^collector = { snakemake_log = false;/collector = {/' "$CONF"
kill -HUP "$AGENT_PID"
check "after SIGHUP with the switch back on, status: smklog: on" \
	wait_status smklog 5 '^on \(reader pid'
snakefile "$T/wf8" 8
"$WL/burn" 120 >/dev/null &
L1=$!
"$WL/burn" 120 >/dev/null &
L2=$!
BG_PIDS="$BG_PIDS $L1 $L2"
T4=$(now)
ok=0
for i in 1 2 3 4 5; do
	run_snakemake "$T/wf8" && ok=$((ok + 1))
done
kill -KILL "$L1" "$L2" 2>/dev/null
check "5 local runs of 8 short rules under two busy loops exit 0 ($ok)" eq "$ok" 5
wait_q "select count(*) from process where since_time >= $T4 and comm = 'bash'
	and json_extract(argv, '\$[1]') = '-c' and json_extract(argv, '\$[2]') like '%echo r%';" 40 10
got=$(named_shells "$T4")
status_get smklog_wait_ms
w=$REPLY
status_get smklog_late
note "under two busy loops: $got short rule shells named by their rule (late answers $REPLY, the loop waited $w ms in all)"
note "$(cli status | grep '^smklog')"
check "under two busy loops every short rule's shell is named by its rule ($got)" eq "$got" "40/40"

finish
