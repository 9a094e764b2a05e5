#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the quick fabtests suite on weft's tcp provider with the epoll
# engine (FI_TCP_IO_URING=0), so that both engines pass the same suite.
FI_TCP_IO_URING=0
export FI_TCP_IO_URING
exec "$(dirname "$0")/test_quick_tcp.sh"
