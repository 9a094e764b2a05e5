#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the quick fabtests suite on weft's tcp provider with direct
# reads off (FI_TCP_POLL_DIRECT=0), so that io_uring's receive requests
# carry every byte, as they do for endpoints with many connections.
FI_TCP_POLL_DIRECT=0
export FI_TCP_POLL_DIRECT
exec "$(dirname "$0")/test_quick_tcp.sh"
