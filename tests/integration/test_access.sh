#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_access.sh - who sees which records on a shared node.  Two users made
# here run known numbers of processes; alice also has a job (registered with
# her uid) with a root process in it.  Their `jobtrace export`, `report`,
# `cost` and `ps` go through the agent's socket (the store is root's) and
# show exactly their own processes and their job; a member of agent.reader_group and root
# see both users, and neither bob nor the reader may register a job.  A
# program named with a terminal title sequence (ESC ] 0; ... BEL) reaches
# no terminal through `ps` or `report`.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/groupadd/runuser.  Exit 0
# pass, 1 fail, 77 skipped, 99 hard error.  Makes the users jt-ac-alice,
# jt-ac-bob, jt-ac-carol and the group jt-ac-readers, and removes them.
#
# Run:  make check TESTS=tests/integration/test_access.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_commands --skip useradd userdel groupadd groupdel runuser
ALICE=jt-ac-alice
BOB=jt-ac-bob
CAROL=jt-ac-carol
READERS=jt-ac-readers
JOB=jt-ac-$$
N_ALICE=4	# processes alice runs outside her job
N_BOB=3
A_WORK=$((N_ALICE + 2))	# her jt-ac-work: those, one in her job, one for ps
B_WORK=$((N_BOB + 1))	# his: those, one for ps
CGDIR=
EVIL=$'\e]0;pwn\a'x	# a name that sets the terminal's title

# Remove the users and the group (a previous run's too).
remove_users() {
	local u
	for u in $ALICE $BOB $CAROL; do
		id -u "$u" >/dev/null 2>&1 && userdel "$u" 2>/dev/null
	done
	getent group $READERS >/dev/null && groupdel $READERS 2>/dev/null
}

# The users, the group and the job's cgroup are this test's leftovers.
extra_cleanup() {
	remove_cgroup "$CGDIR"
	remove_users
}
start_watchdog 180

# Lines of file $1 with every pattern $2...: how many.
lines_with() {
	local f=$1 out
	shift
	out=$(cat "$f")
	for p in "$@"; do
		out=$(printf '%s\n' "$out" | grep -F -- "$p")
	done
	[ -n "$out" ] && printf '%s\n' "$out" | wc -l || echo 0
}

# True when file $1 holds no ESC byte.
no_esc() {
	! LC_ALL=C grep -q $'\x1b' "$1"
}

# ---- users, programs, agent -----------------------------------------------------

remove_users
groupadd $READERS &&
	useradd -M -N -s /usr/sbin/nologin $ALICE &&
	useradd -M -N -s /usr/sbin/nologin $BOB &&
	useradd -M -N -s /usr/sbin/nologin -G $READERS $CAROL
st=$?
check "users $ALICE, $BOB, $CAROL (in $READERS) made (exit $st)" eq "$st" 0
[ "$st" -eq 0 ] || finish
AUID=$(id -u $ALICE)
BUID=$(id -u $BOB)

# the users reach the configuration, the socket and the programs; not the state
chmod 755 "$T"
mkdir -p "$T/bin"
cp /bin/sleep "$T/bin/jt-ac-work"
cp /bin/sleep "$T/bin/$EVIL"
start_agent "rules_dir = \"$top_srcdir/lua-rules\"; reader_group = \"$READERS\";" || finish
for _ in $(seq 1 50); do
	[ -e "$DB" ] && break
	sleep 0.1
done
chmod 644 "$CONF"
check "the agent made the state dir 0700" eq "$(stat -c '%a %U' "$T/state")" "700 root"
check "the agent made the store 0600" eq "$(stat -c '%a %U' "$DB")" "600 root"

SINCE=$(date +%s)
sleep 1.1	# every record below starts after SINCE

# ---- what each user runs ---------------------------------------------------------------

for i in $(seq 1 $N_ALICE); do
	runuser -u $ALICE -- "$T/bin/jt-ac-work" 0.05
done
for i in $(seq 1 $N_BOB); do
	runuser -u $BOB -- "$T/bin/jt-ac-work" 0.05
done

# alice's job: one process of hers and one of root's in its cgroup
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	CGDIR=/sys/fs/cgroup/jt_ac_$$
else
	CGDIR=/sys/fs/cgroup/memory/jt_ac_$$
fi
mkdir "$CGDIR"
cli job-start --strict --job "$JOB" --scheduler test --uid "$AUID" \
	--user $ALICE --cgroup "/jt_ac_$$" >"$T/job.hook" 2>&1
st=$?
check "job-start --job $JOB --uid $AUID (exit $st)" eq "$st" 0
(echo "$BASHPID" >"$CGDIR/cgroup.procs" &&
	exec runuser -u $ALICE -- "$T/bin/jt-ac-work" 0.05)
(echo "$BASHPID" >"$CGDIR/cgroup.procs" && exec "$T/bin/jt-ac-work" 0.05)
sleep 0.3
cli job-end --strict --job "$JOB" --scheduler test >>"$T/job.hook" 2>&1

# running while the users ask for ps: one each, and a hostile name
runuser -u $ALICE -- "$T/bin/jt-ac-work" 6 &
A_LIVE=$!
BG_PIDS="$BG_PIDS $A_LIVE"
runuser -u $BOB -- "$T/bin/jt-ac-work" 6 &
B_LIVE=$!
BG_PIDS="$BG_PIDS $B_LIVE"
runuser -u $BOB -- "$T/bin/$EVIL" 6 &
E_LIVE=$!
BG_PIDS="$BG_PIDS $E_LIVE"
sleep 1.5	# samples and the finished processes' records are stored

# ---- the store is root's ---------------------------------------------------------------

runuser -u $ALICE -- sqlite3 -readonly "$DB" 'select count(*) from process;' \
	>"$T/alice.sqlite" 2>&1
st=$?
check "alice cannot open the store $DB directly (sqlite3 exit $st)" \
	eq "$([ "$st" -ne 0 ] && echo refused)" refused
note "$(head -n 2 "$T/alice.sqlite")"

# ---- ps ------------------------------------------------------------------------------------

# The pid of the program runuser $1 started (itself if it did not fork).
live_pid() {
	local p
	p=$(pgrep -P "$1" | head -n 1)
	echo "${p:-$1}"
}
A_PID=$(live_pid $A_LIVE)
B_PID=$(live_pid $B_LIVE)
E_PID=$(live_pid $E_LIVE)
cli_as $ALICE ps >"$T/alice.ps" 2>&1
st=$?
check "alice's ps (exit $st) shows her running process $A_PID, not bob's $B_PID or $E_PID" \
	eq "$st:$(awk -v p="$A_PID" '$1 == p' "$T/alice.ps" | wc -l):$(awk -v b="$B_PID" -v e="$E_PID" '$1 == b || $1 == e' "$T/alice.ps" | wc -l)" "0:1:0"
check "alice's ps lists only her uid's processes: $(($(wc -l <"$T/alice.ps") - 1)) rows, all of uid $AUID" \
	eq "$(awk 'NR > 1 { print $1 }' "$T/alice.ps" | while read -r p; do
		# gone since (her jobtrace ps itself): nothing to compare
		[ -e "/proc/$p" ] || continue
		[ "$(stat -c %u "/proc/$p")" = "$AUID" ] || echo "$p"; done)" ""
cli ps >"$T/root.ps" 2>&1
check "root's ps shows both users' processes ($A_PID, $B_PID)" \
	eq "$(awk -v a="$A_PID" -v b="$B_PID" '$1 == a || $1 == b' "$T/root.ps" | wc -l)" 2
check "ps shows the program named ESC]0;pwn BEL x as '?]0;pwn?x', no ESC byte" \
	eq "$(no_esc "$T/root.ps" && echo clean):$(lines_with "$T/root.ps" "?]0;pwn?x")" "clean:1"
cli_as $BOB ps >"$T/bob.ps" 2>&1
check "bob's ps (his own hostile name) has no ESC byte either" no_esc "$T/bob.ps"
wait $A_LIVE $B_LIVE $E_LIVE 2>/dev/null
reaped $A_LIVE
reaped $B_LIVE
reaped $E_LIVE
sleep 1

# ---- export ---------------------------------------------------------------------------

UNTIL=$(date +%s.%N)
# independent reference: the store read by root with sqlite3
A_REF=$(q "select count(*) from process where since_time >= $SINCE and start_time < $UNTIL
	and (uid = $AUID or job_id = '$JOB');")
B_REF=$(q "select count(*) from process where since_time >= $SINCE and start_time < $UNTIL
	and uid = $BUID;")
J_REF=$(q "select count(*) from record where type = 'job' and job_id = '$JOB';")
note "store: $A_REF process records of alice or her job, $B_REF of bob, $J_REF job records"

for u in $ALICE $BOB $CAROL; do
	cli_as $u export --since "@$SINCE" --format ndjson >"$T/$u.ndjson" 2>"$T/$u.err"
	eval "st_${u//-/_}=$?"
done
cli export --since "@$SINCE" --format ndjson >"$T/root.ndjson" 2>"$T/root.err"
st_root=$?

A_PROC=$(lines_with "$T/$ALICE.ndjson" '"type":"process"')
check "alice's export (exit $st_jt_ac_alice) has her $A_REF process records and her job's" \
	eq "$st_jt_ac_alice:$A_PROC" "0:$A_REF"
check "alice's export: the $A_WORK jt-ac-work she ran, 0 records of bob's uid" \
	eq "$(lines_with "$T/$ALICE.ndjson" '"type":"process"' '"comm":"jt-ac-work"' "\"uid\":$AUID,"):$(lines_with "$T/$ALICE.ndjson" "\"uid\":$BUID,")" \
	"$A_WORK:0"
check "alice's export: her job's $J_REF job records and root's jt-ac-work in it" \
	eq "$(lines_with "$T/$ALICE.ndjson" '"type":"job"' "\"id\":\"$JOB\""):$(lines_with "$T/$ALICE.ndjson" '"type":"process"' '"uid":0,' '"comm":"jt-ac-work"' "\"id\":\"$JOB\"")" \
	"$J_REF:1"
check "alice's export: no host record" eq "$(lines_with "$T/$ALICE.ndjson" '"type":"host"')" 0

B_PROC=$(lines_with "$T/$BOB.ndjson" '"type":"process"')
check "bob's export (exit $st_jt_ac_bob) has his $B_REF process records" \
	eq "$st_jt_ac_bob:$B_PROC" "0:$B_REF"
check "bob's export: the $B_WORK jt-ac-work he ran, 0 records of alice's uid or her job" \
	eq "$(lines_with "$T/$BOB.ndjson" '"type":"process"' "\"uid\":$BUID," '"comm":"jt-ac-work"'):$(lines_with "$T/$BOB.ndjson" "\"uid\":$AUID,"):$(lines_with "$T/$BOB.ndjson" "\"id\":\"$JOB\"")" \
	"$B_WORK:0:0"

for u in $CAROL root; do
	f=$T/$u.ndjson
	check "$u's export sees both: alice's $A_WORK and bob's $B_WORK jt-ac-work, the job's $J_REF records" \
		eq "$(lines_with "$f" '"type":"process"' "\"uid\":$AUID," '"comm":"jt-ac-work"'):$(lines_with "$f" '"type":"process"' "\"uid\":$BUID," '"comm":"jt-ac-work"'):$(lines_with "$f" '"type":"job"' "\"id\":\"$JOB\"")" \
		"$A_WORK:$B_WORK:$J_REF"
done
check "carol's export (exit $st_jt_ac_carol) and root's (exit $st_root) succeed" \
	eq "$st_jt_ac_carol:$st_root" "0:0"

# same messages and status as reading the store: bob asks for alice's job
cli_as $BOB report --job "$JOB" >"$T/bob.job" 2>"$T/bob.job.err"
st=$?
check "bob's report of alice's job: exit 1, 'no records for job $JOB'" \
	eq "$st:$(grep -c "no records for job $JOB" "$T/bob.job.err")" "1:1"
note "$(cat "$T/bob.job.err")"
cli_as $ALICE report --job "$JOB" >"$T/alice.job" 2>"$T/alice.job.err"
st=$?
check "alice's report of her job (exit $st) counts its processes" \
	eq "$st:$(grep -c "job $JOB: $(q "select count(*) from process where job_id = '$JOB';") processes" "$T/alice.job")" "0:1"

# ---- cost through the agent: the same restriction ------------------------------------------

# her job is listed, counted or (no price here) not counted, with its note
cli_as $ALICE cost --job "$JOB" --format csv >"$T/alice.cost" 2>"$T/alice.cost.err"
st=$?
check "alice's cost --job $JOB (exit $st) lists her job" \
	eq "$st:$(grep -c "^\(job\|not_counted_job\),$JOB," "$T/alice.cost")" "0:1"
cli_as $BOB cost --job "$JOB" >"$T/bob.cost" 2>"$T/bob.cost.err"
st=$?
check "bob's cost of alice's job: exit 1, 'no ended jobs for job $JOB'" \
	eq "$st:$(grep -c "no ended jobs for job $JOB" "$T/bob.cost.err")" "1:1"
cli_as $ALICE cost --since "@$SINCE" --format json >"$T/alice.cost.json" 2>&1
st=$?
check "alice's cost --since (exit $st): her job, no idle nodes (host records are not hers)" \
	eq "$st:$(grep -c '"node_idle":false,"node_idle_hidden":true' "$T/alice.cost.json"):$(grep -c "\"$JOB\"" "$T/alice.cost.json")" "0:1:1"
cli_as $BOB cost --since "@$SINCE" >"$T/bob.cost.since" 2>&1
st=$?
check "bob's cost --since: exit 1, no ended jobs (alice's is not his)" \
	eq "$st:$(grep -c "no ended jobs for since" "$T/bob.cost.since")" "1:1"
cli_as $CAROL cost --since "@$SINCE" --format json >"$T/carol.cost.json" 2>&1
st=$?
check "carol's cost --since (reader_group, exit $st): idle nodes computed, alice's job there" \
	eq "$st:$(grep -c '"node_idle":true,"node_idle_hidden":false' "$T/carol.cost.json"):$(grep -c "\"$JOB\"" "$T/carol.cost.json")" "0:1:1"

# ---- seeing everything is not changing jobs ------------------------------------------------

CUID=$(id -u $CAROL)
for u in $BOB $CAROL; do
	cli_as $u job-start --strict --job "jt-ac-x-$u" --scheduler test >"$T/$u.hook" 2>&1
	st=$?
	check "$u's job-start (reader_group or not) is refused: exit $st, 'permission denied'" \
		eq "$st:$(grep -c 'permission denied: job-start needs root' "$T/$u.hook")" "1:1"
done
check "the agent logged both refusals with the uids $BUID and $CUID" \
	eq "$(grep -c "control: job-start refused for uid $BUID (pid \|control: job-start refused for uid $CUID (pid " "$T/agent.log")" 2

# ---- report escapes a hostile name ---------------------------------------------------------

cli_as $BOB report --since "@$SINCE" >"$T/bob.report" 2>&1
st=$?
check "bob's report (exit $st) shows his ESC]0;pwn BEL x program as '?]0;pwn?x', no ESC byte" \
	eq "$st:$(no_esc "$T/bob.report" && echo clean):$(lines_with "$T/bob.report" "?]0;pwn?x" | awk '{ print ($1 > 0) }')" "0:clean:1"
cli report --since "@$SINCE" >"$T/root.report" 2>&1
check "root's report has no ESC byte" no_esc "$T/root.report"

finish
