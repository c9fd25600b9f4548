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
#      new store lacks; everything after the deletion is stored;
#   3. the spool on a full filesystem (a 1 MiB tmpfs) while the SQLite
#      store is locked: the records lost are counted apart from failed
#      syncs, exactly those of the workload that never arrived, and the
#      spool and its path are named in the log and in status.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/spawnstorm"
start_watchdog 300

SPOOLFS=
extra_cleanup() {
	[ -n "$SPOOLFS" ] && umount "$SPOOLFS" 2>/dev/null
}

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
# records of this test's workload only (its argv has MARK)
MARK=jt-faults-$$
mark_only_rules "$MARK"
# small segments: the spool releases the older ones once they are stored
start_agent "rules_dir = \"$T/rules\";" \
	"spool = { max_size_mib = 4; segment_size_kib = 64; };" || finish
P1=$(storm 600 "$MARK")
wait_delivered sqlite 30
# the spool drops the segments the store acknowledged at its next upkeep
# (a tick later): wait (30 s) until one went, so that the deleted store
# holds records the spool no longer has (lost) beside those it still has
# (stored again): a deletion before that upkeep lost none (CI at 5c14804).
# Both figures come from one status: read from two, a record spooled
# between them looked like a drop, and the store went before the upkeep
# (CI at 3207360 and a50f5a5)
spool_dropped() {
	local sr rs
	cli status >"$T/status.drop" 2>/dev/null
	status_get spool_records "$T/status.drop"
	sr=$REPLY
	status_get records_spooled "$T/status.drop"
	rs=$REPLY
	SPOOL_NOTE="spool_records $sr of records_spooled $rs"
	[ -n "$sr" ] && [ -n "$rs" ] && [ "$sr" -lt "$rs" ]
}
for _ in $(seq 1 300); do
	spool_dropped && break
	sleep 0.1
done
note "before the deletion: $SPOOL_NOTE"
if ! spool_dropped; then
	note "no segment dropped: $(ls -l "$T/state/spool" | tr '\n' '/')"
	note "$(grep -E '^(spool|sink\.sqlite)' "$T/status.drop" | tr '\n' ' ')"
fi
sqlite3 "$DB" ".backup '$T/before.db'"
rm -f "$DB"
P2=$(storm 200 "$MARK")
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

# ---- 3. the spool's filesystem full -------------------------------------------------------------------
SPOOLFS=$T/spoolfs
mkdir -p "$SPOOLFS"
if ! mount -t tmpfs -o size=1m,mode=0700 jt-faults "$SPOOLFS"; then
	check "mount a 1 MiB tmpfs for the spool" false
	SPOOLFS=
	finish
fi
rm -f "$DB" "$DB-wal" "$DB-shm"
# no samples: the records the full disk can take are then only the
# processes', which the test counts
SAMPLE_INTERVAL=3600 start_agent "rules_dir = \"$T/rules\";" \
	"spool = { dir = \"$SPOOLFS\"; max_size_mib = 16; segment_size_kib = 64; };" || finish
# From the lock until the spool writes again this script forks nothing
# that does not exec (no subshell, no $(function), no pipeline of
# builtins): such forks are recorded (see mark_only_rules) and would be
# lost beside the workload's.
# The store takes nothing while the lock is held: the spool fills its 1 MiB.
sqlite3 -cmd '.timeout 5000' "$DB" "BEGIN IMMEDIATE;" ".system sleep 10" "COMMIT;" >/dev/null 2>&1 &
LOCK_PID=$!
BG_PIDS="$BG_PIDS $LOCK_PID"
sleep 0.5
"$WL/spawnstorm" 3000 /bin/true "$MARK" >"$T/storm.out" 2>&1
cli status >"$T/status.full" 2>&1
wait "$LOCK_PID"
wait_delivered sqlite 60
# the spool tries its filesystem again only when given a record: one
# more process at a time (TRIES of them)
TRIES=0
for _ in $(seq 1 50); do
	/bin/true "$MARK" "$TRIES"
	TRIES=$((TRIES + 1))
	status_get spool_state
	[ "$REPLY" = ok ] && break
	sleep 0.2
done
wait_delivered sqlite 10
reaped "$LOCK_PID"
P3=$(kv "$(cat "$T/storm.out")" pid)
state=$(sed -n 's/^spool_state: //p' "$T/status.full")
stored=$(q "select count(*) from process where ppid = $P3")
self=$(q "select count(*) from process where pid = $P3 and ppid = $$")
tries=$(q "select count(*) from process where ppid = $$ and exe = '/bin/true'
	and json_extract(argv, '\$[1]') = '$MARK'")
# the storm is spawnstorm and its 3000 children, then the TRIES
missing=$((3001 + TRIES - stored - self - tries))
lost=$(status_of spool_records_lost)
full=$(status_of spool_records_lost_disk_full)
werr=$(status_of spool_write_errors)
note "spawnstorm 3000: $stored stored (spawnstorm itself: $self), $tries of the $TRIES after it; $missing missing; status: lost $lost, disk full $full, write errors $werr"
check "full disk: the records lost are counted as such ($full): exactly the $missing missing of the test's processes" \
	eq "$full" "$missing"
check "full disk: some were lost, and every lost record was lost to the full disk ($lost lost, $full of them disk full)" \
	eq "$([ "$missing" -gt 0 ] && echo yes)|$lost" "yes|$full"
check "full disk: status named the spool and the cause while it lasted ($state)" \
	eq "$state" "failing: $SPOOLFS: No space left on device (filesystem full)"
check "full disk: the spool is fine again ($(status_of spool_state))" \
	eq "$(status_of spool_state)" ok
check "full disk: agent.log names the spool's path and the full filesystem" \
	grep -q "spool $SPOOLFS: records are lost: No space left on device (the filesystem holding the spool is full" "$T/agent.log"
said=$(sed -n "s|.*spool $SPOOLFS: writing again; \([0-9]*\) records were lost|\1|p" "$T/agent.log" |
	awk '{ n += $1 } END { print n + 0 }')
check "full disk: agent.log says how many were lost each time writing resumed ($said in all)" \
	eq "$said" "$full"
stop_agent
# the stop record's drops count each lost record once: disk full apart
drops=$(q "select json_extract(json, '\$.drops.spool_write_errors') || '|' ||
	json_extract(json, '\$.drops.spool_disk_full') from record
	where type = 'host' and json_extract(json, '\$.phase') = 'stop'
	order by time desc limit 1;")
check "full disk: the host record's drops keep the full disk apart (write errors|disk full = $drops; status lost $lost, disk full $full)" \
	eq "$drops" "$((lost - full))|$full"

finish
