#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_prices_import.sh - `jobtrace prices import`, the command: what the
# unit test (tests/unit/test_prices_import.c) does not reach.
#
# 1. --help says what is kept and that spot prices are an admin's to fill.
# 2. The CSV and JSON fixtures (tests/fuzz/corpus/offer/, AWS's two forms
#    of one offer) give the same table on stdout, the one written by hand
#    below, and the summary on stderr counts what was read and kept.
# 3. --output writes that table (mode 0644) by replacing the file (a new
#    inode, no temporary left); --region keeps those regions; a broken
#    configuration does not matter (the command reads none).
# 4. Bad usage exits 2 naming the argument; a bad offer file exits 1
#    naming FILE:LINE (CSV) or the JSON path, and leaves the old table.
#
# Needs root (lib.sh) only because the integration tests all do.
# Exit 0 pass, 1 fail, 77 skipped.
#
# Run:  make check TESTS=tests/integration/test_prices_import.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
start_watchdog 60
FIX=$top_srcdir/tests/fuzz/corpus/offer
PI() { timeout 20 "$CLI" --config "$T/none.conf" prices import "$@"; }

# True if FILE contains the fixed string S.
has() {
	grep -qF -- "$2" "$1"
}

cat >"$T/want" <<'TAB'
eu-west-1	c5.xlarge	0.192	-	USD
eu-west-1	m5.large	0.107	-	USD
us-east-1	c5.xlarge	0.17	-	USD
us-east-1	m5.large	0.096	-	USD
us-west-2	m5.large	0.096	-	USD
TAB

# 1
"$CLI" prices --help >"$T/help" 2>&1
check "prices --help exits 0" eq $? 0
check "... says what is kept" has "$T/help" "Linux, shared tenancy, no pre-installed"
check "... and that an admin may fill in spot prices" has "$T/help" "An admin may fill it in"
"$CLI" --help >"$T/help" 2>&1
check "jobtrace --help lists prices import" has "$T/help" "prices import [--region R]..."

# 2
PI "$FIX/ec2-offer.csv" >"$T/csv.out" 2>"$T/csv.err"
check "CSV: exit 0" eq $? 0
PI "$FIX/ec2-offer.json" >"$T/json.out" 2>"$T/json.err"
check "JSON: exit 0" eq $? 0
check "CSV and JSON give the same table" cmp -s "$T/csv.out" "$T/json.out"
check "... the one expected" eval "grep -v '^#' '$T/csv.out' | cmp -s - '$T/want'"
check "... first line: the format" eq "$(head -n 1 "$T/csv.out")" "# jobtrace prices v1"
check "... the header names the version and publication date" \
	has "$T/csv.out" "version 20250912225308, published 2025-09-12T22:53:08Z"
check "CSV summary" has "$T/csv.err" \
	"15 rows read, 5 prices kept (1 of zero left out), 3 regions, 2 instance types -> stdout"
check "JSON summary" has "$T/json.err" \
	"13 products read, 5 prices kept (1 of zero left out), 3 regions, 2 instance types -> stdout"

# 3
echo 'this is { not a configuration' >"$T/none.conf"
echo "old table" >"$T/prices.tsv"
ino=$(stat -c %i "$T/prices.tsv")
PI --output "$T/prices.tsv" "$FIX/ec2-offer.json" 2>"$T/out.err"
check "--output: exit 0 (with a broken configuration)" eq $? 0
check "... the table as on stdout" cmp -s "$T/prices.tsv" "$T/csv.out"
check "... mode 0644" eq "$(stat -c %a "$T/prices.tsv")" 644
check "... a new file renamed over the old one" eval "[ $(stat -c %i "$T/prices.tsv") != $ino ]"
check "... no temporary file left" eq "$(ls "$T" | grep -c '^prices\.tsv\.')" 0
check "... the summary names the output" has "$T/out.err" "-> $T/prices.tsv"
PI --region us-east-1 --region eu-west-1 "$FIX/ec2-offer.csv" >"$T/reg.out" 2>/dev/null
check "--region twice: exit 0" eq $? 0
check "... those regions only" eq "$(grep -v '^#' "$T/reg.out" | cut -f1 | sort -u | tr '\n' ' ')" \
	"eu-west-1 us-east-1 "
check "... and says so" has "$T/reg.out" "# regions: us-east-1 eu-west-1"

# 4
usage() {	# usage MESSAGE ARGS...: exit 2 and MESSAGE on stderr
	local want=$1
	shift
	PI "$@" >/dev/null 2>"$T/usage.err"
	[ $? -eq 2 ] && grep -qF -- "$want" "$T/usage.err"
}
check "no offer file: exit 2" usage "which offer file?"
check "two offer files: exit 2" usage "unexpected argument 'b.csv'" a.csv b.csv
check "a bad --region: exit 2" usage "--region 'US-EAST-1': not a region code" \
	--region US-EAST-1 "$FIX/ec2-offer.csv"
check "an unknown option: exit 2" usage "Usage: jobtrace prices import" --spot "$FIX/ec2-offer.csv"
"$CLI" prices export >/dev/null 2>"$T/usage.err"
check "prices export: exit 2" eq $? 2
check "... naming it" has "$T/usage.err" "unknown command 'export'"

cp "$T/prices.tsv" "$T/kept.tsv"
head -c 9000 "$FIX/ec2-offer.csv" >"$T/cut.csv"
PI --output "$T/prices.tsv" "$T/cut.csv" >/dev/null 2>"$T/bad.err"
check "a CSV cut short: exit 1" eq $? 1
check "... naming FILE:LINE" has "$T/bad.err" "$T/cut.csv:17: field"
check "... the old table stays" cmp -s "$T/prices.tsv" "$T/kept.tsv"
head -c 5000 "$FIX/ec2-offer.json" >"$T/cut.json"
PI "$T/cut.json" >/dev/null 2>"$T/bad.err"
check "a JSON cut short: exit 1" eq $? 1
check "... naming the line and the JSON path" \
	eval "grep -qE '$T/cut.json: line [0-9]+ \\(byte [0-9]+\\): not valid JSON: .* \\(in \\\$\\.products\\.' '$T/bad.err'"
PI "$T/missing.csv" >/dev/null 2>"$T/bad.err"
check "a missing file: exit 1" eq $? 1
check "... naming it" has "$T/bad.err" "$T/missing.csv: No such file or directory"
PI --output "$T/nodir/prices.tsv" "$FIX/ec2-offer.csv" >/dev/null 2>"$T/bad.err"
check "an output folder that is not there: exit 1" eq $? 1
check "... naming it" has "$T/bad.err" "$T/nodir/prices.tsv: No such file or directory"
if [ "$failed" -ne 0 ]; then
	note "last stderr:" "$(cat "$T/bad.err")"
fi
finish
