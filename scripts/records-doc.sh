#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Write the field tables of doc/records.md anew from the schema description
# (agent/core/schema.h), as `jobtrace schema markdown` of a build prints them.
# Usage: scripts/records-doc.sh BUILD_DIR
# Each table starts at its "<!-- fields of TYPE: ... -->" line and ends at
# the first blank line after the table; the text around them is kept.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/records-doc.sh BUILD_DIR}
jt="$build/jobtrace"
[ -x "$jt" ] || { echo "records-doc: no $jt: build first" >&2; exit 1; }
doc="$top/doc/records.md"
gen=$(mktemp)
trap 'rm -f "$gen" "$doc.new"' EXIT
"$jt" schema markdown > "$gen"
awk -v gen="$gen" '
	BEGIN {
		# the generated blocks by type: marker, blank, table rows
		while ((getline line < gen) > 0) {
			if (line ~ /^<!-- fields of /) {
				t = line; sub(/^<!-- fields of /, "", t); sub(/:.*/, "", t)
				block[t] = line "\n"; cur = t; blank = 0; continue
			}
			if (cur != "" && line == "" && blank++) { cur = ""; continue }
			if (cur != "") block[cur] = block[cur] line "\n"
		}
	}
	/^<!-- fields of / {
		t = $0; sub(/^<!-- fields of /, "", t); sub(/:.*/, "", t)
		if (!(t in block)) { print "records-doc: no record type " t > "/dev/stderr"; exit 1 }
		printf "%s", block[t]; done[t] = 1; skip = 1; blank = 0; next
	}
	skip { if ($0 == "" && blank++) { skip = 0; print "" } ; next }
	{ print }
	END { for (t in block) if (!(t in done)) print "records-doc: doc/records.md has no table for " t > "/dev/stderr" }
' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
trap 'rm -f "$gen"' EXIT
