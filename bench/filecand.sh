#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/filecand.sh BUILD - issue 27's candidate kernel hooks for files,
# each timed alone (bench/filecand.bpf.c; the agent is not run): for each
# hook and the workload it sits on, PAIRS alternating off/on pairs of the
# workload's wall time (median on/off ratio, bench/run.sh's method) and,
# with kernel.bpf_stats_enabled, the hook's BPF ns per run and per
# operation of the workload.  Every hook does one tracked-map miss (what
# an untracked process pays); c_exitwalk runs with -a (every exiting
# process walked as if tracked: design a's cost at a process's end).
# The iterator's cost per open file of a sample pass is measured last.
# Run as root under flock /tmp/jobtrace-it.lock.
# Knobs: PAIRS (3) STORM_N (3000) OPENS_N (10000) READ_MIB (1024)
#        WRITE_MIB (256), ROWS (all, or some of: sysexit openclose io
#        exit).  A label ending in /t: every process counted as tracked.
set -u
BUILD=${1:?usage: bench/filecand.sh BUILD}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WL=$BUILD/tests/workload
PAIRS=${PAIRS:-3}
STORM_N=${STORM_N:-3000}
OPENS_N=${OPENS_N:-10000}
READ_MIB=${READ_MIB:-1024}
WRITE_MIB=${WRITE_MIB:-256}
T=$(mktemp -d /var/tmp/filecand.XXXXXX)
STATS0=$(sysctl -n kernel.bpf_stats_enabled)

# Print a message and exit 1.
die() { echo "filecand.sh: $*" >&2; exit 1; }

cleanup() {
	sysctl -q -w kernel.bpf_stats_enabled="$STATS0"
	rm -rf "$T"
}
trap cleanup EXIT

# printf a float expression with format $1.
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -I"$BUILD/bpf" -Wall \
	-Wno-unused-function -c "$SRC/bench/filecand.bpf.c" -o "$T/filecand.bpf.o" ||
	die "cannot compile bench/filecand.bpf.c"
bpftool gen skeleton "$T/filecand.bpf.o" name filecand >"$T/filecand.skel.h" ||
	die "cannot make the skeleton"
gcc -O2 -Wall -I"$T" -o "$T/filecand" "$SRC/bench/filecand.c" -lbpf -lelf -lz ||
	die "cannot build bench/filecand.c"
make -s -C "$BUILD" tests/workload/spawnstorm tests/workload/fileload >/dev/null ||
	die "cannot build the workloads"
sysctl -q -w kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"

mkdir -p "$T/many"
"$WL/fileload" mk "$T/many" "$OPENS_N" >/dev/null || die "fileload mk failed"
head -c $((READ_MIB * 1048576)) /dev/zero >"$T/read.dat"
head -c $((WRITE_MIB * 1048576)) /dev/zero >"$T/bw.dat"
cat "$T/read.dat" >/dev/null

# "ELAPSED_S OPS" of one run of workload $1.
work() {
	local out s e
	case $1 in
	read) out=$("$WL/fileload" read "$T/read.dat" 4096) ;;
	opens) out=$("$WL/fileload" opens "$T/many" "$OPENS_N") ;;
	dwrite) out=$("$WL/fileload" dwrite "$T/direct.dat" "$WRITE_MIB") ;;
	storm)
		out=$("$WL/spawnstorm" "$STORM_N" /bin/true) || return 1
		printf '%s\n' "$out" | sed -n "s/.*elapsed_s=\([0-9.]*\) .*/\1 $STORM_N/p"
		return 0 ;;
	bwrite)
		s=$(date +%s.%N)
		dd if=/dev/zero of="$T/bw.dat" bs=4096 count=$((WRITE_MIB * 256)) \
			conv=notrunc status=none || return 1
		e=$(date +%s.%N)
		calc '%.6f' "$e - $s"; echo " $((WRITE_MIB * 256))"
		return 0 ;;
	esac || return 1
	printf '%s\n' "$out" | sed -n 's/.*elapsed_s=\([0-9.]*\) .*ops=\([0-9]*\).*/\1 \2/p'
}

# Start the loader with the programs "$@"; sets LPID, LIN.
start_hooks() {
	rm -f "$T/fifo" "$T/hook.out"
	mkfifo "$T/fifo"
	"$T/filecand" "$@" <"$T/fifo" >"$T/hook.out" 2>&1 &
	LPID=$!
	exec 7>"$T/fifo"
	for _ in $(seq 1 100); do
		grep -q '^ready' "$T/hook.out" && return 0
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.05
	done
	die "the loader did not start: $(cat "$T/hook.out")"
}

# Stop the loader (not in a subshell: fd 7 and LPID are this shell's);
# sets RUNS and RUN_NS, summed over the programs named in $@.
stop_hooks() {
	local p
	exec 7>&-
	wait "$LPID"
	RUNS=0
	RUN_NS=0
	for p in "$@"; do
		[ "$p" = -a ] && continue
		read -r c n <<<"$(awk -v p="$p" '$1 == p { print $2, $3 }' "$T/hook.out")"
		[ -n "$c" ] || die "no stats of $p from the loader: $(cat "$T/hook.out")"
		RUNS=$((RUNS + c))
		RUN_NS=$((RUN_NS + n))
	done
}

# One row: label $1 (the loader's programs $3..., -a: every process
# counted as tracked) on workload $2; BPF time summed over the programs.
row() {
	local label=$1 wl=$2 i order mode e ops on off r ratios=() ns=() perop=()
	shift 2
	for i in $(seq 1 "$PAIRS"); do
		if [ $((i % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
		for mode in $order; do
			[ "$mode" = on ] && start_hooks "$@"
			sync
			sleep 0.3
			e=$(work "$wl") || die "workload $wl failed"
			read -r e ops <<<"$e"
			if [ "$mode" = on ]; then
				on=$e
				stop_hooks "$@"
				ns+=("$(calc '%.1f' "$RUN_NS / ($RUNS > 0 ? $RUNS : 1)")")
				perop+=("$(calc '%.1f' "$RUN_NS / $ops")")
				echo "   $label $wl pair $i: runs $RUNS run_time_ns $RUN_NS ops $ops" >>"$T/details"
			else
				off=$e
			fi
		done
		r=$(calc '%.4f' "$on / $off")
		ratios+=("$r")
		echo "   $label $wl pair $i ($order): off ${off}s on ${on}s ratio $r" >>"$T/details"
	done
	printf '%-16s %-7s %10s %14s %16s\n' "$label" "$wl" "$(median "${ratios[@]}")" \
		"$(median "${ns[@]}")" "$(median "${perop[@]}")"
}

echo "issue 27 candidate file hooks, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -r), $(nproc) CPUs"
echo "command: PAIRS=$PAIRS STORM_N=$STORM_N OPENS_N=$OPENS_N READ_MIB=$READ_MIB WRITE_MIB=$WRITE_MIB ROWS=\"${ROWS:-all}\" bench/filecand.sh $BUILD"
echo "source $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)"
echo "workloads: read = $READ_MIB MiB in 4 KiB reads (page cache); opens = $OPENS_N open+close;"
echo "  storm = $STORM_N fork+exec /bin/true; bwrite = dd $WRITE_MIB MiB in 4 KiB buffered writes;"
echo "  dwrite = $WRITE_MIB MiB O_DIRECT in 1 MiB writes"
echo
printf '%-16s %-7s %10s %14s %16s\n' hook workload "on/off" "BPF ns/run" "BPF ns/op"
ROWS=${ROWS:-all}
want() { [ "$ROWS" = all ] || [[ " $ROWS " == *" $1 "* ]]; }
if want sysexit; then
	row c_sysexit read c_sysexit
	row c_sysexit opens c_sysexit
	row c_sysexit storm c_sysexit
fi
if want openclose; then
	# (i) syscall tracepoints on openat and close only: the read
	# workload never calls them (the slow path alone), opens calls both
	row open+close read c_openat c_close
	row open+close opens c_openat c_close
	row open+close storm c_openat c_close
	row open+close/t read -a c_openat c_close
	row open+close/t opens -a c_openat c_close
	row open+close/t storm -a c_openat c_close
fi
if want io; then
	# (ii) the I/O hooks, untracked (a map miss) and tracked (-a: a slot
	# per process and inode)
	row c_getpages read c_getpages
	row c_getpages/t read -a c_getpages
	row c_dirty bwrite c_dirty
	row c_dirty/t bwrite -a c_dirty
	row c_dio dwrite c_dio
	row c_dio/t dwrite -a c_dio
fi
if want exit; then
	row c_prepexec storm c_prepexec
	row c_exitwalk/t read -a c_exitwalk
	row c_exitwalk/t opens -a c_exitwalk
	row c_exitwalk/t storm -a c_exitwalk
fi

# a sample pass of design a: the iterator over every open file here
n=$("$T/filecand" iter 0 2>"$T/iter.err" | wc -l)
read -r _ cnt tns <"$T/iter.err"
echo
echo "iter/task_file over every task's files: $cnt files visited, $n regular printed with bpf_d_path,"
echo "  $tns ns in all, $(calc '%.1f' "$tns / ($cnt > 0 ? $cnt : 1)") ns per file visited"
echo
echo "details"
cat "$T/details"
