#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Configure and build jobtrace out of tree in BUILD_DIR (default ./build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
"$top/scripts/install-deps.sh"
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null 2>&1)
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" --prefix=/usr --sysconfdir=/etc \
	--localstatedir=/var --runstatedir=/run -q
make -s -j"$(nproc)"
