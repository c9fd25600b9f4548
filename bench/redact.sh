#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cost of the redaction, before and after a change of the rules: the
# median of one classification (`jobtrace rules test --repeat N`, in-process,
# no agent) of a plain line, a line with a token, and a python -c line of
# 1 KiB with and without a secret, for two rules folders in turn, ROUNDS
# times (the folders alternate, so that a neighbour's load falls on both).
# "never seen" lines run with lib.CACHE_MAX = 0 (every cache off), as a
# command line the agent meets for the first time.
#   bench/redact.sh BUILD_DIR BEFORE_RULES [AFTER_RULES] [N] [ROUNDS]
set -u
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:?BUILD_DIR}" && pwd) || exit 2
BEFORE=$(cd "${2:?BEFORE_RULES}" && pwd) || exit 2
AFTER=$(cd "${3:-$BENCH_DIR/../lua-rules}" && pwd) || exit 2
N=${4:-20000}
ROUNDS=${5:-3}
CLI=$BUILD/jobtrace
[ -x "$CLI" ] || { echo "redact.sh: $CLI not built" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the same folders with every cache off
for d in BEFORE AFTER; do
	mkdir -p "$T/$d"
	cp "${!d}"/*.lua "$T/$d/"
	sed -i 's/^lib.CACHE_MAX = .*/lib.CACHE_MAX = 0/' "$T/$d/00-lib.lua"
done
tok="gh""p_$(head -c 200 /dev/urandom | tr -dc 'A-Za-z0-9' | head -c 36)"
code="import pandas as pd; import numpy as np; "
while [ ${#code} -lt 1000 ]; do
	code="${code}df = pd.read_csv('data/sample_${#code}.tsv', sep='\\t'); x = np.log1p(df.values); "
done
code=${code:0:1024}
names=("plain line (bwa mem ...)" "a token (git clone https://TOKEN@...)"
	"python -c, 1 KiB, no secret" "python -c, 1 KiB, password='...'")
lines=("bwa mem -t 8 ref.fa reads_1.fq.gz reads_2.fq.gz"
	"git clone https://$tok@github.com/org/repo.git"
	"python3 -c '$code'"
	"python3 -c 'password = \"pw9Zq2\"; $code'")
# Median of one line with one rules folder.
cost() {
	local out
	printf '%s\n' "$2" >"$T/one"
	out=$("$CLI" rules test --rules "$1" --repeat "$N" --lines "$T/one" 2>/dev/null)
	printf '%s\n' "$out" | sed -n 's/^cost: *median \([0-9.]*\) us.*/\1/p'
}
printf '%-40s %-11s %10s %10s\n' "command line (median of $N, $ROUNDS rounds)" cache before after
for i in "${!lines[@]}"; do
	for cache in seen never; do
		b=() a=()
		for _ in $(seq 1 "$ROUNDS"); do
			if [ $cache = seen ]; then
				b+=("$(cost "$BEFORE" "${lines[$i]}")")
				a+=("$(cost "$AFTER" "${lines[$i]}")")
			else
				b+=("$(cost "$T/BEFORE" "${lines[$i]}")")
				a+=("$(cost "$T/AFTER" "${lines[$i]}")")
			fi
		done
		printf '%-40s %-11s %10s %10s\n' "${names[$i]}" "$cache" \
			"$(printf '%s\n' "${b[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
			"$(printf '%s\n' "${a[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
	done
done
