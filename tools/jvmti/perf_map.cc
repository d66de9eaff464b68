// SPDX-License-Identifier: MIT
#include "perf_map.h"

#include <cinttypes>
#include <cstdio>

namespace jitprov::jvmti {

void perfMapSink(void* ctx, const jitprov_sink_record* r) {
  auto& pm = *static_cast<PerfMap*>(ctx);
  switch (r->kind) {
    case JITPROV_SINK_BEGIN:
      // A fresh temporary beside the map (mkstemp: never through a planted symlink).
      pm.open = pm.file.open(pm.final_path);
      if (!pm.open) {
        ++pm.errors;
        pm.last_error = "open " + pm.final_path + ": " + pm.file.error();
      }
      pm.lines = 0;
      break;
    case JITPROV_SINK_VERSION:
      if (!pm.open) break;
      if (r->module_id == pm.stub_module)
        std::fprintf(pm.file.file(), "%" PRIx64 " %x %s\n", r->code_start, r->code_size, r->name);
      else
        std::fprintf(pm.file.file(), "%" PRIx64 " %x %s::%s\n", r->code_start, r->code_size, r->name_space, r->name);
      ++pm.lines;
      break;
    case JITPROV_SINK_END:
      if (!pm.open) break;
      pm.open = false;
      if (!pm.file.commit()) {
        ++pm.errors;
        pm.last_error = "write " + pm.final_path + ": " + pm.file.error();
      } else {
        ++pm.written;
      }
      break;
    default:
      break;
  }
}

}  // namespace jitprov::jvmti
