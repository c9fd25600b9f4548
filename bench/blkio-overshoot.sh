#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/blkio-overshoot.sh [RUNS] - does the kernel's block-I/O delay of a
# thread that waits nearly all its life pass that life, without the jump
# by the time since boot (tests/integration/test_blkio_fault.sh)?  No agent
# runs.  RUNS (10) times: dd writes 4 MiB O_DIRECT in 64 KiB blocks to a
# loop device throttled to 1 MiB/s (v1 blkio), and its /proc/PID/stat is
# polled every 0.02 s beside /proc/uptime.  Per run: the polls, the jumps
# (a rise of more than 10 s between two polls) and the most field 42 (its
# blkio ticks) passed its life (uptime - start_time, ticks) at a poll
# without a jump.  BESIDE=1: a busy loop shares dd's core (CPU 0).
# bpf/jobtrace.bpf.c (task_blkio_ns) cites its figures.
#
# Needs root, losetup and the v1 blkio controller.
set -u
RUNS=${1:-10}
BLKIO=/sys/fs/cgroup/blkio
[ "$(id -u)" -eq 0 ] || { echo "bench/blkio-overshoot.sh: run as root" >&2; exit 2; }
[ -e "$BLKIO/blkio.throttle.write_bps_device" ] ||
	{ echo "bench/blkio-overshoot.sh: needs the v1 blkio controller" >&2; exit 2; }
HZ=$(getconf CLK_TCK)
T=$(mktemp -d /tmp/jobtrace-blkio.XXXXXX)
CG=$BLKIO/jt_overshoot_$$
LOOP=
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rmdir "$CG" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
truncate -s 64M "$T/img"
LOOP=$(losetup -f --show "$T/img") || exit 1
mkdir "$CG" || exit 1
echo "$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ') 1048576" >"$CG/blkio.throttle.write_bps_device"
echo "dd 4 MiB O_DIRECT at 1 MiB/s, $RUNS runs; ticks of $((1000 / HZ)) ms"
for r in $(seq 1 "$RUNS"); do
	[ -n "${BESIDE:-}" ] && { taskset -c 0 sh -c 'while :; do :; done' & HOG=$!; }
	taskset -c 0 sh -c "echo \$\$ >$CG/cgroup.procs && exec dd if=/dev/zero of=$LOOP bs=64k count=64 oflag=direct" 2>/dev/null &
	P=$!
	polls=0 jumps=0 prev=0 most=
	while read -r -a st <"/proc/$P/stat" 2>/dev/null && [ "${st[2]}" != Z ]; do
		read -r up _ </proc/uptime
		f=${st[41]}
		life=$(awk -v u="$up" -v s="${st[21]}" -v hz="$HZ" 'BEGIN { printf "%d", u * hz - s }')
		if [ $((f - prev)) -gt $((10 * HZ)) ]; then
			jumps=$((jumps + 1))
		elif [ "$jumps" = 0 ] && { [ -z "$most" ] || [ $((f - life)) -gt "$most" ]; }; then
			most=$((f - life))
		fi
		prev=$f
		polls=$((polls + 1))
		sleep 0.02
	done
	wait "$P"
	[ -n "${BESIDE:-}" ] && { kill "$HOG"; wait "$HOG" 2>/dev/null; }
	echo "run $r: polls $polls, jumps $jumps, most field 42 - life ${most:-none} ticks"
done
