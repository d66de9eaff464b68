// SPDX-License-Identifier: MIT
#include "agent_stats.h"

#include "agent.h"
#include "atomic_file.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <mutex>

namespace jitprov::jvmti {

void writeStats(Agent& a) {
  if (a.opt.stats.empty()) return;
  std::lock_guard<std::mutex> g(a.mu);
  std::lock_guard<std::mutex> q(a.qmu);
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(a.rt, &ms);
  jitprov::tools::AtomicFile file;
  if (!file.open(a.opt.stats)) {
    std::fprintf(stderr, "jitprov-jvmti: write stats %s: %s\n", a.opt.stats.c_str(), file.error().c_str());
    return;
  }
  FILE* f = file.file();
  std::fprintf(f, "{\n  \"pid\": %d,\n", int(getpid()));
  std::fprintf(f,
               "  \"loads\": %" PRIu64 ", \"replays\": %" PRIu64 ", \"unloads\": %" PRIu64
               ", \"unknown_unloads\": %" PRIu64 ", \"stubs\": %" PRIu64 ", \"refused\": %" PRIu64
               ", \"errors\": %" PRIu64 ", \"name_failures\": %" PRIu64 ",\n",
               a.loads, ms.replayed, a.unloads, a.unknown_unloads, a.stubs, a.refused, a.errors, a.name_failures);
  std::fprintf(f,
               "  \"methods\": %" PRIu64 ", \"live_versions\": %" PRIu64 ", \"retired\": %" PRIu64
               ", \"superseded_stubs\": %" PRIu64 ", \"superseded_methods\": %" PRIu64 ",\n",
               a.methods, ms.live_host_code, ms.retired, a.superseded_stubs, a.superseded_methods);
  uint64_t method_versions = 0;  // the live code of Java methods (not stubs), as jitprov counts it
  (void)jitprov_module_live_code(a.rt, a.java_module, &method_versions);
  std::fprintf(f,
               "  \"methods_unloaded\": %" PRIu64 ", \"stubs_unloaded\": %" PRIu64
               ", \"live_method_versions\": %" PRIu64 ",\n",
               a.methods_unloaded, a.stubs_unloaded, method_versions);
  std::fprintf(f, "  \"stale_unloads\": %" PRIu64 ", \"attached\": %s, \"attach_replay_ms\": %.1f,\n", a.stale_unloads,
               a.attached ? "true" : "false", double(a.attach_replay_ns) / 1e6);
  if (a.attached)
    std::fprintf(f,
                 "  \"attach_scan\": {\"used\": %s, \"why_not\": \"%s\", \"checks\": %s, \"classes\": %" PRIu64
                 ", \"methods\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"nmethods\": %" PRIu64 ", \"alive\": %" PRIu64
                 ", \"queued\": %" PRIu64 ", \"unmapped\": %" PRIu64 ", \"unnamed\": %" PRIu64
                 ", \"tracked\": %zu, \"retired\": %" PRIu64 ", \"retired_on_publish\": %" PRIu64
                 ", \"checked\": %" PRIu64 ", \"check_ms\": %.1f, \"ms\": %.1f},\n",
                 a.scan_used ? "true" : "false", a.scan_why_not.c_str(),
                 a.scan_used && a.scan_checks ? "true" : "false", a.scan_classes, a.scan_methods, a.scan_blocks,
                 a.scan_nmethods, a.scan_alive, a.scan_queued, a.scan_unmapped, a.scan_unnamed, a.scanned.size(),
                 a.scan_retired, a.scan_retired_on_publish, a.scan_checked, double(a.scan_check_ns) / 1e6,
                 double(a.scan_ns) / 1e6);
  std::fprintf(f,
               "  \"names\": {\"vmstructs\": %" PRIu64 ", \"jvmti\": %" PRIu64 ", \"checked\": %" PRIu64
               ", \"hidden_checked\": %" PRIu64 ", \"mismatches\": %" PRIu64 ", \"ms\": %.1f},\n",
               a.names_vmstructs, a.names_jvmti, a.names_checked, a.hidden_names_checked, a.name_mismatches,
               double(a.names_ns) / 1e6);
  std::fprintf(f,
               "  \"tier_by\": {\"method_code\": %" PRIu64 ", \"blob_scan\": %" PRIu64 ", \"native\": %" PRIu64
               ", \"unknown\": %" PRIu64 "},\n",
               a.tier_by[0], a.tier_by[1], a.tier_by[3], a.tier_by[2]);
  std::fprintf(f,
               "  \"by_level\": {\"0\": %" PRIu64 ", \"1\": %" PRIu64 ", \"2\": %" PRIu64 ", \"3\": %" PRIu64
               ", \"4\": %" PRIu64 ", \"unknown\": %" PRIu64 "}, \"osr\": %" PRIu64 ",\n",
               a.by_level[0], a.by_level[1], a.by_level[2], a.by_level[3], a.by_level[4], a.by_level[5], a.osr);
  hostagent::jitdumpStatsJson(f, a.rt, a.opt);
  if (a.lines_on)
    std::fprintf(f,
                 "  \"lines\": {\"loads\": %" PRIu64 ", \"entries\": %" PRIu64 ", \"absent\": %" PRIu64
                 ", \"errors\": %" PRIu64 ", \"map_skipped\": %" PRIu64 ", \"files_vmstructs\": %" PRIu64
                 ", \"files_jvmti\": %" PRIu64 ", \"file_mismatches\": %" PRIu64 "},\n",
                 a.line_loads, a.line_entries, a.lines_absent, a.line_errors, a.line_map_skipped,
                 a.files_vmstructs.load(std::memory_order_relaxed), a.files_jvmti.load(std::memory_order_relaxed),
                 a.file_mismatches.load(std::memory_order_relaxed));
  a.batches.json(f, a.publisher, a.queued.events.size());
  hostagent::histJson(f, "load_callback", a.load_ns);
  hostagent::histJson(f, "unload_callback", a.unload_ns);
  a.own.json(f);  // its threads snapped at VMDeath, before the rundown thread ends
  std::fprintf(f,
               "  \"rundowns\": %" PRIu64 ", \"perfmap_written\": %" PRIu64 ", \"perfmap_errors\": %" PRIu64
               ", \"provider\": \"%s\"\n}\n",
               jitprov_rundown_completed(a.rd), a.perfmap.written, a.perfmap.errors, jitprov_trace_provider_status());
  if (!file.commit())
    std::fprintf(stderr, "jitprov-jvmti: write stats %s: %s\n", a.opt.stats.c_str(), file.error().c_str());
}

}  // namespace jitprov::jvmti
