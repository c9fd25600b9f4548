#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/delivery.sh - records per second the agent's spool and ClickHouse
# sink take and deliver, as root:
#
#   sudo bench/delivery.sh [BUILD_DIR]
#
# Starts Debian's clickhouse-server on loopback (tests/clickhouse/ch-env.sh),
# applies `jobtrace schema clickhouse`, then runs BUILD/bench/deliver (the
# agent's own spool.c/sink*.c/chschema.c/http.c, driven the way jobtraced
# drives them) for DELIVER_N records, without and with gzip, RUNS times
# each.  Every run's records are then counted in ClickHouse (FINAL), so a
# rate only counts if every record arrived once.  Prints the table and
# writes it to bench/delivery-latest.txt (or $BENCH_OUT).
# Knobs: DELIVER_N (default 200000), RUNS (default 3), DELIVER_BATCH (the
# sink's batch_records, default 5000).

set -u
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(cd "$BENCH_DIR/.." && pwd)
BUILD=$(cd "${1:-.}" && pwd) || exit 2
OUT=${BENCH_OUT:-$BENCH_DIR/delivery-latest.txt}
N=${DELIVER_N:-200000}
export DELIVER_BATCH=${DELIVER_BATCH:-5000}
RUNS=${RUNS:-3}

[ "$(id -u)" -eq 0 ] || { echo "bench/delivery.sh: run as root" >&2; exit 2; }
for f in "$BUILD/bench/deliver" "$BUILD/jobtrace"; do
	[ -x "$f" ] || { echo "bench/delivery.sh: $f is not built (make check builds bench/deliver)" >&2; exit 2; }
done
. "$SRC_DIR/tests/clickhouse/ch-env.sh"
T=$(mktemp -d /tmp/jobtrace-bench-deliver.XXXXXX)
chmod 755 "$T"	# the clickhouse user reaches its folder in it
trap 'ch_stop >/dev/null 2>&1; rm -rf "$T"' EXIT
ch_start "$T/ch" || exit 1
"$BUILD/jobtrace" schema clickhouse | ch_multiquery || exit 1

# CPU seconds (user+sys) of the ClickHouse server so far.
ch_cpu() {
	awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) / t }' "/proc/$CH_PID/stat"
}

{
	echo "# jobtrace delivery benchmark, $(date -u +%FT%TZ), $(nproc) cores, ClickHouse $(ch_query 'SELECT version()')"
	echo "# $N records per run (one ~1.2 KB process record, distinct ids), batches of $DELIVER_BATCH"
	printf '%-5s %-4s %9s %9s %10s %8s %10s %10s %9s %s\n' gzip run append_s deliver_s rate/s cpu_s us/record spool_B/rec ch_cpu_s arrived
} | tee "$OUT"
for gz in plain gzip; do
	for r in $(seq 1 "$RUNS"); do
		rm -rf "$T/spool"
		c0=$(ch_cpu)
		line=$("$BUILD/bench/deliver" "$N" "$T/spool" "$CH_URL" clickhouse "$gz") || {
			echo "deliver failed" >&2
			exit 1
		}
		c1=$(ch_cpu)
		kv() { printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
		run=$(kv run)
		got=$(ch_query "SELECT count() FROM jobtrace.process FINAL WHERE id LIKE 'bench-$run-%'")
		printf '%-5s %-4s %9s %9s %10s %8s %10s %10s %9.2f %s\n' "$gz" "$r" \
			"$(kv append_s)" "$(kv deliver_s)" "$(kv rate_per_s)" "$(kv cpu_s)" \
			"$(kv cpu_us_per_record)" "$(kv spool_bytes_per_record)" \
			"$(awk -v a="$c1" -v b="$c0" 'BEGIN { print a - b }')" "$got/$N" | tee -a "$OUT"
	done
done
