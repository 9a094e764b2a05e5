#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: test_tcp_conn again with the epoll engine (FI_TCP_IO_URING=0),
# so that both engines pass the same tests.
: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
FI_TCP_IO_URING=0
export FI_TCP_IO_URING
exec "$top_builddir/prov/tcp/test/test_tcp_conn"
