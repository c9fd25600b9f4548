#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_short_jobs.sh - a job shorter than the sample interval has a memory
# curve.  With sample_interval 10 s the HTML memory chart of a 26 s job
# was empty ("From 0 samples in 0 sample passes"): its processes lived
# between two passes.  Now a job's process that no pass has seen is
# sampled once it is collector.first_sample (1 s) old.
#
# The agent runs with sample_interval = 60 s: after its start, no pass
# falls in the first 60 s, in which every job here runs.
#   S1  touchmem 100 MiB held 2.5 s: one sample pass in its life, and the
#       page's memory chart peaks at touchmem's own VmHWM (within 5%).
#   S2  a shell running two of them, 1.5 s each: a pass for each.
#   S3  a shell running twenty /bin/true, 0.5 s in all: shorter than
#       first_sample, it costs no pass (the agent's stage.sample_count).
#   S4  first_sample = 0 (reloaded): S1 again has no sample.
#
# Needs root, kernel BTF, the sqlite3 CLI and python3.  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_short_jobs.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/touchmem"
need_commands python3
start_watchdog 120
J=jt-sj-$$

SAMPLE_INTERVAL=60 start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	'cloud = { imds = "off"; };' || finish
T0=$(now)

# "samples passes maxmem" of job $1's HTML page data.
chart() {
	cli report --job "$1" --format html >"$T/$1.html" 2>&1
	python3 -c 'import json, re, sys
d = json.loads(re.search(r"<script type=\"application/json\" id=\"jt-data\">(.*?)</script>",
    open(sys.argv[1]).read(), re.S).group(1))["use"]
m = [x for x in d["mem"] if x is not None]
print(d["samples"], d["passes"], int(max(m)) if m else 0)' "$T/$1.html" 2>&1
}

# The sample passes the agent has made so far.
passes() {
	status_get stage.sample_count
	echo "${REPLY:-?}"
}

cli run --job "$J-1" -- "$WL/touchmem" 100 2500 >"$T/s1.out" 2>&1
HWM=$(kv "$(cat "$T/s1.out")" vmhwm_bytes)
read -r n p m <<<"$(chart "$J-1")"
note "S1: touchmem $(cat "$T/s1.out"); chart: $n samples in $p passes, memory peak $m"
check "S1: a 2.5 s job under a 60 s interval has samples: one pass in its life ($n samples, $p passes)" \
	eq "$p" 1
check "S1: its memory chart peaks at touchmem's VmHWM $HWM within 5% ($m)" near "$m" "$HWM" 5 0

cli run --job "$J-2" -- sh -c "'$WL/touchmem' 50 1500; '$WL/touchmem' 80 1500" >"$T/s2.out" 2>&1
read -r n p m <<<"$(chart "$J-2")"
HWM=$(sed -n 's/.*vmhwm_bytes=\([0-9]*\).*/\1/p' "$T/s2.out" | sort -n | tail -n 1)
note "S2: $(tr '\n' ' ' <"$T/s2.out"); chart: $n samples in $p passes, memory peak $m"
check "S2: two 1.5 s processes in turn, a pass for each ($p passes)" eq "$p" 2
check "S2: the chart's peak is the larger touchmem's VmHWM $HWM within 5% (plus its shell: $m)" \
	near "$m" "$HWM" 5 0

before=$(passes)
cli run --job "$J-3" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; sleep 0.02; done'
sleep 1.2	# past first_sample of the last of them
after=$(passes)
check "S3: twenty processes shorter than first_sample cost no pass ($before -> $after)" eq "$after" "$before"

sed -i 's/^collector = { sample_interval = 60; };/collector = { sample_interval = 60; first_sample = 0; };/' "$CONF"
cli reload >/dev/null 2>&1
cli run --job "$J-4" -- "$WL/touchmem" 100 2500 >/dev/null 2>&1
read -r n p m <<<"$(chart "$J-4")"
check "S4: first_sample = 0: no pass, as before ($n samples, $p passes)" eq "$p" 0
check "all of it within the agent's first 60 s, before its first regular pass" \
	awk -v a="$T0" -v b="$(now)" 'BEGIN { exit !(b - a < 58) }'

finish
