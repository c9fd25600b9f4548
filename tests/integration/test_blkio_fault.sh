#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_blkio_fault.sh - a process whose kernel block-I/O delay jumps by the
# whole time since boot keeps its real waits.
#
# On this 6.18 kernel an I/O wait that ends without its start stamped adds
# local_clock() to the thread's blkio_delay (/proc/PID/stat field 42 shows
# it).  It comes with contention: dd writing 1 MiB blocks O_DIRECT to a
# throttled loop device beside a busy loop on its core shows it in about
# half the runs.  The agent used to leave such a thread's whole figure out
# (0 for the rest of its life: CI once saw test_signals' dd raise no
# io_bound at all).  Now the jump alone is left out and counted.
#
#   dd (12 MiB at 4 MiB/s, 1 MiB blocks, about 3 s), pinned with a busy
#   loop to CPU 0, is run under `jobtrace run` until the test's polls of
#   its field 42 (every 0.05 s) see a jump: a rise larger than dd's life
#   (up to 8 tries; none: skipped, the kernel has no such fault).  Then:
#   - `jobtrace status` counts it (blkio_delay_impossible rose);
#   - dd's process record has io.blkio_delay_s within what the polls allow
#     once the jumps are taken out: the sum of the other rises up to the
#     final figure, read while dd is a zombie (its shell stopped until
#     then; each end truncated to a tick: 2 ticks), less what the agent
#     cannot know: per jump, the waits credited since its last read
#     of dd (a sample interval, 0.5 s, one 0.25 s wait begun before it, and
#     0.25 s for a pass late under load: 1 s), and less what passes dd's
#     wall (a stale start's wait counted twice: cut to the life);
#   - and no more than dd's wall.
#
# Needs root, kernel BTF, the sqlite3 CLI, taskset, losetup and the v1
# blkio controller.  Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_blkio_fault.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands taskset losetup lsblk
start_watchdog 300
J=jt-bf-$$
SAMPLE_INTERVAL=0.5
BLKIO=/sys/fs/cgroup/blkio
CG=$BLKIO/jt_bf_$$
LOOP=
HOG=
RUN=

extra_cleanup() {
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null
	# a shell of a try cut short stays stopped: go on, so that it ends
	[ -n "$RUN" ] && pkill -CONT -P "$RUN" -x sh
	remove_cgroup "$CG"
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
}

if [ ! -e "$BLKIO/blkio.throttle.write_bps_device" ]; then
	note "no v1 blkio throttle here"
	exit 77
fi
truncate -s 64M "$T/loop.img"
LOOP=$(losetup -f --show "$T/loop.img") || exit 99
mkdir "$CG" || exit 99
echo "$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ') 4194304" >"$CG/blkio.throttle.write_bps_device" || exit 99

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
HZ=$(getconf CLK_TCK)
BOOT=$(awk -v t="$(now)" '{ printf "%.2f", t - $1 }' /proc/uptime)	# epoch of boot
status_get blkio_delay_impossible
IMP0=${REPLY:-0}

# Run try $1's dd beside a busy loop on CPU 0; its polls go to $T/dd.$1
# (poll_blkio's lines); DD is its pid.
try_dd() {
	local sh=
	taskset -c 0 sh -c 'while :; do :; done' &
	HOG=$!
	# the shell stops itself once dd runs, so that dd stays a zombie
	# with its final figure until the test has read it
	"$CLI" --config "$CONF" run --job "$J-$1" -- sh -c \
		"echo \$\$ >$CG/cgroup.procs || exit 1
		 taskset -c 0 dd if=/dev/zero of=$LOOP bs=1M count=12 oflag=direct &
		 kill -STOP \$\$; wait \$!" >"$T/dd.$1.out" 2>&1 &
	RUN=$!
	# for as long as the run lasts (the watchdog bounds it)
	until sh=$(pgrep -P "$RUN" -x sh); do
		kill -0 "$RUN" 2>/dev/null || break
		sleep 0.05
	done
	poll_blkio "$sh" dd >"$T/dd.$1" 2>/dev/null
	DD=$CHILD
	kill -CONT "$sh" 2>/dev/null
	wait "$RUN"
	RUN=
	kill "$HOG"
	wait "$HOG" 2>/dev/null
	HOG=
}

# Of poll file $1: "jumps clean_s" - the rises past dd's life so far
# (the kernel's jumps) and the sum of the others, in seconds.  Its life
# at a read is at most its life at the stamp after it ($4).
clean() {
	awk -v hz="$HZ" -v boot="$BOOT" '{ d = $2 - prev; prev = $2
		if (d / hz > $4 - boot - $3 / hz) jumps++; else sum += d }
		END { printf "%d %.2f", jumps, sum / hz }' "$1"
}

DD=
for i in 1 2 3 4 5 6 7 8; do
	try_dd "$i"
	read -r JUMPS CLEAN <<<"$(clean "$T/dd.$i")"
	note "try $i: dd $DD, $(tail -n 1 "$T/dd.$i.out"); field 42 from $(head -n 1 "$T/dd.$i" | cut -d' ' -f2) to $(tail -n 1 "$T/dd.$i" | cut -d' ' -f2) ticks, jumps $JUMPS, the rest $CLEAN s"
	[ "$JUMPS" -gt 0 ] && break
done
if [ "$JUMPS" = 0 ]; then
	note "the kernel's blkio_delay did not jump in 8 tries: nothing to check"
	stop_agent
	exit 77
fi

status_get blkio_delay_impossible
check "status: blkio_delay_impossible rose (${IMP0} -> ${REPLY:-?})" \
	awk -v a="$IMP0" -v b="${REPLY:-0}" 'BEGIN { exit !(b > a) }'
for _ in $(seq 1 50); do
	r=$(q "select printf('%.6f %.6f', blkio_delay_s, end_time - start_time) from process
		where job_id = '$J-$i' and pid = $DD and end_time is not null;")
	[ -n "$r" ] && break
	sleep 0.2
done
read -r D WALL <<<"$r"
note "dd's record: io.blkio_delay_s ${D:-none}, wall ${WALL:-none}"
# the rest may pass dd's life (a wait counted twice from a stale start):
# the agent cuts that to the life (BLKIO_OVERSHOOT_NS)
lo=$(awk -v c="$CLEAN" -v j="$JUMPS" -v w="${WALL:-0}" 'BEGIN { if (c > w) c = w
	printf "%.2f", c - 1.0 * j - 2 / 100 }')
hi=$(awk -v c="$CLEAN" 'BEGIN { printf "%.2f", c + 2 / 100 }')
check "dd's io.blkio_delay_s ${D:-none} lies in what its polls allow without the jumps [$lo, $hi]" \
	between "${D:-0}" "$lo" "$hi"
check "dd's io.blkio_delay_s ${D:-none} is no more than its wall ${WALL:-none}" \
	awk -v d="${D:-0}" -v w="${WALL:-0}" 'BEGIN { exit !(d <= w) }'
stop_agent
finish
