#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_figures.sh - are the figures a user adds up true?  Run the real agent
# against the real kernel and compare its records with references measured
# independently of it (issue 9):
#   1. CPU of 500 short processes with what wait4(2) reported for each
#      (tests/workload/wait4cpu), 50 of them multi-threaded.  wait4cpu and
#      its children run SCHED_FIFO on core 0: a child then reaches its last
#      context switch before its parent runs again and reaps it, so wait4's
#      figure is final (a parent on another core can reap a child still on
#      its way out, its last few tens of us not in wait4's figure: seen
#      beside two busy loops);
#   2. a process's own I/O: a shell that runs dd of 64 MiB (conv=fdatasync)
#      is not charged its reaped child's bytes;
#   3. a writer's dirty pages deleted by another process: the writer keeps its
#      write_bytes, the deleter shows them as cancelled_write_bytes; and a
#      process that writes and deletes (gzip) shows both (each compared with
#      its own /proc/self/io, tests/workload/dirtyio);
#   4. a job's memory peak from its v1 memory cgroup (memory.max_usage_in_bytes,
#      read by the test) while two processes hold 200 MiB each at once;
#   5. the same in a cgroup v2 cgroup: memory.peak where the memory controller
#      is there, else the peak of the sum of the samples' RSS (about 400 MiB);
#      in both, the job's CPU with the cgroup's own CPU counter (v1
#      cpuacct.usage, v2 cpu.stat usage_usec);
#   6. a process whose threads write and exit before it: its own I/O with
#      its /proc/self/io read after the last thread was joined;
#   7. report --job on a running job: its CPU so far with /proc/PID/stat
#      at the sample's own time;
#   8. 20 OOM victims that free 512 MiB each while samples run every 0.1 s:
#      each recorded as OOM-killed by SIGKILL (as its shell saw it), none as
#      an exit lost.
#
# Needs root, kernel BTF and the sqlite3 CLI.  Exit 0 pass, 1 fail,
# 77 skipped (not root / no BTF), 99 hard error (a prerequisite is missing).
# Prints one "ok - ..." / "not ok - ..." line per assertion, "# ..." lines of
# evidence, and ends with "N passed, M failed".
#
# Run:  top_builddir=BUILD top_srcdir=SRC bash tests/integration/test_figures.sh
# or    make check TESTS=tests/integration/test_figures.sh   (in BUILD)
# Set JOBTRACE_TEST_KEEP=1 to keep the temporary folder (it is always kept
# when an assertion fails).

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/touchmem" "$WL/wait4cpu" "$WL/dirtyio" "$WL/threads"
need_commands chrt taskset
CGROUPS=	# cgroup folders this test made
WDIR=$T		# written files must be on a disk file system (tmpfs counts nothing)
if [ "$(stat -f -c %T "$T")" = tmpfs ]; then
	WDIR=$top_builddir
fi

# Kill what is left in cgroup folder $1 and remove it.
drop_cgroup() {
	local p
	[ -d "$1" ] || return 0
	for p in $(cat "$1/cgroup.procs" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	for _ in $(seq 1 20); do
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	note "could not remove $1"
}

# The cgroups and the written files are this test's own leftovers.
extra_cleanup() {
	local d
	for d in $CGROUPS; do
		drop_cgroup "$d"
	done
	rm -f "$WDIR/fig_dd.dat" "$WDIR/fig_dirty.dat" "$WDIR"/fig_thr.dat.*
}
start_watchdog 110

# ---- start the agent, then sample every 0.1 s ------------------------------------------

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish
# lib.sh writes sample_interval = 1.0 and libconfig refuses a second collector
# group, so the interval the sample-based job peak needs comes by a reload.
sed -i 's/sample_interval = 1\.0;/sample_interval = 0.1;/' "$CONF"
out=$(cli reload 2>&1)
st=$?
check "'jobtrace reload' (exit $st) with sample_interval = 0.1" eq "$st" 0
[ "$st" -eq 0 ] || note "$out"

# ---- 1. CPU of short processes: wait4's figure for each child ---------------------------

N=500
W4_T0=$(now)
chrt -f 10 taskset -c 0 "$WL/wait4cpu" $N "$WL/burn" "$WL/threads" >"$T/wait4cpu.out"
W4_ST=$?
W4_SUM=$(tail -n 1 "$T/wait4cpu.out")
W4_PID=$(kv "$W4_SUM" pid)
note "wait4cpu (exit $W4_ST, $(awk -v a="$W4_T0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s): $W4_SUM"

# ---- 2. own I/O: a shell and the dd it reaps --------------------------------------------

note "written files in $WDIR ($(stat -f -c %T "$WDIR"))"
DD_OUT=$(sh -c 'dd if=/dev/zero of="$1" bs=1M count=64 conv=fdatasync 2>/dev/null
	echo "pid=$$ dd_status=$?"' sh "$WDIR/fig_dd.dat")
SH_PID=$(kv "$DD_OUT" pid)
rm -f "$WDIR/fig_dd.dat"

# ---- 3. a writer leaves dirty pages, a separate process deletes the file ----------------

WR_OUT=$("$WL/dirtyio" write "$WDIR/fig_dirty.dat" $((16 * MIB)))
DEL_OUT=$("$WL/dirtyio" unlink "$WDIR/fig_dirty.dat")
WR_PID=$(kv "$WR_OUT" pid)
DEL_PID=$(kv "$DEL_OUT" pid)
SELF_OUT=$("$WL/dirtyio" write-unlink "$WDIR/fig_dirty.dat" $((16 * MIB)))
SELF_PID=$(kv "$SELF_OUT" pid)

# ---- 6. threads that write and exit before their process --------------------------------

THR_OUT=$("$WL/dirtyio" threads "$WDIR/fig_thr.dat" 4 $((4 * MIB)))
THR_PID=$(kv "$THR_OUT" pid)
rm -f "$WDIR"/fig_thr.dat.*

# The figure KEY of a /proc/PID/io listing in $1.
io_field() {
	printf '%s\n' "$1" | sed -n "s/^$2: //p"
}

# ---- 4, 5. a job's memory peak: two processes hold 200 MiB each at once -----------------

# Register job $1 on cgroup folder $2 (path $3 in its hierarchy), run two
# touchmem 200 MiB, held 3 s, at the same time in it (and in the CPU
# accounting cgroup folder $5 too, if not the same), read the cgroup's own
# peak file $4 (if any) into CG_PEAK and its CPU file $6 (cpuacct.usage or
# cpu.stat) into CG_CPU (seconds), and end the job.
run_job() {
	local job=$1 dir=$2 path=$3 peakfile=$4 cpudir=$5 cpufile=$6 i p pids= st
	CG_PEAK= CG_CPU=
	cli job-start --strict --job "$job" --scheduler test --cgroup "$path" >"$T/$job.hook" 2>&1
	st=$?
	check "job-start --job $job --cgroup $path (exit $st)" eq "$st" 0
	for i in 1 2; do
		(echo "$BASHPID" >"$dir/cgroup.procs" &&
			{ [ "$cpudir" = "$dir" ] || echo "$BASHPID" >"$cpudir/cgroup.procs"; } &&
			exec "$WL/touchmem" 200 3000) >"$T/$job.touch$i.out" &
		pids="$pids $!"
		BG_PIDS="$BG_PIDS $!"
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
		reaped "$p"
	done
	[ -n "$peakfile" ] && CG_PEAK=$(cat "$dir/$peakfile")
	case $cpufile in
	cpuacct.usage) CG_CPU=$(awk '{ printf "%.6f", $1 / 1e9 }' "$cpudir/$cpufile") ;;
	cpu.stat) CG_CPU=$(awk '$1 == "usage_usec" { printf "%.6f", $2 / 1e6 }' "$cpudir/$cpufile") ;;
	esac
	note "$job: touchmem $(cat "$T/$job".touch*.out | tr '\n' ' ')" \
		"$job: $dir/${peakfile:-(no memory peak file)}: $CG_PEAK" \
		"$job: $cpudir/$cpufile: $CG_CPU s"
	sleep 0.5	# an epilog runs after the job's processes have gone
	cli job-end --strict --job "$job" --scheduler test >>"$T/$job.hook" 2>&1
	st=$?
	check "job-end --job $job (exit $st)" eq "$st" 0
	drop_cgroup "$dir"
	drop_cgroup "$cpudir"
}

# Make cgroup folder $1; false if not possible.
make_cgroup() {
	mkdir "$1" 2>/dev/null || return 1
	CGROUPS="$CGROUPS $1"
}

V1_RAN= V2_SOURCE=
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	V2ROOT=/sys/fs/cgroup		# pure cgroup v2
	grep -qw memory "$V2ROOT/cgroup.controllers" &&
		! grep -qw memory "$V2ROOT/cgroup.subtree_control" &&
		echo +memory >"$V2ROOT/cgroup.subtree_control" 2>/dev/null
else
	V2ROOT=/sys/fs/cgroup/unified	# hybrid, or none
fi
V1ROOT=/sys/fs/cgroup/memory
note "cgroup layout: v2 at $V2ROOT ($(cat "$V2ROOT/cgroup.controllers" 2>/dev/null || echo absent))," \
	"v1 memory controller $([ -e "$V1ROOT/memory.max_usage_in_bytes" ] && echo "at $V1ROOT" || echo absent)"

# 4. cgroup v1 (hybrid and legacy nodes)
if [ -e "$V1ROOT/memory.max_usage_in_bytes" ] && make_cgroup "$V1ROOT/jt_fig_job_$$" &&
	make_cgroup "/sys/fs/cgroup/cpuacct/jt_fig_job_$$"; then
	run_job FIG1 "$V1ROOT/jt_fig_job_$$" "/jt_fig_job_$$" memory.max_usage_in_bytes \
		"/sys/fs/cgroup/cpuacct/jt_fig_job_$$" cpuacct.usage
	V1_RAN=1 V1_PEAK=$CG_PEAK V1_CPU=$CG_CPU
else
	note "no v1 memory cgroup could be made: the cgroup_v1 case is not run"
fi

# 5. cgroup v2: memory.peak where the memory controller is enabled in the
# cgroup, else no memory cgroup at all and the samples are all there is
if [ -e "$V2ROOT/cgroup.controllers" ] && make_cgroup "$V2ROOT/jt_fig_v2_$$"; then
	if [ -e "$V2ROOT/jt_fig_v2_$$/memory.peak" ]; then
		V2_SOURCE=cgroup_v2
		run_job FIG2 "$V2ROOT/jt_fig_v2_$$" "/jt_fig_v2_$$" memory.peak \
			"$V2ROOT/jt_fig_v2_$$" cpu.stat
	else
		V2_SOURCE=samples
		run_job FIG2 "$V2ROOT/jt_fig_v2_$$" "/jt_fig_v2_$$" "" \
			"$V2ROOT/jt_fig_v2_$$" cpu.stat
	fi
	V2_PEAK=$CG_PEAK V2_CPU=$CG_CPU
else
	check "could make a cgroup v2 cgroup under $V2ROOT" false
fi

# ---- 7. report --job on a running job ------------------------------------------------------

# burn 3 in a cgroup of its own, registered as job FIG3.  While it runs, the
# test reads the kernel's figure for it (/proc/PID/stat utime+stime) every
# 50 ms with the time; 2 s in, the report's CPU so far comes from the latest
# stored sample, which the store has a moment after the sample's own time:
# the reference is the kernel's figure at that time, interpolated.
RUN_CPU= RUN_STATE= RUN_REF=
if make_cgroup "$V2ROOT/jt_fig_run_$$"; then
	cli job-start --strict --job FIG3 --scheduler test --cgroup "/jt_fig_run_$$" >"$T/FIG3.hook" 2>&1
	(echo "$BASHPID" >"$V2ROOT/jt_fig_run_$$/cgroup.procs" &&
		exec "$WL/burn" 3) >"$T/FIG3.burn.out" &
	RUN_PID=$!
	BG_PIDS="$BG_PIDS $RUN_PID"
	hz=$(getconf CLK_TCK)
	# each read stamped before and after it: "t0 cpu_ms t1"
	while stamp && t0=$REPLY && read -r -a st <"/proc/$RUN_PID/stat" 2>/dev/null; do
		stamp
		echo "$t0 $(((st[13] + st[14]) * 1000 / hz)) $REPLY"
		sleep 0.05
	done >"$T/FIG3.poll" 2>/dev/null &
	POLL_PID=$!
	BG_PIDS="$BG_PIDS $POLL_PID"
	sleep 2
	cli report --job FIG3 --format json >"$T/FIG3.json" 2>"$T/FIG3.err"
	wait "$RUN_PID"
	reaped "$RUN_PID"
	wait "$POLL_PID"
	reaped "$POLL_PID"
	cli job-end --strict --job FIG3 --scheduler test >>"$T/FIG3.hook" 2>&1
	drop_cgroup "$V2ROOT/jt_fig_run_$$"
	# state, CPU so far, and the kernel's CPU (ms in the poll) at the
	# sample's time, between the two polls around it
	read -r RUN_STATE RUN_CPU RUN_REF RUN_AT < <(python3 -c '
import datetime, json, sys
r = json.load(open(sys.argv[1]))
s = r["samples"][-1]
t = datetime.datetime.fromisoformat(s["time"].replace("Z", "+00:00")).timestamp()
# a read at the middle of its two stamps
poll = [((a + b) / 2, c) for a, c, b in
        (tuple(map(float, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 3)]
ref = "-"
for (t0, c0), (t1, c1) in zip(poll, poll[1:]):
    if t0 <= t <= t1:
        ref = "%.3f" % ((c0 + (c1 - c0) * (t - t0) / (t1 - t0)) / 1000)
print((r.get("job") or {}).get("state"), r["summary"]["cpu_s"], ref, s["time"])' \
		"$T/FIG3.json" "$T/FIG3.poll" 2>>"$T/FIG3.err")
	note "FIG3 2 s into burn 3: report state ${RUN_STATE:-?}, CPU so far ${RUN_CPU:-?} s from the sample of ${RUN_AT:-?};" \
		"the kernel's figure then (/proc/PID/stat, $(wc -l <"$T/FIG3.poll") reads 50 ms apart): ${RUN_REF:-?} s" \
		"$(head -c 300 "$T/FIG3.err")"
	check "FIG3: the report of the running job says RUNNING (${RUN_STATE:-none})" eq "${RUN_STATE:-}" RUNNING
	# 10 ms ticks, and a 50 ms read interval at 100% CPU
	check "FIG3: its CPU so far ${RUN_CPU:-?} s within 60 ms of the kernel's ${RUN_REF:-?} s at the sample's time" \
		near "${RUN_CPU:-}" "${RUN_REF:-}" 0 0.06
	check "FIG3: the report is recent: CPU so far ${RUN_CPU:-?} s is more than 0.8 s of the 2 s the job ran" \
		between "${RUN_CPU:-}" 0.8 2.1
else
	check "could make a cgroup under $V2ROOT for the running job" false
fi

# ---- 8. OOM victims while samples run -------------------------------------------------------

# A victim frees its memory for milliseconds after its exit tracepoint; a
# sample pass then must not take it for a process gone without an exit.
OOM_N=20 OOM_SEEN=
if [ -e "$V1ROOT/memory.limit_in_bytes" ] && make_cgroup "$V1ROOT/jt_fig_oom_$$"; then
	OOM_DIR=$V1ROOT/jt_fig_oom_$$ OOM_LIMIT=memory.limit_in_bytes
elif make_cgroup "$V2ROOT/jt_fig_oom_$$" && [ -e "$V2ROOT/jt_fig_oom_$$/memory.max" ]; then
	OOM_DIR=$V2ROOT/jt_fig_oom_$$ OOM_LIMIT=memory.max
else
	OOM_DIR=
fi
if [ -n "$OOM_DIR" ]; then
	echo $((512 * MIB)) >"$OOM_DIR/$OOM_LIMIT"
	for _ in $(seq 1 $OOM_N); do
		(echo "$BASHPID" >"$OOM_DIR/cgroup.procs" &&
			exec "$WL/touchmem" 1024 >/dev/null 2>&1) 2>/dev/null &
		p=$!
		wait "$p" 2>/dev/null
		[ $? -eq 137 ] && OOM_SEEN="$OOM_SEEN $p"
	done
	drop_cgroup "$OOM_DIR"
else
	note "no memory cgroup with a limit could be made: the OOM case is not run"
fi

# ---- stop the agent; it flushes on SIGTERM ----------------------------------------------

sleep 1
stop_agent
st=$?
check "agent exits 0 within 10 s of SIGTERM (status $st)" eq "$st" 0

# ---- 1. compare CPU with wait4 ------------------------------------------------------------

q "select pid, round((cpu_user_s + cpu_sys_s) * 1e6) from process
   where ppid = ${W4_PID:-0} and start_time >= $W4_T0 - 1;" >"$T/wait4cpu.db"
# per child: wait4's µs, the record's µs; the tolerance is max(1%, 20 µs)
awk -F'|' 'NR == FNR { rec[$1] = $2; next }
	/ prog=/ {
		split($0, f, /[ =]/)	# pid P prog X cpu_us U
		pid = f[2]; prog = f[4]; w = f[6]
		n++; sw += w; np[prog]++; swp[prog] += w
		if (!(pid in rec)) { print "missing " pid " " prog " wait4 " w " us"; next }
		r = rec[pid]; m++; sr += r; srp[prog] += r
		if (r == 0) zero++
		d = r - w; if (d < 0) d = -d
		t = w / 100; if (t < 20) t = 20
		if (d <= t) ok++
		else printf "off %d %s %s wait4 %d us, record %d us\n", d, pid, prog, w, r
	}
	END {
		printf "n=%d matched=%d within=%d zero=%d mean_w=%.2f mean_r=%.2f", n, m, ok, zero, sw / (n ? n : 1), sr / (m ? m : 1)
		for (p in np) printf " %s:n=%d,wait4=%.1f,record=%.1f", p, np[p], swp[p] / np[p], srp[p] / np[p]
		printf "\n"
	}' "$T/wait4cpu.db" "$T/wait4cpu.out" >"$T/wait4cpu.cmp"
CMP=$(tail -n 1 "$T/wait4cpu.cmp")
note "wait4cpu vs records (µs): $CMP" \
	"$(grep -c '^off ' "$T/wait4cpu.cmp") off by more than max(1%, 20 µs), the largest (off µs, pid, ...):"
note "$(grep -E '^(off|missing) ' "$T/wait4cpu.cmp" | sort -k2,2nr | head -n 8)"
check "wait4cpu: all $N children ran (exit $W4_ST) and have a record ($(kv "$CMP" matched) of $(kv "$CMP" n))" \
	eq "$W4_ST:$(kv "$CMP" n):$(kv "$CMP" matched)" "0:$N:$N"
check "wait4cpu: mean cpu_user_s+cpu_sys_s $(kv "$CMP" mean_r) µs within 1% of wait4's mean $(kv "$CMP" mean_w) µs" \
	near "$(kv "$CMP" mean_r)" "$(kv "$CMP" mean_w)" 1 0
check "wait4cpu: $(kv "$CMP" within) of $N records within max(1%, 20 µs) of wait4 (want >= 99%; $(kv "$CMP" zero) say 0)" \
	between "$(kv "$CMP" within)" $((N * 99 / 100)) $N

# ---- 2. own I/O of a shell and its dd -----------------------------------------------------

DD_PID=$(q "select pid from process where ppid = ${SH_PID:-0} and comm = 'dd' order by start_time desc limit 1;")
DD_W=$(row "${DD_PID:-0}" write_bytes)
SH_W=$(row "${SH_PID:-0}" write_bytes)
note "sh -c 'dd ... count=64 conv=fdatasync': $DD_OUT; dd pid ${DD_PID:-none}; write_bytes: dd $DD_W, sh $SH_W"
check "dd of 64 MiB: its write_bytes ${DD_W:-none} in [64 MiB, 65 MiB]" \
	between "$DD_W" $((64 * MIB)) $((65 * MIB))
check "sh that ran dd: its own write_bytes ${SH_W:-none} < 1 MiB (not its reaped child's)" \
	between "$SH_W" 0 $((MIB - 1))
check "sh + dd write_bytes $((${SH_W:-0} + ${DD_W:-0})) within 1% of 64 MiB (no double counting)" \
	near $((${SH_W:-0} + ${DD_W:-0})) $((64 * MIB)) 1 0

# ---- 3. writer and deleter ----------------------------------------------------------------

REF_WW=$(io_field "$WR_OUT" write_bytes)
REF_DC=$(io_field "$DEL_OUT" cancelled_write_bytes)
REF_DW=$(io_field "$DEL_OUT" write_bytes)
r=$(row "${WR_PID:-0}" "write_bytes, json_extract(json, '\$.io.cancelled_write_bytes')")
WR_W=${r%%|*}
r=$(row "${DEL_PID:-0}" "write_bytes, json_extract(json, '\$.io.cancelled_write_bytes')")
DEL_W=${r%%|*}
DEL_C=${r#*|}
note "writer (pid $WR_PID) /proc/self/io: write_bytes $REF_WW cancelled $(io_field "$WR_OUT" cancelled_write_bytes); record write_bytes $WR_W" \
	"deleter (pid $DEL_PID) /proc/self/io: write_bytes $REF_DW cancelled $REF_DC; record write_bytes $DEL_W cancelled ${DEL_C:-null}"
check "deleter's own /proc/self/io: cancelled_write_bytes $REF_DC within 1% of 16 MiB (the pages were still dirty)" \
	near "$REF_DC" $((16 * MIB)) 1 0
check "writer of 16 MiB: record write_bytes $WR_W within 1% of its /proc/self/io $REF_WW (the deleter does not take it back)" \
	eq "$(near "$WR_W" "$REF_WW" 1 0 && near "$WR_W" $((16 * MIB)) 1 0 && echo y)" y
check "deleter: record io.cancelled_write_bytes ${DEL_C:-null} within 1% of its /proc/self/io $REF_DC" \
	near "$DEL_C" "$REF_DC" 1 0
check "deleter: record write_bytes $DEL_W within 4 KiB of its /proc/self/io $REF_DW" \
	near "$DEL_W" "$REF_DW" 0 4096
r=$(row "${SELF_PID:-0}" "write_bytes, json_extract(json, '\$.io.cancelled_write_bytes')")
note "write-unlink (pid $SELF_PID) /proc/self/io: write_bytes $(io_field "$SELF_OUT" write_bytes) cancelled $(io_field "$SELF_OUT" cancelled_write_bytes); record write_bytes ${r%%|*} cancelled ${r#*|}"
check "write-unlink of 16 MiB (gzip's case): record write_bytes|cancelled_write_bytes '$r' each within 1% of its /proc/self/io" \
	eq "$(near "${r%%|*}" "$(io_field "$SELF_OUT" write_bytes)" 1 0 &&
		near "${r#*|}" "$(io_field "$SELF_OUT" cancelled_write_bytes)" 1 0 && echo y)" y

# ---- 6. threads' own I/O -------------------------------------------------------------------

r=$(row "${THR_PID:-0}" "write_bytes, wchar")
note "dirtyio threads (pid $THR_PID): /proc/self/io after the joins: write_bytes $(io_field "$THR_OUT" write_bytes) wchar $(io_field "$THR_OUT" wchar); record write_bytes|wchar ${r:-none}"
check "4 threads that wrote 4 MiB each and exited before their process: record write_bytes ${r%%|*} within 1% of its /proc/self/io $(io_field "$THR_OUT" write_bytes)" \
	eq "$(near "${r%%|*}" "$(io_field "$THR_OUT" write_bytes)" 1 0 && near "${r%%|*}" $((16 * MIB)) 1 0 && echo y)" y
check "... and record wchar ${r#*|} within 1% of its /proc/self/io $(io_field "$THR_OUT" wchar)" \
	near "${r#*|}" "$(io_field "$THR_OUT" wchar)" 1 0

# ---- 4, 5. the jobs' usage ----------------------------------------------------------------

# Check job $1's end record: usage source $2 and mem_peak_bytes within $4 %
# of $3; its largest process about 200 MiB; its CPU the sum of its
# processes' and the cgroup's own CPU counter $5 (s).
check_job() {
	local job=$1 src=$2 want=$3 pct=$4 cg_cpu=$5 u u_peak u_src u_cpu procs nproc largest cpu
	u=$(q "select json_extract(json, '\$.usage.mem_peak_bytes'), json_extract(json, '\$.usage.mem_peak_source'),
	       json_extract(json, '\$.usage.cpu_s') from record
	       where type = 'job' and job_id = '$job' and json_extract(json, '\$.phase') = 'end';")
	procs=$(q "select count(*), max(peak_rss_bytes), sum(cpu_user_s + cpu_sys_s) from process where job_id = '$job';")
	IFS='|' read -r u_peak u_src u_cpu <<<"$u"
	IFS='|' read -r nproc largest cpu <<<"$procs"
	note "$job end record usage (mem_peak_bytes|source|cpu_s): ${u:-none}" \
		"$job process records (count|largest peak_rss_bytes|cpu s): $procs"
	check "$job: usage.mem_peak_source '${u_src:-}' = '$src'" eq "${u_src:-}" "$src"
	check "$job: usage.mem_peak_bytes ${u_peak:-none} within $pct% of $want ($(awk -v a="${u_peak:-0}" -v b="${largest:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }') x the largest process)" \
		near "${u_peak:-}" "$want" "$pct" 0
	check "$job: largest process peak_rss_bytes ${largest:-none} within 10% of 200 MiB" \
		near "$largest" $((200 * MIB)) 10 0
	check "$job: usage.cpu_s ${u_cpu:-none} within 1% of its processes' cpu sum ${cpu:-none}" \
		near "${u_cpu:-}" "$cpu" 1 0.000001
	# the cgroup counts from the move on; the records also hold the
	# subshell's fork and echo before it: a few ms at most
	check "$job: usage.cpu_s ${u_cpu:-none} within 2% or 5 ms of the cgroup's own CPU counter ${cg_cpu:-none} s" \
		near "${u_cpu:-}" "$cg_cpu" 2 0.005
}

if [ -n "$V1_RAN" ]; then
	check_job FIG1 cgroup_v1 "$V1_PEAK" 5 "$V1_CPU"
fi
if [ "$V2_SOURCE" = cgroup_v2 ]; then
	check_job FIG2 cgroup_v2 "$V2_PEAK" 5 "$V2_CPU"
elif [ "$V2_SOURCE" = samples ]; then
	check_job FIG2 samples $((400 * MIB)) 10 "$V2_CPU"
fi

# ---- 8. OOM victims --------------------------------------------------------------------------

if [ -n "$OOM_DIR" ]; then
	n=$(echo $OOM_SEEN | wc -w)
	r=$(q "select count(*), coalesce(sum(oom_killed = 1 and exit_signal = 9), 0),
	       coalesce(sum(json_extract(json, '\$.exit.lost')), 0) from process
	       where pid in ($(echo ${OOM_SEEN:-0} | tr ' ' ',')) and comm = 'touchmem';")
	note "$n of $OOM_N touchmem 1024 killed in a 512 MiB cgroup (shell status 137); records|OOM-killed by SIGKILL|lost: $r"
	check "OOM: all $OOM_N victims were killed ($n)" eq "$n" "$OOM_N"
	check "OOM: each of the $n victims recorded as OOM-killed by SIGKILL, none as an exit lost ('$r')" \
		eq "$r" "$n|$n|0"
fi

# ---- agent log -----------------------------------------------------------------------------
errs=$(grep -Eic '(^|[^a-z])(error|warn)' "$T/agent.log")
note "agent.log: $(wc -l <"$T/agent.log") lines, $errs warning/error lines"
[ "$errs" -eq 0 ] || note "$(grep -Ei '(^|[^a-z])(error|warn)' "$T/agent.log" | head -n 20)"

finish
