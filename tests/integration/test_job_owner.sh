#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_job_owner.sh - a job belongs to its owner as the scheduler or root
# stated it: an ordinary user can neither read another user's records
# through a job id nor claim a job id before its job starts.  Two users made
# here: alice (the attacker) and bob, whose jobs root's hooks register with
# his processes, and whose processes carry a canary word in their argv.
#
# 1. Root registers bob's job pbs:9001 (his process tied with --pid, run R
#    and task align).  Alice then registers 9001 herself, under pbs, slurm
#    and htcondor, and again after an agent restart (when the registry has
#    forgotten root's job): her `export`, `report`, `cost`, `rightsize`
#    show none of bob's records, and root's report of 9001 still says
#    User: bob.
# 2. Alice registers pbs:777 with her own process before root's hook
#    registers bob's job 777 (`job-start --pid`, no --uid, as
#    hooks/README.md shows): the hook's job is a new one, not alice's
#    ("registered", never "joined"); bob's process is not in alice's `ps`;
#    her job-update and job-end touch her own job only; job 777's end
#    record says bob, his uid and account.  The same across an agent
#    restart between her claim and root's registration (pbs:778).
# 3. Alice cannot claim slurm:4242 at all; bob's process found in a
#    cgroup .../slurm_X/uid_B/job_4242/step_0 with no hook is not
#    alice's.  A program alice names slurmstepd, titled
#    "slurmstepd: [4243.0]", puts nothing of hers in job 4243.  Nor does a
#    cgroup folder of hers named like Slurm's (.../x_slurmstepd.scope/
#    job_4244, what systemd's delegation of user@UID.service lets her make
#    on cgroup v2): only a root-made folder names a job.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/userdel/runuser.  Exit 0
# pass, 1 fail, 77 skipped, 99 hard error.  Makes the users jt-jo-alice and
# jt-jo-bob and removes them.
#
# Run:  make check TESTS=tests/integration/test_job_owner.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands --skip useradd userdel runuser
ALICE=jt-jo-alice
BOB=jt-jo-bob
B=$T/bin
P=$T/pids	# the held scripts' pid files and fifos
CANARY=jt-jo-canary-bob-$$	# in the argv of bob's processes only
CGDIR=
DELEG=

# The users and the cgroups go with the test.
extra_cleanup() {
	remove_cgroup "$CGDIR/step_0"
	remove_cgroup "$CGDIR"
	if [ -n "$DELEG" ]; then
		remove_cgroup "$DELEG/x_slurmstepd.scope/job_4244/step_0"
		rmdir "$DELEG/x_slurmstepd.scope/job_4244" \
			"$DELEG/x_slurmstepd.scope" "$DELEG" 2>/dev/null
	fi
	[ -n "$CGDIR" ] && rmdir "${CGDIR%/job_*}" "${CGDIR%/uid_*}" 2>/dev/null
	for u in $ALICE $BOB; do
		id -u "$u" >/dev/null 2>&1 && userdel "$u" 2>/dev/null
	done
}
start_watchdog 300

# Start $2 (a name) as user $1 with the extra argument $3: a script that
# writes its pid, waits for `go` on its fifo, runs a nap and ends.  Sets
# HELD to its pid once it has written it.
hold() {
	local u=$1 name=$2
	mkfifo -m 666 "$P/go.$name"
	runuser -u "$u" -- env PIDF="$P/pid.$name" FIFO="$P/go.$name" \
		"$B/jt-jo-job" "$3" &
	BG_PIDS="$BG_PIDS $!"
	eval "RU_$name=$!"
	for _ in $(seq 1 100); do
		[ -s "$P/pid.$name" ] && break
		sleep 0.05
	done
	HELD=$(cat "$P/pid.$name" 2>/dev/null)
}

# Let the held script $1 go on and wait until it ended.
release() {
	local ru
	eval "ru=\$RU_$1"
	echo go >"$P/go.$1"
	wait "$ru"
	reaped "$ru"
}

# Records of the file $1 that hold the canary or bob's uid: how many.
leaks() {
	grep -c -e "$CANARY" -e "\"uid\":$BUID," "$1"
}

# Wait until the store holds every record the agent wrote so far: root
# registers a job of its own, whose start record is spooled after them and
# stored in spool order (the node's other records keep coming meanwhile).
MARKS=0
stored() {
	MARKS=$((MARKS + 1))
	cli job-start --strict --job "jt-jo-mark-$MARKS" --scheduler test
	for _ in $(seq 1 200); do
		[ "$(q "select count(*) from record where job_id = 'jt-jo-mark-$MARKS';")" = 1 ] &&
			return 0
		sleep 0.1
	done
	note "mark $MARKS not stored after 20 s"
	return 1
}

# Alice's export, report and cost of job $1 and rightsize of run R-$$,
# checked to show nothing of bob's ($2 names the moment), once the store
# has every record the agent wrote (her claim's too).
alice_sees_nothing() {
	stored
	cli_as $ALICE export --job "$1" --format ndjson >"$T/a.export" 2>&1
	cli_as $ALICE report --job "$1" --format json >"$T/a.report" 2>&1
	cli_as $ALICE cost --job "$1" --format csv >"$T/a.cost" 2>&1
	cli_as $ALICE rightsize --run "R-$$" >"$T/a.rightsize" 2>&1
	check "$2: alice's export --job $1 holds no record of bob's ($(leaks "$T/a.export") hold his canary or uid)" \
		eq "$(leaks "$T/a.export")" 0
	check "$2: alice's report --job $1 (json) names nothing of bob's: user, uid, account, task" \
		eq "$(grep -c -e "$BOB" -e "\"uid\":$BUID" -e acct-bob -e align "$T/a.report")" 0
	check "$2: alice's cost --job $1 has no line of bob's account" \
		eq "$(grep -c acct-bob "$T/a.cost")" 0
	check "$2: alice's rightsize --run R-$$ knows no task align of bob's" \
		eq "$(grep -c align "$T/a.rightsize")" 0
}

# Root's report of job $1 names user $2 (and uid $3).
root_user_is() {
	stored
	cli report --job "$1" >"$T/root.report.$1" 2>&1
	grep -q "^User: *$2 (uid $3)" "$T/root.report.$1"
}

# ---- users, programs, agent -------------------------------------------------------

extra_cleanup
useradd -M -N -s /usr/sbin/nologin $ALICE &&
	useradd -M -N -s /usr/sbin/nologin $BOB || {
	echo "# error: useradd failed"
	exit 99
}
AUID=$(id -u $ALICE)
BUID=$(id -u $BOB)
mkdir -p "$B" "$T/alice" "$P"
cp /bin/sleep "$B/jt-jo-nap"
cat >"$B/jt-jo-job" <<EOF
#!/bin/sh
# \$1: a word to carry in argv
echo \$\$ >"\$PIDF"
read go <"\$FIFO"
"$B/jt-jo-nap" 0.2
exit 0
EOF
chmod 755 "$T" "$B" "$B"/*
chown $ALICE "$T/alice"
chmod 1777 "$P"

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
chmod 644 "$CONF"

# ---- 1. another user's records through a job id ------------------------------------

hold $BOB b1 "$CANARY"
cli job-start --strict --job 9001 --scheduler pbs --uid "$BUID" --user $BOB \
	--account acct-bob --run "R-$$" --task align --pid "$HELD" >"$T/b1.hook" 2>&1
check "root's hook registers bob's job pbs:9001 with his process $HELD (exit $?)" eq "$?" 0
release b1
cli job-end --strict --job 9001 --scheduler pbs --exit-code 0 >>"$T/b1.hook" 2>&1
wait_records 9001 2
check "bob's job 9001 has his script and its nap" \
	eq "$(q "select count(*) from process where job_id = '9001' and uid = $BUID;")" 2

hold $ALICE a1 alice
for s in pbs slurm htcondor; do
	cli_as $ALICE job-start --strict --job 9001 --scheduler $s --pid "$HELD" \
		>"$T/a1.$s" 2>&1
	note "alice's job-start --job 9001 --scheduler $s: exit $?: $(cat "$T/a1.$s")"
done
check "alice's --scheduler slurm is refused: the agent finds slurm jobs itself" \
	grep -q -- "--scheduler slurm: the agent finds slurm jobs itself" "$T/a1.slurm"
check "alice's pbs and htcondor 9001 are jobs of her own, user:$AUID:9001 (agent log)" \
	eq "$(grep -c "job-start job \(pbs\|htcondor\):user:$AUID:9001 (user $ALICE," "$T/agent.log")" 2
release a1
alice_sees_nothing 9001 "no restart"
check "root's report of 9001 says User: $BOB (uid $BUID)" root_user_is 9001 $BOB "$BUID"

stop_agent
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
hold $ALICE a2 alice
cli_as $ALICE job-start --strict --job 9001 --scheduler pbs --pid "$HELD" >"$T/a2.pbs" 2>&1
note "after a restart, alice's job-start --job 9001 --scheduler pbs: exit $?: $(cat "$T/a2.pbs")"
cli_as $ALICE job-start --strict --job 9001 --pid "$HELD" >"$T/a2.slurm" 2>&1
note "after a restart, alice's job-start --job 9001 (slurm by default for hooks): exit $?: $(cat "$T/a2.slurm")"
release a2
cli_as $ALICE job-end --strict --job 9001 --scheduler pbs >/dev/null 2>&1
alice_sees_nothing 9001 "after a restart"
check "after a restart, root's report of 9001 says User: $BOB (uid $BUID)" \
	root_user_is 9001 $BOB "$BUID"
# what alice registered is hers, and her report finds it by the id she gave
cli_as $ALICE report --job 9001 >"$T/a2.report" 2>&1
check "alice's report --job 9001 is her own job user:$AUID:9001 (the nap she ran)" \
	eq "$(grep -c "^jobtrace report: job user:$AUID:9001: [1-9][0-9]* processes" "$T/a2.report"):$(leaks "$T/a2.report")" "1:0"

# ---- 2. a job claimed before it exists -----------------------------------------------

hold $ALICE a3 alice
cli_as $ALICE job-start --strict --job 777 --scheduler pbs --pid "$HELD" >"$T/a3.claim" 2>&1
check "alice registers 777 under pbs with her process first (exit $?)" eq "$?" 0
hold $BOB b3 "$CANARY"
B3=$HELD
cli job-start --strict --job 777 --scheduler pbs --account acct-bob --pid "$B3" \
	>"$T/b3.hook" 2>&1
check "root's hook job-start --job 777 --pid $B3 (exit $?) registers a job of its own, user $BOB, no join" \
	eq "$?:$(grep -c "job-start job pbs:777 (user $BOB, account acct-bob, run -)\$" "$T/agent.log")" "0:1"
cli_as $ALICE ps >"$T/a3.ps" 2>&1
check "alice's ps does not list bob's process $B3" \
	eq "$(awk -v p="$B3" '$1 == p' "$T/a3.ps" | wc -l)" 0
cli_as $ALICE job-update --strict --job 777 --scheduler pbs --run stolen >"$T/a3.upd" 2>&1
note "alice's job-update --job 777: exit $?: $(cat "$T/a3.upd")"
cli_as $ALICE job-end --strict --job 777 --scheduler pbs --exit-code 9 >"$T/a3.end" 2>&1
note "alice's job-end --job 777: exit $?: $(cat "$T/a3.end")"
check "alice's job-update and job-end were of her own job user:$AUID:777 (agent log)" \
	eq "$(grep -c "job-\(update\|end\) job pbs:user:$AUID:777 (" "$T/agent.log")" 2
release a3
release b3
cli job-end --strict --job 777 --scheduler pbs --exit-code 0 >"$T/b3.end" 2>&1
check "root's job-end of 777 closes it (exit $?), not 'already ended'" \
	eq "$?:$(grep -c "job-end job pbs:777: already ended" "$T/agent.log")" "0:0"
wait_records 777 2
END777=$(q "select json_extract(json, '\$.job.user') || '|' || json_extract(json, '\$.uid')
	|| '|' || json_extract(json, '\$.job.account') || '|' || ifnull(json_extract(json, '\$.job.run'), '-')
	|| '|' || json_extract(json, '\$.exit_code') from record where type = 'job' and job_id = '777'
	and json_extract(json, '\$.phase') = 'end';")
check "777's one end record: user $BOB, uid $BUID, account acct-bob, no run, exit 0 ($END777)" \
	eq "$END777" "$BOB|$BUID|acct-bob|-|0"
check "the agent logged no join of 777" eq "$(grep -c "job pbs:777 .*joined" "$T/agent.log")" 0
alice_sees_nothing 777 "claimed first"

# across a restart: her claim is in the store, root's job comes after
hold $ALICE a4 alice
cli_as $ALICE job-start --strict --job 778 --scheduler pbs --pid "$HELD" >"$T/a4.claim" 2>&1
check "alice registers 778 under pbs first (exit $?)" eq "$?" 0
stop_agent
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
hold $BOB b4 "$CANARY"
cli job-start --strict --job 778 --scheduler pbs --account acct-bob --pid "$HELD" \
	>"$T/b4.hook" 2>&1
check "after a restart, root's hook registers bob's 778 (exit $?)" eq "$?" 0
release a4
release b4
cli job-end --strict --job 778 --scheduler pbs --exit-code 0 >/dev/null 2>&1
wait_records 778 2
alice_sees_nothing 778 "claimed before a restart"
check "root's report of 778 says User: $BOB (uid $BUID): the uid of the process root tied" \
	root_user_is 778 $BOB "$BUID"

# ---- 3. Slurm jobs: no claim, no fake slurmstepd ----------------------------------------

hold $ALICE a5 alice
cli_as $ALICE job-start --strict --job 4242 --scheduler slurm --pid "$HELD" >"$T/a5.claim" 2>&1
check "alice cannot claim slurm:4242: exit 1, '--scheduler slurm'" \
	eq "$?:$(grep -c -- "--scheduler slurm" "$T/a5.claim")" "1:1"
cli_as $ALICE job-start --strict --job 4242 --scheduler local --pid "$HELD" >/dev/null 2>&1
release a5
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	CGROOT=/sys/fs/cgroup
else
	CGROOT=/sys/fs/cgroup/memory
fi
CGDIR=$CGROOT/slurm_jtjo$$/uid_$BUID/job_4242
mkdir -p "$CGDIR/step_0"
(echo "$BASHPID" >"$CGDIR/step_0/cgroup.procs" &&
	exec runuser -u $BOB -- sh -c "'$B/jt-jo-nap' 0.2; exit 0" "$CANARY")
wait_records 4242 2
check "bob's 2 processes in cgroup job_4242, no hook: job slurm:4242, no user of alice's" \
	eq "$(q "select count(*) || '|' || group_concat(distinct job_scheduler) || '|' || count(job_user) from process where job_id = '4242' and uid = $BUID;")" "2|slurm|0"
alice_sees_nothing 4242 "slurm job by cgroup"

# a program of alice's named slurmstepd, titled as a step of job 4243
cp /bin/bash "$T/alice/slurmstepd"
chown $ALICE "$T/alice/slurmstepd"
SINCE=$(date +%s.%N)
echo "\"$B/jt-jo-nap\" 0.1; exit 0" | runuser -u $ALICE -- \
	bash -c "exec -a 'slurmstepd: [4243.0]' '$T/alice/slurmstepd'"
for _ in $(seq 1 50); do
	[ -n "$(q "select 1 from process where comm = 'jt-jo-nap' and uid = $AUID and since_time >= $SINCE;")" ] && break
	sleep 0.1
done
check "the nap below alice's 'slurmstepd: [4243.0]' is stored, in no job" \
	eq "$(q "select count(*) || ':' || count(job_id) from process where comm = 'jt-jo-nap'
		and uid = $AUID and since_time >= $SINCE;")" "1:0"

# a cgroup subtree delegated to alice (as systemd delegates user@UID.service
# on cgroup v2) with a folder of hers named like Slurm's job cgroup
if [ -e /sys/fs/cgroup/unified/cgroup.procs ]; then
	V2ROOT=/sys/fs/cgroup/unified
else
	V2ROOT=/sys/fs/cgroup
fi
DELEG=$V2ROOT/jtjo-deleg$$
mkdir "$DELEG" && chown $ALICE "$DELEG" "$DELEG/cgroup.procs"
runuser -u $ALICE -- mkdir -p "$DELEG/x_slurmstepd.scope/job_4244/step_0"
check "alice made x_slurmstepd.scope/job_4244 in her delegated cgroup" \
	test -d "$DELEG/x_slurmstepd.scope/job_4244/step_0"
SINCE=$(date +%s.%N)
(echo "$BASHPID" >"$DELEG/x_slurmstepd.scope/job_4244/step_0/cgroup.procs" &&
	exec runuser -u $ALICE -- sh -c "'$B/jt-jo-nap' 0.1; exit 0")
for _ in $(seq 1 50); do
	[ -n "$(q "select 1 from process where comm = 'jt-jo-nap' and uid = $AUID and since_time >= $SINCE;")" ] && break
	sleep 0.1
done
check "alice's nap in her own .../job_4244 folder is stored in no job ($(q "select group_concat(distinct coalesce(job_id, '-')) from process where uid = $AUID and since_time >= $SINCE;"))" \
	eq "$(q "select count(*) || ':' || count(job_id) from process where comm = 'jt-jo-nap'
		and uid = $AUID and since_time >= $SINCE;")" "1:0"

finish
