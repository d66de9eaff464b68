/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint, sys/sdt.h or X-macro tables below are aligned by hand. */
/* clang-format off */
/* Provider jitprov_runtime: events fired on the JIT paths (SPEC.md "LTTng-UST events").
 * This header only describes the events; jitprov_runtime_probes.c creates the probes in
 * the provider shared object, and runtime/trace.cc defines the tracepoints (dynamic
 * linkage: the runtime runs untraced when the provider is absent). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER jitprov_runtime

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "jitprov_runtime_tp.h"

#if !defined(JITPROV_RUNTIME_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define JITPROV_RUNTIME_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "jitprov_method_fields.h"
#include "jitprov_records.h"

LTTNG_UST_TRACEPOINT_ENUM(jitprov_runtime, tier, JITPROV_TIER_ENUM_VALUES)

LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, module_load,
  LTTNG_UST_TP_ARGS(uint32_t, runtime_instance, uint64_t, module_id, const char*, path),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, module_id, module_id)
    lttng_ust_field_string(path, path)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, module_unload,
  LTTNG_UST_TP_ARGS(uint32_t, runtime_instance, uint64_t, module_id, const char*, path),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, module_id, module_id)
    lttng_ust_field_string(path, path)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, method_load,
  LTTNG_UST_TP_ARGS(const struct jitprov_method_record*, r),
  LTTNG_UST_TP_FIELDS(JITPROV_METHOD_FIELDS(jitprov_runtime)))

/* unload_seq: the module unload's number in the publication sequence (one per module). */
LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, method_unload,
  LTTNG_UST_TP_ARGS(uint32_t, runtime_instance, uint64_t, method_id, uint64_t, module_id, uint64_t, unload_seq),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, method_id, method_id)
    lttng_ust_field_integer(uint64_t, module_id, module_id)
    lttng_ust_field_integer(uint64_t, unload_seq, unload_seq)))

/* One native version retired on its own (the method stays). */
LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, code_unload,
  LTTNG_UST_TP_ARGS(uint32_t, runtime_instance, uint64_t, method_id, uint64_t, version_id, uint64_t, code_start,
                    uint32_t, code_size, uint64_t, retire_seq),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, method_id, method_id)
    lttng_ust_field_integer(uint64_t, version_id, version_id)
    lttng_ust_field_integer_hex(uint64_t, code_start, code_start)
    lttng_ust_field_integer(uint32_t, code_size, code_size)
    lttng_ust_field_integer(uint64_t, retire_seq, retire_seq)))

LTTNG_UST_TRACEPOINT_EVENT(jitprov_runtime, rejit_request,
  LTTNG_UST_TP_ARGS(uint32_t, runtime_instance, uint64_t, method_id, uint32_t, rejit_id),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, runtime_instance, runtime_instance)
    lttng_ust_field_integer(uint64_t, method_id, method_id)
    lttng_ust_field_integer(uint32_t, rejit_id, rejit_id)))

#endif /* JITPROV_RUNTIME_TP_H */

#include <lttng/tracepoint-event.h>
