#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - run the libFuzzer harnesses built by `make fuzz`.
#
#   run.sh BUILD_DIR [NAME...]
#
# For each harness (all of them when no NAME is given): replay every kept
# crash input in tests/fuzz/regressions/NAME/, then fuzz for FUZZ_SECONDS
# (60) from the seeds in tests/fuzz/corpus/NAME/ plus what earlier runs
# found (BUILD_DIR/corpus/NAME/, where new inputs go).  FUZZ_ARGS adds
# libFuzzer options.  A crash, leak, sanitizer report or hang leaves its
# input in BUILD_DIR/crashes/NAME/ and the log in BUILD_DIR/NAME.log, and
# the run fails.  One line per harness says what it did.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [NAME...]}
shift
names=${*:-config control spool chschema report chquery cgroup slurmq decode json_read schema imds docker prices offer spot smklog tokscan rulebundle topframe}
secs=${FUZZ_SECONDS:-60}
failed=""
LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

for n in $names; do
	bin=$build/fuzz_$n
	log=$build/$n.log
	if [ ! -x "$bin" ]; then
		echo "fuzz: $n: no $bin (build it with make fuzz)" >&2
		failed="$failed $n"
		continue
	fi
	mkdir -p "$build/corpus/$n" "$build/crashes/$n"
	# libconfig leaks on most syntax errors (lsan.supp): checking for
	# leaks after each such input would run 500 times slower; the check
	# at exit still covers the agent's own code
	opts=""
	[ "$n" = config ] && opts="-detect_leaks=0"
	: > "$log"
	# the inputs that crashed once must not crash again
	set -- "$here/regressions/$n"/*
	if [ -e "$1" ]; then
		if ! "$bin" "$@" >> "$log" 2>&1; then
			echo "fuzz: $n: FAIL: a regression input crashes again ($log)"
			grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed)' "$log" | head -n 5
			failed="$failed $n"
			continue
		fi
		nreg=$#
	else
		nreg=0
	fi
	# shellcheck disable=SC2086
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-close_fd_mask=2 -print_final_stats=1 $opts \
		-artifact_prefix="$build/crashes/$n/" ${FUZZ_ARGS:-} \
		"$build/corpus/$n" "$here/corpus/$n" >> "$log" 2>&1; then
		result=ok
	else
		result=FAIL
		failed="$failed $n"
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n 1)
	echo "fuzz: $n: $secs s, ${runs:-0} runs, ${cov:-no coverage line}," \
		"$nreg regression inputs: $result"
	if [ "$result" = FAIL ]; then
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed|artifact_prefix|Test unit written)' \
			"$log" | head -n 8
		echo "  log: $log (keep the input under tests/fuzz/regressions/$n/ once fixed)"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed"
	exit 1
fi
exit 0
