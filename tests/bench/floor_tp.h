/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint tables below are aligned by hand. */
/* clang-format off */
/* Provider jitprov_bench_floor: the emission benchmark's fixed floor (emit_bench.cc).
 * One event with jitprov_rundown:method's field payload (the same fields, from the same
 * record) and nothing else of jitprov's: no session argument (the probe records it
 * into every session enabling it, as plain lttng-ust events are), no provider loading,
 * no runtime. Statically linked into the benchmark (floor_tp.c creates the probe). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER jitprov_bench_floor

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "floor_tp.h"

#if !defined(JITPROV_BENCH_FLOOR_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define JITPROV_BENCH_FLOOR_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "jitprov_method_fields.h"
#include "jitprov_records.h"

LTTNG_UST_TRACEPOINT_ENUM(jitprov_bench_floor, tier, JITPROV_TIER_ENUM_VALUES)

LTTNG_UST_TRACEPOINT_EVENT(jitprov_bench_floor, method,
  LTTNG_UST_TP_ARGS(uint64_t, rundown_id, const struct jitprov_method_record*, r),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, rundown_id, rundown_id)
    JITPROV_METHOD_FIELDS(jitprov_bench_floor)))

#endif /* JITPROV_BENCH_FLOOR_TP_H */

#include <lttng/tracepoint-event.h>
