#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf -fi
