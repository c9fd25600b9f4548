#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the default rules over the table of real command lines (cases.tsv) and
# the redaction table (redact.tsv; a third column "cut" tests the line as
# one the kernel cut) through `jobtrace rules test`, and check each
# decision.  Ends with "N passed, M failed".
set -u
top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
CLI=$top_builddir/jobtrace
RULES=$top_srcdir/lua-rules
CASES=$top_srcdir/tests/rules/cases.tsv
REDACT=$top_srcdir/tests/rules/redact.tsv
passed=0
failed=0

# The value of "key:" in a decision printed by `rules test`.
field() {
	printf '%s\n' "$1" | sed -n "s/^$2: *//p" | head -n 1
}

# Decide for a command line given as words; extra options first.
decide() {
	"$CLI" rules test --rules "$RULES" "$@" 2>&1
}

[ -x "$CLI" ] || { echo "run-cases: $CLI not built" >&2; exit 99; }
n=0
while IFS=$'\t' read -r tool category include cmd opt1 opt2; do
	case "$tool" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	opts=()
	for o in "${opt1:-}" "${opt2:-}"; do
		case "$o" in
		exe=*) opts+=(--exe "${o#exe=}") ;;
		parent=*) opts+=(--parent "${o#parent=}") ;;
		uid=*) opts+=(--uid "${o#uid=}") ;;
		job=*) opts+=(--job "${o#job=}") ;;
		not-system) opts+=(--not-system) ;;
		esac
	done
	eval "set -- $cmd"
	out=$(decide "${opts[@]}" -- "$@")
	got_tool=$(field "$out" tool)
	got_cat=$(field "$out" category)
	[ "$got_cat" = "-" ] && got_cat=""
	[ "$category" = "-" ] && category=""
	got_inc=$(field "$out" include)
	[ "$got_inc" = yes ] && got_inc=1 || got_inc=0
	if [ "$got_tool|$got_cat|$got_inc" = "$tool|$category|$include" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "not ok - case $n: $cmd: got tool '$got_tool' category '$got_cat' include $got_inc, want '$tool' '$category' $include"
		printf '%s\n' "$out" | grep -E '^(errors|jobtrace)' | sed 's/^/# /'
	fi
done < "$CASES"
echo "# $n command lines from $(basename "$CASES")"
if [ "$n" -lt 150 ]; then
	echo "not ok - the table has $n command lines, at least 150 wanted"
	failed=$((failed + 1))
fi

m=0
while IFS=$'\t' read -r cmd want flag; do
	case "$cmd" in ''|'#'*) continue ;; esac
	m=$((m + 1))
	opts=()
	[ "${flag:-}" = cut ] && opts=(--argv-truncated)
	eval "set -- $cmd"
	# first seen, and seen before (--repeat: the caches hold its arguments)
	for again in "" --repeat=1; do
		out=$(decide "${opts[@]}" $again -- "$@")
		got=$(field "$out" argv | sed 's/   (changed by the rules)$//')
		if [ "$got" = "$want" ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "not ok - redaction $m${again:+, seen before}: $cmd${flag:+ ($flag)}: got '$got', want '$want'"
		fi
	done
done < "$REDACT"
echo "# $m redaction cases from $(basename "$REDACT")"

# the same lines through `rules test --lines` (one process for all): each
# decision is the one of the line alone
want=$(grep -v '^#' "$REDACT" | grep -v '^$' | awk -F'\t' '$3 != "cut" { print $2 }')
got=$(grep -v '^#' "$REDACT" | grep -v '^$' | awk -F'\t' '$3 != "cut" { print $1 }' |
	"$CLI" rules test --rules "$RULES" --lines - 2>&1 |
	sed -n 's/^argv: *//p' | sed 's/   (changed by the rules)$//')
if [ "$got" = "$want" ] && [ -n "$got" ]; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	echo "not ok - rules test --lines decides as one line at a time:"
	diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -n 10 | sed 's/^/# /'
fi

# the default rules must be cheap: median of one classification
out=$(decide --repeat 20000 -- bwa mem -t 8 ref.fa reads_1.fq reads_2.fq)
echo "# $(field "$out" cost)"
# a user's 2 KB --export without NAME=VALUE structure stays within the
# deadline (the gsub it replaced took 70-130 ms and failed closed)
long="ALL,$(printf 'mysql -pmysql -p%.0s' $(seq 125))"
out=$(decide -- sbatch --export="$long" job.sh)
if [ "$(field "$out" errors)" = "0 rule(s) failed" ]; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	echo "not ok - a 2 KB sbatch --export: $(field "$out" error)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
