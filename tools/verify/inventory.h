/* SPDX-License-Identifier: MIT */
// jitprov-verify --top N: what code the trace shows, per process and runtime instance,
// for `jitprov report`: the code bodies (distinct version_ids, from method_load events
// and rundown records) and their bytes by module and tier, by namespace (a Java class, a
// .NET type), the N largest methods (by their largest body) and the N methods with the
// most bodies (recompiled: tier after tier, deoptimized and compiled again, ReJIT).
// Names are kept here (the checker keeps digests only): one copy per method, so the
// inventory is built only when asked for. Fed on the reading thread (reader.cc), pure
// C++ otherwise (no babeltrace2): unit-tested in tests/unit/verify_inventory_test.cc.
#pragma once

#include "verify_g2.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace jitprov::verify {

class Inventory {
 public:
  // A method_load or a rundown `method` record of process `pid`, runtime `instance`.
  void addRecord(int64_t pid, uint32_t instance, const MethodRecordView& r);
  // A module_load or a rundown `module` record.
  void addModule(int64_t pid, uint32_t instance, uint64_t module_id, std::string_view path);

  // The processes' inventories, keyed like the checker's processes; `top`: the length of
  // each list. {"methods", "bodies", "bytes", "by_tier": {tier: {bodies, bytes}},
  // "modules": [{module_id, path, bodies, bytes, by_tier}], "namespaces": [top: {name,
  // methods, bodies, bytes}], "largest": [top: method], "most_bodies": [top: method]},
  // a method {method_id, module, namespace, name, signature, bodies, largest_bytes,
  // bytes, tiers: {tier: bodies}}.
  nlohmann::json toJson(int64_t pid, uint32_t instance, size_t top) const;

 private:
  struct Tally {
    uint64_t bodies = 0, bytes = 0;
  };
  struct Method {
    uint64_t module_id = 0;
    std::string name_space, name, signature;
    uint64_t bodies = 0, bytes = 0, largest = 0;
    std::map<uint64_t, uint64_t> tiers;  // tier -> bodies
  };
  struct Process {
    std::unordered_map<uint64_t, uint64_t> body_method;          // version_id -> method_id: each body once
    std::unordered_map<uint64_t, Method> methods;                // method_id ->
    std::map<uint64_t, std::string> module_paths;                // module_id ->
    std::map<uint64_t, std::map<uint64_t, Tally>> module_tiers;  // module_id -> tier ->
  };
  std::map<std::pair<int64_t, uint32_t>, Process> processes_;
};

}  // namespace jitprov::verify
