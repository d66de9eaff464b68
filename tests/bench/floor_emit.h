/* SPDX-License-Identifier: MIT */
/* The emission benchmark's fixed floor (floor_tp.h): plain lttng-ust events with the
 * payload of jitprov_rundown:method. */
#ifndef JITPROV_BENCH_FLOOR_EMIT_H
#define JITPROV_BENCH_FLOOR_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "jitprov_records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Some session records jitprov_bench_floor:method. */
int jitprov_bench_floor_enabled(void);
/* One jitprov_bench_floor:method event per record. */
void jitprov_bench_floor_emit(uint64_t rundown_id, const struct jitprov_method_record* records, size_t n);

#ifdef __cplusplus
}
#endif

#endif
