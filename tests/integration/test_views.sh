#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_views.sh - the same figure in every view.  One stored job is read
# through `report` as text, as JSON, as the HTML page (its embedded data,
# <script id="jt-data">, and what the page prints), through `cost` and
# through `rightsize`, and every figure they share must be equal, and
# agree with an independent reference:
#
#   A  `jobtrace run --task align --cpus 2 --mem-mb 1024 --run R` of a
#      shell that runs touchmem 60 MiB (its own VmHWM the reference), burn
#      1 s (its getrusage CPU the reference) and sleep: a job with no cgroup
#      of its own, shorter than what a sample pass sees of touchmem.  The
#      job's memory peak is never below touchmem's own peak; its memory and
#      CPU efficiency read the same in the header, the efficiency section,
#      the JSON (both objects), the HTML answer and data; the task's
#      CPU/WALL is the same in text, JSON, the HTML table and rightsize's
#      cores; cost, processes and CPU seconds the same in report and cost.
#   B  a job registered with `job-start --pid` and no --scheduler, ended
#      with `job-end` and no --scheduler: labelled local, not slurm, and
#      closed.
#   C  an OOM-killed job in a cgroup v1 memory cgroup of 64 MiB, asked
#      64 MiB: its memory over the request is the cgroup's
#      memory.max_usage_in_bytes (the reference) over 64 MiB, the same in
#      text and HTML (it was 100.0% in the text and 102% in the HTML).
#
# Needs root, kernel BTF, the sqlite3 CLI and python3; case C a cgroup v1
# memory controller (skipped with a note without one).  Exit 0 pass, 1
# fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_views.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/touchmem"
need_commands python3
start_watchdog 240
V1ROOT=/sys/fs/cgroup/memory
OOMCG=$V1ROOT/jt_views_oom_$$

# The test's cgroup goes with it.
extra_cleanup() {
	remove_cgroup "$OOMCG"
}

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	'cloud = { imds = "off"; }; cost = { node_hour = 0.40; };' || finish
J=jt-views-$$

# Every view of job $1 into $T/$1.*: text, JSON, HTML, cost JSON.
views() {
	cli report --job "$1" >"$T/$1.txt" 2>&1
	cli report --job "$1" --format json >"$T/$1.json" 2>&1
	cli report --job "$1" --format html >"$T/$1.html" 2>&1
	cli cost --job "$1" --format json >"$T/$1.cost.json" 2>&1
}

# "k=v ..." of the figures each view shows of job $1 (see the python).
figures() {
	python3 - "$T/$1" <<'PY'
import html, json, re, sys
base = sys.argv[1]
txt = open(base + ".txt").read()
rep = json.load(open(base + ".json"))
page = open(base + ".html").read()
data = json.loads(re.search(r'<script type="application/json" id="jt-data">(.*?)</script>', page, re.S).group(1))
answer = html.unescape(re.search(r'<ul class="answer">(.*?)</ul>', page, re.S).group(1))
cost = json.load(open(base + ".cost.json"))
out = {}
def pct(v):            # a fraction or a percentage, as the text prints it
    return "-" if v is None else "%.1f" % v
m = re.search(r"^Efficiency:  CPU (\S+)%, memory (\S+)%", txt, re.M)
out["hdr_cpu"], out["hdr_mem"] = m.groups() if m else ("?", "?")
m = re.search(r"^  job \S+ +CPU .*= +(\S+)%   memory +(.+?) of .* = +(\S+)% \((.*?)\)", txt, re.M)
out["sec_cpu"], out["sec_mem"] = (m.group(1), m.group(3)) if m else ("?", "?")
out["sec_src"] = m.group(4).replace(" ", "_") if m else "?"
m = re.search(r"^State: +(\S+), exit code (\d+)", txt, re.M)
out["txt_state"] = "%s/%s" % m.groups() if m else "?"
m = re.search(r"^Job ID: +\S+ \((\S+)\)", txt, re.M)
out["txt_sched"] = m.group(1) if m else "?"
m = re.search(r"^Cost: +([0-9.]+) ", txt, re.M)
out["txt_cost"] = m.group(1) if m else "-"
# the by-task table's CPU/WALL column, found by its header (the columns before it
# are one word each)
m = re.search(r"^  TASK .*\n(?:  \S.*\n)*?  align .*$", txt, re.M)
cw = "-"
if m:
    hdr, row = m.group(0).split("\n")[0].split(), m.group(0).split("\n")[-1].split()
    if "CPU/WALL" in hdr and len(row) > hdr.index("CPU/WALL"):
        cw = row[hdr.index("CPU/WALL")].rstrip("%")
out["txt_task_cw"] = cw
j, e = rep["job"], rep["efficiency"]["job"]
out["json_cpu"] = pct(j["efficiency"]["cpu"] * 100 if j["efficiency"]["cpu"] is not None else None)
out["json_mem"] = pct(j["efficiency"]["memory"] * 100 if j["efficiency"]["memory"] is not None else None)
out["json_sec_cpu"] = pct(e["cpu_efficiency_pct"])
out["json_sec_mem"] = pct(e["memory_efficiency_pct"])
out["json_peak"] = e["mem_peak_bytes"]
out["json_largest"] = e["peak_rss_bytes"]
out["json_src"] = e["mem_peak_source"]
out["json_state"] = "%s/%s" % (j["state"], j["exit_code"])
out["json_sched"] = j["scheduler"]
out["json_cost"] = "-" if not j["cost"] or j["cost"]["amount"] is None else "%.6f" % j["cost"]["amount"]
out["json_cost_raw"] = "-" if not j["cost"] or j["cost"]["amount"] is None else repr(j["cost"]["amount"])
out["json_procs"] = rep["summary"]["processes"]
out["json_usage_procs"] = e["processes"]
out["json_cpu_s"] = "%.6f" % rep["summary"]["cpu_s"]
out["json_usage_cpu_s"] = "%.6f" % e["cpu_s"]
t = [x for x in rep["by_task"] if x["task"] == "align"]
out["json_task_cw"] = "%.0f" % t[0]["cpu_per_wall_pct"] if t else "-"
out["json_task_cores"] = "%.2f" % (t[0]["cpu_s"] / t[0]["instance_wall_s"]) if t and "instance_wall_s" in t[0] else "?"
d = data.get("report")
out["data_peak"] = d["efficiency"]["job"]["mem_peak_bytes"] if d else "?"
out["data_mem"] = pct(d["efficiency"]["job"]["memory_efficiency_pct"]) if d else "?"
out["data_cpu"] = pct(d["efficiency"]["job"]["cpu_efficiency_pct"]) if d else "?"
out["data_hdr_mem"] = pct(d["job"]["efficiency"]["memory"] * 100) if d and d["job"]["efficiency"]["memory"] is not None else "?"
out["data_state"] = "%s/%s" % (d["job"]["state"], d["job"]["exit_code"]) if d else "?"
m = re.search(r"job memory peak: <b>(.*?)</b> \((.*?)\)(?:, ([0-9.]+)% of)?", answer)
out["html_peak"] = m.group(1).replace(" ", "_") if m else "?"
out["html_mem"] = m.group(3) if m and m.group(3) else "-"
m = re.search(r'<tr[^>]*><td class="name">(?:<span[^>]*></span>)?align</td>(?:<td>[^<]*</td>){5}<td>(\d+)%</td>', page)
out["html_task_cw"] = m.group(1) if m else "-"
m = re.search(r"<b>(\d+) processes</b>", answer)
out["html_procs"] = m.group(1) if m else "?"
tot = cost["totals"][0] if cost.get("totals") else {}
out["cost_cost_raw"] = repr(tot.get("cost")) if tot else "-"
out["cost_procs"] = tot.get("processes", "-")
out["cost_cpu_s"] = "%.6f" % tot["cpu_s"] if tot else "-"
print(" ".join("%s=%s" % kv for kv in out.items()))
PY
}

# True if every argument is the same known figure (not empty, not "?").
same() {
	local v
	for v in "$@"; do
		case $v in '' | '?' | None) return 1 ;; esac
		[ "$v" = "$1" ] || return 1
	done
}

# The human size of bytes $1, as the reports print it.
human() {
	awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1
		while (b >= 1024 && i < 5) { b /= 1024; i++ }
		if (i == 1) printf "%d_B", b; else printf "%.1f_%s", b, u[i] }'
}

# ---- A: a short local job --------------------------------------------------------------

"$CLI" --config "$CONF" run --job "$J-a" --run "$J-ra" --task align --cpus 2 \
	--mem-mb 1024 -- sh -c "'$WL/touchmem' 60 200; '$WL/burn' 1; sleep 0.3" \
	>"$T/a.out" 2>&1
TOUCH_HWM=$(sed -n 's/.*vmhwm_bytes=\([0-9]*\).*/\1/p' "$T/a.out")
BURN_CPU=$(sed -n 's/.* cpu_s=\([0-9.]*\).*/\1/p' "$T/a.out")
views "$J-a"
cli rightsize --run "$J-ra" --format json >"$T/a.rs.json" 2>&1
RS=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["tasks"][0]["used_p95"]
print("rs_peak=%s rs_cores=%.2f rs_src=%s" % (t["mem_peak_bytes"], t["cores"], t["mem_source"]))' "$T/a.rs.json" 2>&1)
F=$(figures "$J-a")
note "A: touchmem's own VmHWM $TOUCH_HWM, burn's CPU ${BURN_CPU:-?} s" "A: $F" "A: $RS"
PEAK=$(kv "$F" json_peak)
check "A: the job's memory peak ($PEAK, $(kv "$F" json_src)) is not below its largest process's recorded peak ($(kv "$F" json_largest))" \
	awk -v p="$PEAK" -v h="$(kv "$F" json_largest)" 'BEGIN { exit !(p != "" && h != "" && p + 0 >= h + 0) }'
# the record's peak is read at exit from the mm's counters, which the
# kernel keeps per CPU and sums lazily: within 1% of what VmHWM says
check "A: ... which is touchmem's own VmHWM $TOUCH_HWM, within 1%" near "$PEAK" "$TOUCH_HWM" 1 0
check "A: ... and is what the efficiency section, the HTML data and rightsize say ($(kv "$F" data_peak), $(kv "$RS" rs_peak))" \
	same "$PEAK" "$(kv "$F" data_peak)" "$(kv "$RS" rs_peak)"
check "A: ... and what the HTML answer prints ($(kv "$F" html_peak); $(human "$PEAK"))" \
	same "$(kv "$F" html_peak)" "$(human "$PEAK")"
MEMREF=$(awk -v p="$PEAK" 'BEGIN { if (p != "") printf "%.1f", 100 * p / 1073741824 }')
check "A: memory efficiency ${MEMREF:-?}% (its peak over 1 GiB) in the header, the section, both JSON objects, the HTML answer and data" \
	same "$MEMREF" "$(kv "$F" hdr_mem)" "$(kv "$F" sec_mem)" "$(kv "$F" json_mem)" \
	"$(kv "$F" json_sec_mem)" "$(kv "$F" html_mem)" "$(kv "$F" data_mem)" "$(kv "$F" data_hdr_mem)"
CPUE=$(kv "$F" hdr_cpu)
check "A: CPU efficiency ${CPUE:-?}% in the header, the section, both JSON objects and the HTML data" \
	same "$CPUE" "$(kv "$F" sec_cpu)" "$(kv "$F" json_cpu)" "$(kv "$F" json_sec_cpu)" "$(kv "$F" data_cpu)"
check "A: the CPU seconds are the same in report, its usage and cost ($(kv "$F" json_cpu_s), $(kv "$F" json_usage_cpu_s), $(kv "$F" cost_cpu_s))" \
	same "$(kv "$F" json_cpu_s)" "$(kv "$F" json_usage_cpu_s)" "$(kv "$F" cost_cpu_s)"
check "A: ... not below burn's own CPU, ${BURN_CPU:-?} s" \
	awk -v a="$(kv "$F" json_cpu_s)" -v b="$BURN_CPU" 'BEGIN { exit !(a != "" && b != "" && a >= b) }'
check "A: the task's CPU/WALL in text, JSON, the HTML table and rightsize's cores ($(kv "$F" txt_task_cw)% $(kv "$F" json_task_cw)% $(kv "$F" html_task_cw)% $(kv "$RS" rs_cores))" \
	same "$(kv "$F" txt_task_cw) $(kv "$F" json_task_cores)" "$(kv "$F" json_task_cw) $(kv "$F" json_task_cores)" \
	"$(kv "$F" html_task_cw) $(kv "$RS" rs_cores)"
check "A: the cost of the job in report (text and JSON) and cost ($(kv "$F" txt_cost), $(kv "$F" json_cost_raw), $(kv "$F" cost_cost_raw))" \
	same "$(kv "$F" txt_cost) $(kv "$F" json_cost_raw)" "$(kv "$F" json_cost) $(kv "$F" cost_cost_raw)"
check "A: a cost was computed at all ($(kv "$F" json_cost))" test "$(kv "$F" json_cost)" != -
check "A: processes: 4 (sh, touchmem, burn, sleep) in the report, the job's usage, cost and the HTML" \
	same 4 "$(kv "$F" json_procs)" "$(kv "$F" json_usage_procs)" "$(kv "$F" cost_procs)" "$(kv "$F" html_procs)"
check "A: state and exit code in text, JSON and the HTML data" \
	same COMPLETED/0 "$(kv "$F" txt_state)" "$(kv "$F" json_state)" "$(kv "$F" data_state)"
check "A: scheduler local (jobtrace run)" same local "$(kv "$F" txt_sched)" "$(kv "$F" json_sched)"

# ---- B: job-start --pid without --scheduler ---------------------------------------------

mkfifo "$T/go"
sh -c 'read x <"$1"; exec "$2" 0.5' sh "$T/go" "$WL/burn" >/dev/null &
BPID=$!
cli job-start --job "$J-b" --pid "$BPID" --cpus 1 --strict >"$T/b.start" 2>&1
echo go >"$T/go"
wait "$BPID"
cli job-end --job "$J-b" --exit-code 0 --strict >"$T/b.end" 2>&1
views "$J-b"
F=$(figures "$J-b")
JR=$(q "select count(*), group_concat(distinct json_extract(json, '\$.job.scheduler'))
	from record where type = 'job' and job_id = '$J-b';")
note "B: $(cat "$T/b.start" "$T/b.end" | tr '\n' ' ')" "B: $F" "B: job records, schedulers: $JR"
check "B: labelled local in text and JSON, and COMPLETED by the job-end without --scheduler" \
	eq "$(kv "$F" txt_sched) $(kv "$F" json_sched) $(kv "$F" json_state)" "local local COMPLETED/0"
check "B: its start and end records, both local, and no other job of that id ($JR)" eq "$JR" "2|local"
check "B: the process record carries scheduler local" \
	eq "$(q "select json_extract(json, '\$.job.scheduler') from process where pid = $BPID order by start_time desc limit 1;")" local

# ---- C: an OOM kill in a 64 MiB memory cgroup -------------------------------------------

if [ -e "$V1ROOT/memory.limit_in_bytes" ] && mkdir "$OOMCG" 2>/dev/null; then
	echo $((64 * MIB)) >"$OOMCG/memory.limit_in_bytes"
	cli job-start --job "$J-c" --scheduler test --cgroup "/jt_views_oom_$$" \
		--cpus 1 --mem-mb 64 --strict >"$T/c.start" 2>&1
	(echo "$BASHPID" >"$OOMCG/cgroup.procs" && exec "$WL/touchmem" 200) \
		>/dev/null 2>&1 &
	CPID=$!
	wait "$CPID"
	CST=$?
	CG_MAX=$(cat "$OOMCG/memory.max_usage_in_bytes")
	cli job-end --job "$J-c" --scheduler test --exit-code "$CST" --strict >"$T/c.end" 2>&1
	views "$J-c"
	F=$(figures "$J-c")
	note "C: touchmem exit $CST, the cgroup's memory.max_usage_in_bytes $CG_MAX" "C: $F"
	MEMREF=$(awk -v p="$CG_MAX" 'BEGIN { printf "%.1f", 100 * p / (64 * 1048576) }')
	check "C: touchmem was OOM-killed (exit $CST)" eq "$CST" 137
	check "C: the job's peak is its cgroup's memory.max_usage_in_bytes ($(kv "$F" json_peak) $(kv "$F" json_src))" \
		eq "$(kv "$F" json_peak) $(kv "$F" json_src)" "$CG_MAX cgroup_v1"
	check "C: its memory over the 64 MiB asked, $MEMREF%, in the header, the section, JSON and the HTML answer and data" \
		same "$MEMREF" "$(kv "$F" hdr_mem)" "$(kv "$F" sec_mem)" "$(kv "$F" json_sec_mem)" \
		"$(kv "$F" html_mem)" "$(kv "$F" data_mem)"
	remove_cgroup "$OOMCG"
else
	note "C: no cgroup v1 memory controller at $V1ROOT: the OOM case is not run"
fi

finish
