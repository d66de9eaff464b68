/* The one translation unit that creates the probes of both providers. Built into
 * libjitprov-lttng.so, which libjitprov dlopen()s at run time. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "jitprov_runtime_tp.h"
#include "jitprov_rundown_tp.h"
