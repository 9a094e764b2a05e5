#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the quick fabtests suite on srd with its peers of this host
# through shm (FI_SRD_USE_SHM=1: fi_enable fails rather than falling back
# to the device), as TAP.
FI_SRD_USE_SHM=1
export FI_SRD_USE_SHM
exec sh "$(dirname "$0")/test_quick_srd.sh" "$@"
