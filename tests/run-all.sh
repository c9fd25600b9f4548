#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole test suite from scratch: install build dependencies, build in a
# fresh folder, run unit and integration tests (make check, as root against
# the live kernel), a short fuzzing pass (make fuzz: every kept crash input,
# then FUZZ_SECONDS, 6, per harness), then make distcheck.  Ends with
# "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-test}
if [ "$(id -u)" -ne 0 ]; then
	echo "run-all: the integration tests load BPF programs: run as root" >&2
	exit 2
fi
if [ -f "$top/config.status" ]; then
	echo "run-all: $top was configured in place (./configure there), and" \
		"configure refuses the suite's fresh build in $build: run" \
		"'make distclean' in $top first" >&2
	exit 2
fi
"$top/scripts/install-deps.sh" || exit 1
rm -rf "$build"
(cd "$top" && ./autogen.sh > /dev/null 2>&1) || { echo "run-all: autogen failed" >&2; exit 1; }
mkdir -p "$build" && cd "$build" || exit 1
"$top/configure" --enable-debug -q || { echo "run-all: configure failed" >&2; exit 1; }
make -s -j"$(nproc)" || { echo "run-all: build failed" >&2; exit 1; }

# The failed checks and the end of each failed test's log under $1.
failed_logs() {
	for log in "$1"/tests/unit/*.log "$1"/tests/integration/*.log; do
		[ -f "$log" ] || continue
		case "$log" in *test-suite.log) continue ;; esac
		# automake's .trs says ":test-result: FAIL"
		if grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null; then
			echo "---- $log: its failed checks, then its end"
			grep -E '^not ok' "$log"
			tail -n 60 "$log"
		fi
	done
}

status=0
make -j1 check > check.out 2>&1 || status=1
grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS):' check.out
failed_logs .
passed=$(sed -n 's/^# PASS: *//p' check.out | tail -n 1)
failed=$(sed -n 's/^# FAIL: *//p' check.out | tail -n 1)
errors=$(sed -n 's/^# ERROR: *//p' check.out | tail -n 1)
failed=$(( ${failed:-0} + ${errors:-0} ))
[ -n "${passed:-}" ] || { tail -n 30 check.out; failed=$((failed + 1)); passed=0; }

# One more step, counted in the tally: "PASS: NAME" or "FAIL: NAME" and
# the end of its output (kept in OUT); its return says which.
step() {
	name=$1 out=$2
	shift 2
	if "$@" > "$out" 2>&1; then
		echo "PASS: $name"
		passed=$((passed + 1))
	else
		echo "FAIL: $name"
		tail -n 40 "$out"
		failed=$((failed + 1))
		return 1
	fi
}
if [ "${SKIP_FUZZ:-0}" != 1 ]; then
	# a fixed seed: the same inputs every run, so a red CI is a change's
	# doing and can be replayed; `make fuzz` alone explores at random
	step fuzz fuzz.out make -s -j"$(nproc)" fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-6}" \
		FUZZ_ARGS="${FUZZ_ARGS:--seed=1}"
	grep '^fuzz: [a-z_]*: ' fuzz.out
fi
if [ "${SKIP_DISTCHECK:-0}" != 1 ] &&
   ! step "make distcheck" distcheck.out make -s distcheck; then
	# a failed distcheck leaves its tree: the logs of its failed tests
	for d in jobtrace-*/_build/sub; do
		[ -d "$d" ] && failed_logs "$d"
	done
fi
[ "$failed" -eq 0 ] || status=1
echo "tests: $passed passed, $failed failed"
exit $status
