// SPDX-License-Identifier: MIT
#include "sim_app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace jitprov::sim {
namespace {

const char* const kNamespaces[] = {"System.Collections.Generic",
                                   "System.Linq",
                                   "System.Text.Json",
                                   "System.Net.Http",
                                   "Microsoft.Extensions.Logging",
                                   "Microsoft.AspNetCore.Routing",
                                   "Contoso.Orders.Services",
                                   "Contoso.Orders.Domain",
                                   "Contoso.Billing.Invoices",
                                   "Contoso.Shipping.Tracking",
                                   "Fabrikam.Inventory.Data",
                                   "Fabrikam.Catalog.Search",
                                   "Newtonsoft.Json.Linq",
                                   "Npgsql.Internal"};
const char* const kTypes[] = {
    "OrderService", "InvoiceRepository", "Dictionary`2",    "List`1",          "JsonSerializer",
    "RouteMatcher", "HttpClientHandler", "ShipmentTracker", "PriceCalculator", "StockLevelCache",
    "QueryBuilder", "ConnectionPool",    "Logger`1",        "JToken"};
const char* const kVerbs[] = {"Get",     "Set",      "Try",  "Process", "Handle", "Validate", "Serialize", "Parse",
                              "Compute", "Dispatch", "Load", "Find",    "Update", "Build",    "Resolve"};
const char* const kNouns[] = {"Order", "Item",       "Value", "Route", "Token",   "Price",    "Shipment", "Customer",
                              "Batch", "Connection", "Entry", "Key",   "Request", "Response", "Snapshot"};
// "" too: a host may register code without a signature (stubs, dynamic methods), and a
// reader must tell an empty string from the one before it (babeltrace2 2.0.4 cannot:
// tests/integration/bt2read.py).
const char* const kSigs[] = {"",
                             "void ()",
                             "int32 (string)",
                             "bool (int64, int32)",
                             "string (object)",
                             "System.Threading.Tasks.Task`1<!0> (System.Threading.CancellationToken)",
                             "void (!0, class System.Collections.Generic.IEqualityComparer`1<!0>)",
                             "valuetype System.Span`1<uint8> (int32, int32)",
                             "float64 (float64[], int32)"};

template <class T, size_t N>
const T& pick(const T (&a)[N], uint64_t r) {
  return a[r % N];
}

void spin(uint32_t us) {
  if (us == 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

int App::create() {
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.tier_up_threshold = opt.threshold;
  cfg.lock_stats = opt.lock_stats ? 1 : 0;
  return jitprov_runtime_create(&cfg, &rt);
}

bool App::registerModuleSlots(size_t index, uint64_t begin, uint64_t end, bool collectible, uint32_t gen,
                              std::mt19937_64& rng) {
  const std::string path = std::string(collectible ? "/app/plugins/" : "/app/bin/") + pick(kNamespaces, index) +
                           (collectible ? ".Plugin" : "") + "." + std::to_string(index) +
                           (gen ? ".g" + std::to_string(gen) : "") + ".dll";
  uint64_t mod = 0;
  if (int e = jitprov_module_register(rt, path.c_str(), collectible, &mod)) {
    std::fprintf(stderr, "jitprov-sim: register module %s: %s\n", path.c_str(), jitprov_strerror(e));
    return false;
  }
  for (uint64_t s = begin; s < end; ++s) {
    const uint64_t r = rng();
    const std::string ns = std::string(pick(kNamespaces, index * 7 + (r & 3))) + "." + pick(kTypes, r >> 8);
    const std::string name = std::string(pick(kVerbs, r >> 16)) + pick(kNouns, r >> 24) +
                             ((r >> 32) % 3 == 0 ? "Async" : "") + "_" + std::to_string(s);
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.token = uint32_t(0x06000001 + (s - begin));
    d.flags = uint32_t(0x0006 | ((r >> 40) & 0x90));
    d.name_space = ns.c_str();
    d.name = name.c_str();
    d.signature = pick(kSigs, r >> 48);
    uint64_t m = 0;
    if (int e = jitprov_method_register(rt, mod, &d, &m)) {
      std::fprintf(stderr, "jitprov-sim: register method %s: %s\n", name.c_str(), jitprov_strerror(e));
      return false;
    }
    slot_method[s].store(m, std::memory_order_release);
    // (a read of a page never written maps the zero page: no RSS)
    if (active_version[s].load(std::memory_order_relaxed) != 0) active_version[s].store(0, std::memory_order_relaxed);
  }
  modules.push_back({mod, begin, end, collectible, gen});
  return true;
}

bool App::populate(std::mt19937_64& rng) {
  // Modules: sizes vary, a fraction collectible.
  const uint64_t per = std::max<uint64_t>(1, opt.methods / opt.modules);
  for (uint32_t i = 0; i < opt.modules; ++i) {
    const uint64_t begin = i * per;
    const uint64_t end = i + 1 == opt.modules ? opt.methods : std::min(opt.methods, begin + per);
    if (begin >= end) break;
    const bool collectible = double(rng() % 1000) < opt.collectible * 1000;
    if (!registerModuleSlots(i, begin, end, collectible, 0, rng)) return false;
  }
  zipf_perm.resize(opt.methods);
  for (uint64_t i = 0; i < opt.methods; ++i) zipf_perm[i] = uint32_t(i);
  std::shuffle(zipf_perm.begin(), zipf_perm.end(), rng);
  // Warm start: the application has been running for a while.
  const uint64_t warm = uint64_t(opt.warm * double(opt.methods));
  for (uint64_t rank = 0; rank < warm; ++rank) {
    const uint64_t slot = zipf_perm[rank];
    compile(slot, JITPROV_TIER0, 0, rng);
    if (double(rank) < opt.hot * double(warm)) compile(slot, JITPROV_TIER1, 0, rng);
  }
  return true;
}

void App::compile(uint64_t slot, int tier, uint32_t cost_us, std::mt19937_64& rng, bool activate) {
  uint8_t expected = 0;
  if (!compiling[slot].compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
  const uint64_t m = slot_method[slot].load(std::memory_order_acquire);
  uint64_t v = 0;
  int e = jitprov_jit_begin(rt, m, tier, tier == JITPROV_TIER1_OSR ? uint32_t(rng() % 400 + 8) : 0, &v);
  if (e == JITPROV_OK) {
    spin(cost_us);
    e = jitprov_jit_publish(rt, v, uint32_t(64 + rng() % (tier == JITPROV_TIER0 ? 4000 : 2000)), nullptr);
    if (e == JITPROV_OK) {
      counters.compiled[tier].fetch_add(1, std::memory_order_relaxed);
      if (activate) {
        e = jitprov_code_activate(rt, v);
        if (e == JITPROV_OK) {
          // The replaced code is not entered any more: retire it now and then.
          const uint64_t old = active_version[slot].exchange(v, std::memory_order_relaxed);
          if (old != 0 && double(rng() % 1000) < opt.retire_replaced * 1000) {
            if (int re = jitprov_code_retire(rt, old); re == JITPROV_OK)
              counters.retired.fetch_add(1, std::memory_order_relaxed);
            else
              counters.note(re);
          }
        } else {
          counters.note(e);
        }
      }
    } else {
      counters.note(e);
    }
  } else {
    counters.note(e);
  }
  compiling[slot].store(0, std::memory_order_release);
}

void App::jitThread(uint32_t index, const std::atomic<bool>& stop) {
  std::mt19937_64 rng(opt.seed * 7919 + index);
  std::uniform_real_distribution<double> u01(0, 1);
  const double log_n = std::log(double(opt.methods));
  while (!stop.load(std::memory_order_relaxed)) {
    for (uint32_t c = 0; c < opt.calls_per_ms; ++c) {
      const uint64_t rank = std::min<uint64_t>(opt.methods - 1, uint64_t(std::exp(u01(rng) * log_n)) - 1);
      const uint64_t slot = zipf_perm[rank];
      const uint64_t m = slot_method[slot].load(std::memory_order_acquire);
      counters.calls.fetch_add(1, std::memory_order_relaxed);
      if (jitprov_entry_point(rt, m) == 0) {
        // Not compiled (new, or its IL was ReJIT-ed): the prestub compiles it.
        compile(slot, JITPROV_TIER0, opt.tier0_us, rng);
        continue;
      }
      if (jitprov_call_record(rt, m)) compile(slot, JITPROV_TIER1, opt.tier1_us, rng);
      const double x = u01(rng);
      if (x < opt.osr_rate) {
        compile(slot, JITPROV_TIER1_OSR, opt.tier1_us, rng, false);
      } else if (x < opt.osr_rate + opt.rejit_rate) {
        if (int e = jitprov_rejit_request(rt, m, nullptr); e == JITPROV_OK) {
          counters.rejits.fetch_add(1, std::memory_order_relaxed);
          compile(slot, rng() % 2 ? JITPROV_TIER_INSTRUMENTED : JITPROV_TIER_OPTIMIZED, opt.tier1_us, rng);
        } else {
          counters.note(e);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void App::unloadOne(std::mt19937_64& rng) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < modules.size(); ++i)
    if (modules[i].collectible) candidates.push_back(i);
  if (candidates.empty()) return;
  const size_t i = candidates[rng() % candidates.size()];
  const ModuleSlots ms = modules[i];
  if (int e = jitprov_module_unload(rt, ms.id)) {
    counters.note(e);
    return;
  }
  counters.unloads.fetch_add(1, std::memory_order_relaxed);
  modules.erase(modules.begin() + long(i));
  registerModuleSlots(i, ms.begin, ms.end, true, ms.generation + 1, rng);
}

}  // namespace jitprov::sim
