#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_run_job.sh - a process tree tied to a job where no cgroup marks it:
# `jobtrace run --job ID -- COMMAND` and `jobtrace job-start --pid PID`.
# The agent runs with the installed rules.  Every process of the trees run
# here is a script of the test that writes its own pid to a log before it
# starts anything, or a copy of sleep whose parent is such a script, so the
# test knows exactly which processes each job has: the store must show
# those, with the job's fields, and no other; trees started beside them at
# the same time carry no job.  `run` exits with its command's status (3),
# 128 + 15 when a SIGTERM sent to it killed the command, and runs the
# command all the same when the agent is down (unless --strict).  A user
# without control rights runs their own job (its user forced to theirs) in
# her own namespace (user:UID:ID), and may not tie root's processes; the
# job id of root's job is another job when she names it, and a hook that
# registers the id of hers later makes a job of its own, never joins hers.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/userdel/runuser.  Exit 0
# pass, 1 fail, 77 skipped, 99 hard error.  Makes the user jt-rj-alice and
# removes it.
#
# Run:  make check TESTS=tests/integration/test_run_job.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_commands --skip useradd userdel runuser
ALICE=jt-rj-alice
B=$T/bin
J=jt-rj-$$	# job ids of this run: ${J}-1 ...

# The test's user goes with it.
extra_cleanup() {
	id -u "$ALICE" >/dev/null 2>&1 && userdel "$ALICE" 2>/dev/null
}
start_watchdog 240

# The CLI itself (not under timeout: its pid and signals are the test's).
jt() {
	"$CLI" --config "$CONF" "$@"
}

# Sorted pids of the process records of job $1 (exported as ndjson).
job_pids() {
	jt export --job "$1" --format ndjson 2>/dev/null |
		grep '"type":"process"' | sed -n 's/.*"pid":\([0-9]*\),.*/\1/p' |
		sort -n | tr '\n' ' '
}

# Export lines of job $1 of record type $2 that hold every text $3...
n_export() {
	local f=$T/export.$1 out
	jt export --job "$1" --format ndjson >"$f" 2>&1
	out=$(grep "\"type\":\"$2\"" "$f")
	shift 2
	for p in "$@"; do
		out=$(printf '%s\n' "$out" | grep -F -- "$p")
	done
	[ -n "$out" ] && printf '%s\n' "$out" | wc -l || echo 0
}

# Sorted pids the scripts of a tree logged in $1, and the copies of sleep
# that they started (process records whose parent is one of them).
expected_pids() {
	local scripts
	scripts=$(awk '{ print $2 }' "$1" | sort -n | tr '\n' ',')
	scripts=${scripts%,}
	{
		awk '{ print $2 }' "$1"
		q "select pid from process where comm = 'jt-rj-nap' and ppid in ($scripts)
			and since_time >= $SINCE;"
	} | sort -n | tr '\n' ' '
}

# Wait up to 10 s until process $1 has a child.
wait_child() {
	for _ in $(seq 1 100); do
		pgrep -P "$1" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---- the trees ------------------------------------------------------------------
# l1 starts two l2 (one in the background), each l2 two l3, each l3 one nap:
# 7 scripts and 4 naps.  Every script ends with `exit`, so no shell runs its
# last command in its own place.

mkdir -p "$B"
cp /bin/sleep "$B/jt-rj-nap"
cat >"$B/jt-rj-l1" <<EOF
#!/bin/sh
echo "l1 \$\$" >>"\$LOG"
"$B/jt-rj-l2" &
"$B/jt-rj-l2"
wait
exit 3
EOF
cat >"$B/jt-rj-l2" <<EOF
#!/bin/sh
echo "l2 \$\$" >>"\$LOG"
"$B/jt-rj-l3"
"$B/jt-rj-l3"
exit 0
EOF
cat >"$B/jt-rj-l3" <<EOF
#!/bin/sh
echo "l3 \$\$" >>"\$LOG"
"$B/jt-rj-nap" 0.2
exit 0
EOF
# --pid: a nap runs before the job-start; the two l3 start after it
cat >"$B/jt-rj-hold" <<EOF
#!/bin/sh
echo "hold \$\$" >>"\$LOG"
"$B/jt-rj-nap" 2 &
read go <"\$FIFO"
"$B/jt-rj-l3"
"$B/jt-rj-l3"
wait
exit 0
EOF
chmod 755 "$T" "$B" "$B"/*

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
SINCE=$(date +%s)
sleep 1.1	# every record below starts after SINCE

# ---- jobtrace run ----------------------------------------------------------------

# beside it, started at the same moment: the same tree with no job
LOG=$T/beside.log "$B/jt-rj-l1" &
BESIDE=$!
BG_PIDS="$BG_PIDS $BESIDE"
LOG=$T/run.log "$CLI" --config "$CONF" run --job "$J-1" --run R1 --pipeline P --cost-center CC \
	-- "$B/jt-rj-l1" 2>"$T/run.err"
st=$?
wait $BESIDE
reaped $BESIDE
check "run returns its command's exit code: 3 (got $st)" eq "$st" 3
check "run said nothing on stderr" eq "$(cat "$T/run.err")" ""
check "the tree logged its 7 scripts, the one beside it 7" \
	eq "$(wc -l <"$T/run.log"):$(wc -l <"$T/beside.log")" "7:7"
wait_records "$J-1" 11
sleep 0.5	# anything more would have arrived by now
WANT=$(expected_pids "$T/run.log")
GOT=$(job_pids "$J-1")
note "job $J-1: want $WANT" "job $J-1: got  $GOT"
check "job $J-1 has exactly the 11 processes of its tree (7 scripts, 4 naps)" \
	eq "$(echo $WANT | wc -w):$GOT" "11:$WANT"
check "all 11 carry run R1, pipeline P, cost center CC, user root, scheduler local" \
	eq "$(n_export "$J-1" process '"scheduler":"local"' '"run":"R1"' '"pipeline":"P"' '"user":"root"' '"cost_center":"CC"')" 11
check "its job records: start, and end with exit code 3:0, state FAILED and 11 processes" \
	eq "$(n_export "$J-1" job '"phase":"start"'):$(n_export "$J-1" job '"phase":"end"' '"exit_code":3,' '"exit_signal":0,' '"state":"FAILED"' '"processes":11,')" "1:1"
BWANT=$(expected_pids "$T/beside.log")
BESIDE_IDS=$(echo $BWANT | tr ' ' ',')
check "the 11 processes of the tree beside it are stored, none with a job" \
	eq "$(q "select count(*) || ':' || count(job_id) from process where pid in ($BESIDE_IDS) and since_time >= $SINCE;")" "11:0"
check "the run's own jobtrace process makes no record (the rules keep only its children)" \
	eq "$(q "select count(*) from process where comm = 'jobtrace' and since_time >= $SINCE and argv like '%$J-1%';")" 0

# ---- a SIGTERM sent to run -------------------------------------------------------

"$CLI" --config "$CONF" run --job "$J-2" -- "$B/jt-rj-nap" 30 2>"$T/term.err" &
RUN=$!
BG_PIDS="$BG_PIDS $RUN"
wait_child $RUN
NAP=$(pgrep -P $RUN)
kill -TERM $RUN
wait $RUN
st=$?
reaped $RUN
check "run killed by SIGTERM passes it on: nap $NAP gone, status 128 + 15 (got $st)" \
	eq "$st:$([ -e "/proc/$NAP" ] && echo alive || echo gone)" "143:gone"
wait_records "$J-2" 1
check "the nap's record: job $J-2, killed by signal 15; the job's end: exit code 0:15 (as Slurm's ExitCode), state CANCELLED (run was asked to stop)" \
	eq "$(q "select pid || ':' || exit_signal from process where job_id = '$J-2';"):$(n_export "$J-2" job '"phase":"end"' '"exit_code":0,' '"exit_signal":15,' '"state":"CANCELLED"')" "$NAP:15:1"

# ---- job-start --pid on a tree already running --------------------------------------

mkfifo "$T/go"
LOG=$T/hold.log FIFO=$T/go "$B/jt-rj-hold" &
HOLD=$!
BG_PIDS="$BG_PIDS $HOLD"
"$B/jt-rj-nap" 2 &	# the test's own: a sibling of hold, not in the job
SIB=$!
BG_PIDS="$BG_PIDS $SIB"
wait_child $HOLD
OLD_NAP=$(pgrep -P $HOLD)
cli job-start --strict --job "$J-3" --scheduler test --run R3 --pid $HOLD \
	>"$T/pid.out" 2>&1
st=$?
check "job-start --pid $HOLD (exit $st) says nothing" eq "$st:$(cat "$T/pid.out")" "0:"
echo go >"$T/go"
wait $HOLD $SIB
reaped $HOLD
reaped $SIB
cli job-end --strict --job "$J-3" --scheduler test
# an epilog run twice: the second job-end is taken (exit 0) and writes no
# second end record, which `jobtrace cost` would count as a second job
cli job-end --strict --job "$J-3" --scheduler test >"$T/end2.out" 2>&1
check "a second job-end for $J-3: exit $?, says nothing" eq "$?:$(cat "$T/end2.out")" "0:"
wait_records "$J-3" 6
sleep 0.5
check "job $J-3 has one end record" \
	eq "$(q "select count(*) from record where type = 'job' and job_id = '$J-3'
		and json_extract(json, '\$.phase') = 'end';")" 1
check "the agent logged the second job-end as one that was already ended" \
	eq "$(grep -c "job-end job test:$J-3: already ended .* s ago, no second end record" "$T/agent.log")" 1
WANT=$(expected_pids "$T/hold.log")
GOT=$(job_pids "$J-3")
note "job $J-3: want $WANT" "job $J-3: got  $GOT"
check "job $J-3 has exactly hold $HOLD, its nap $OLD_NAP that ran before, 2 l3 and their naps" \
	eq "$(echo $WANT | wc -w):$(echo " $WANT " | grep -c " $OLD_NAP "):$GOT" "6:1:$WANT"
check "all 6 carry run R3" eq "$(n_export "$J-3" process '"run":"R3"')" 6
check "the sibling nap $SIB started beside hold carries no job" \
	eq "$(q "select count(*) || ':' || count(job_id) from process where pid = $SIB and since_time >= $SINCE;")" "1:0"
grep "job test:$J-3: pid $HOLD and 1 descendants tied" "$T/agent.log" >/dev/null
check "the agent logged pid $HOLD and 1 descendant tied at the call" eq "$?" 0

# ---- job-start --pid on an excluded wrapper that lived through sample passes -------
# tini is one of the rules' wrappers that are excluded with their children
# kept (lua-rules/10-deny.lua), as the jobtrace CLI is.  The iterator never
# reports an excluded process and the kernel keeps its exit: the agent
# used to forget it at the first pass, so job-start --pid on it, or a
# `jobtrace run` with a pass between its exec and its job-start (a CI run
# saw it), was refused as "not followed" and its children ran untraced.

cat >"$B/tini" <<EOF
#!/bin/sh
read go <"\$FIFO"
"$B/jt-rj-nap" 0.2
exit 0
EOF
chmod 755 "$B/tini"
mkfifo "$T/go7"
FIFO=$T/go7 "$B/tini" &
TINI=$!
BG_PIDS="$BG_PIDS $TINI"
sleep 2.5	# two sample passes (1 s apart) at least
cli job-start --strict --job "$J-7" --scheduler test --pid $TINI >"$T/tini.out" 2>&1
check "job-start --pid $TINI on tini, excluded and 2.5 s old: exit $?, says nothing ($(cat "$T/tini.out"))" \
	eq "$?:$(cat "$T/tini.out")" "0:"
echo go >"$T/go7"
wait $TINI
reaped $TINI
cli job-end --strict --job "$J-7" --scheduler test
wait_records "$J-7" 1
check "job $J-7 has tini's nap (tini itself, excluded, has no record)" \
	eq "$(q "select group_concat(comm) from process where job_id = '$J-7';")" jt-rj-nap

# ---- bad arguments, no such process -------------------------------------------------

cli job-start --strict --job "$J-x" --pid 12x >"$T/e1" 2>&1
st=$?
check "job-start --pid 12x: exit 2, names --pid" \
	eq "$st:$(grep -c "pid '12x': not a process id" "$T/e1")" "2:1"
NOPID=4194303
while [ -e "/proc/$NOPID" ]; do NOPID=$((NOPID - 1)); done
cli job-start --strict --job "$J-x" --pid $NOPID >"$T/e2" 2>&1
st=$?
check "job-start --pid $NOPID (no such process): exit 1, '--pid $NOPID: no such process'" \
	eq "$st:$(grep -c -- "--pid $NOPID: no such process" "$T/e2")" "1:1"
cli job-start --job "$J-x" --pid $NOPID >"$T/e3" 2>&1
check "without --strict the same is exit 0 and one line" \
	eq "$?:$(wc -l <"$T/e3")" "0:1"
check "the refused job-start registered no job $J-x" \
	eq "$(q "select count(*) from record where job_id = '$J-x';")" 0
cli run --job "$J-x" >"$T/e4" 2>&1
check "run without a command: exit 2, says so" \
	eq "$?:$(grep -c 'give the command to run after --' "$T/e4")" "2:1"
cli run --job "$J-x" --pid 1 -- true >"$T/e5" 2>&1
check "run --pid: exit 2, names --pid" eq "$?:$(grep -c -- '--pid is for job-start only' "$T/e5")" "2:1"
cli run --job "$J-x" --bogus -- touch "$T/bogus" >"$T/e6" 2>&1
check "run --bogus: exit 2, names it, the command did not run" \
	eq "$?:$(grep -c "unknown or incomplete option '--bogus'" "$T/e6"):$([ -e "$T/bogus" ] && echo ran)" "2:1:"

# ---- a user without control rights -----------------------------------------------------

userdel "$ALICE" 2>/dev/null
useradd -M -N -s /usr/sbin/nologin "$ALICE"
AUID=$(id -u "$ALICE")
chmod 644 "$CONF"
touch "$T/alice.log"
chmod 666 "$T/alice.log"
LOG=$T/alice.log timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" run \
	--job "$J-4" --user root --run RA -- "$B/jt-rj-l3" >"$T/alice.out" 2>&1
st=$?
check "alice's run (exit $st) is quiet" eq "$st:$(cat "$T/alice.out")" "0:"
# a user's job lives in her own namespace: user:UID:ID
AJ4=user:$AUID:$J-4
wait_records "$AJ4" 2
sleep 0.5
check "her job $AJ4: her l3 and its nap, user forced to $ALICE (she said root), uid $AUID" \
	eq "$(q "select count(*) || ':' || group_concat(distinct job_user) || ':' || group_concat(distinct uid) from process where job_id = '$AJ4';"):$(n_export "$AJ4" job '"phase":"end"' "\"uid\":$AUID," "\"user\":\"$ALICE\"")" "2:$ALICE:$AUID:1"
check "no job $J-4 outside her namespace" \
	eq "$(q "select count(*) from record where job_id = '$J-4';")" 0
# her process to tie: a nap of hers, running
runuser -u "$ALICE" -- "$B/jt-rj-nap" 3 &
ANAP=$!
BG_PIDS="$BG_PIDS $ANAP"
wait_child $ANAP
APID=$(pgrep -P $ANAP)
APID=${APID:-$ANAP}
timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" job-start --strict \
	--job "$J-3" --scheduler test --pid "$APID" >"$T/alice.join" 2>&1
check "alice's job-start of root's job id $J-3 (exit $?) makes a job of her own, not a join" \
	eq "$?:$(grep -c "job-start job test:user:$AUID:$J-3 (user $ALICE, account -, run -)\$" "$T/agent.log")" "0:1"
timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" job-start --strict \
	--job "$J-5" --pid $$ >"$T/alice.root" 2>&1
check "alice may not tie root's process $$: exit 1, 'not yours'" \
	eq "$?:$(grep -c "permission denied: --pid $$ is a process of uid 0, not yours" "$T/alice.root")" "1:1"
timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" job-start --strict \
	--job "$J-5" --pid "$APID" --cgroup /x >"$T/alice.cg" 2>&1
check "alice may not name a cgroup: exit 1, 'permission denied'" \
	eq "$?:$(grep -c 'permission denied: job-start needs root' "$T/alice.cg")" "1:1"
timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" job-start --strict \
	--job "$J-6" --scheduler test --pid "$APID" >"$T/alice.own" 2>&1
check "alice may tie her own nap $APID to a new job $J-6 (exit $?)" eq "$?" 0
# a hook registers the same job id: a job of its own, hers goes on
cli job-start --strict --job "$J-6" --scheduler test --uid 0 >"$T/take.out" 2>&1
check "root's hook registers $J-6 beside hers (exit $?)" eq "$?" 0
cli job-start --strict --job "user:$AUID:$J-6" --scheduler test --pid $$ >"$T/take2.out" 2>&1
check "root's hook may not start a job in her namespace: exit 1, 'a user's own job'" \
	eq "$?:$(grep -c "is a user's own job" "$T/take2.out")" "1:1"
timeout 30 runuser -u "$ALICE" -- "$CLI" --config "$CONF" job-end --strict \
	--job "$J-6" --scheduler test >"$T/alice.end" 2>&1
check "alice ends her own $J-6 (exit $?), root's job $J-6 runs on" \
	eq "$?:$(grep -c "job-end job test:user:$AUID:$J-6 (" "$T/agent.log"):$(grep -c "job-end job test:$J-6 (" "$T/agent.log")" "0:1:0"
cli job-end --strict --job "$J-6" --scheduler test
wait $ANAP
reaped $ANAP
for _ in $(seq 1 50); do
	[ "$(q "select count(*) from process where pid = $APID and since_time >= $SINCE;")" = 1 ] && break
	sleep 0.1
done
check "her nap $APID is stored in her own job test:user:$AUID:$J-6" \
	eq "$(q "select count(*) || ':' || job_scheduler || ':' || job_id from process where pid = $APID and since_time >= $SINCE;")" "1:test:user:$AUID:$J-6"

# ---- the agent is down -------------------------------------------------------------------

stop_agent
jt run --job "$J-7" -- sh -c "touch '$T/ran'; exit 5" 2>"$T/down.err"
st=$?
check "agent down: run still runs its command and exits 5 (got $st), one line on stderr" \
	eq "$st:$([ -e "$T/ran" ] && echo ran):$(wc -l <"$T/down.err")" "5:ran:1"
note "$(cat "$T/down.err")"
jt run --strict --job "$J-7" -- sh -c "touch '$T/ran-strict'" 2>"$T/down-strict.err"
st=$?
check "agent down with --strict: exit 1, the command did not run" \
	eq "$st:$([ -e "$T/ran-strict" ] && echo ran)" "1:"

finish
