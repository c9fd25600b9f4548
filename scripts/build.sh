#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Configure and build jobtrace out of tree in BUILD_DIR (default ./build),
# or, given the source folder itself, where it was configured in place.
# It installs only what the build needs (install-deps.sh build): the test
# suite's Slurm, ClickHouse, Docker and Chromium are tests/run-all.sh's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
"$top/scripts/install-deps.sh" build
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null 2>&1)
if [ "$build" != "$top" ] && [ -f "$top/config.status" ]; then
	echo "build.sh: $top was configured in place (./configure there):" \
		"configure refuses a second build in $build; build in $top" \
		"(scripts/build.sh $top), or run 'make distclean' in $top first" >&2
	exit 2
fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" --prefix=/usr --sysconfdir=/etc \
	--localstatedir=/var --runstatedir=/run -q
make -s -j"$(nproc)"
