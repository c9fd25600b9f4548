#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/prices.sh BUILD_DIR [PRODUCTS]
#
# What `jobtrace prices import` costs on an offer file of AWS's size: a
# made-up EC2 offer of PRODUCTS products (200000) in both forms
# (bench/prices-offer.py: 5 price dimensions a product, as most of AWS's
# have), imported from each under /usr/bin/time -v.  Prints each file's
# size, the wall time, the CPU time and the peak RSS, and checks that both
# tables equal the one the generator computed by itself.  The files go to
# a mktemp -d folder under TMPDIR (about 1.6 GB at 200000), removed at
# the end.  Needs python3 and GNU time (Debian package time).
set -eu
BUILD=${1:?usage: bench/prices.sh BUILD_DIR [PRODUCTS]}
N=${2:-200000}
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/jobtrace-prices.XXXXXX")
trap 'rm -rf "$T"' EXIT
[ -x /usr/bin/time ] || { echo "bench/prices.sh: needs GNU time (apt-get install time)" >&2; exit 1; }

python3 "$here/prices-offer.py" "$N" "$T"
status=0
for form in csv json; do
	/usr/bin/time -v "$BUILD/jobtrace" prices import --output "$T/$form.tsv" \
		"$T/offer.$form" 2>"$T/$form.time"
	size=$(stat -c %s "$T/offer.$form")
	wall=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$T/$form.time")
	user=$(sed -n 's/^\tUser time (seconds): //p' "$T/$form.time")
	sys=$(sed -n 's/^\tSystem time (seconds): //p' "$T/$form.time")
	rss=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$T/$form.time")
	if grep -v '^#' "$T/$form.tsv" | cmp -s - "$T/want.tsv"; then
		same="table as computed by the generator"
	else
		same="TABLE DIFFERS from the generator's"
		status=1
	fi
	printf '%-4s %5d MB  wall %s  user %ss  sys %ss  max RSS %d KiB  %s\n' \
		"$form" $((size / 1000000)) "$wall" "$user" "$sys" "$rss" "$same"
	grep '^jobtrace prices import:' "$T/$form.time" | sed 's/^/     /'
done
exit $status
