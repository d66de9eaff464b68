/* SPDX-License-Identifier: MIT */
/* Creates the probes of provider jitprov_runtime (JIT-path events, recorded into every
 * session that enables them). Built into libjitprov-lttng.so, which libjitprov
 * dlopen()s at run time. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "jitprov_runtime_tp.h"

/* What libjitprov checks after dlopen(), so that a library that is not this provider
 * (a wrong $JITPROV_PROVIDER), or a provider built for other event signatures, is
 * reported as such instead of "loaded". */
__attribute__((visibility("default"))) const int jitprov_lttng_provider_abi = JITPROV_LTTNG_PROVIDER_ABI;
