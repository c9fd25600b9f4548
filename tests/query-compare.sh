#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# query-compare.sh - the query commands of two builds print the same.
#
# For a change that must not change what `jobtrace export`, `report`,
# `cost` and `rightsize` print (a refactoring of the query layer): one
# store is written with BEFORE's store-put from the unit tests' fixture
# (tests/unit/store-v6.ndjson), two runs of tests/integration/gen-run.py
# (one hostile) and a few hostile process records of this script; then
# every query command is run in every format, with every selector it
# takes (and --no-tree, every --by), by each build's jobtrace on its own
# copy of the store, and the outputs (stdout, stderr, exit status) are
# compared.  Needs no root and no agent (the control socket is a path
# nobody listens on); python3 for gen-run.py.
#
#   tests/query-compare.sh BEFORE_BUILDDIR AFTER_BUILDDIR
#
# Build the base in BEFORE_BUILDDIR first, e.g.
#   git archive main | tar -x -C /tmp/base && cd /tmp/base && ./autogen.sh &&
#   mkdir build && cd build && ../configure -q && make -s &&
#   make -s tests/integration/store-put
# Prints each differing command and "same: N of M commands"; exit
# status 0 when all are the same, 1 when one differs, 2 on bad usage.

set -u
if [ $# -ne 2 ] || [ ! -x "$1/jobtrace" ] || [ ! -x "$2/jobtrace" ] ||
   [ ! -x "$1/tests/integration/store-put" ]; then
	echo "usage: $0 BEFORE_BUILDDIR AFTER_BUILDDIR (each with jobtrace;" \
	     "BEFORE with tests/integration/store-put)" >&2
	exit 2
fi
B=$(cd "$1" && pwd)
A=$(cd "$2" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/jt-qcompare.XXXXXX) || exit 2
trap 'rm -rf "$T"' EXIT

# Hostile process records: numbers of the wrong sign, size or type.
hostile() {
	i=0
	for cpu in '-5, "sys_s": 3' '1e300, "sys_s": 1e308' '"x", "sys_s": 2' \
		   '2, "sys_s": -1'; do
		i=$((i + 1))
		printf '{"type":"process","schema":1,"host":"hz","id":"hz-%d",' "$i"
		printf '"pid":%d,"ppid":1,"parent_id":"hz-1",' "$((700 + i))"
		printf '"start_time":"2026-02-01T10:00:0%d.000000Z",' "$i"
		printf '"end_time":"2026-02-01T10:00:09.000000Z","exe":"/bin/h",'
		printf '"comm":"h","argv":["h"],"uid":0,"job":{"scheduler":"slurm",'
		printf '"id":"hz1","step":"batch","run":"hzr","pipeline":"hzp",'
		printf '"task":"t%d","user":null,"account":null,' "$((i % 2))"
		printf '"cost_center":null},"tool":{"name":"h","category":null},'
		printf '"exit":{"code":%d,"signal":null,"oom_killed":false},' "$((i % 2))"
		printf '"cpu":{"user_s": %s},"mem":{"peak_rss_bytes":%s},' "$cpu" \
		       "$([ $i = 2 ] && echo 3e19 || echo $((i * 1048576)))"
		printf '"io":{"read_bytes":-4,"write_bytes":1e25},'
		printf '"net":{"rx_bytes":0,"tx_bytes":0}}\n'
	done
}

{
	cat "$SRC/tests/unit/store-v6.ndjson"
	python3 "$SRC/tests/integration/gen-run.py" --procs 300 --job g1 \
		--run gr1 --seed 7 --t0 1767261600 2>/dev/null
	python3 "$SRC/tests/integration/gen-run.py" --procs 60 --hostile \
		--job g2 --seed 3 --t0 1767265200 2>/dev/null
	hostile
} >"$T/records.ndjson" || exit 2
"$B/tests/integration/store-put" "$T/store.db" <"$T/records.ndjson" \
	>/dev/null || exit 2

for side in before after; do
	mkdir -p "$T/$side"
	cp "$T/store.db" "$T/$side/jobtrace.db"
	cat >"$T/$side/jobtrace.conf" <<EOF
agent = { state_dir = "$T/$side"; run_dir = "$T/$side/run"; };
store = { sqlite_path = "$T/$side/jobtrace.db"; };
EOF
done

V6JOB=jt-views-7637-a
n=0
ok=0
bad=0
# run CMD ARGS...: both builds, outputs compared
run() {
	n=$((n + 1))
	for side in before after; do
		bin=$B/jobtrace
		[ $side = after ] && bin=$A/jobtrace
		"$bin" --config "$T/$side/jobtrace.conf" "$@" \
			>"$T/$side/out" 2>"$T/$side/err"
		echo "exit $?" >>"$T/$side/err"
		sed -i "s|$T/$side|STORE|g" "$T/$side/out" "$T/$side/err"
	done
	tail -n1 "$T/after/err" | grep -qx 'exit 0' && ok=$((ok + 1))
	if ! cmp -s "$T/before/out" "$T/after/out" ||
	   ! cmp -s "$T/before/err" "$T/after/err"; then
		echo "differs: jobtrace $*"
		diff "$T/before/out" "$T/after/out" | head -5
		diff "$T/before/err" "$T/after/err" | head -5
		bad=$((bad + 1))
	fi
}

for sel in "--job $V6JOB" "--job g1" "--job g2" "--job hz1" \
	   "--run jt-views-7637-ra" "--run gr1" "--run hzr" \
	   "--pipeline snakemake" "--pipeline hzp" "--since @0" \
	   "--job nosuch"; do
	# shellcheck disable=SC2086
	for f in text json html; do
		run report $sel --format $f
		run report $sel --format $f --no-tree
	done
	run export $sel --format ndjson
	for f in text nextflow snakemake slurm json; do
		run rightsize $sel --format $f
	done
	case $sel in --pipeline*) continue ;; esac
	for by in job task tool user account cost-center; do
		for f in text json csv; do
			run cost $sel --by $by --format $f
		done
	done
done
for pid in 6433 700 701 1; do
	for f in text json html; do
		run report --pid $pid --format $f
	done
done
echo "same: $((n - bad)) of $n commands ($ok of them exit 0)"
[ $bad = 0 ]
