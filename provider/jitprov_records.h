/* SPDX-License-Identifier: MIT */
/* The record a method / method_load event is built from: passed by pointer so that an
 * event carries twelve real CTF fields within lttng-ust's ten-argument limit.
 * Plain C: shared by the C++ runtime and the C provider. Strings are NUL-terminated,
 * valid UTF-8 (the runtime guarantees it). */
#ifndef JITPROV_RECORDS_H
#define JITPROV_RECORDS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lttng_ust_session; /* the rundown events' first argument (jitprov_rundown_tp.h) */

struct jitprov_method_record {
  uint32_t runtime_instance; /* the runtime's instance number in its process */
  uint64_t method_id;
  uint64_t version_id;
  uint64_t code_start;
  uint64_t module_id;
  uint32_t rejit_id;
  uint32_t code_size;
  uint32_t method_token;
  uint32_t method_flags;
  uint8_t tier;          /* enum jitprov tier: values are trace ABI */
  uint16_t host_tier;    /* the host's own tier number (HotSpot: comp level) */
  uint32_t host_version; /* the host's own id of the version (CoreCLR: native code version id) */
  uint64_t publish_seq;  /* the publication's sequence number (docs/spec.md "The publication sequence") */
  const char* name_space;
  const char* name;
  const char* signature;
};

/* rundown_end's fields (more than lttng-ust's ten tracepoint arguments). */
struct jitprov_rundown_end_record {
  uint32_t runtime_instance;
  uint64_t rundown_id;
  uint64_t modules;
  uint64_t methods;
  uint64_t versions;
  uint64_t skipped;
  uint64_t retried;
  uint64_t duration_ns;
  uint64_t publish_seq;       /* P: complete up to this publication (G3+) */
  uint64_t end_seq;           /* E: the sequence at the end; removals numbered <= E may be absent */
  uint64_t caught_up;         /* versions published during the walk, added by its catch-up */
  uint8_t cut_short;          /* 1: the application's shutdown ended it early: not complete */
  uint64_t caught_up_methods; /* of `methods`, those whose records the catch-up alone added (ABI 6) */
};

/* The provider's ABI version (jitprov_lttng_provider_abi): the runtime loads only a
 * provider built for its own event signatures. */
#define JITPROV_LTTNG_PROVIDER_ABI 6

#ifdef __cplusplus
}
#endif

#endif
