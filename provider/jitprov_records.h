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

struct jitprov_method_record {
  uint64_t method_id;
  uint64_t version_id;
  uint64_t code_start;
  uint32_t module_id;
  uint32_t rejit_id;
  uint32_t code_size;
  uint32_t method_token;
  uint32_t method_flags;
  uint8_t tier; /* enum jitprov tier: values are trace ABI */
  uint16_t host_tier; /* the host's own tier number (HotSpot: comp level) */
  const char* name_space;
  const char* name;
  const char* signature;
};

#ifdef __cplusplus
}
#endif

#endif
