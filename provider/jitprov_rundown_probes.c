/* SPDX-License-Identifier: MIT */
/* Creates the probes of provider jitprov_rundown, built with LTTNG_UST_TP_SESSION_CHECK:
 * each event is recorded only into the session passed as its `session` argument. Also
 * the two session helpers the runtime's rundown engine uses (docs/spec.md "Rundown"):
 *
 *  - jitprov_lttng_watch_session_starts(): attaches a probe to lttng-ust's own
 *    `lttng_ust_statedump:start`, which lttng-ust fires once into each session when it
 *    starts (and on `lttng regenerate statedump`), with that session as argument.
 *  - jitprov_lttng_recording_sessions(): the sessions that record this provider's
 *    events now, read from the runtime's tracepoints (one probe entry per session and
 *    channel that enabled the event): for sessions that were recording before the
 *    watch existed, and for the non-session triggers (every recording session).
 *
 * Both rely on lttng-ust 2.13's public probe ABI (lttng/tracepoint.h,
 * lttng/tracepoint-types.h, lttng/ust-events.h: append-only structures). Facts and
 * experiments: tests/integration/multi_session.sh. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TP_SESSION_CHECK
#include "jitprov_rundown_tp.h"

#include <lttng/tracepoint-types.h>
#include <lttng/ust-events.h>

#include <stddef.h>

#include "jitprov_sessions.h"

/* liblttng-ust-tracepoint's own entry points. tracepoint.h maps these names to the
 * dlopen() table of the object that defines the tracepoints (libjitprov), which this
 * object does not have: call the exported functions directly. */
extern void jitprov_tp_read_lock(void) __asm__("lttng_ust_tp_rcu_read_lock");
extern void jitprov_tp_read_unlock(void) __asm__("lttng_ust_tp_rcu_read_unlock");
extern void* jitprov_tp_dereference(void* p) __asm__("lttng_ust_tp_rcu_dereference_sym");

static jitprov_session_start_fn g_on_start;
static void* g_on_start_ctx;

/* Runs on lttng-ust's listener thread with its locks held, before it replies to the
 * session daemon: the callback only hands the pointer over. */
static void on_statedump_start(void* data, struct lttng_ust_session* session) {
  (void)data;
  jitprov_session_start_fn fn = __atomic_load_n(&g_on_start, __ATOMIC_ACQUIRE);
  if (fn != NULL) fn(g_on_start_ctx, session);
}

/* The exact signature of lttng_ust_statedump:start's arguments: lttng-ust refuses a
 * probe whose signature differs, and a wrong one registered first would make it refuse
 * its own statedump probe. */
#define JITPROV_STATEDUMP_START_SIGNATURE "struct lttng_ust_session *, session"

__attribute__((visibility("default"))) int jitprov_lttng_watch_session_starts(jitprov_session_start_fn fn, void* ctx) {
  if (__atomic_load_n(&g_on_start, __ATOMIC_ACQUIRE) != NULL) return -1; /* once per process */
  g_on_start_ctx = ctx;
  __atomic_store_n(&g_on_start, fn, __ATOMIC_RELEASE);
  return lttng_ust_tracepoint_provider_register("lttng_ust_statedump", "start", (void (*)(void))on_statedump_start,
                                                NULL, JITPROV_STATEDUMP_START_SIGNATURE);
}

static int isOurProbe(void (*func)(void)) {
  return func == (void (*)(void))lttng_ust__event_probe__jitprov_rundown___rundown_begin ||
         func == (void (*)(void))lttng_ust__event_probe__jitprov_rundown___module ||
         func == (void (*)(void))lttng_ust__event_probe__jitprov_rundown___method ||
         func == (void (*)(void))lttng_ust__event_probe__jitprov_rundown___rundown_end;
}

__attribute__((visibility("default"))) size_t jitprov_lttng_recording_sessions(
    struct lttng_ust_tracepoint* const* tracepoints, size_t n_tracepoints, void** out, size_t max) {
  size_t n = 0;
  jitprov_tp_read_lock();
  for (size_t t = 0; t < n_tracepoints; ++t) {
    struct lttng_ust_tracepoint_probe* p =
        (struct lttng_ust_tracepoint_probe*)jitprov_tp_dereference(tracepoints[t]->probes);
    for (; p != NULL && p->func != NULL; ++p) {
      if (!isOurProbe(p->func)) continue; /* then data is lttng-ust's event (ust-tracepoint-event.h) */
      const struct lttng_ust_event_common* ev = (const struct lttng_ust_event_common*)p->data;
      if (ev->type != LTTNG_UST_EVENT_TYPE_RECORDER || !__atomic_load_n(&ev->enabled, __ATOMIC_RELAXED)) continue;
      const struct lttng_ust_event_recorder* rec = (const struct lttng_ust_event_recorder*)ev->child;
      const struct lttng_ust_channel_common* chan = rec->chan->parent;
      struct lttng_ust_session* s = chan->session;
      if (!__atomic_load_n(&chan->enabled, __ATOMIC_RELAXED) || !__atomic_load_n(&s->active, __ATOMIC_RELAXED))
        continue;
      size_t i = 0;
      while (i < n && i < max && out[i] != s) ++i;
      if (i < n && i < max) continue; /* seen (several channels, several events) */
      if (n < max) out[n] = s;
      ++n;
    }
  }
  jitprov_tp_read_unlock();
  return n;
}
