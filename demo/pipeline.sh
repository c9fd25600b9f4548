#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A small pipeline for the demo: a few tools, a fork tree, a failing command.
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seq 1 400000 > "$work/numbers.txt"
gzip -c "$work/numbers.txt" > "$work/numbers.txt.gz"
zcat "$work/numbers.txt.gz" | awk '{ s += $1 } END { print "sum", s }'
sort -r -n "$work/numbers.txt" | head -n 3 > "$work/top.txt"
# a fork tree: subshells with their own children
( ( sha256sum "$work/numbers.txt" > /dev/null ) & ( md5sum "$work/numbers.txt.gz" > /dev/null ) & wait )
# a command that fails
grep -q "no such line" "$work/top.txt" || echo "grep found nothing (exit 1), as planned"
sleep 0.2
