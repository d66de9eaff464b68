/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint, sys/sdt.h or X-macro tables below are aligned by hand. */
/* clang-format off */
#include <jitprov/trace_abi.h>

/* The method fields of SPEC.md, shared by jitprov_runtime:method_load and
 * jitprov_rundown:method. Expects `r` to be a const struct jitprov_method_record*
 * and PROV to be the provider (for its tier enum). Included inside LTTNG_UST_TP_FIELDS. */
#define JITPROV_METHOD_FIELDS(prov)                                   \
  lttng_ust_field_integer(uint32_t, runtime_instance, r->runtime_instance) \
  lttng_ust_field_integer(uint64_t, method_id, r->method_id)          \
  lttng_ust_field_integer(uint64_t, module_id, r->module_id)          \
  lttng_ust_field_integer(uint64_t, version_id, r->version_id)        \
  lttng_ust_field_integer(uint32_t, rejit_id, r->rejit_id)            \
  lttng_ust_field_enum(prov, tier, uint8_t, tier, r->tier)            \
  lttng_ust_field_integer(uint16_t, host_tier, r->host_tier)          \
  lttng_ust_field_integer(uint32_t, host_version, r->host_version)    \
  lttng_ust_field_integer_hex(uint64_t, code_start, r->code_start)    \
  lttng_ust_field_integer(uint32_t, code_size, r->code_size)          \
  lttng_ust_field_integer_hex(uint32_t, method_token, r->method_token) \
  lttng_ust_field_integer_hex(uint32_t, method_flags, r->method_flags) \
  lttng_ust_field_integer(uint64_t, publish_seq, r->publish_seq)      \
  lttng_ust_field_string(namespace, r->name_space)                    \
  lttng_ust_field_string(name, r->name)                               \
  lttng_ust_field_string(signature, r->signature)

/* Tier labels and values: jitprov/trace_abi.h. */
#define JITPROV_LTTNG_ENUM_VALUE(v, c, cxx, label) lttng_ust_field_enum_value(label, v)
#define JITPROV_TIER_ENUM_VALUES LTTNG_UST_TP_ENUM_VALUES(JITPROV_TIERS(JITPROV_LTTNG_ENUM_VALUE))
