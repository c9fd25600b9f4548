#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules_deadline.sh - rules cannot stall the agent on a shared node
# (issue 10).  (a) An unprivileged user runs 1,500 execs of a 2 KB
# `sbatch --export=ALL,...` command line (the shape that cost 70-130 ms per
# exec in 35-env-values.lua) while root runs 200 short processes: `jobtrace
# status` answers within its timeout all along, all 200 are recorded, no
# event is dropped.  (b) An admin drops in a rule with a backtracking
# pattern: the agent keeps answering, the exec it hits is recorded fail
# closed ([REDACTED] after argv[0]), rules_last_error names the rule,
# `jobtrace rules test` with it returns within seconds, SIGTERM still works.
# (c) Rules that used to hang the agent for good (issue 22): a __gc that
# loops, a loop around pcall that catches the deadline; status answers
# within 1 s while they load and the pcall loop's exec fails closed.
#
# Needs root, kernel BTF, useradd and setpriv.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
for c in useradd userdel setpriv; do
	command -v $c >/dev/null || { echo "# skipped: no $c"; exit 77; }
done
start_watchdog 300

STORM_USER=jt-rd-storm
STORM_EXECS=1500
STORM_LOOPS=3
PROBES=200
R=$T/rules
B=$T/bin

# Remove the storm user (the test made it).
extra_cleanup() {
	userdel "$STORM_USER" 2>/dev/null
}

# Save a rules file the way an editor does: write aside, then rename.
save_rule() {
	printf '%s\n' "$2" >"$R/.$1.tmp" && mv "$R/.$1.tmp" "$R/$1"
}

# True while any of the pids is running.
any_alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# Wait up to 10 s until SQL $1 returns $2; prints the last value.
wait_for() {
	local v=""
	for _ in $(seq 1 50); do
		v=$(q "$1")
		[ "$v" = "$2" ] && break
		sleep 0.2
	done
	printf '%s' "$v"
}

userdel "$STORM_USER" 2>/dev/null	# a leftover of an aborted run
if ! useradd --system --no-create-home --shell /usr/sbin/nologin "$STORM_USER"; then
	echo "# error: useradd $STORM_USER failed"
	exit 99
fi
uid=$(id -u "$STORM_USER")
gid=$(id -g "$STORM_USER")

# programs by name: copies of true (the user must reach them)
chmod 711 "$T"
mkdir -p "$R" "$B"
for n in sbatch jtrdprobe jtrdvictim; do
	cp /bin/true "$B/$n"
done
chmod 755 "$B" "$B"/*
cp "$top_srcdir"/lua-rules/*.lua "$R/"
# ALL, then 2 KB of "mysql -pmysql -p": no NAME=VALUE structure at all
long="ALL,$(printf 'mysql -pmysql -p%.0s' $(seq 125))"

start_agent "rules_dir = \"$R\";" "rules = { deadline_ms = 5; };" || finish
note "rules: $(status_of rules_files) files, $(status_of rules_count) rules"

# ---- (a) a user's storm of 2 KB command lines ------------------------------------------
dropped0=$(status_of events_dropped)
cpu0=$(awk '{ print $14 + $15 }' /proc/$AGENT_PID/stat)
storm_pids=
for _ in $(seq 1 $STORM_LOOPS); do
	setpriv --reuid="$uid" --regid="$gid" --clear-groups -- /bin/bash -c \
		'for i in $(seq "$1"); do "$2" --export="$3" job.sh; done' storm \
		$((STORM_EXECS / STORM_LOOPS)) "$B/sbatch" "$long" &
	storm_pids="$storm_pids $!"
done
BG_PIDS="$BG_PIDS $storm_pids"
(
	for i in $(seq 1 $PROBES); do
		"$B/jtrdprobe" "probe-$i"
		sleep 0.01
	done
) &
probe_pid=$!
BG_PIDS="$BG_PIDS $probe_pid"

# ask for status all through the storm; the CLI's own timeout is 5 s
asked=0
answered=0
slowest=0
t0=$(now)
while any_alive $storm_pids $probe_pid; do
	a=$(now)
	if "$CLI" --config "$CONF" status >/dev/null 2>&1; then
		answered=$((answered + 1))
	fi
	asked=$((asked + 1))
	slowest=$(awk -v s="$slowest" -v a="$a" -v b="$(now)" \
		'BEGIN { d = (b - a) * 1000; print (d > s ? d : s) }')
	sleep 0.1
done
storm_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
for p in $storm_pids $probe_pid; do
	wait "$p"
	reaped "$p"
done
cpu1=$(awk '{ print $14 + $15 }' /proc/$AGENT_PID/stat)
note "storm: $STORM_EXECS execs by $STORM_USER in $storm_s s, agent CPU $(((cpu1 - cpu0) * 10)) ms"
check "'jobtrace status' answered all $asked requests during the storm ($answered; slowest ${slowest%.*} ms)" \
	eq "$answered:$(awk -v s="$slowest" 'BEGIN { print (s < 5000) }')" "$asked:1"
check "at least 10 status requests were made during the storm ($asked)" \
	between "$asked" 10 100000
got=$(wait_for "select count(*) from process where tool_name = 'jtrdprobe';" $PROBES)
check "all $PROBES of root's processes are recorded ($got)" eq "$got" $PROBES
got=$(wait_for "select count(*) from process where uid = $uid and tool_name = 'sbatch';" $STORM_EXECS)
check "all $STORM_EXECS of the user's execs are recorded ($got)" eq "$got" $STORM_EXECS
dropped1=$(status_of events_dropped)
check "no event was dropped during the storm ($dropped0 -> $dropped1)" eq "$dropped1" "$dropped0"
# The deadline is the agent's CPU time (wall clock only past 4 deadlines):
# a 0.1 ms classification that the scheduler preempts for 5 ms is not
# failed.  With a wall-clock deadline 1-1.3 % were, on a loaded 2-core VM;
# now 0 of 1500 there; allow 0.5 %.  The quadratic gsub this replaced
# failed every one of them.
# The storm's own records tell (the status counter counts every process on
# the node): a fail-closed one has the default tool and no category.
cat_ok=$(q "select count(*) from process where uid = $uid and tool_name = 'sbatch' and tool_category = 'scheduler-helper';")
closed=$(q "select count(*) from process where uid = $uid and tool_name = 'sbatch' and coalesce(tool_category, '') = '' and argv like '%[REDACTED]%';")
check "the storm's classifications finish within the 5 ms deadline: $cat_ok of $STORM_EXECS catalogued, $closed failed closed (<= 0.5 %)" \
	eq "$(awk -v c="$cat_ok" -v f="$closed" -v n=$STORM_EXECS \
		'BEGIN { print (f <= n * 0.005 && c + f == n) }')" 1

# ---- (b) an admin's rule with a backtracking pattern -------------------------------------
reloads0=$(status_of rules_reloads | cut -d' ' -f1)
save_rule 33-site-slow.lua 'jobtrace.rule("site-slow", function(p, d)
  for _, a in ipairs(p.argv) do
    if #a > 1000 then string.find(a, ".-.-.-.-.-.-.-.-x") end
  end
end)'
for _ in $(seq 1 30); do
	[ "$(status_of rules_reloads | cut -d' ' -f1)" != "$reloads0" ] && break
	sleep 0.2
done
check "the slow rule is loaded ($(status_of rules_count) rules, reloads $(status_of rules_reloads))" \
	eq "$(status_of rules_reloads | cut -d' ' -f1)" $((reloads0 + 1))
closed0=$(status_of rules_failed_closed)
slowarg=$(printf 'a%.0s' $(seq 1500))	# no 'x': .- x8 tries every split
"$B/jtrdvictim" --token s3cr3t "$slowarg" &
victim=$!
wait $victim
a=$(now)
out=$("$CLI" --config "$CONF" status 2>&1)
st=$?
ms=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "the agent answers status right after the slow exec ($st, $ms ms)" eq "$st" 0
argv=$(wait_for "select argv from process where pid = $victim;" \
	"[\"$B/jtrdvictim\",\"[REDACTED]\",\"[REDACTED]\",\"[REDACTED]\"]")
check "the exec it hit is recorded fail closed (${argv:0:120})" \
	eq "$argv" "[\"$B/jtrdvictim\",\"[REDACTED]\",\"[REDACTED]\",\"[REDACTED]\"]"
check "... with the default tool name" eq "$(row $victim tool_name)" jtrdvictim
err=$(status_of rules_last_error)
check "rules_last_error names the rule and the deadline ($err)" \
	eq "$(printf '%s' "$err" | grep -c "33-site-slow.lua:3: deadline of 5 ms per exec exceeded (rules.deadline_ms) (rule 'site-slow')")" 1
closed1=$(status_of rules_failed_closed)
check "rules_failed_closed counts it ($closed0 -> $closed1)" between "$((closed1 - closed0))" 1 10

a=$(now)
out=$(timeout 20 "$CLI" --config "$CONF" rules test --rules "$R" -- jtrdvictim --token s3cr3t "$slowarg" 2>&1)
st=$?
ms=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "'jobtrace rules test' with the slow rule returns within 3 s, exit 1 ($ms ms, $st)" \
	eq "$st:$(awk -v m="$ms" 'BEGIN { print (m < 3000) }')" "1:1"
check "... and shows the fail-closed decision and the rule" \
	eq "$(printf '%s\n' "$out" | grep -c -e '^argv: *jtrdvictim \[REDACTED\] \[REDACTED\] \[REDACTED\]' \
		-e "^error: .*rule 'site-slow'")" 2

# ---- (c) rules that used to hang the agent for good (issue 22) ------------------------
# Ask for status every 0.1 s for $1 s; sets SLOWEST (ms) and UNANSWERED.
poll_status() {
	local a st
	SLOWEST=0
	UNANSWERED=0
	for _ in $(seq 1 $(($1 * 10))); do
		a=$(now)
		timeout 5 "$CLI" --config "$CONF" status >/dev/null 2>&1 ||
			UNANSWERED=$((UNANSWERED + 1))
		SLOWEST=$(awk -v s="$SLOWEST" -v a="$a" -v b="$(now)" \
			'BEGIN { d = (b - a) * 1000; printf "%d", (d > s ? d : s) }')
		sleep 0.1
	done
}
# A finalizer that never returns: Lua runs __gc with hooks off, and the
# collection after a load ran with the deadline off.
reloads0=$(status_of rules_reloads)
save_rule 34-site-gc.lua 'setmetatable({}, { __gc = function() while true do end end })
jobtrace.rule("site-gc", function(p, d) end)'
poll_status 3
check "a rule file with a looping __gc: status answers within 1 s while it loads ($UNANSWERED unanswered, slowest $SLOWEST ms)" \
	eq "$UNANSWERED:$(awk -v m="$SLOWEST" 'BEGIN { print (m < 1000) }')" "0:1"
# (the log, not rules_last_error: a later rule error on any exec of the
# node replaces that)
f0=$(printf '%s' "$reloads0" | sed -n 's/.* \([0-9]*\) failed$/\1/p')
f1=$(status_of rules_reloads | sed -n 's/.* \([0-9]*\) failed$/\1/p')
check "... the file is refused with its FILE:LINE, one failed reload ($f0 -> $f1)" \
	eq "$(grep -c '34-site-gc.lua:1: setmetatable: __gc is not allowed.*previous rules stay' "$T/agent.log")|$((f1 - f0))" "1|1"
rm -f "$R/34-site-gc.lua"
# A rule that catches the deadline's error with pcall and loops on
save_rule 34-site-pcall.lua 'jobtrace.rule("site-pcall", function(p, d)
  if p.argv[2] == "hang-me" then
    while true do pcall(function() while true do end end) end
  end
end)'
poll_status 2
check "a rule looping around pcall: status answers within 1 s while it loads ($UNANSWERED unanswered, slowest $SLOWEST ms)" \
	eq "$UNANSWERED:$(awk -v m="$SLOWEST" 'BEGIN { print (m < 1000) }')" "0:1"
"$B/jtrdvictim" hang-me s3cr3t &
victim=$!
wait $victim
a=$(now)
"$CLI" --config "$CONF" status >/dev/null 2>&1
st=$?
ms=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "the agent answers status right after the exec the pcall loop hit ($st, $ms ms)" \
	eq "$st:$(awk -v m="$ms" 'BEGIN { print (m < 1000) }')" "0:1"
argv=$(wait_for "select argv from process where pid = $victim;" \
	"[\"$B/jtrdvictim\",\"[REDACTED]\",\"[REDACTED]\"]")
check "the exec it hit is recorded fail closed (${argv:0:120})" \
	eq "$argv" "[\"$B/jtrdvictim\",\"[REDACTED]\",\"[REDACTED]\"]"
a=$(now)
out=$(timeout 20 "$CLI" --config "$CONF" rules test --rules "$R" -- jtrdvictim hang-me s3cr3t 2>&1)
st=$?
ms=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "'jobtrace rules test' with the pcall loop returns within 3 s, exit 1 ($ms ms, $st)" \
	eq "$st:$(awk -v m="$ms" 'BEGIN { print (m < 3000) }')" "1:1"
rm -f "$R/34-site-pcall.lua"

# SIGTERM while slow execs keep coming
(
	for _ in $(seq 1 200); do
		"$B/jtrdvictim" "$slowarg"
	done
) &
victims=$!
BG_PIDS="$BG_PIDS $victims"
sleep 0.5
a=$(now)
stop_agent
st=$?
ms=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "agent exits 0 on SIGTERM while the slow rule runs ($st, $ms ms)" eq "$st" 0
wait $victims
reaped $victims
finish
