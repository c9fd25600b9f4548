#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_store_limits.sh - the SQLite store kept within store.retention
# (the default, 30 days) and store.max_size_mib (2, then 1 by a reload)
# while records keep arriving:
#   1. a store seeded (with the store's own writer, tests/integration/
#      store-put) with 2000 records of 40 days ago and 300 of 29 days ago:
#      the first pass deletes exactly the 2000, none of the 300;
#   2. three storms of 1800 processes push the store over 2 MiB, while
#      1000 more records of 40 days ago are put in beside the agent: the
#      records deleted for retention are exactly the 3000 old ones; those
#      deleted for size are exactly what the store lacks of what it was
#      given (seeded + delivered - expired - left), oldest first (the 300,
#      then the first storm's, then the second's; the last storm is whole); the pages
#      in use stay under the cap (status, sampled every 0.2 s, at most one
#      batch over it, between a commit and the pass it triggers); a host
#      record reports the deletions; no event is dropped;
#   3. `jobtrace reload` with max_size_mib = 1: the store shrinks under it
#      while the agent runs.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
PUT=$top_builddir/tests/integration/store-put
need_built "$AGENT" "$CLI" "$WL/spawnstorm" "$PUT"
start_watchdog 120

CAP=2
# about 470 bytes of pages a process record (store schema 7, columns
# only): two storms of 1800 fit under the cap, three not
STORM=1800
DAY=86400

# N records of type process, sample and job start in turn, ids PREFIX-i,
# all at epoch second T (the time retention and the size cap go by).
seed_records() {
	local prefix=$1 n=$2 t=$3 when
	when=$(date -u -d "@$t" +%Y-%m-%dT%H:%M:%S.000000Z)
	awk -v p="$prefix" -v n="$n" -v w="$when" 'BEGIN {
		h = "\"schema\":1,\"host\":\"seed\",\"id\":\""
		for (i = 0; i < n; i++) {
			if (i % 3 == 0)
				printf "{\"type\":\"process\",%s%s-%d\",\"pid\":%d,\"ppid\":1,\"start_time\":\"%s\",\"end_time\":\"%s\",\"exe\":\"/bin/seed\",\"argv\":[\"seed\",\"%d\"]}\n", h, p, i, i + 2, w, w, i
			else if (i % 3 == 1)
				printf "{\"type\":\"sample\",%s%s-%d\",\"pid\":%d,\"time\":\"%s\"}\n", h, p, i, i + 2, w
			else
				printf "{\"type\":\"job\",%s%s-%d\",\"phase\":\"start\",\"job\":{\"scheduler\":\"slurm\",\"id\":\"seed%d\"},\"start_time\":\"%s\"}\n", h, p, i, i, w
		}
	}'
}

# Records of the store (both tables) whose id starts with $1.
count_ids() {
	q "select (select count(*) from process_rec where id like '$1%')
		+ (select count(*) from record where id like '$1%');"
}

# Pages in use, as sqlite3 counts them.
used_bytes() {
	q "select (page_count - freelist_count) * page_size
		from pragma_page_count, pragma_freelist_count, pragma_page_size;"
}

# One query's figures of the store, one "name=value" a line: what is
# left, of the seeds, of each storm (ppid $1 $2 $3), the pages in use,
# the oldest time and the newest host record.
snapshot_sql() {
	cat <<SQL
select 'left=' || ((select count(*) from process_rec) + (select count(*) from record));
select 'seed_keep=' || ((select count(*) from process_rec where id like 'seed-keep-%')
	+ (select count(*) from record where id like 'seed-keep-%'));
select 'storm' || p || '=' || (select count(*) from process_rec
	where ppid = p)
	from (select $1 p union all select $2 union all select $3);
select 'used=' || ((page_count - freelist_count) * page_size)
	from pragma_page_count, pragma_freelist_count, pragma_page_size;
select 'oldest=' || strftime('%Y-%m-%dT%H:%M:%SZ', min(t), 'unixepoch') from
	(select min(since_time) t from process_rec union all select min(time) from record);
select 'last_host=' || json_extract(json, '\$.phase') || '|' ||
	json_extract(json, '\$.drops.store_size_cap')
	from record where type = 'host' order by time desc limit 1;
SQL
}

# Wait (up to $1 s) until status and store stay the same for 3 s with
# nothing left to deliver and the last deletions in a host record.  The
# test's own subshells (forks that never exec) are recorded, so this loop
# forks none: status and the store's figures of that moment are left in
# $T/snap.  Storm parents are $2 $3 $4.
settle() {
	local i
	snapshot_sql "$2" "$3" "$4" >"$T/snap.sql"
	: >"$T/snap.prev"
	for ((i = 0; i < $1; i += 3)); do
		cli status >"$T/snap" 2>&1
		sqlite3 -batch -noheader -cmd '.timeout 5000' "$DB" <"$T/snap.sql" >>"$T/snap" 2>&1
		# what may not change (not the uptime, nor "0.2 s ago")
		grep -E '^(sink\.sqlite\.(lag_records|delivered|store_records_|store_bytes)|events_dropped|[a-z0-9_]+=)' \
			"$T/snap" >"$T/snap.key"
		if cmp -s "$T/snap.key" "$T/snap.prev" &&
			awk -F': ' '$1 == "sink.sqlite.lag_records" { lag = $2 }
				$1 == "sink.sqlite.store_records_pruned_for_size" { n = $2 }
				/^last_host=/ { h = substr($0, 11) }
				END { exit !(lag == "0" && h == "store_size_cap|" n) }' "$T/snap"; then
			return 0
		fi
		mv "$T/snap.key" "$T/snap.prev"
		sleep 3
	done
	note "the store did not settle within $1 s:" "$(cat "$T/snap")"
	return 1
}

# The value of KEY in $T/snap (status "KEY: V" or figure "KEY=V").
st() {
	sed -n -e "s/^$1: //p" -e "s/^$1=//p" "$T/snap"
}

# ---- 1. retention at the first pass --------------------------------------------------------
mkdir -p "$T/state"
chmod 0700 "$T/state"
# records of this test's workload only (its argv has MARK)
MARK=jt-store-limits-$$
mark_only_rules "$MARK"
NOW=$(date +%s)
{
	seed_records seed-old 2000 $((NOW - 40 * DAY))
	seed_records seed-keep 300 $((NOW - 29 * DAY))
} | "$PUT" "$DB" >"$T/put1.out" 2>&1
check "seeded the store with 2300 records ($(cat "$T/put1.out"))" \
	eq "$(cat "$T/put1.out")" "stored=2300"
check "the seeded store is under the cap, so the first pass only expires ($(used_bytes) bytes)" \
	test "$(used_bytes)" -lt $((CAP * MIB * 9 / 10))

# files off: the cap's arithmetic below is calibrated on the size of a
# storm's records without a files array
start_agent "rules_dir = \"$T/rules\";" "files = { enabled = false; };" \
	"max_size_mib = $CAP;" || finish
for _ in $(seq 1 25); do
	[ "$(status_of sink.sqlite.store_records_expired)" = 2000 ] && break
	sleep 0.2
done
check "retention: the first pass deleted the 2000 records of 40 days ago ($(status_of sink.sqlite.store_records_expired))" \
	eq "$(status_of sink.sqlite.store_records_expired)|$(count_ids seed-old)" "2000|0"
check "retention: none of the 300 of 29 days ago ($(count_ids seed-keep) left), and nothing for size ($(status_of sink.sqlite.store_records_pruned_for_size))" \
	eq "$(count_ids seed-keep)|$(status_of sink.sqlite.store_records_pruned_for_size)" "300|0"
oldest=$(status_of sink.sqlite.store_oldest_record)
check "status: the oldest record is of 29 days ago ($oldest)" \
	eq "${oldest%% *}" "$(date -u -d "@$((NOW - 29 * DAY))" +%Y-%m-%dT%H:%M:%SZ)"
check "status: the store's size and cap ($(status_of sink.sqlite.store_bytes))" \
	eq "$(status_of sink.sqlite.store_bytes | sed 's/^[0-9]* //')" "of $CAP MiB"

# ---- 2. both limits crossed while records arrive -------------------------------------------
(
	while :; do
		status_of sink.sqlite.store_bytes | cut -d' ' -f1
		sleep 0.2
	done
) >"$T/sizes" 2>/dev/null &
MON_PID=$!
BG_PIDS="$BG_PIDS $MON_PID"
P1=$(storm $STORM "$MARK")
# old records arrive beside the agent, while the next storm runs
seed_records seed-late 1000 $((NOW - 40 * DAY)) >"$T/late.ndjson"
"$PUT" "$DB" <"$T/late.ndjson" >"$T/put2.out" 2>&1 &
PUT_PID=$!
BG_PIDS="$BG_PIDS $PUT_PID"
P2=$(storm $STORM "$MARK")
wait "$PUT_PID"
reaped "$PUT_PID"
P3=$(storm $STORM "$MARK")
kill "$MON_PID" 2>/dev/null
wait "$MON_PID" 2>/dev/null
reaped "$MON_PID"
settle 45 "$P1" "$P2" "$P3"
check "1000 more old records were put in beside the running agent ($(cat "$T/put2.out"))" \
	eq "$(cat "$T/put2.out")" "stored=1000"

delivered=$(st sink.sqlite.delivered)
expired=$(st sink.sqlite.store_records_expired)
pruned=$(st sink.sqlite.store_records_pruned_for_size)
left=$(st left)
c1=$(st "storm$P1")
c2=$(st "storm$P2")
c3=$(st "storm$P3")
note "delivered $delivered, expired $expired, pruned for size $pruned, left $left;" \
	"storms' processes left: $c1, $c2, $c3 of $STORM each"
check "retention: exactly the 3000 old records were deleted for it ($expired), none is left ($(count_ids seed-old) $(count_ids seed-late))" \
	eq "$expired|$(count_ids seed-old)$(count_ids seed-late)" "3000|00"
check "size cap: it deleted records ($pruned)" test "${pruned:-0}" -gt 0
check "size cap: the count is what the store lacks: 3300 seeded + $delivered delivered - $expired expired - $left left" \
	eq "$pruned" "$((3300 + delivered - expired - left))"
check "size cap: no record was skipped or lost on the way ($(st sink.sqlite.unencodable_skipped) skipped, $(st sink.sqlite.dropped) dropped)" \
	eq "$(st sink.sqlite.unencodable_skipped)|$(st sink.sqlite.dropped)" "0|0"
check "size cap: oldest first: the 300 of 29 days ago went ($(st seed_keep) left) before the first storm's ($c1 left)" \
	eq "$(st seed_keep)|$([ "$c1" -lt $STORM ] && echo cut)" "0|cut"
# how far into the second storm the cap reaches depends on the size of a
# stored record; oldest first means a storm is cut only once the one
# before it is gone, and the last one is whole
check "size cap: oldest first: a storm is cut only when the one before is gone, the last is whole ($c1, $c2, $c3)" \
	eq "$([ "$c2" -eq $STORM ] || [ "$c1" -eq 0 ] && echo ordered)|$c3" "ordered|$STORM"
used=$(st used)
shown=$(st sink.sqlite.store_bytes)
check "size cap: the pages in use ($used) are under the cap of $CAP MiB, and status says so (${shown%% *})" \
	eq "$([ "$used" -le $((CAP * MIB)) ] && echo under)|${shown%% *}" "under|$used"
max=$(sort -n "$T/sizes" | tail -n 1)
note "store_bytes seen every 0.2 s during the storms: $(sort -n "$T/sizes" | uniq | wc -l) values, at most $max;" \
	"store_file_bytes (file and WAL) at the end $(st sink.sqlite.store_file_bytes)"
check "size cap: while records arrived, status never showed more than the cap and one batch of 1 MiB ($max)" \
	test "${max:-0}" -le $(((CAP + 1) * MIB))
oldest=$(st sink.sqlite.store_oldest_record)
check "status: the oldest record is the oldest left (${oldest%% *}, $(st oldest))" \
	eq "${oldest%% *}" "$(st oldest)"
check "host record: a store_size_cap record reports the $pruned deletions ($(st last_host))" \
	eq "$(st last_host)" "store_size_cap|$pruned"
check "no kernel event was dropped ($(st events_dropped))" eq "$(st events_dropped)" 0

# ---- 3. a smaller cap by reload ------------------------------------------------------------
sed -i "s/max_size_mib = $CAP;/max_size_mib = 1;/" "$CONF"
cli reload >/dev/null 2>&1
for _ in $(seq 1 50); do
	case $(status_of sink.sqlite.store_bytes) in
	*"of 1 MiB") [ "$(used_bytes)" -le $((MIB * 9 / 10)) ] && break ;;
	esac
	sleep 0.2
done
shown=$(status_of sink.sqlite.store_bytes)
check "reload: max_size_mib = 1 applies while the agent runs ($shown; $(used_bytes) in use)" \
	eq "${shown#* }|$([ "$(used_bytes)" -le $((MIB * 9 / 10)) ] && echo under)" "of 1 MiB|under"
check "reload: more records were deleted for size ($(status_of sink.sqlite.store_records_pruned_for_size) > $pruned)" \
	test "$(status_of sink.sqlite.store_records_pruned_for_size)" -gt "$pruned"
stop_agent
size=$(stat -c %s "$DB")
check "stopped: the file itself shrank under the cap ($size bytes)" \
	test "$size" -le "$MIB"

finish
