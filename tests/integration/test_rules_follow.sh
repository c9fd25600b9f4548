#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules_follow.sh - two agents on this machine (separate state and run
# folders, config files, control sockets; the BPF programs loaded twice)
# follow one rules folder by polling only (rules.inotify false, the
# default) with poll_interval 60 s: the folder is on a local file system
# (under /tmp), so each compares it every 0.25 s (a shared one's
# poll_interval is checked in tests/unit/test_rulesctl.c); a rule edited
# once renames the next exec on both within 3 s, far inside 60 s.  Each
# agent's convergence time (from the save to its own reload, read from its
# status every 50 ms) is measured and printed.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
start_watchdog 150

POLL=60
R=$T/shared-rules
mkdir -p "$R" "$T/b/run"
CONF2=$T/b/jobtrace.conf
DB2=$T/b/state/jobtrace.db
AGENT2_PID=

extra_cleanup() {
	[ -n "$AGENT2_PID" ] && kill -TERM "$AGENT2_PID" 2>/dev/null && sleep 1 &&
		kill -KILL "$AGENT2_PID" 2>/dev/null
}

# Save a rules file the way an editor does: write aside, then rename.
save_rule() {
	printf '%s\n' "$2" >"$R/.$1.tmp" && mv "$R/.$1.tmp" "$R/$1"
}

naming_rule() {
	cat <<LUA
jobtrace.rule("site-naming", function(p, d)
  if d.tool == "sleep" then d.tool = "$1"; d.category = "test" end
end)
jobtrace.selftest{ argv = { "sleep", "1" }, expect = { tool = "$1" } }
LUA
}

RULES="rules = { source = \"$R\"; poll_interval = $POLL; };"

# The second agent: the same settings under $T/b.
start_agent2() {
	sed -e "s|$T/state|$T/b/state|; s|$T/run|$T/b/run|" "$CONF" >"$CONF2"
	"$AGENT" --config "$CONF2" --foreground >>"$T/b/agent.log" 2>&1 &
	AGENT2_PID=$!
	for _ in $(seq 1 1000); do
		kill -0 "$AGENT2_PID" 2>/dev/null || break
		timeout 20 "$CLI" --config "$CONF2" status >/dev/null 2>&1 && return 0
		sleep 0.02
	done
	note "second agent did not answer; its log:" "$(tail -n 30 "$T/b/agent.log")"
	return 1
}

# Agent N's (1 or 2) status value of KEY.
status_n() {
	timeout 20 "$CLI" --config "$([ "$1" = 1 ] && echo "$CONF" || echo "$CONF2")" \
		status 2>/dev/null | sed -n "s/^$2: //p"
}

# Run one exec of sleep; each agent must name it $1 ("$2" says when).
next_exec_named() {
	local pid n
	sleep 0.1 &
	pid=$!
	wait $pid
	for n in 1 2; do
		check "agent $n $2 names the next exec $1" eq "$(tool_n $n $pid)" "$1"
	done
}

# tool_name of pid $2 in agent $1's store, waiting up to 5 s.
tool_n() {
	local db r=
	db=$([ "$1" = 1 ] && echo "$DB" || echo "$DB2")
	for _ in $(seq 1 50); do
		r=$(sqlite3 -batch -noheader -cmd '.timeout 5000' "$db" \
			"select tool_name from process where pid=$2 order by start_time desc limit 1;" 2>/dev/null)
		[ -n "$r" ] && break
		sleep 0.1
	done
	printf '%s' "$r"
}

save_rule 10-site.lua "$(naming_rule nap-v1)"
start_agent "" "$RULES" || finish
check "a second agent with its own state and run folders starts beside the first" start_agent2
check "two agents run at once (both alive)" kill -0 "$AGENT_PID" "$AGENT2_PID"
for n in 1 2; do
	check "agent $n follows the folder by polling only: rules_source '$(status_n $n rules_source)'" \
		eq "$(status_n $n rules_source)" "folder $R (polled)"
	check "agent $n compares the local folder every 0.25 s, not poll_interval: '$(status_n $n rules_poll_interval)'" \
		eq "$(status_n $n rules_poll_interval)" "0.25 s"
done
check "the two agents have two control sockets" test -S "$T/run/jobtraced.sock" -a -S "$T/b/run/jobtraced.sock"

next_exec_named nap-v1 "at start"
check "jobtrace rules test tries the followed folder (rules.source), not rules_dir" \
	eq "$(cli rules test -- sleep 1 | sed -n 's/^tool: *//p')" nap-v1

# ---- one edit, both agents -------------------------------------------------------
r1=$(status_n 1 rules_reloads | cut -d' ' -f1)
r2=$(status_n 2 rules_reloads | cut -d' ' -f1)
save_rule 10-site.lua "$(naming_rule nap-v2)"
t0=$(now)
c1= c2=
while [ -z "$c1" ] || [ -z "$c2" ]; do
	el=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
	[ -z "$c1" ] && [ "$(status_n 1 rules_reloads | cut -d' ' -f1)" != "$r1" ] && c1=$el
	[ -z "$c2" ] && [ "$(status_n 2 rules_reloads | cut -d' ' -f1)" != "$r2" ] && c2=$el
	awk -v e="$el" 'BEGIN { exit !(e > 10) }' && break
	sleep 0.05
done
note "convergence after the save: agent 1 ${c1:-never} s, agent 2 ${c2:-never} s (poll_interval $POLL s, inotify off: the default)"
for n in 1 2; do
	c=$([ $n = 1 ] && echo "$c1" || echo "$c2")
	check "agent $n loaded the edited rule within 3 s, not poll_interval ($c s)" between "$c" 0 3
done
next_exec_named nap-v2 "after the edit"

# ---- a broken edit keeps the rules on both ---------------------------------------
save_rule 10-site.lua 'jobtrace.rule("broken", function(p, d)'
for _ in $(seq 1 100); do	# 10 s at most
	[ -n "$(status_n 1 rules_source_error | grep '10-site.lua:[0-9]')" ] &&
		[ -n "$(status_n 2 rules_source_error | grep '10-site.lua:[0-9]')" ] && break
	sleep 0.1
done
for n in 1 2; do
	e=$(status_n $n rules_source_error)
	check "agent $n shows the broken file with its line: '$e'" \
		eq "$(printf '%s' "$e" | grep -c "10-site.lua:[0-9]")" 1
done
next_exec_named nap-v2 "keeps the last good rule and"

kill -TERM "$AGENT2_PID"
wait "$AGENT2_PID"
check "the second agent stops cleanly (status $?)" eq "$?" 0
AGENT2_PID=
finish
