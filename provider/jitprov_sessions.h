/* SPDX-License-Identifier: MIT */
/* The provider's session helpers (jitprov_rundown_probes.c), looked up by libjitprov
 * with dlsym() after it loaded the provider. Plain C. */
#ifndef JITPROV_SESSIONS_H
#define JITPROV_SESSIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lttng_ust_tracepoint;

/* Called with each session that starts (or regenerates its statedump), on lttng-ust's
 * listener thread with lttng-ust's locks held: hand the pointer over and return. */
typedef void (*jitprov_session_start_fn)(void* ctx, void* session);

/* Once per process. 0 on success, else lttng-ust's error (negative). */
typedef int (*jitprov_watch_session_starts_fn)(jitprov_session_start_fn fn, void* ctx);
#define JITPROV_WATCH_SESSION_STARTS "jitprov_lttng_watch_session_starts"

/* The distinct active sessions with an enabled recorder of a jitprov_rundown event on
 * one of `tracepoints` (the runtime's own tracepoint definitions). Stores at most `max`
 * in out[]; returns how many there are. */
typedef size_t (*jitprov_recording_sessions_fn)(struct lttng_ust_tracepoint* const* tracepoints, size_t n_tracepoints,
                                                void** out, size_t max);
#define JITPROV_RECORDING_SESSIONS "jitprov_lttng_recording_sessions"

#ifdef __cplusplus
}
#endif

#endif
