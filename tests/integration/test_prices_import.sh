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
# 5. import-spot puts a spot history's latest prices into a table (see
#    below); bad input exits 1 naming where and leaves the table.
#
# Needs root (lib.sh) only because the integration tests all do.
# Exit 0 pass, 1 fail, 77 skipped.
#
# Run:  make check TESTS=tests/integration/test_prices_import.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
start_watchdog 60
FIX=$top_srcdir/tests/fuzz/corpus/offer
SPOT=$top_srcdir/tests/fuzz/corpus/spot/spot-history.json
PI() { timeout 20 "$CLI" --config "$T/none.conf" prices import "$@"; }

# True if FILE contains the fixed string S.
has() {
	grep -qF -- "$2" "$1"
}

cat >"$T/want" <<'TAB'
eu-west-1	c5.xlarge	0.192	-	USD	4	8	0	-	compute-optimized	x86_64
eu-west-1	m5.large	0.107	-	USD	2	8	0	-	general-purpose	x86_64
us-east-1	c5.xlarge	0.17	-	USD	4	8	0	-	compute-optimized	x86_64
us-east-1	m5.large	0.096	-	USD	2	8	0	-	general-purpose	x86_64
us-west-2	m5.large	0.096	-	USD	2	8	0	-	general-purpose	x86_64
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
check "... first line: the format" eq "$(head -n 1 "$T/csv.out")" "# jobtrace prices v2"
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

# 5. import-spot: the families excerpt (45 rows of AWS's CSV, two regions,
# four families) and a spot history in the AWS CLI's shape; what each line
# must hold is worked out by hand from the two files (see also
# tests/unit/test_spot_import.c).
PI --output "$T/fam.tsv" "$FIX/ec2-offer-families.csv" 2>"$T/fam.err"
check "families: exit 0" eq $? 0
check "... 29 prices of 15 types in 2 regions" has "$T/fam.err" \
	"45 rows read, 29 prices kept (0 of zero left out), 2 regions, 15 instance types"
check "... m6g.medium: 1 vCPU, 4 GiB, Graviton" has "$T/fam.tsv" \
	"$(printf 'us-east-1\tm6g.medium\t0.0385\t-\tUSD\t1\t4\t0\t-\tgeneral-purpose\tarm64')"
check "... g4dn.xlarge: one GPU" has "$T/fam.tsv" \
	"$(printf 'eu-west-1\tg4dn.xlarge\t0.587\t-\tUSD\t4\t16\t1\t-\tgpu-instance\tx86_64')"
cp "$T/fam.tsv" "$T/fam0.tsv"
ino=$(stat -c %i "$T/fam.tsv")
timeout 20 "$CLI" prices import-spot --table "$T/fam.tsv" "$SPOT" \
	>"$T/spot.out" 2>"$T/spot.err"
check "import-spot: exit 0" eq $? 0
check "... nothing on stdout" eq "$(wc -c <"$T/spot.out")" 0
check "... the summary" has "$T/spot.err" \
	"12 prices read, 1 of other systems left out, 7 zone and type prices kept, 2 for a region or type not in $T/fam.tsv left out -> $T/fam.tsv"
check "... the table replaced (a new file)" eval "[ $(stat -c %i "$T/fam.tsv") != $ino ]"
# us-east-1a c5.large: 0.0354 (the latest), 1b: 0.0329; the region: 0.0329
check "... us-east-1 c5.large spot: the lowest zone's latest" has "$T/fam.tsv" \
	"$(printf 'us-east-1\tc5.large\t0.085\t0.0329\tUSD\t2\t4\t0\t-\tcompute-optimized\tx86_64')"
check "... us-east-1a c5.large: its own line" has "$T/fam.tsv" \
	"$(printf 'us-east-1a\tc5.large\t-\t0.0354\tUSD\t-\t-\t-\t-\t-\t-')"
check "... eu-west-1 r5.large: the 04:44 price, not the 02:00 one" has "$T/fam.tsv" \
	"$(printf 'eu-west-1\tr5.large\t0.141\t0.0483\tUSD')"
check "... a type not in the table gets no line" eq "$(grep -c t3.micro "$T/fam.tsv")" 0
check "... the old comments kept" has "$T/fam.tsv" "version 20250912225308"
check "... the spot file named" has "$T/fam.tsv" "# spot prices from $SPOT (latest 2026-11-20T09:30:00Z)"
check "... the other lines as they were" eval "diff <(grep -v '^#' '$T/fam0.tsv' | grep -vE '^(us-east-1|eu-west-1)\s(c5.large|m5.large|m6g.medium|r5.large)\s' | cut -f1-11) <(grep -v '^#' '$T/fam.tsv' | grep -vE '^(us-east-1|eu-west-1)[a-z]?\s(c5.large|m5.large|m6g.medium|r5.large)\s') >/dev/null"
printf 'us-east-1\tm5.large\t0.096\t-\tUSD\n' >"$T/v1.tsv"
timeout 20 "$CLI" prices import-spot --table "$T/v1.tsv" --output "$T/v1-spot.tsv" \
	"$SPOT" 2>/dev/null
check "import-spot on a v1 table to --output: exit 0" eq $? 0
check "... the v1 table untouched" eq "$(cat "$T/v1.tsv")" "$(printf 'us-east-1\tm5.large\t0.096\t-\tUSD')"
check "... the output has its spot price" has "$T/v1-spot.tsv" \
	"$(printf 'us-east-1\tm5.large\t0.096\t0.0391\tUSD\t-\t-\t-\t-\t-\t-')"
cp "$T/fam.tsv" "$T/fam1.tsv"
printf '{"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0,04", "Timestamp": "2026-11-21T00:00:00Z"}]}' >"$T/badspot.json"
timeout 20 "$CLI" prices import-spot --table "$T/fam.tsv" "$T/badspot.json" 2>"$T/bad.err"
check "a bad spot price: exit 1" eq $? 1
check "... naming the file and the JSON path" has "$T/bad.err" \
	"$T/badspot.json: \$.SpotPriceHistory[0].SpotPrice: not a price"
check "... the table stays" cmp -s "$T/fam.tsv" "$T/fam1.tsv"
printf 'us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8 GiB\t0\t-\tg\t-\n' >"$T/badtab.tsv"
timeout 20 "$CLI" prices import-spot --table "$T/badtab.tsv" "$SPOT" 2>"$T/bad.err"
check "a bad table: exit 1" eq $? 1
check "... naming its line" has "$T/bad.err" "$T/badtab.tsv:1: memory_gib \"8 GiB\""

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
SP() { timeout 20 "$CLI" --config "$T/none.conf" prices import-spot "$@"; }
spot_usage() {	# spot_usage MESSAGE ARGS...: exit 2 and MESSAGE on stderr
	local want=$1
	shift
	SP "$@" >/dev/null 2>"$T/usage.err"
	[ $? -eq 2 ] && grep -qF -- "$want" "$T/usage.err"
}
check "import-spot without --table: exit 2" spot_usage "which price table? (--table TABLE" \
	"$SPOT"
check "import-spot without a file: exit 2" spot_usage "which spot file? (SPOT_FILE)" \
	--table "$T/fam.tsv"
check "import-spot, two files: exit 2" spot_usage "unexpected argument 'b.json'" \
	--table "$T/fam.tsv" a.json b.json
check "import-spot --table '': exit 2" spot_usage "--table: empty file name" --table "" a.json
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
