/* SPDX-License-Identifier: MIT */
#include "weft/core.h"
