#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_faults.sh - faults a hostile review found, each against a reference
# the test makes itself:
#   1. a fresh `make install DESTDIR=...`: the installed systemd unit's
#      command line, with no configuration file, passes --check-config;
#      a missing file named with --config is still refused, by name.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
for f in "$AGENT" "$CLI"; do
	[ -x "$f" ] || { echo "# error: $f is not built"; exit 99; }
done
start_watchdog 300

# ---- 1. the installed unit on a fresh install ----------------------------------------------------
INST=$T/inst
if make -C "$top_builddir" install DESTDIR="$INST" >"$T/install.log" 2>&1; then
	unit=$(find "$INST" -name jobtraced.service | head -n 1)
	cmd=$(sed -n 's/^ExecStart=//p' "$unit")
	bin=${cmd%% *}
	args=${cmd#"$bin"}
	defconf=$("$INST$bin" --help | sed -n 's/.*configuration (default \(.*\))$/\1/p')
	note "unit $unit: ExecStart=$cmd; default configuration $defconf"
	if [ -e "$defconf" ]; then
		note "skipped: $defconf exists on this host, not a fresh install"
	else
		# shellcheck disable=SC2086 # the unit's arguments, split as systemd does
		out=$("$INST$bin" $args --check-config 2>&1)
		st=$?
		check "fresh install: the unit's command line ($cmd) with no $defconf passes --check-config (status $st)" \
			eq "$st" 0
		note "$(printf '%s\n' "$out" | head -n 3)"
		check "fresh install: the sample configuration is installed next to where the file would be" \
			test -f "$INST$defconf.sample"
	fi
	out=$("$INST$bin" --foreground --config "$T/none.conf" --check-config 2>&1)
	st=$?
	check "a missing file named with --config is refused with status 2, by name ($out)" \
		eq "$st|$(printf '%s' "$out" | grep -c "$T/none.conf")" "2|1"
else
	check "make install DESTDIR=$INST" false
	note "$(tail -n 20 "$T/install.log")"
fi

finish
