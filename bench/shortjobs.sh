#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/shortjobs.sh BUILD_DIR [BEFORE_BUILD_DIR]
#
# What the first sample of a job's young process (collector.first_sample)
# costs.  A job shorter than sample_interval (10 s) had no sample at all,
# so no memory curve; now a job's process that no pass has seen gets one
# when it is first_sample old.  The workload is JOBS jobs one after the
# other, each `jobtrace run -- touchmem 100 HOLD_MS` (100 MiB held
# HOLD_MS ms: a job of about HOLD_MS ms), run:
#   off      no agent (jobtrace run says so once a job and runs the command)
#   before   the agent of BEFORE_BUILD_DIR (when given), its defaults
#   fs=0     the agent of BUILD_DIR with first_sample = 0 (off)
#   fs=1     the agent of BUILD_DIR with its defaults (first_sample = 1 s)
# in ROUNDS rounds, the modes in a rotating order.  For each it prints the
# workload's wall time, and for an agent, over the workload: its CPU (all
# threads, cpu_ns of `jobtrace status`), the run time of its BPF programs
# (kernel.bpf_stats_enabled=1), the sample passes (stage.sample_count),
# the sample records stored and how many jobs have one.  Per job, the
# median over the rounds.  Needs root, jq and bpftool.
set -u
BUILD=$(cd "${1:?usage: bench/shortjobs.sh BUILD_DIR [BEFORE_BUILD_DIR]}" && pwd) || exit 2
BEFORE=${2:-}
[ -n "$BEFORE" ] && { BEFORE=$(cd "$BEFORE" && pwd) || exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
JOBS=${JOBS:-20}
HOLD_MS=${HOLD_MS:-2500}
ROUNDS=${ROUNDS:-3}
TOUCH=$BUILD/tests/workload/touchmem
T=$(mktemp -d /tmp/jobtrace-shortjobs.XXXXXX)
AGENT_PID=
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)

# Stop the agent, put bpf_stats back, remove the scratch folder.
cleanup() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD"
	rm -rf "$T"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench/shortjobs.sh: run as root" >&2; exit 2; }
for t in jq bpftool; do
	command -v "$t" >/dev/null || { echo "bench/shortjobs.sh: needs $t" >&2; exit 2; }
done
[ -x "$TOUCH" ] || make -C "$BUILD" tests/workload/touchmem >/dev/null ||
	{ echo "bench/shortjobs.sh: cannot build touchmem" >&2; exit 2; }
sysctl -q -w kernel.bpf_stats_enabled=1

# Sum of run_time_ns over the BPF programs PID holds.
bpf_ns() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un | jq -s -c .)
	bpftool prog show -j | jq --argjson ids "$ids" \
		'[.[] | select(.id as $i | $ids | index($i)) | .run_time_ns // 0] | add // 0'
}

# Value of KEY in status file $1 (0 when absent).
val() {
	local v
	v=$(sed -n "s/^$2: //p" "$1" | head -n 1)
	echo "${v:-0}"
}

# "run_time_ns run_cnt" of PID's BPF program NAME.
prog_stat() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un | jq -s -c .)
	bpftool prog show -j | jq -r --argjson ids "$ids" --arg n "$2" \
		'[.[] | select((.id as $i | $ids | index($i)) and .name == $n)] |
		 "\(map(.run_time_ns // 0) | add // 0) \(map(.run_cnt // 0) | add // 0)"'
}

# Growth of KEY between status files s0 and s1.
grew() {
	echo $(($(val "$T/s1" "$1") - $(val "$T/s0" "$1")))
}

# Write the configuration for first_sample $1 ("" for the defaults).
config() {
	rm -rf "$T/state"
	mkdir -p "$T/state" "$T/run"
	cat >"$T/conf" <<EOF
agent = { state_dir = "$T/state"; run_dir = "$T/run"; rules_dir = "$SRC/lua-rules"; };
cloud = { imds = "off"; };
EOF
	[ -n "$1" ] && echo "collector = { first_sample = $1; };" >>"$T/conf"
	return 0
}

# Run the workload with the CLI of build $1; prints its wall seconds.
workload() {
	local t0 t1
	t0=$(date +%s.%N)
	for i in $(seq 1 "$JOBS"); do
		"$1/jobtrace" --config "$T/conf" run --job "sj-$i" -- "$TOUCH" 100 "$HOLD_MS" \
			>/dev/null 2>&1
	done
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

# One measurement: mode name, build, first_sample; prints a result line.
measure() {
	local mode=$1 build=$2 fs=$3 wall ns0 ns1 b0 b1
	config "$fs"
	if [ "$mode" = off ]; then
		wall=$(workload "$build")
		echo "$mode wall=$wall"
		return
	fi
	"$build/jobtraced" --config "$T/conf" --foreground >>"$T/agent.log" 2>&1 &
	AGENT_PID=$!
	for _ in $(seq 1 100); do
		"$build/jobtrace" --config "$T/conf" status >/dev/null 2>&1 && break
		kill -0 "$AGENT_PID" 2>/dev/null ||
			{ echo "$mode: the agent did not start: $(tail -n 3 "$T/agent.log")" >&2; exit 1; }
		sleep 0.1
	done
	sleep 1
	"$build/jobtrace" --config "$T/conf" status >"$T/s0"
	b0=$(bpf_ns "$AGENT_PID")
	read -r i0 n0 <<<"$(prog_stat "$AGENT_PID" jt_iter)"
	wall=$(workload "$build")
	"$build/jobtrace" --config "$T/conf" status >"$T/s1"
	b1=$(bpf_ns "$AGENT_PID")
	read -r i1 n1 <<<"$(prog_stat "$AGENT_PID" jt_iter)"
	kill "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	ns0=$(val "$T/s0" cpu_ns) ns1=$(val "$T/s1" cpu_ns)
	echo "$mode wall=$wall cpu_ms=$(awk -v a="$ns0" -v b="$ns1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')" \
		"bpf_ms=$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')" \
		"passes=$(grew stage.sample_count)" \
		"pass_us=$(awk -v a="$(grew stage.sample_ns)" -v n="$(grew stage.sample_count)" 'BEGIN { printf "%.1f", n ? a / n / 1e3 : 0 }')" \
		"iter_us=$(awk -v a="$((i1 - i0))" -v n="$(grew stage.sample_count)" 'BEGIN { printf "%.1f", n ? a / n / 1e3 : 0 }')" \
		"tasks=$(awk -v a="$((n1 - n0))" -v n="$(grew stage.sample_count)" 'BEGIN { printf "%.0f", n ? a / n : 0 }')" \
		"encode_us=$(awk -v e="$(grew stage.encode_ns)" -v n="$(grew stage.encode_count)" 'BEGIN { printf "%.1f", n ? e / n / 1e3 : 0 }')" \
		"samples=$(sqlite3 "$T/state/jobtrace.db" "select count(*) from record where type = 'sample' and job_id like 'sj-%';")" \
		"jobs_sampled=$(sqlite3 "$T/state/jobtrace.db" "select count(distinct job_id) from record where type = 'sample' and job_id like 'sj-%';")"
}

MODES="off fs=0 fs=1"
[ -n "$BEFORE" ] && MODES="off before fs=0 fs=1"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, kernel $(uname -r); $JOBS jobs of touchmem 100 MiB held $HOLD_MS ms, $ROUNDS rounds"
echo "# build $BUILD${BEFORE:+, before: $BEFORE}"
for r in $(seq 1 "$ROUNDS"); do
	# a rotating order: drift (page cache, others' load) spreads over modes
	set -- $MODES
	for _ in $(seq 2 "$r"); do
		set -- "${@:2}" "$1"
	done
	for m in "$@"; do
		case $m in
		off) measure off "$BUILD" "" ;;
		before) measure before "$BEFORE" "" ;;
		fs=0) measure fs=0 "$BUILD" 0 ;;
		fs=1) measure fs=1 "$BUILD" "" ;;
		esac
	done | sed "s/^/round $r /"
done | tee "$T/lines"
echo
echo "# per job, median over $ROUNDS rounds"
python3 - "$T/lines" "$JOBS" $MODES <<'PY'
import statistics, sys
lines, jobs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
keys = ["wall", "cpu_ms", "bpf_ms", "passes", "samples", "jobs_sampled"]
unit = ["pass_us", "iter_us", "tasks", "encode_us"]
# a record in the SQLite store: bench/README.md's figure 3b (the sink's
# CPU per record in a storm); this workload stores too few records to
# measure it apart from the sink's idle work
SINK_US = float(__import__("os").environ.get("SINK_US", "10.3"))
got = {m: {k: [] for k in keys} for m in modes}
for l in open(lines):
    f = l.split()
    if len(f) < 4 or f[2] not in got:
        continue
    for kv in f[3:]:
        k, v = kv.split("=")
        got[f[2]].setdefault(k, []).append(float(v))
print("%-8s %10s %10s %10s %8s %9s %12s" % ("MODE", "WALL_S", "CPU_MS", "BPF_MS",
      "PASSES", "SAMPLES", "JOBS_SAMPLED"))
for m in modes:
    row = []
    for k in keys:
        v = got[m][k]
        if not v:
            row.append("-")
        elif k == "jobs_sampled":
            row.append("%d/%d" % (statistics.median(v), jobs))
        else:
            row.append("%.3f" % (statistics.median(v) / jobs))
    print("%-8s %10s %10s %10s %8s %9s %12s" % tuple([m] + row))
# what one more pass and one more sample record cost, counted (not timed
# against a baseline that others' load moves): the pass's agent time, its
# BPF iterator, and encode + spool + store of a record
per = {u: statistics.median(got["fs=1"].get(u) or [0]) for u in unit}
print()
rec = per["encode_us"] + SINK_US
print("per pass: agent %.1f us + BPF iterator %.1f us (%d tasks visited); per sample"
      " record: encode %.1f us + store %.1f us (SINK_US)"
      % (per["pass_us"], per["iter_us"], per["tasks"], per["encode_us"], SINK_US))
for base in [m for m in modes if m in ("before", "fs=0")]:
    dp = (statistics.median(got["fs=1"]["passes"]) - statistics.median(got[base]["passes"])) / jobs
    ds = (statistics.median(got["fs=1"]["samples"]) - statistics.median(got[base]["samples"])) / jobs
    print("fs=1 against %s: +%.3f passes and +%.3f samples a job = %.0f us of CPU a job"
          % (base, dp, ds, dp * (per["pass_us"] + per["iter_us"]) + ds * rec))
PY
