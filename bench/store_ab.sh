#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# store_ab.sh BEFORE_BUILD AFTER_BUILD - the SQLite sink's CPU per record
# and the store's bytes per record, two builds side by side: PAIRS pairs
# (5) in alternating order (before-after, after-before, ...), each run
# `bench/deliver N SPOOL DB sqlite` into a fresh store (N: DELIVER_N,
# 30000 records).  Prints one line a run, then the medians and their
# ratio.  No root needed; build bench/deliver in both (`make bench/deliver`).
set -eu

[ $# -eq 2 ] || { echo "usage: $0 BEFORE_BUILD AFTER_BUILD" >&2; exit 2; }
N=${DELIVER_N:-30000}
PAIRS=${PAIRS:-5}
for b in "$1" "$2"; do
	[ -x "$b/bench/deliver" ] || { echo "$0: no $b/bench/deliver (make bench/deliver)" >&2; exit 2; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# one run of build $2 labelled $1: "label sink_us db_bytes_per_record"
run() {
	rm -rf "$TMP/spool" "$TMP/store.db" "$TMP/store.db-wal" "$TMP/store.db-shm"
	out=$("$2/bench/deliver" "$N" "$TMP/spool" "$TMP/store.db" sqlite)
	us=$(printf '%s\n' "$out" | tr ' ' '\n' | sed -n 's/^sink_cpu_us_per_record=//p')
	bytes=$(stat -c %s "$TMP/store.db")
	echo "$1 $us $(awk -v b="$bytes" -v n="$N" 'BEGIN { printf "%.0f", b / n }')"
}

echo "run sink_cpu_us_per_record db_bytes_per_record (N=$N)"
i=1
while [ "$i" -le "$PAIRS" ]; do
	if [ $((i % 2)) -eq 1 ]; then
		run before "$1"; run after "$2"
	else
		run after "$2"; run before "$1"
	fi
	i=$((i + 1))
done | tee "$TMP/runs"
med() {
	awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$TMP/runs" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
b=$(med before 2); a=$(med after 2); bb=$(med before 3); ab=$(med after 3)
echo "median sink CPU per record: before $b us, after $a us, after/before $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
echo "median store bytes per record: before $bb, after $ab, after/before $(awk -v a="$ab" -v b="$bb" 'BEGIN { printf "%.3f", a / b }')"
