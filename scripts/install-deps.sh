#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what jobtrace needs, from Debian's archive:
#   scripts/install-deps.sh [build|all] [--list]
# build: to build jobtrace and run the agent and the CLI (what
#        scripts/build.sh and demo/run.sh need);
# all:   that and everything the test suite uses (the default).
# --list prints the packages of the set, one a line, and installs nothing.
# Quiet and idempotent: packages already present are not reinstalled.
# libclang-rt-dev is libFuzzer's runtime, for make fuzz (only a recommend
# of clang's).  cloud-init (6 s, 22 packages without recommends) checks the
# AWS Batch user data: its postinst only enables its units for the next
# boot, where ds-identify turns it off on a machine with no cloud data
# source; dpkg-dev (dpkg-scanpackages) and gpg make that test's apt
# repository.  snakemake (7.21 in Debian 12) runs test_rightsize.sh's pipeline.
# fuse3 and libfuse3-dev make test_smklog_stuck.sh's FUSE file system that
# hangs a reader.  tmux drives the full-screen `jobtrace top` in test_top.sh.
# chromium renders the HTML report headless in test_report_html.sh (its fonts
# come with fontconfig, fonts-dejavu-core).  slurmdbd and mariadb-server give
# tests/slurm/slurm-env.sh's accounting mode (SLURM_ENV_ACCOUNTING) the real
# `sacct` that test_slurm_acct.sh compares with; that mode starts its own
# mariadbd and slurmdbd (free ports, data under its folder), whatever the
# packages' services do.  sudo is one of the wrappers
# test_secret_corpus.sh runs secret-bearing command lines behind.
set -eu
BUILD="gcc make autoconf automake pkg-config clang llvm bpftool libbpf-dev
libelf-dev zlib1g-dev libconfig-dev liblua5.4-dev libsqlite3-dev
libcurl4-openssl-dev libssl-dev procps"
TEST="libclang-rt-dev libcmocka-dev sqlite3 slurm-wlm munge libslurm-dev
slurmdbd mariadb-server clickhouse-server clickhouse-client python3 curl cloud-init dpkg-dev gpg docker.io busybox-static
snakemake chromium sudo fuse3 libfuse3-dev openssl tmux strace"
set_name=all
list=
for a in "$@"; do
	case $a in
	build | all) set_name=$a ;;
	--list) list=1 ;;
	*)
		echo "usage: scripts/install-deps.sh [build|all] [--list]" >&2
		exit 2
		;;
	esac
done
PKGS=$BUILD
[ "$set_name" = all ] && PKGS="$BUILD $TEST"
if [ -n "$list" ]; then
	printf '%s\n' $PKGS
	exit 0
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
