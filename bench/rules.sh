#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cost of classifying one exec with the default rules: median and 99th
# percentile over many calls, for a spread of real command lines, measured
# in-process by `jobtrace rules test --repeat N` (no agent needed).
#   bench/rules.sh [BUILD_DIR] [N]
set -u
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(cd "$BENCH_DIR/.." && pwd)
BUILD=$(cd "${1:-.}" && pwd) || exit 2
N=${2:-20000}
CLI=$BUILD/jobtrace
RULES=${RULES_DIR:-$SRC_DIR/lua-rules}
[ -x "$CLI" ] || { echo "rules.sh: $CLI not built" >&2; exit 2; }

cmds=(
	"bwa mem -t 8 ref.fa reads_1.fq.gz reads_2.fq.gz"
	"samtools sort -@ 4 -o out.bam in.bam"
	"java -Xmx8g -jar /opt/picard/picard-2.27.5.jar SortSam I=in.bam O=out.bam"
	"python3 -m multiqc results/"
	"/usr/bin/env python3 scripts/train.py --epochs 10 --lr 0.001"
	"Rscript analysis/deseq2.R counts.tsv"
	"bash .command.sh"
	"aws s3 cp s3://bucket/key . --secret-key ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
	"curl -H 'Authorization: Bearer abc.def.ghi' https://example.org/api"
	"sort -k1,1 -k2,2n in.bed"
	"/usr/sbin/sshd -D"
	"torchrun --nproc_per_node 8 train.py"
)
printf '%-78s %10s %10s\n' "command line ($N calls each)" "median us" "p99 us"
all_med=()
for c in "${cmds[@]}"; do
	eval "set -- $c"
	out=$("$CLI" rules test --rules "$RULES" --repeat "$N" -- "$@" 2>&1)
	cost=$(printf '%s\n' "$out" | sed -n 's/^cost: *//p')
	med=$(printf '%s' "$cost" | sed -n 's/^median \([0-9.]*\) us.*/\1/p')
	p99=$(printf '%s' "$cost" | sed -n 's/.*p99 \([0-9.]*\) us.*/\1/p')
	printf '%-78.78s %10s %10s\n' "$c" "${med:-?}" "${p99:-?}"
	all_med+=("${med:-0}")
done
printf '%s\n' "${all_med[@]}" | sort -n | awk '{ v[NR] = $1 } END {
	printf "median of the medians: %.2f us (target: under 10 us)\n", v[int((NR + 1) / 2)] }'
