/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint, sys/sdt.h or X-macro tables below are aligned by hand. */
/* clang-format off */
/* Provider jitprov_rundown: one rundown, bracketed by rundown_begin and rundown_end,
 * emitted from the rundown thread only (SPEC.md "Rundown"). Describes the events only;
 * jitprov_rundown_probes.c creates the probes, runtime/trace.cc the tracepoints.
 *
 * Every event takes the lttng-ust session it is for as its first argument, named
 * `session`: the probes are built with LTTNG_UST_TP_SESSION_CHECK, so an event is
 * recorded only into that session (SPEC.md "Every session"; lttng-ust filters its own
 * per-session statedump the same way). The runtime emits each rundown into each
 * session it is for. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER jitprov_rundown

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "jitprov_rundown_tp.h"

#if !defined(JITPROV_RUNDOWN_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define JITPROV_RUNDOWN_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "jitprov_method_fields.h"
#include "jitprov_records.h"

LTTNG_UST_TRACEPOINT_ENUM(jitprov_rundown, tier, JITPROV_TIER_ENUM_VALUES)

/* Mode and trigger labels and values: jitprov/trace_abi.h. */
LTTNG_UST_TRACEPOINT_ENUM(jitprov_rundown, mode,
  LTTNG_UST_TP_ENUM_VALUES(JITPROV_RUNDOWN_MODES(JITPROV_LTTNG_ENUM_VALUE)))

LTTNG_UST_TRACEPOINT_ENUM(jitprov_rundown, trigger,
  LTTNG_UST_TP_ENUM_VALUES(JITPROV_RUNDOWN_TRIGGERS(JITPROV_LTTNG_ENUM_VALUE)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, rundown_begin,
  LTTNG_UST_TP_ARGS(struct lttng_ust_session*, session, uint32_t, runtime_instance, uint64_t, rundown_id,
                    uint8_t, mode, uint8_t, trigger, uint64_t, method_count, uint64_t, publish_seq),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    lttng_ust_field_enum(jitprov_rundown, mode, uint8_t, mode, mode)
    lttng_ust_field_enum(jitprov_rundown, trigger, uint8_t, trigger, trigger)
    lttng_ust_field_integer(uint64_t, method_count, method_count)
    lttng_ust_field_integer(uint64_t, publish_seq, publish_seq)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, module,
  LTTNG_UST_TP_ARGS(struct lttng_ust_session*, session, uint32_t, runtime_instance, uint64_t, rundown_id,
                    uint64_t, module_id, const char*, path),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    lttng_ust_field_integer(uint64_t, module_id, module_id)
    lttng_ust_field_string(path, path)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, method,
  LTTNG_UST_TP_ARGS(struct lttng_ust_session*, session, uint64_t, rundown_id,
                    const struct jitprov_method_record*, r),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    JITPROV_METHOD_FIELDS(jitprov_rundown)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, rundown_end,
  LTTNG_UST_TP_ARGS(struct lttng_ust_session*, session, const struct jitprov_rundown_end_record*, e),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, e->runtime_instance)
    lttng_ust_field_integer(uint64_t, rundown_id, e->rundown_id)
    lttng_ust_field_integer(uint64_t, modules, e->modules)
    lttng_ust_field_integer(uint64_t, methods, e->methods)
    lttng_ust_field_integer(uint64_t, versions, e->versions)
    lttng_ust_field_integer(uint64_t, skipped, e->skipped)
    lttng_ust_field_integer(uint64_t, retried, e->retried)
    lttng_ust_field_integer(uint64_t, duration_ns, e->duration_ns)
    lttng_ust_field_integer(uint64_t, publish_seq, e->publish_seq)
    lttng_ust_field_integer(uint64_t, end_seq, e->end_seq)
    lttng_ust_field_integer(uint64_t, caught_up, e->caught_up)
    lttng_ust_field_integer(uint8_t, cut_short, e->cut_short)
    lttng_ust_field_integer(uint64_t, caught_up_methods, e->caught_up_methods)))

#endif /* JITPROV_RUNDOWN_TP_H */

#include <lttng/tracepoint-event.h>
