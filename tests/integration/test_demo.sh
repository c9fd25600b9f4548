#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_demo.sh - ./demo/run.sh installs only what the demo needs, and its
# report is complete the moment its job ends.
#
#  - The demo is run as a user runs it, with dpkg-query and apt-get
#    replaced by shims that say nothing is installed and log what would be
#    installed: the one install asked for is `scripts/install-deps.sh
#    build --list`, and none of the test suite's Slurm, munge, ClickHouse,
#    Docker, Chromium, Snakemake or cloud-init.  (It installed all of them,
#    most of its 2.4 minutes on a fresh machine.)
#  - What that is on a fresh Debian 12: apt-get's own answer from an empty
#    package status (--print-uris), packages and bytes to download for the
#    build set and for the whole suite's, side by side.
#  - Its report, printed straight after the job (no sleep), shows the
#    pipeline's processes and the job COMPLETED; its cost is there.
#
# Needs root, kernel BTF and the sqlite3 CLI (lib.sh).  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_demo.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
start_watchdog 300
HEAVY="slurm-wlm munge libslurm-dev clickhouse-server clickhouse-client docker.io
chromium snakemake cloud-init"

# shims: nothing is installed; apt-get logs its arguments
mkdir -p "$T/shim"
cat >"$T/shim/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$T/shim/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$T/apt.log"
EOF
chmod +x "$T/shim/dpkg-query" "$T/shim/apt-get"

PATH=$T/shim:$PATH BUILD_DIR=$top_builddir timeout 240 "$top_srcdir/demo/run.sh" \
	>"$T/demo.out" 2>&1
st=$?
note "demo exit $st; apt-get was asked: $(tr '\n' '|' <"$T/apt.log" 2>/dev/null)"
check "demo/run.sh ran to its end (exit $st)" eq "$st" 0
want=$("$top_srcdir/scripts/install-deps.sh" build --list | sort | tr '\n' ' ')
got=$(grep '^install ' "$T/apt.log" 2>/dev/null | tr ' ' '\n' | grep -v -e '^install$' -e '^-' |
	grep -v '^$' | sort | tr '\n' ' ')
check "the demo asks apt-get to install the build's packages, no more ($got)" eq "$got" "$want"
heavy=
for p in $HEAVY; do
	grep -qw -- "$p" <<<"$got" && heavy="$heavy $p"
done
check "... none of the test suite's Slurm, ClickHouse, Docker, Chromium, Snakemake, cloud-init (${heavy:-none})" \
	eq "$heavy" ""

# a fresh Debian 12, by apt-get's own reckoning from an empty status
: >"$T/empty-status"
closure() {
	# shellcheck disable=SC2046
	apt-get --print-uris -qq -o Dir::State::status="$T/empty-status" \
		install --no-install-recommends $("$top_srcdir/scripts/install-deps.sh" "$1" --list) 2>/dev/null |
		awk '{ n++; b += $3 } END { printf "%d %.0f", n, b / 1048576 }'
}
read -r bn bmb <<<"$(closure build)"
read -r an amb <<<"$(closure all)"
if [ "${bn:-0}" -gt 0 ] && [ "${an:-0}" -gt 0 ]; then
	note "on a fresh Debian 12 (apt-get --print-uris, empty status): the demo's set $bn packages, $bmb MiB to download; the whole suite's $an packages, $amb MiB"
	check "the demo's set is a part of the suite's ($bn of $an packages, $bmb of $amb MiB)" \
		awk -v a="$bn" -v b="$an" -v c="$bmb" -v d="$amb" 'BEGIN { exit !(a < b && c < d) }'
else
	note "apt-get cannot reckon a fresh machine here (no package lists?): not compared"
fi

# its report, straight after the job
line=$(grep -m 1 '^jobtrace report: job demo-' "$T/demo.out")
n=$(sed -n 's/^jobtrace report: job demo-[0-9]*: \([0-9]*\) processes.*/\1/p' <<<"$line")
note "demo: $line"
check "the demo's report, straight after its job, shows its pipeline ($n processes, 10 or more)" \
	between "${n:-0}" 10 1000
check "... the job COMPLETED with exit code 0" grep -q '^State:       COMPLETED, exit code 0' "$T/demo.out"
check "... and no store that lagged or lacked records" \
	eq "$(grep -c -e 'no records for' -e 'records behind' "$T/demo.out")" 0
check "the demo's cost, by tool" grep -q '^TOTAL .* USD' "$T/demo.out"

finish
