/* Provider jitprov_rundown: one rundown, bracketed by rundown_begin and rundown_end,
 * emitted from the rundown thread only (SPEC.md "Rundown"). Describes the events only;
 * see jitprov_runtime_tp.h for where the probes and tracepoints are created. */
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

/* jitprov::RundownMode */
LTTNG_UST_TRACEPOINT_ENUM(jitprov_rundown, mode,
  LTTNG_UST_TP_ENUM_VALUES(
    lttng_ust_field_enum_value("lockfree", 0)
    lttng_ust_field_enum_value("locked", 1)
    lttng_ust_field_enum_value("per-method", 2)))

/* jitprov::RundownTrigger */
LTTNG_UST_TRACEPOINT_ENUM(jitprov_rundown, trigger,
  LTTNG_UST_TP_ENUM_VALUES(
    lttng_ust_field_enum_value("api", 0)
    lttng_ust_field_enum_value("session", 1)
    lttng_ust_field_enum_value("signal", 2)
    lttng_ust_field_enum_value("exit", 3)
    lttng_ust_field_enum_value("at", 4)
    lttng_ust_field_enum_value("every", 5)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, rundown_begin,
  LTTNG_UST_TP_ARGS(uint64_t, rundown_id, uint8_t, mode, uint8_t, trigger, uint64_t, method_count),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    lttng_ust_field_enum(jitprov_rundown, mode, uint8_t, mode, mode)
    lttng_ust_field_enum(jitprov_rundown, trigger, uint8_t, trigger, trigger)
    lttng_ust_field_integer(uint64_t, method_count, method_count)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, module,
  LTTNG_UST_TP_ARGS(uint64_t, rundown_id, uint32_t, module_id, const char*, path),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    lttng_ust_field_integer(uint32_t, module_id, module_id)
    lttng_ust_field_string(path, path)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, method,
  LTTNG_UST_TP_ARGS(uint64_t, rundown_id, const struct jitprov_method_record*, r),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    JITPROV_METHOD_FIELDS(jitprov_rundown)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_rundown, rundown_end,
  LTTNG_UST_TP_ARGS(uint64_t, rundown_id, uint64_t, modules, uint64_t, methods, uint64_t, versions,
                    uint64_t, skipped, uint64_t, retried, uint64_t, duration_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    lttng_ust_field_integer(uint64_t, modules, modules)
    lttng_ust_field_integer(uint64_t, methods, methods)
    lttng_ust_field_integer(uint64_t, versions, versions)
    lttng_ust_field_integer(uint64_t, skipped, skipped)
    lttng_ust_field_integer(uint64_t, retried, retried)
    lttng_ust_field_integer(uint64_t, duration_ns, duration_ns)))

#endif /* JITPROV_RUNDOWN_TP_H */

#include <lttng/tracepoint-event.h>
