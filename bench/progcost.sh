#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/progcost.sh BUILD_DIR [N]
#
# What each of the agent's BPF programs costs per process of a storm of N
# (20000) fork+exec of /bin/true: an agent with a scratch configuration
# (AGENT_EXTRA: lines added to it, e.g. 'files = { enabled = false; };'),
# kernel.bpf_stats_enabled on for the storm only, `bpftool prog show`
# before and after it.  Prints each jt_ program's run time per process,
# its runs and its time per run.  Needs root and bpftool.
set -u
. "$(dirname "$0")/agent.sh"
bench_close_fds
BUILD=$(cd "${1:?usage: bench/progcost.sh BUILD_DIR [N]}" && pwd) || exit 2
N=${2:-20000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/jobtrace-progcost.XXXXXX)
AGENT_PID=
cleanup() {
	sysctl -q kernel.bpf_stats_enabled=0
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench/progcost.sh: run as root" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "bench/progcost.sh: needs bpftool" >&2; exit 2; }
make -s -C "$BUILD" tests/workload/spawnstorm >&2 || exit 1
cat >"$T/jobtrace.conf" <<EOC
agent = { state_dir = "$T/state"; run_dir = "$T/run"; rules_dir = "$SRC/lua-rules"; };
${AGENT_EXTRA:-}
EOC
bench_agent_start "$BUILD" "$T/jobtrace.conf"
sleep 1
# name, run time (ns) and runs of each of the agent's programs
snap() {
	bpftool -j prog show | python3 -c 'import json, sys
for p in json.load(sys.stdin):
	if p.get("name", "").startswith("jt_"):
		print(p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))' | LC_ALL=C sort -k1,1
}
sysctl -q kernel.bpf_stats_enabled=1
snap >"$T/before"
# stdout and stderr on one pipe, as bench/run.sh's storms: the figures do
# not depend on where this script's own stderr goes
out=$(nice -n 19 "$BUILD/tests/workload/spawnstorm" "$N" /bin/true 2>&1) ||
	{ echo "bench/progcost.sh: spawnstorm failed: $out" >&2; exit 1; }
snap >"$T/after"
sysctl -q kernel.bpf_stats_enabled=0
echo "BPF run time per process of a storm of $N /bin/true${AGENT_EXTRA:+ ($AGENT_EXTRA)}"
LC_ALL=C join "$T/before" "$T/after" | awk -v n="$N" '{
	runs = $5 - $3
	printf "%-14s %8.3f us/process %8d runs %6.0f ns/run\n", $1,
	       ($4 - $2) / 1000 / n, runs, runs ? ($4 - $2) / runs : 0 }'
