#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules_start.sh - a rule file that does not load never switches
# redaction off.  At start, a syntax error or a failing self-test in a site
# file makes the built-in default rules stand in, with every argument after
# the program's name recorded as [REDACTED] until the folder loads (the
# file's fix is loaded at once); at reload, the same two errors keep the
# last good rules, the site's redaction with them.  Canaries in the
# command lines must reach no file the agent wrote, while the records are
# there.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
start_watchdog 150

R=$T/rules
BIN=$T/bin
mkdir -p "$R" "$BIN"
cp "$top_srcdir"/lua-rules/*.lua "$R/"
# acmetool is a copy of true: the command lines carry the canaries
cp /bin/true "$BIN/acmetool"

# Save a rules file the way an editor does: write aside, then rename.
save_rule() {
	printf '%s\n' "$2" >"$R/.$1.tmp" && mv "$R/.$1.tmp" "$R/$1"
}

# The site's rule: its own secret option, which no default rule knows.
SITE_GOOD='jobtrace.rule("site-acme", function(p, d)
  for i, a in ipairs(d.argv) do
    if a == "--acme-key" and d.argv[i + 1] then d.argv[i + 1] = "[REDACTED]" end
  end
end)
jobtrace.selftest{ argv = { "acmetool", "--acme-key", "k", "x" },
  expect = { argv = { "acmetool", "--acme-key", "[REDACTED]", "x" } } }'
# the typo of the issue: an unclosed call on the last line (line 8; Lua
# names the line of the end of the file, 9)
SITE_SYNTAX="$SITE_GOOD
lib.add(\"x\""
# a self-test that fails: the site expects a tool name the rules never give
SITE_SELFTEST="$SITE_GOOD
jobtrace.selftest{ argv = { \"acmetool\" }, expect = { tool = \"acme-renamed\" } }"

# Save rules file $1 with text $2 and wait until the agent tried to load it
# (its count of reloads, ok or failed, changes).
save_and_wait() {
	local before
	status_get rules_reloads
	before=$REPLY
	save_rule "$1" "$2"
	for _ in $(seq 1 100); do
		status_get rules_reloads
		[ "$REPLY" != "$before" ] && return 0
		sleep 0.1
	done
	note "rules_reloads stayed '$before' 10 s after $1 was saved"
	return 1
}

# Run acmetool with canary arguments N (in the background, so its pid is
# known); sets PID.
run_canaries() {
	"$BIN/acmetool" --password=hunter2canary$1 "ghp_canary$1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
		--acme-key acmekeycanary$1 plainwordcanary$1 &
	PID=$!
	wait $PID
}

# Break the site file the way $1 says (syntax, selftest) with command $2
# (save_rule, save_and_wait); sets WHERE, what the error must say.
break_site() {
	case $1 in
	syntax) $2 25-site.lua "$SITE_SYNTAX"; WHERE="25-site.lua:9:" ;;
	selftest) $2 25-site.lua "$SITE_SELFTEST"; WHERE="25-site.lua:8: self-test failed" ;;
	esac
}

# Run the canaries $1 and check that the site's redaction and the default
# one are in force (check messages start with $2).
check_redacted() {
	run_canaries "$1"
	a=$(row_wait $PID argv)
	check "$2: arguments are recorded, the site's secret redacted ($a)" \
		eq "$(printf '%s' "$a" | grep -c -F "\"--acme-key\",\"[REDACTED]\",\"plainwordcanary$1\"")" 1
	check "$2: the default redaction too" \
		eq "$(printf '%s' "$a" | grep -c -F '"--password=[REDACTED]"')" 1
}

# ---- at start: a syntax error, then a failing self-test ------------------------
for kind in syntax selftest; do
	break_site $kind save_rule
	log0=0
	[ -f "$T/agent.log" ] && log0=$(wc -l <"$T/agent.log")
	start_agent "rules_dir = \"$R\";" || finish
	status_get rules_state
	check "$kind at start: the agent runs on the built-in rules ($REPLY)" \
		eq "${REPLY%%:*}" "built-in"
	# rules_load_error, not rules_last_error: a rule of the built-in set
	# stopped at its deadline on a loaded node is a later error
	status_get rules_load_error
	check "$kind at start: status names the file and line ($REPLY)" \
		eq "$(printf '%s' "$REPLY" | grep -c -F "$WHERE")" 1
	check "$kind at start: the log names the file and line and says arguments are withheld" \
		eq "$(tail -n +$((log0 + 1)) "$T/agent.log" | grep -c -F "$WHERE")|$(tail -n +$((log0 + 1)) "$T/agent.log" |
			grep -c 'built-in default rules stand in')" "1|1"
	run_canaries "S$kind"
	a=$(row_wait $PID argv)
	check "$kind at start: the process is recorded with argv[0] only ($a)" \
		eq "$a" "[\"$BIN/acmetool\",\"[REDACTED]\",\"[REDACTED]\",\"[REDACTED]\",\"[REDACTED]\",\"[REDACTED]\"]"
	check "$kind at start: its tool is named by the built-in rules" \
		eq "$(row $PID tool_name)" acmetool
	status_get rules_args_withheld
	check "$kind at start: status counts the withheld command lines ($REPLY)" \
		between "$REPLY" 1 1000000
	# the deny list stands in too: the CLI (asked above) is not recorded
	check "$kind at start: the built-in deny list keeps the CLI out of the store" \
		eq "$(q "select count(*) from process where comm = 'jobtrace';")" 0

	# the fix, saved: the folder loads and arguments are recorded again
	save_and_wait 25-site.lua "$SITE_GOOD"
	status_get rules_state
	check "$kind at start: a saved fix ends the stand-in ($REPLY)" eq "$REPLY" ok
	check_redacted "F$kind" "$kind at start, fixed"
	stop_agent
	check "$kind at start: the agent exits 0 on SIGTERM" eq "$?" 0
done

# ---- at reload: the last good rules stay, the site's redaction with them -------
save_rule 25-site.lua "$SITE_GOOD"
start_agent "rules_dir = \"$R\";" || finish
status_get rules_state
check "good rules at start: rules_state ok ($REPLY)" eq "$REPLY" ok
for kind in syntax selftest; do
	break_site $kind save_and_wait
	status_get rules_load_error
	check "$kind at reload: status names the file and line ($REPLY)" \
		eq "$(printf '%s' "$REPLY" | grep -c -F "$WHERE")" 1
	status_get rules_state
	check "$kind at reload: the last good rules stay ($REPLY)" eq "$REPLY" ok
	check_redacted "R$kind" "$kind at reload, the last good rules"
done
stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0

# ---- no byte of a secret anywhere the agent wrote -------------------------------
files=$(find "$T/state" "$T/run" "$T/agent.log" -type f 2>/dev/null | sort)
check "the store and a spool segment were searched" \
	eq "$(printf '%s\n' "$files" | grep -c '/state/jobtrace.db$')|$(printf '%s\n' "$files" |
		grep -c '/spool/.*\.seg$')" "1|1"
check "the store holds the recorded command lines in clear text" \
	between "$(grep -a -c -F 'plainwordcanaryFsyntax' "$DB" "$T"/state/jobtrace.db-wal 2>/dev/null |
		awk -F: '{ s += $2 } END { print s + 0 }')" 1 100
for c in hunter2canary ghp_canaryS acmekeycanary plainwordcanaryS; do
	hits=$(printf '%s\n' "$files" | while read -r f; do grep -a -l -F "$c" "$f"; done)
	check "no file the agent wrote holds $c (${hits:-none})" eq "$hits" ""
done
finish
