#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/run.sh - what does tracing cost?  One rerunnable run, as root:
#
#   sudo bench/run.sh [BUILD_DIR]
#
#  1. process storm: STORM_N fork+exec of /bin/true (tests/workload/spawnstorm),
#     agent off vs on, STORM_PAIRS alternating pairs, median on/off wall ratio
#  2. CPU-bound: tests/workload/burn BURN_S, BURN_PAIRS alternating pairs
#  3. cost per traced process: BPF run time of the agent's programs
#     (kernel.bpf_stats_enabled=1) plus the agent's own CPU, over one storm,
#     divided by the processes it started, and where the agent's CPU went
#     (the stage.* and sink.*.cpu_ns figures of "jobtrace status"); the
#     same for libbpf-tools' execsnoop during a storm of the same size
#     (agent off), and the ratio of the two totals; the agent's figures
#     again with a regular file on each process's stderr (listed in its
#     record: what one file costs).  The storms' stderr is otherwise the
#     pipe their stdout is on, whatever the bench's own stderr is
#  4. events dropped, from "jobtrace status", summed over every agent run
#  5. the agent's VmRSS after RSS_BATCH and after RSS_TOTAL processes, and
#     what makes it up (/proc/PID/smaps)
#  6. files (issue 27; tests/workload/fileload): FILES_N opens and closes of
#     distinct files, FILES_READ_MIB MiB read FILES_READ_PASSES times in 4 KiB reads (page cache),
#     FILES_READ_MIB MiB written with O_DIRECT; on/off wall ratios over
#     FILES_PAIRS alternating pairs (FILES_DIRECT_PAIRS for O_DIRECT), and
#     the BPF run time of the file programs per open and per read, less
#     what they ran for the rest of the machine over as long a window; the
#     reads again with rules.inotify = true (the rules folder watched: any
#     inotify watch on a file system slows every read and write on it,
#     doc/jobtrace.conf.5; by default the folder is polled)
#
# Prints a results table and writes it to bench/results-latest.txt (or
# $BENCH_OUT).  See bench/README.md for what each figure means.
# Knobs (environment): STORM_N STORM_PAIRS BURN_S BURN_PAIRS RSS_BATCH RSS_TOTAL,
# STORM_ARGS (words the storm's /bin/true gets, for the rules to read),
# FILES_N FILES_READ_MIB FILES_READ_PASSES FILES_PAIRS FILES_DIRECT_PAIRS, AGENT_EXTRA (lines
# added to the agent's configuration, e.g. 'files = { follow_opens = true; };').

set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(cd "$BENCH_DIR/.." && pwd)
RULES_DIR=${RULES_DIR:-$SRC_DIR/lua-rules}	# the default rules, on (set RULES_DIR=/nonexistent for rules off)
BUILD=$(cd "${1:-.}" && pwd) || exit 2
AGENT=$BUILD/jobtraced
CLI=$BUILD/jobtrace
WL=$BUILD/tests/workload
EXECSNOOP=${EXECSNOOP:-/usr/sbin/execsnoop}
OUT=${BENCH_OUT:-$BENCH_DIR/results-latest.txt}

STORM_N=${STORM_N:-20000}
STORM_ARGS=${STORM_ARGS:-}	# arguments of the storm's /bin/true (what the rules read)
STORM_PAIRS=${STORM_PAIRS:-5}
BURN_S=${BURN_S:-5}
BURN_PAIRS=${BURN_PAIRS:-3}
RSS_BATCH=${RSS_BATCH:-10000}
RSS_TOTAL=${RSS_TOTAL:-200000}
FILES_N=${FILES_N:-10000}
FILES_READ_MIB=${FILES_READ_MIB:-1024}
FILES_READ_PASSES=${FILES_READ_PASSES:-10}	# the reads window: 1 GiB once is 0.15-0.26 s, noise
FILES_PAIRS=${FILES_PAIRS:-5}
FILES_DIRECT_PAIRS=${FILES_DIRECT_PAIRS:-3}
TICK=$(getconf CLK_TCK)

T=
AGENT_PID=
SNOOP_PID=
STATS_OLD=
MOUNTED_TRACEFS=
DROPS_TOTAL=0
DROPS_SEEN=
FAILED=

# ---- helpers -----------------------------------------------------------------------

# Print a progress line on stderr.
say() {
	printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# Print an error and exit 1.
die() {
	say "error: $*"
	FAILED=1
	exit 1
}

# Epoch seconds with nanoseconds.
now() {
	date +%s.%N
}

# Median of the numbers given as arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Evaluate an awk expression and print it with format FMT.
calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

# The jobtrace CLI with the bench configuration, bounded in time.
cli() {
	timeout 20 "$CLI" --config "$T/jobtrace.conf" "$@"
}

# Value of KEY in "jobtrace status", or empty.
status_val() {
	cli status 2>/dev/null | sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" | head -n 1
}

# Value of KEY in a saved "jobtrace status" reply FILE, or 0.
saved_val() {
	local v
	v=$(sed -n "s/^$2:[[:space:]]*//p" "$1" | head -n 1)
	printf '%s\n' "${v:-0}"
}

# Microseconds per process of the growth of KEY between two saved status
# replies A and B, over N processes.
per_proc_us() {
	calc '%.3f' "($(saved_val "$2" "$3") - $(saved_val "$1" "$3")) / 1000 / $4"
}

# For each NAME after the two formats: "NAME|US|N" in ROWS, US the growth
# per process of status key printf(FMT, NAME) over the window, N that of
# key printf(COUNT_FMT, NAME); the sum of the US in ROW_SUM.
window_rows() {
	local fmt=$1 cfmt=$2 name u n
	shift 2
	ROWS=()
	ROW_SUM=0
	for name in "$@"; do
		# shellcheck disable=SC2059
		u=$(per_proc_us "$T/status0" "$T/status1" "$(printf "$fmt" "$name")" "$STORM_N")
		# shellcheck disable=SC2059
		n=$(($(saved_val "$T/status1" "$(printf "$cfmt" "$name")") -
		     $(saved_val "$T/status0" "$(printf "$cfmt" "$name")")))
		ROW_SUM=$(calc '%.3f' "$ROW_SUM + $u")
		ROWS+=("$name|$u|$n")
	done
}

# Time PID's main thread was runnable but waited for a CPU, in ns.
main_wait() {
	awk '{ print $2 }' "/proc/$1/task/$1/schedstat" 2>/dev/null || echo 0
}

# KiB of PID's resident memory by kind, from smaps: "ringbuf anon files".
rss_parts() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 }
	     /^Rss:/ { if (name ~ /bpf-map/) r += $2
		       else if (name == "" || name ~ /^\[/) a += $2
		       else f += $2 }
	     END { print r + 0, a + 0, f + 0 }' "/proc/$1/smaps"
}

# utime+stime of PID in clock ticks (all threads, from /proc/PID/stat).
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# VmRSS of PID in KiB.
rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Processes (and threads) created on this machine since boot.
forks_total() {
	awk '/^processes / { print $2 }' /proc/stat
}

# Ids of the BPF programs that PID holds (program and link fds).
prog_ids() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un
}

# "NAME RUN_TIME_NS RUN_CNT" of each BPF program PID holds, by name: the
# one reading of bpftool the BPF figures below come from.
prog_each() {
	local ids
	ids=$(prog_ids "$1" | jq -s -c .)
	bpftool prog show -j | jq -r --argjson ids "$ids" \
		'.[] | select(.id as $i | $ids | index($i)) | "\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"' |
		LC_ALL=C sort -k1,1
}

# Of a prog_each listing on stdin: the sum of run_time_ns; NAME's
# run_time_ns and run_cnt ("0 0" if absent); the names, comma separated.
progs_sum() { awk '{ s += $2 } END { printf "%.0f\n", s }'; }
progs_of() { awk -v n="$1" '$1 == n { t += $2; c += $3 } END { printf "%.0f %.0f\n", t, c }'; }
progs_names() { awk '{ printf "%s%s", sep, $1; sep = "," } END { print "" }'; }

# Sum of run_time_ns over the BPF programs PID holds.
bpf_ns() { prog_each "$1" | progs_sum; }

# run_time_ns and run_cnt of PID's BPF program NAME ("0 0" if absent).
prog_stat() { prog_each "$1" | progs_of "$2"; }

# Names of the BPF programs PID holds, comma separated.
prog_names() { prog_each "$1" | progs_names; }

# Context switches on this machine since boot.
ctxt_total() {
	awk '/^ctxt / { print $2 }' /proc/stat
}

# Processes other than ours that hold BPF programs: "pid(comm)" list.
other_bpf_holders() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = "${AGENT_PID:-}" ] && continue
		if grep -qs '^prog_id:' "$d"/fdinfo/* 2>/dev/null; then
			printf '%s(%s) ' "$pid" "$(cat "$d/comm" 2>/dev/null)"
		fi
	done
}

# The inotify watches that other processes hold (each fdinfo "inotify wd:"
# line): with none on a file system, the agent's rules watch is the one
# that puts that file system's reads and writes through fsnotify.
other_inotify_watches() {
	local d pid n=0 c
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = "${AGENT_PID:-}" ] && continue
		c=$(cat "$d"/fdinfo/* 2>/dev/null | grep -c '^inotify wd:')
		n=$((n + c))
	done
	echo "$n"
}

# Run a storm of N fork+exec of /bin/true, at niceness NICE (0), every
# process's stderr on file ERR when given, else on the pipe its stdout is
# on (so that no figure depends on where the bench's own stderr goes: a
# regular file on a process's fds is listed in its record, files); prints
# "ELAPSED_S CPU_S" (CPU of the storm's processes: the BPF programs run in
# their context).
storm() {
	local out
	# shellcheck disable=SC2086
	out=$(nice -n "${2:-0}" "$WL/spawnstorm" "$1" /bin/true $STORM_ARGS 2>>"${3:-/dev/stdout}") ||
		die "spawnstorm failed: $out${3:+ $(tail -n 3 "$3")}"
	printf '%s\n' "$out" | sed -n 's/.*elapsed_s=\([0-9.]*\) cpu_s=\([0-9.]*\).*/\1 \2/p'
}

# Wall seconds of "burn S".
burn_wall() {
	local t0
	t0=$(now)
	"$WL/burn" "$1" >/dev/null || die "burn failed"
	calc '%.4f' "$(now) - $t0"
}

# Wait until the agent has caught up with a backlog (max 120 s): its CPU use
# falls to at most 2 ticks in a second.  Reads /proc only: polling "jobtrace
# status" would itself start processes, i.e. new events, and never settle.
drain() {
	local prev cur
	prev=$(cpu_ticks "$AGENT_PID")
	for _ in $(seq 1 120); do
		sleep 1
		cur=$(cpu_ticks "$AGENT_PID")
		[ $((cur - prev)) -le 2 ] && return 0
		prev=$cur
	done
	say "warning: agent still busy after 120 s"
}

# Start a fresh agent (empty state) on $AGENT_CONF and wait until it
# answers and is idle.
start_agent() {
	rm -rf "$T/state"
	mkdir -p "$T/state" "$T/run"
	bench_agent_start "$BUILD" "$AGENT_CONF"
	drain
}

# Record the agent's drop counter, then stop it with SIGTERM (max 60 s).
stop_agent() {
	local d
	[ -n "$AGENT_PID" ] || return 0
	d=$(status_val events_dropped)
	if [ -n "$d" ]; then
		DROPS_TOTAL=$((DROPS_TOTAL + d))
		DROPS_SEEN=1
	fi
	kill -TERM "$AGENT_PID" 2>/dev/null
	for _ in $(seq 1 600); do
		kill -0 "$AGENT_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$AGENT_PID" 2>/dev/null; then
		say "warning: agent ignored SIGTERM for 60 s, killing it"
		kill -KILL "$AGENT_PID"
	fi
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}

# Undo everything this script changed on the machine.
cleanup() {
	[ "$?" -eq 0 ] || FAILED=1
	stop_agent
	if [ -n "$SNOOP_PID" ]; then
		kill -INT "$SNOOP_PID" 2>/dev/null
		wait "$SNOOP_PID" 2>/dev/null
	fi
	[ -n "$STATS_OLD" ] && sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD"
	[ -n "$MOUNTED_TRACEFS" ] && umount /sys/kernel/tracing
	if [ -n "$T" ]; then
		if [ -n "$FAILED" ]; then
			say "kept $T"
		else
			rm -rf "$T"
		fi
	fi
}

# ---- preflight --------------------------------------------------------------------------

. "$BENCH_DIR/agent.sh"
bench_close_fds
[ "$(id -u)" -eq 0 ] || { echo "bench/run.sh: run as root (BPF)" >&2; exit 2; }
for f in "$AGENT" "$CLI"; do
	[ -x "$f" ] || { echo "bench/run.sh: $f not built; usage: bench/run.sh BUILD_DIR" >&2; exit 2; }
done
if [ ! -x "$WL/spawnstorm" ] || [ ! -x "$WL/burn" ] || [ ! -x "$WL/fileload" ]; then
	make -C "$BUILD" tests/workload/spawnstorm tests/workload/burn tests/workload/fileload >&2 ||
		{ echo "bench/run.sh: cannot build the workloads" >&2; exit 2; }
fi
for t in jq bpftool; do
	command -v "$t" >/dev/null ||
		{ echo "bench/run.sh: needs $t (apt-get install $t)" >&2; exit 2; }
done
HAVE_SNOOP=yes
[ -x "$EXECSNOOP" ] || { HAVE_SNOOP=no; say "no $EXECSNOOP (Debian package libbpf-tools): skipping the peer"; }

trap cleanup EXIT
trap 'FAILED=1; exit 1' INT TERM
T=$(mktemp -d /tmp/jobtrace-bench.XXXXXX)
cat >"$T/jobtrace.conf" <<EOF
log = { level = "info"; };
agent = { state_dir = "$T/state"; run_dir = "$T/run"; rules_dir = "$RULES_DIR"; };
${AGENT_EXTRA:-}
EOF
AGENT_CONF=$T/jobtrace.conf

# execsnoop attaches plain tracepoints: libbpf needs tracefs for their ids.
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs tracefs /sys/kernel/tracing && MOUNTED_TRACEFS=1
fi
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=0

T_START=$(now)
say "build $BUILD, $(nproc) CPUs, kernel $(uname -r), scratch $T"
OTHERS=$(other_bpf_holders)
INOTIFY_OTHERS=$(other_inotify_watches)
[ -n "$OTHERS" ] && say "warning: other processes hold BPF programs and will skew 'off': $OTHERS"

# ---- 1. storm, off vs on -----------------------------------------------------------------

STORM_RATIOS=()
STORM_OFF=()
STORM_ON=()
STORM_CPU_RATIOS=()
STORM_LINES=()
for i in $(seq 1 "$STORM_PAIRS"); do
	if [ $((i % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
	for mode in $order; do
		[ "$mode" = on ] && start_agent
		sync
		sleep 1
		e=$(storm "$STORM_N") || die "spawnstorm failed"
		if [ "$mode" = on ]; then
			read -r on on_cpu <<<"$e"
			stop_agent
		else
			read -r off off_cpu <<<"$e"
		fi
		say "storm pair $i: $mode wall/cpu ${e/ //}s"
	done
	r=$(calc '%.4f' "$on / $off")
	rc=$(calc '%.4f' "$on_cpu / $off_cpu")
	STORM_OFF+=("$off")
	STORM_ON+=("$on")
	STORM_RATIOS+=("$r")
	STORM_CPU_RATIOS+=("$rc")
	STORM_LINES+=("  pair $i ($order): wall off ${off}s on ${on}s ratio $r;  cpu off ${off_cpu}s on ${on_cpu}s ratio $rc")
done
STORM_RATIO=$(median "${STORM_RATIOS[@]}")
STORM_CPU_RATIO=$(median "${STORM_CPU_RATIOS[@]}")

# ---- 2. CPU-bound, off vs on ------------------------------------------------------------

BURN_RATIOS=()
BURN_OFF=()
BURN_ON=()
BURN_LINES=()
for i in $(seq 1 "$BURN_PAIRS"); do
	if [ $((i % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
	for mode in $order; do
		[ "$mode" = on ] && start_agent
		sleep 1
		e=$(burn_wall "$BURN_S") || die "burn failed"
		if [ "$mode" = on ]; then
			on=$e
			stop_agent
		else
			off=$e
		fi
		say "burn pair $i: $mode ${e}s"
	done
	r=$(calc '%.4f' "$on / $off")
	BURN_OFF+=("$off")
	BURN_ON+=("$on")
	BURN_RATIOS+=("$r")
	BURN_LINES+=("  pair $i ($order): off ${off}s  on ${on}s  ratio $r")
done
BURN_RATIO=$(median "${BURN_RATIOS[@]}")

# ---- 6. files: opens, 4 KiB reads, O_DIRECT writes; off vs on, BPF cost --------------------

# "ELAPSED_S OPS" of fileload MODE PATH ARG (exit 3: no O_DIRECT).
fileload() {
	local out
	out=$("$WL/fileload" "$@") || return $?
	printf '%s\n' "$out" | sed -n 's/.*elapsed_s=\([0-9.]*\) .*ops=\([0-9]*\).*/\1 \2/p'
}

# Median on/off wall ratio of fileload "$@" over PAIRS pairs: sets
# F_RATIO, F_OFF, F_ON (medians) and appends to FILES_LINES.
file_pairs() {
	local pairs=$1 what=$2 i mode order e on off r ratios=() offs=() ons=()
	shift 2
	for i in $(seq 1 "$pairs"); do
		if [ $((i % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
		for mode in $order; do
			[ "$mode" = on ] && start_agent
			sync
			sleep 1
			e=$(fileload "$@") || return 1
			read -r e _ <<<"$e"
			if [ "$mode" = on ]; then on=$e; stop_agent; else off=$e; fi
		done
		r=$(calc '%.4f' "$on / $off")
		ratios+=("$r"); offs+=("$off"); ons+=("$on")
		FILES_LINES+=("  $what pair $i ($order): off ${off}s on ${on}s ratio $r")
		say "files $what pair $i: off ${off}s on ${on}s"
	done
	F_RATIO=$(median "${ratios[@]}")
	F_OFF=$(median "${offs[@]}")
	F_ON=$(median "${ons[@]}")
}

# run_time_ns and run_cnt of the programs that read files together: the
# file iterator, the exit (whose fd-table walk is the files' part), and
# with files.follow_opens the open and close programs.
file_progs() {
	local p a b n=0 r=0
	for p in jt_files jt_exit jt_open jt_close; do
		read -r a b <<<"$(prog_stat "$AGENT_PID" "$p")"
		n=$((n + a))
		r=$((r + b))
	done
	echo "$n $r"
}

# BPF ns of the file programs per op of fileload "$@" (F_NS_OP), less what
# they ran for the rest of the machine over an idle window as long
# (F_BG_NS); F_RUNS: their runs in the window.
file_cost() {
	local n0 r0 n1 r1 e ops i0 i1 ir0 ir1 t0 el
	t0=$(now)
	read -r n0 r0 <<<"$(file_progs)"
	e=$(fileload "$@") || return 1
	read -r n1 r1 <<<"$(file_progs)"
	read -r el ops <<<"$e"
	el=$(calc '%.3f' "$(now) - $t0")
	# the machine's other syscalls over as long, nothing of ours running
	read -r i0 ir0 <<<"$(file_progs)"
	sleep "$el"
	read -r i1 ir1 <<<"$(file_progs)"
	F_BG_NS=$((i1 - i0))
	F_RUNS=$((r1 - r0))
	F_NS_OP=$(calc '%.1f' "(($n1 - $n0) - ($i1 - $i0)) / $ops")
}

FILES_LINES=()
FDIR=$T/files	# on $T's file system: not tmpfs, O_DIRECT needs a disk
mkdir -p "$FDIR/many"
fileload mk "$FDIR/many" "$FILES_N" >/dev/null || die "fileload mk failed"
head -c $((FILES_READ_MIB * 1048576)) /dev/zero >"$FDIR/read.dat" || die "cannot write $FDIR/read.dat"
cat "$FDIR/read.dat" >/dev/null	# in the page cache: the reads cost CPU, not the disk
say "files: $FILES_N files and $FILES_READ_MIB MiB in $FDIR ($(stat -f -c %T "$FDIR"))"
file_pairs "$FILES_PAIRS" opens opens "$FDIR/many" "$FILES_N" || die "fileload opens failed"
F_OPENS_RATIO=$F_RATIO; F_OPENS_OFF=$F_OFF; F_OPENS_ON=$F_ON
file_pairs "$FILES_PAIRS" read read "$FDIR/read.dat" 4096 "$FILES_READ_PASSES" || die "fileload read failed"
F_READ_RATIO=$F_RATIO; F_READ_OFF=$F_OFF; F_READ_ON=$F_ON
# the same with the rules folder watched by inotify (rules.inotify = true)
F_READ_NI_RATIO=n/a
READ_ON_RULES_FS=no	# else the watch cannot slow the reads
[ "$(stat -c %d "$FDIR")" = "$(stat -c %d "$RULES_DIR")" ] && READ_ON_RULES_FS=yes
case ${AGENT_EXTRA:-} in
*rules*) say "files: AGENT_EXTRA sets rules: the reads with inotify are not run" ;;
*)
	sed '$a rules = { inotify = true; };' "$T/jobtrace.conf" >"$T/inotify.conf"
	AGENT_CONF=$T/inotify.conf
	file_pairs "$FILES_PAIRS" read-inotify read "$FDIR/read.dat" 4096 "$FILES_READ_PASSES" ||
		die "fileload read failed"
	AGENT_CONF=$T/jobtrace.conf
	F_READ_NI_RATIO=$F_RATIO
	;;
esac
F_DIRECT=yes
if fileload dwrite "$FDIR/direct.dat" 1 >/dev/null; then
	file_pairs "$FILES_DIRECT_PAIRS" dwrite dwrite "$FDIR/direct.dat" "$FILES_READ_MIB" ||
		die "fileload dwrite failed"
	F_DW_RATIO=$F_RATIO; F_DW_OFF=$F_OFF; F_DW_ON=$F_ON
else
	F_DIRECT="no O_DIRECT on $(stat -f -c %T "$FDIR")"
	F_DW_RATIO=n/a; F_DW_OFF=n/a; F_DW_ON=n/a
fi
rm -f "$FDIR/direct.dat"
# BPF run time per open and per read, and the agent's CPU per open
start_agent
sysctl -q -w kernel.bpf_stats_enabled=1
c0=$(cpu_ticks "$AGENT_PID")
file_cost opens "$FDIR/many" "$FILES_N" || die "fileload opens failed"
drain
c1=$(cpu_ticks "$AGENT_PID")
F_OPEN_NS=$F_NS_OP; F_OPEN_BG=$F_BG_NS; F_OPEN_RUNS=$F_RUNS
F_OPEN_AGENT_US=$(calc '%.3f' "($c1 - $c0) * 1e6 / $TICK / $FILES_N")
file_cost read "$FDIR/read.dat" 4096 "$FILES_READ_PASSES" || die "fileload read failed"
F_READ_NS=$F_NS_OP; F_READ_BG=$F_BG_NS; F_READ_RUNS=$F_RUNS
sysctl -q -w kernel.bpf_stats_enabled=0
F_FILES_REC=$(cli status 2>/dev/null | sed -n 's/^files_map_full:[[:space:]]*//p')
stop_agent
rm -rf "$FDIR"

# ---- 3. cost per traced process ----------------------------------------------------------

# The agent, over one storm (every process's stderr: $1, see storm), with
# BPF run-time statistics on: the counters before (b0 c0 f0 sw_ns0 sw_cnt0
# x0 wait0, $T/status0) and after it (…1); W_BPF_US, W_TICKS_US and W_CPU_US
# (the agent's own cpu_ns, else its ticks) per process.
cost_window() {
	start_agent
	AGENT_PROGS=$(prog_names "$AGENT_PID")
	sysctl -q -w kernel.bpf_stats_enabled=1
	# the agent's own figures, read outside the window (a status request
	# is a process too, and its reply costs the agent a little)
	cli status >"$T/status0" 2>/dev/null
	wait0=$(main_wait "$AGENT_PID")
	prog_each "$AGENT_PID" >"$T/progs0"; c0=$(cpu_ticks "$AGENT_PID"); f0=$(forks_total)
	b0=$(progs_sum <"$T/progs0"); x0=$(ctxt_total)
	read -r sw_ns0 sw_cnt0 <<<"$(progs_of jt_switch <"$T/progs0")"
	# at nice 19: the storm then seldom preempts the agent's main thread
	# inside a stage, whose wall time would count the wait (counted work
	# is the same)
	storm "$STORM_N" 19 "${1:-}" >/dev/null
	drain
	prog_each "$AGENT_PID" >"$T/progs1"; c1=$(cpu_ticks "$AGENT_PID"); f1=$(forks_total)
	b1=$(progs_sum <"$T/progs1"); x1=$(ctxt_total)
	read -r sw_ns1 sw_cnt1 <<<"$(progs_of jt_switch <"$T/progs1")"
	wait1=$(main_wait "$AGENT_PID")
	cli status >"$T/status1" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled=0
	stop_agent
	W_BPF_US=$(calc '%.3f' "($b1 - $b0) / 1000 / $STORM_N")
	W_TICKS_US=$(calc '%.3f' "($c1 - $c0) * 1e6 / $TICK / $STORM_N")
	W_CPU_US=$W_TICKS_US
	grep -q '^cpu_ns:' "$T/status1" &&
		W_CPU_US=$(per_proc_us "$T/status0" "$T/status1" cpu_ns "$STORM_N")
	# each program's us per process: name=us
	W_PROGS=$(LC_ALL=C join "$T/progs0" "$T/progs1" | awk -v n="$STORM_N" \
		'$4 > $2 { printf "%s%s=%.3f", sep, $1, ($4 - $2) / 1000 / n; sep = " " }')
	return 0
}

# First with a regular file on every process's stderr (a file, listed in
# each record: what recording one file adds), then the figure's window:
# stderr on a pipe, as stdout.
cost_window "$T/storm.err"
AF_BPF_US=$W_BPF_US
AF_CPU_US=$W_CPU_US
AF_TOT_US=$(calc '%.3f' "$AF_BPF_US + $AF_CPU_US")
AF_PROGS=$W_PROGS
cost_window
A_PROGS=$W_PROGS
A_BPF_US=$W_BPF_US
A_TICKS_US=$W_TICKS_US
# where the agent's CPU went: its own clocks, in ns (the ticks above are
# 10 ms each, 0.5 us per process at 20000); an agent without them: ticks
STAGES="decode track classify encode spool sample"
STAGE_ROWS=()
SINK_ROWS=()
SINKS=$(sed -n 's/^sink\.\(.*\)\.cpu_ns:.*/\1/p' "$T/status1")
if grep -q '^cpu_ns:' "$T/status1"; then
	A_CPU_US=$(per_proc_us "$T/status0" "$T/status1" cpu_ns "$STORM_N")
	A_MAIN_US=$(per_proc_us "$T/status0" "$T/status1" cpu_main_ns "$STORM_N")
	window_rows 'stage.%s_ns' 'stage.%s_count' $STAGES
	STAGE_ROWS=("${ROWS[@]}")
	STAGE_SUM=$ROW_SUM
	window_rows 'sink.%s.cpu_ns' 'sink.%s.delivered' $SINKS
	SINK_ROWS=("${ROWS[@]}")
	SINK_SUM=$ROW_SUM
	A_OTHER_US=$(calc '%.3f' "$A_CPU_US - $STAGE_SUM - $SINK_SUM")
	A_MAIN_OTHER_US=$(calc '%.3f' "$A_MAIN_US - $STAGE_SUM")
	A_MAIN_WAIT_US=$(calc '%.3f' "($wait1 - $wait0) / 1000 / $STORM_N")
	STAGE_CLOCK=$(sed -n 's/^stage\.clock:[[:space:]]*//p' "$T/status1")
else
	A_CPU_US=$A_TICKS_US
fi
A_TOT_US=$(calc '%.3f' "$A_BPF_US + $A_CPU_US")
A_FORKS=$((f1 - f0))
# the hook on every context switch that finds a dead task's last one
SW_RUNS=$((sw_cnt1 - sw_cnt0))
SW_CTXT=$((x1 - x0))
SW_US=$(calc '%.3f' "($sw_ns1 - $sw_ns0) / 1000 / $STORM_N")
SW_NS_EACH=$([ "$SW_RUNS" -gt 0 ] && calc '%.1f' "($sw_ns1 - $sw_ns0) / $SW_RUNS" || echo n/a)
say "agent: bpf ${A_BPF_US}us + cpu ${A_CPU_US}us per process ($A_FORKS forks seen)"

# execsnoop, same storm size, agent off.
S_BPF_US=n/a; S_CPU_US=n/a; S_TOT_US=n/a; S_FORKS=n/a; S_LINES=n/a; S_LOST=n/a; S_PROGS=n/a
TOT_RATIO=n/a
S_PER_FORK=n/a
if [ "$HAVE_SNOOP" = yes ]; then
	"$EXECSNOOP" >"$T/execsnoop.out" 2>"$T/execsnoop.err" &
	SNOOP_PID=$!
	for _ in $(seq 1 100); do
		[ -n "$(prog_ids "$SNOOP_PID")" ] && break
		kill -0 "$SNOOP_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -n "$(prog_ids "$SNOOP_PID")" ]; then
		sleep 0.5
		S_PROGS=$(prog_names "$SNOOP_PID")
		sysctl -q -w kernel.bpf_stats_enabled=1
		b0=$(bpf_ns "$SNOOP_PID"); c0=$(cpu_ticks "$SNOOP_PID"); f0=$(forks_total)
		storm "$STORM_N" 19 >/dev/null	# as for the agent
		prev=
		for _ in $(seq 1 60); do	# until its output stops growing
			cur=$(wc -l <"$T/execsnoop.out")
			[ "$cur" = "$prev" ] && break
			prev=$cur
			sleep 0.5
		done
		b1=$(bpf_ns "$SNOOP_PID"); c1=$(cpu_ticks "$SNOOP_PID"); f1=$(forks_total)
		sysctl -q -w kernel.bpf_stats_enabled=0
		S_BPF_US=$(calc '%.3f' "($b1 - $b0) / 1000 / $STORM_N")
		S_CPU_US=$(calc '%.3f' "($c1 - $c0) * 1e6 / $TICK / $STORM_N")
		S_TOT_US=$(calc '%.3f' "$S_BPF_US + $S_CPU_US")
		TOT_RATIO=$(calc '%.2f' "$A_TOT_US / $S_TOT_US")
		S_FORKS=$((f1 - f0))
		S_PER_FORK=$(calc '%.3f' "$S_TOT_US * $STORM_N / $S_FORKS")
		S_LINES=$(($(wc -l <"$T/execsnoop.out") - 1))
		S_LOST=$(grep -io 'lost [0-9]*' "$T/execsnoop.err" | awk '{ s += $2 } END { print s + 0 }')
		say "execsnoop: bpf ${S_BPF_US}us + cpu ${S_CPU_US}us per process"
	else
		say "warning: execsnoop did not attach: $(head -n 3 "$T/execsnoop.err")"
	fi
	kill -INT "$SNOOP_PID" 2>/dev/null
	wait "$SNOOP_PID" 2>/dev/null
	SNOOP_PID=
fi

# ---- 5. RSS over many processes (4. drops are counted by every stop_agent) --------------

start_agent
RSS_START=$(rss_kib "$AGENT_PID")
RSS_LINES=()
done_n=0
RSS_FIRST=
# the agent's CPU over the first batch and over the last one (a store that
# grows may cost more per record): status before and after each
cli status >"$T/rss0" 2>/dev/null
while [ "$done_n" -lt "$RSS_TOTAL" ]; do
	last=$([ $((done_n + RSS_BATCH)) -ge "$RSS_TOTAL" ] && [ "$done_n" -gt 0 ] && echo 1)
	if [ -n "$last" ]; then
		drain
		cli status >"$T/rss2" 2>/dev/null
	fi
	storm "$RSS_BATCH" >/dev/null
	done_n=$((done_n + RSS_BATCH))
	if [ -z "$RSS_FIRST" ] || [ -n "$last" ]; then
		drain
	fi
	[ -z "$RSS_FIRST" ] && cli status >"$T/rss1" 2>/dev/null
	r=$(rss_kib "$AGENT_PID")
	[ -z "$RSS_FIRST" ] && RSS_FIRST=$r
	RSS_LINES+=("$done_n:$r")
	say "rss after $done_n processes: $r KiB"
done
cli status >"$T/rss3" 2>/dev/null
RSS_LAST=$r
# "AGENT_US SINKS_US": per process of a batch, all threads and the sinks'
batch_cost() {
	local k sinks=0
	for k in $SINKS; do
		sinks=$(calc '%.3f' "$sinks + $(per_proc_us "$1" "$2" "sink.$k.cpu_ns" "$RSS_BATCH")")
	done
	echo "$(per_proc_us "$1" "$2" cpu_ns "$RSS_BATCH") $sinks"
}
read -r RSS_CPU_FIRST RSS_SINK_FIRST <<<"$(batch_cost "$T/rss0" "$T/rss1")"
RSS_CPU_LAST=n/a
RSS_SINK_LAST=n/a
[ -s "$T/rss2" ] && read -r RSS_CPU_LAST RSS_SINK_LAST <<<"$(batch_cost "$T/rss2" "$T/rss3")"
read -r RSS_RB RSS_ANON RSS_FILES <<<"$(rss_parts "$AGENT_PID")"
RSS_DROPS=$(status_val events_dropped)
stop_agent

# ---- results -------------------------------------------------------------------------------

verdict() {	# verdict EXPR -> PASS/FAIL
	awk "BEGIN { print ($1) ? \"PASS\" : \"FAIL\" }"
}
DROPS_SHOWN=$([ -n "$DROPS_SEEN" ] && echo "$DROPS_TOTAL" || echo "n/a")
RSS_GROWTH=$(calc '%.1f' "($RSS_LAST - $RSS_FIRST) * 100 / $RSS_FIRST")
{
	echo "jobtrace benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "command: bench/run.sh $BUILD  (STORM_N=$STORM_N STORM_PAIRS=$STORM_PAIRS BURN_S=$BURN_S BURN_PAIRS=$BURN_PAIRS RSS_BATCH=$RSS_BATCH RSS_TOTAL=$RSS_TOTAL FILES_N=$FILES_N FILES_READ_MIB=$FILES_READ_MIB FILES_READ_PASSES=$FILES_READ_PASSES FILES_PAIRS=$FILES_PAIRS FILES_DIRECT_PAIRS=$FILES_DIRECT_PAIRS${AGENT_EXTRA:+ AGENT_EXTRA='$AGENT_EXTRA'})"
	echo "machine: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo); source $(git -C "$SRC_DIR" rev-parse --short HEAD 2>/dev/null || echo '?'); run took $(calc '%.0f' "$(now) - $T_START") s"
	echo "other BPF program holders at start (skew the 'off' runs): ${OTHERS:-none}"
	echo "inotify watches other processes hold at start (any file system): $INOTIFY_OTHERS; the reads' file on the rules folder's file system: $READ_ON_RULES_FS"
	echo
	printf '%-52s %14s %14s %s\n' figure value target verdict
	printf '%-52s %14s %14s %s\n' "1. storm $STORM_N x fork+exec /bin/true, off (median s)" "$(median "${STORM_OFF[@]}")" "" ""
	printf '%-52s %14s %14s %s\n' "   on (median s)" "$(median "${STORM_ON[@]}")" "" ""
	printf '%-52s %14s %14s %s\n' "   median on/off ratio, $STORM_PAIRS pairs" "$STORM_RATIO" "<= 1.05" "$(verdict "$STORM_RATIO <= 1.05")"
	printf '%-52s %14s %14s %s\n' "   median on/off ratio of the storm's CPU time" "$STORM_CPU_RATIO" "" "(info)"
	printf '%-52s %14s %14s %s\n' "2. burn $BURN_S, off (median s)" "$(median "${BURN_OFF[@]}")" "" ""
	printf '%-52s %14s %14s %s\n' "   on (median s)" "$(median "${BURN_ON[@]}")" "" ""
	printf '%-52s %14s %14s %s\n' "   median on/off ratio, $BURN_PAIRS pairs" "$BURN_RATIO" "<= 1.01" "$(verdict "$BURN_RATIO <= 1.01")"
	printf '%-52s %14s %14s %s\n' "3. per process, storm of $STORM_N: jobtraced BPF (us)" "$A_BPF_US" "" ""
	printf '%-52s %14s %14s %s\n' "   of which jt_switch, last context switch (us)" "$SW_US" "" ""
	printf '%-52s %14s %14s %s\n' "   jt_switch per context switch (ns)" "$SW_NS_EACH" "" ""
	printf '%-52s %14s %14s %s\n' "   jobtraced user+sys CPU, all threads (us)" "$A_CPU_US" "<= 20" "$(verdict "$A_CPU_US <= 20")"
	for row in "${STAGE_ROWS[@]}"; do
		IFS='|' read -r st u n <<<"$row"
		printf '%-52s %14s %14s %s\n' "     stage $st (us)" "$u" "" ""
	done
	for row in "${SINK_ROWS[@]}"; do
		IFS='|' read -r k u n <<<"$row"
		printf '%-52s %14s %14s %s\n' "     sink $k, its threads' CPU (us)" "$u" "" ""
	done
	[ -n "${A_OTHER_US:-}" ] &&
		printf '%-52s %14s %14s %s\n' "     other: CPU - stages - sinks (us)" "$A_OTHER_US" "" ""
	printf '%-52s %14s %14s %s\n' "   jobtraced total (us)" "$A_TOT_US" "<= 30" "$(verdict "$A_TOT_US <= 30")"
	printf '%-52s %14s %14s %s\n' "   with a regular file on stderr: BPF (us)" "$AF_BPF_US" "" "(info)"
	printf '%-52s %14s %14s %s\n' "     jobtraced user+sys CPU (us)" "$AF_CPU_US" "" "(info)"
	printf '%-52s %14s %14s %s\n' "     jobtraced total (us)" "$AF_TOT_US" "" "(info)"
	printf '%-52s %14s %14s %s\n' "     the file's share: total - total above (us)" "$(calc '%.3f' "$AF_TOT_US - $A_TOT_US")" "" "(info)"
	printf '%-52s %14s %14s %s\n' "   execsnoop BPF (us)" "$S_BPF_US" "" ""
	printf '%-52s %14s %14s %s\n' "   execsnoop user+sys CPU (us)" "$S_CPU_US" "" ""
	printf '%-52s %14s %14s %s\n' "   execsnoop total (us)" "$S_TOT_US" "" ""
	printf '%-52s %14s %14s %s\n' "   ratio jobtraced total / execsnoop total" "$TOT_RATIO" "" "(info)"
	printf '%-52s %14s %14s %s\n' "4. events dropped (sum over $((STORM_PAIRS + BURN_PAIRS + 2)) agent runs)" "$DROPS_SHOWN" "0" "$(verdict "\"$DROPS_SHOWN\" == \"0\"")"
	printf '%-52s %14s %14s %s\n' "   of which in the $RSS_TOTAL-process run" "${RSS_DROPS:-n/a}" "0" ""
	printf '%-52s %14s %14s %s\n' "5. agent VmRSS idle at start (KiB)" "$RSS_START" "" ""
	printf '%-52s %14s %14s %s\n' "   after $RSS_BATCH processes (KiB)" "$RSS_FIRST" "" ""
	printf '%-52s %14s %14s %s\n' "   after $RSS_TOTAL processes (KiB)" "$RSS_LAST" "<= 32768" "$(verdict "$RSS_FIRST <= 32768 && $RSS_LAST <= 32768")"
	printf '%-52s %14s %14s %s\n' "   growth from $RSS_BATCH to $RSS_TOTAL (%)" "$RSS_GROWTH" "<= 10" "$(verdict "$RSS_GROWTH <= 10")"
	printf '%-52s %14s %14s %s\n' "   agent CPU per process, first / last batch (us)" "$RSS_CPU_FIRST / $RSS_CPU_LAST" "" "(info)"
	printf '%-52s %14s %14s %s\n' "     of which the sinks' threads (us)" "$RSS_SINK_FIRST / $RSS_SINK_LAST" "" "(info)"
	printf '%-52s %14s %14s %s\n' "6. files: $FILES_N opens+closes, off (median s)" "$F_OPENS_OFF" "" ""
	printf '%-52s %14s %14s %s\n' "   on (median s)" "$F_OPENS_ON" "" ""
	printf '%-52s %14s %14s %s\n' "   median on/off ratio, $FILES_PAIRS pairs" "$F_OPENS_RATIO" "" "(info)"
	printf '%-52s %14s %14s %s\n' "   $FILES_READ_MIB MiB x $FILES_READ_PASSES in 4 KiB reads, off (median s)" "$F_READ_OFF" "" ""
	printf '%-52s %14s %14s %s\n' "   on (median s)" "$F_READ_ON" "" ""
	printf '%-52s %14s %14s %s\n' "   median on/off ratio, $FILES_PAIRS pairs" "$F_READ_RATIO" "<= 1.03" "$(verdict "$F_READ_RATIO <= 1.03")"
	printf '%-52s %14s %14s %s\n' "   the same, rules.inotify = true" "$F_READ_NI_RATIO" "" "(info)"
	printf '%-52s %14s %14s %s\n' "   $FILES_READ_MIB MiB O_DIRECT writes, off (median s)" "$F_DW_OFF" "" ""
	printf '%-52s %14s %14s %s\n' "   on (median s)" "$F_DW_ON" "" ""
	printf '%-52s %14s %14s %s\n' "   median on/off ratio, $FILES_DIRECT_PAIRS pairs" "$F_DW_RATIO" "" "(info)"
	printf '%-52s %14s %14s %s\n' "   BPF per openat+close, file programs (us)" "$(calc '%.3f' "$F_OPEN_NS / 1000")" "<= 1.5" "$(verdict "$F_OPEN_NS / 1000 <= 1.5")"
	printf '%-52s %14s %14s %s\n' "   BPF per 4 KiB read (ns)" "$F_READ_NS" "" "(info)"
	printf '%-52s %14s %14s %s\n' "   jobtraced CPU per open, all threads (us)" "$F_OPEN_AGENT_US" "" "(info)"
	echo
	echo "details"
	echo " storm pairs:"
	printf '%s\n' "${STORM_LINES[@]}"
	echo " burn pairs:"
	printf '%s\n' "${BURN_LINES[@]}"
	echo " per-process windows: agent saw $A_FORKS forks on the machine for $STORM_N started (others are noise);"
	echo "   jobtraced CPU from /proc/PID/stat ticks: $A_TICKS_US us per process (the figure above is the agent's own cpu_ns)"
	echo "   BPF us per process by program: $A_PROGS"
	echo "   the same with a regular file on stderr: $AF_PROGS"
	if [ -n "${A_OTHER_US:-}" ]; then
		echo "   stages are the main thread's wall time on the $STAGE_CLOCK clock (a preempted stage counts its wait);"
		echo "   main thread CPU $A_MAIN_US us, of which outside the stages $A_MAIN_OTHER_US us (negative: waits inside them);"
		echo "   main thread runnable but waiting for a CPU (schedstat): $A_MAIN_WAIT_US us; per stage, times entered:"
		for row in "${STAGE_ROWS[@]}"; do
			IFS='|' read -r st u n <<<"$row"
			echo "     $st $n"
		done
		for row in "${SINK_ROWS[@]}"; do
			IFS='|' read -r k u n <<<"$row"
			echo "     sink $k: $n records delivered"
		done
	fi
	echo "   execsnoop: $S_FORKS forks, $S_LINES lines printed, $S_LOST lost"
	echo "   total per fork seen (the storm's and the noise's, each traced): jobtraced $(calc '%.3f' "$A_TOT_US * $STORM_N / $A_FORKS") us, execsnoop $S_PER_FORK us"
	echo " agent BPF programs: $AGENT_PROGS"
	echo " jt_switch ran $SW_RUNS times during the storm window ($SW_CTXT context switches in /proc/stat)"
	echo " execsnoop BPF programs: $S_PROGS"
	echo " RSS (processes:KiB): ${RSS_LINES[*]}"
	echo " files: O_DIRECT: $F_DIRECT; pairs:"
	printf '%s\n' "${FILES_LINES[@]}"
	echo "   file programs (jt_files, jt_exit; jt_open, jt_close with follow_opens): $F_OPEN_RUNS runs over the opens window, $F_READ_RUNS over the reads';"
	echo "   the machine's other exits and passes over as long, subtracted: $F_OPEN_BG ns and $F_READ_BG ns; fd map full: ${F_FILES_REC:-n/a}"
	echo " RSS after $RSS_TOTAL processes by kind (KiB): BPF ring buffer $RSS_RB, anonymous (heap, arenas, stacks) $RSS_ANON, files (program and libraries) $RSS_FILES"
} | tee "$OUT"
say "results written to $OUT"
