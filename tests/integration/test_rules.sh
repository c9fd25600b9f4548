#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules.sh - Lua rules edited on a live agent: a saved change is used
# for the next process without a restart, a broken file is reported with
# FILE:LINE while the previous rules stay, and excluded processes produce no
# records while their events stay in the kernel (counted).
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/netio" "$WL/forktree"
start_watchdog 120

R=$T/rules
mkdir -p "$R"

# Save a rules file the way an editor does: write aside, then rename.
save_rule() {
	printf '%s\n' "$2" >"$R/.$1.tmp" && mv "$R/.$1.tmp" "$R/$1"
}

# tool_name of the newest process row with this pid, waiting for the flush.
tool_of() {
	row_wait "$1" tool_name
}

naming_rule() {
	cat <<LUA
jobtrace.rule("site-naming", function(p, d)
  if d.tool == "sleep" then d.tool = "$1"; d.category = "test" end
end)
jobtrace.rule("site-exclude", function(p, d)
  if d.tool == "netio" then d.include = false end
  if d.tool == "forktree" then d.include = false; d.children = false end
end)
jobtrace.selftest{ argv = { "sleep", "1" }, expect = { tool = "$1" } }
LUA
}

save_rule 10-site.lua "$(naming_rule nap-v1)"
start_agent "rules_dir = \"$R\";" || finish

sleep 0.1 &
pid=$!
wait $pid
check "rules at start: 'sleep' is named by the site rule" eq "$(tool_of $pid)" nap-v1

# ---- a live edit -------------------------------------------------------------------
save_rule 10-site.lua "$(naming_rule nap-v2)"
sleep 1.0	# the promise: a process started a second after the save
sleep 0.1 &
pid=$!
wait $pid
check "a process started 1 s after the save is named by the new rule, no restart" \
	eq "$(tool_of $pid)" nap-v2
check "the agent reloaded (rules_reloads '$(status_of rules_reloads)')" \
	eq "$(status_of rules_reloads | cut -d' ' -f1)" 2

# ---- a broken file -----------------------------------------------------------------
save_rule 20-broken.lua 'jobtrace.rule("broken", function(p, d)
  d.tool = "x"
end'
sleep 1.0
err=$(status_of rules_last_error)
check "a broken file is reported in 'jobtrace status' with FILE:LINE ($err)" \
	eq "$(printf '%s' "$err" | grep -c '20-broken.lua:[0-9]*:')" 1
sleep 0.1 &
pid=$!
wait $pid
check "the previous rules stay in force after the broken save" \
	eq "$(tool_of $pid)" nap-v2
out=$(cli reload 2>&1)
st=$?
check "'jobtrace reload' with the broken file exits 1 and names it ($st)" \
	eq "$st:$(printf '%s' "$out" | grep -c '20-broken.lua:[0-9]*:')" "1:1"

save_rule 20-broken.lua 'jobtrace.rule("spin", function(p, d)
  while true do end
end)'
sleep 1.0
err=$(status_of rules_last_error)
check "an endless loop is stopped by the instruction budget and reported ($err)" \
	eq "$(printf '%s' "$err" | grep -c 'instruction budget')" 1
rm -f "$R/20-broken.lua"
out=$(cli reload 2>&1)
check "'jobtrace reload' after the fix succeeds ($out)" \
	eq "$(printf '%s' "$out" | grep -c '^rules: 1 files, 2 rules, 1 self-tests passed')" 1

# ---- exclusion reaches the kernel -----------------------------------------------------
before_excl=$(status_of excluded_events_in_kernel)
# (300 ms first: exclusion reaches the kernel within a tick of the exec)
out=$("$WL/netio" $((8 * MIB)) 300)
net_pid=$(kv "$out" pid)
sleep 0.5
after_excl=$(status_of excluded_events_in_kernel)
d_excl=$((after_excl - before_excl))
r=$(q "select count(*) from process where pid = $net_pid;")
check "an excluded process (netio, pid $net_pid) has no record" eq "$r" 0
check "its 8 MiB of socket I/O stayed in the kernel: $d_excl excluded events counted (>= 100)" \
	between "$d_excl" 100 100000000

# forktree 3 2: 14 forks and 15 exits that would reach the agent if followed
before_excl=$(status_of excluded_events_in_kernel)
"$WL/forktree" 3 2 300 >"$T/forktree.out"
sleep 0.5
after_excl=$(status_of excluded_events_in_kernel)
d_excl=$((after_excl - before_excl))
tree_pids=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$T/forktree.out" | paste -sd, -)
check "forktree printed its 15 pids" eq "$(printf '%s' "$tree_pids" | tr ',' '\n' | grep -c .)" 15
r=$(q "select count(*) from process where pid in (${tree_pids:-0});")
check "an excluded tree (forktree and its 14 descendants) has no record" eq "$r" 0
check "the tree's 14 forks and 15 exits stayed in the kernel: $d_excl excluded events counted (>= 29)" \
	between "$d_excl" 29 100000000

stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0
finish
