# SPDX-License-Identifier: GPL-2.0-or-later
#
# pidtree.sh - sourced by the integration tests (tests/integration/lib.sh)
# and the benchmarks: the process tree below a pid.

# Print the pids below process $1, each after its parent, one a line.
below() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		below "$c"
	done
}
