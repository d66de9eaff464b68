/* SPDX-License-Identifier: MIT */
/* The floor provider's probe and tracepoint definitions (floor_tp.h), statically linked
 * into jitprov-bench-emit. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "floor_tp.h"
