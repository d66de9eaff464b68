/* The one translation unit that creates the probes of both providers. Built into
 * libjitprov-lttng.so, which libjitprov dlopen()s at run time. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "jitprov_runtime_tp.h"
#include "jitprov_rundown_tp.h"

/* What libjitprov checks after dlopen(), so that a library that is not this provider
 * (a wrong $JITPROV_PROVIDER) is reported as such instead of "loaded". The value is the
 * provider's event ABI version. */
__attribute__((visibility("default"))) const int jitprov_lttng_provider_abi = 1;
