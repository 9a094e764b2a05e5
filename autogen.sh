#!/bin/sh
# SPDX-License-Identifier: MIT
set -e
cd "$(dirname "$0")"
autoreconf -fi
