/* SPDX-License-Identifier: MIT */
/* The floor's emission loop: one plain lttng-ust event per record (floor_tp.h). */
#include "floor_emit.h"

#include "floor_tp.h"

int jitprov_bench_floor_enabled(void) { return lttng_ust_tracepoint_enabled(jitprov_bench_floor, method) ? 1 : 0; }

void jitprov_bench_floor_emit(uint64_t rundown_id, const struct jitprov_method_record* records, size_t n) {
  for (size_t i = 0; i < n; ++i) lttng_ust_tracepoint(jitprov_bench_floor, method, rundown_id, &records[i]);
}
