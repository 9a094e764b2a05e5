#!/bin/bash
# SPDX-License-Identifier: MIT
# setup.sh [CONFIGURE ARGS...]: install what weft needs from Debian, build it
# in ./build and install it into ./_install. Safe to run again.
# python3-torch (torch.distributed with Gloo, for the weft backend's tests
# and contrib/bench/coll_vs_torch.sh) is the largest: ~215 packages, about
# 1 min 6 s to download and install on the 2-vCPU test machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

deps=(build-essential autoconf automake libtool pkg-config
      libfabric-dev libfabric-bin libibverbs-dev ibverbs-providers liburing-dev uthash-dev
      libcmocka-dev pandoc gnuplot-nox binutils iproute2 procps clang iptables
      openmpi-bin libopenmpi-dev python3-mpi4py python3-numpy python3-pip
      python3-torch)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

missing=()
for p in "${deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

[ -x configure ] || ./autogen.sh
builddir=${WEFT_BUILDDIR:-$top/build}
mkdir -p "$builddir"
cd "$builddir"
if [ ! -f Makefile ] || [ $# -gt 0 ]; then
	"$top/configure" --prefix="$top/_install" --enable-werror "$@" >configure.out 2>&1 ||
		{ cat configure.out; exit 1; }
fi
make -j"$(nproc)" >make.out 2>&1 || { tail -50 make.out; exit 1; }
make install >/dev/null
echo "setup: weft built in $builddir, installed in $top/_install"
