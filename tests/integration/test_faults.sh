#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_faults.sh - faults a hostile review found, each against a reference
# the test makes itself:
#   1. a fresh `make install DESTDIR=...`: the installed systemd unit's
#      command line, with no configuration file, passes --check-config;
#      a missing file named with --config is still refused, by name;
#   2. the SQLite store deleted under a running agent: a new one is made,
#      what the spool still has is stored again, and the records reported
#      lost are exactly those of a copy taken before the deletion that the
#      new store lacks; everything after the deletion is stored.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
for f in "$AGENT" "$CLI" "$WL/spawnstorm"; do
	[ -x "$f" ] || { echo "# error: $f is not built"; exit 99; }
done
start_watchdog 300

# ---- 1. the installed unit on a fresh install ----------------------------------------------------
INST=$T/inst
if make -C "$top_builddir" install DESTDIR="$INST" >"$T/install.log" 2>&1; then
	unit=$(find "$INST" -name jobtraced.service | head -n 1)
	cmd=$(sed -n 's/^ExecStart=//p' "$unit")
	bin=${cmd%% *}
	args=${cmd#"$bin"}
	defconf=$("$INST$bin" --help | sed -n 's/.*configuration (default \(.*\))$/\1/p')
	note "unit $unit: ExecStart=$cmd; default configuration $defconf"
	if [ -e "$defconf" ]; then
		note "skipped: $defconf exists on this host, not a fresh install"
	else
		# shellcheck disable=SC2086 # the unit's arguments, split as systemd does
		out=$("$INST$bin" $args --check-config 2>&1)
		st=$?
		check "fresh install: the unit's command line ($cmd) with no $defconf passes --check-config (status $st)" \
			eq "$st" 0
		note "$(printf '%s\n' "$out" | head -n 3)"
		check "fresh install: the sample configuration is installed next to where the file would be" \
			test -f "$INST$defconf.sample"
	fi
	out=$("$INST$bin" --foreground --config "$T/none.conf" --check-config 2>&1)
	st=$?
	check "a missing file named with --config is refused with status 2, by name ($out)" \
		eq "$st|$(printf '%s' "$out" | grep -c "$T/none.conf")" "2|1"
else
	check "make install DESTDIR=$INST" false
	note "$(tail -n 20 "$T/install.log")"
fi

# ---- 2. the SQLite store deleted under the agent ----------------------------------------------------
mkdir -p "$T/rules"
# records of the workload only, so that the test's queries add none
cat >"$T/rules/10-test.lua" <<'LUA'
local keep = { ["true"] = true, spawnstorm = true }
jobtrace.rule("faults-test-workloads-only", function(p, d)
  if not keep[jobtrace.basename(p.exe)] then d.include = false; d.children = true end
end)
LUA
# small segments: the spool releases the older ones once they are stored
start_agent "rules_dir = \"$T/rules\";" \
	"spool = { max_size_mib = 4; segment_size_kib = 64; };" || finish
P1=$(storm 600)
wait_delivered sqlite 30
sqlite3 "$DB" ".backup '$T/before.db'"
rm -f "$DB"
P2=$(storm 200)
for _ in $(seq 1 50); do
	[ "$(status_of sink.sqlite.store_recreated)" = 1 ] && break
	sleep 0.2
done
wait_delivered sqlite 30
check "deleted store: status counts one new store ($(status_of sink.sqlite.store_recreated))" \
	eq "$(status_of sink.sqlite.store_recreated)" 1
check "deleted store: a new file is at $DB" test -f "$DB"
sqlite_ids >"$T/after.ids"
DB=$T/before.db sqlite_ids >"$T/before.ids"
gone=$(comm -23 "$T/before.ids" "$T/after.ids" | wc -l)
kept=$(comm -12 "$T/before.ids" "$T/after.ids" | wc -l)
lost=$(status_of sink.sqlite.store_records_lost)
check "deleted store: the records reported lost ($lost) are those of the copy the new store lacks ($gone; $kept stored again)" \
	eq "$lost|$([ "$gone" -gt 0 ] && [ "$kept" -gt 0 ] && echo both)" "$gone|both"
check "deleted store: all 200 processes started after the deletion are stored ($(q "select count(*) from process where ppid = $P2"))" \
	eq "$(q "select count(*) from process where ppid = $P2")" 200
check "deleted store: agent.log names the file and the loss" \
	grep -q "$DB was deleted or replaced under the agent: it held [0-9]* records; .* $lost are lost" "$T/agent.log"
note "$(grep "deleted or replaced" "$T/agent.log" | head -n 2)"
stop_agent

finish
