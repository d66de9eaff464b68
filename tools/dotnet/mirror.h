/* SPDX-License-Identifier: MIT */
// The .NET client's mirror: CoreCLR's JIT'd code, as the runtime's own events describe
// it, kept in a jitprov runtime in host mode (docs/dotnet.md):
//   - a jitprov module per CoreCLR module (ModuleID), registered at its first method,
//     collectible when CoreCLR says so; ModuleUnload unloads it with all its code;
//   - a jitprov method per MethodID (the host key), with CoreCLR's names;
//   - a native version per code body (MethodLoadVerbose) at its address and size, the
//     tier mapped from CoreCLR's optimization tier (host_tier = CoreCLR's value);
//     superseded tier-0 bodies stay published, as CoreCLR keeps them;
//   - MethodUnloadVerbose retires the body at its address (dynamic methods destroyed,
//     collectible code unloaded).
// Events arrive on the thread that raised them, many at a time: one mutex guards the
// maps. What the client cannot mirror is counted (Counters), never dropped silently.
#pragma once

#include <jitprov/jitprov.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "clr_events.h"
#include "host_agent.h"

namespace jitprov::dotnet {

struct ModuleInfo {
  std::string path;
  bool collectible = false;
  bool known = false;  // false: the runtime did not tell (named "module 0x...")
};

struct Counters {
  uint64_t loads = 0, replays = 0, unloads = 0, unknown_unloads = 0;
  uint64_t methods = 0, modules = 0, module_unloads = 0;
  uint64_t cold_parts = 0;    // cold regions of split code (not mirrored: one range per version)
  uint64_t r2r_methods = 0;   // precompiled (ReadyToRun) methods used: no JIT'd body to mirror
  uint64_t bad_payloads = 0;  // events that did not decode
  uint64_t refused = 0;       // jitprov refused a publication (overlap, size 0)
  uint64_t errors = 0;        // other jitprov errors
  uint64_t not_jitted = 0;    // method events of code that is not JIT'd
  uint64_t by_clr_tier[8] = {};
  std::string first_error;
};

class Mirror {
 public:
  // Creates the jitprov runtime and starts the rundowns. "" or why not.
  std::string start(const hostagent::Options& opt, std::function<ModuleInfo(uint64_t)> module_info);
  // t0: when CoreCLR called the client (hostagent::nowNs()), for the callbacks' durations.
  void methodLoad(const MethodEvent& ev, uint64_t t0);
  void methodUnload(const MethodEvent& ev, uint64_t t0);
  void moduleUnload(const ModuleEvent& ev);
  void r2rEntry() {
    std::lock_guard g(mu_);
    ++c_.r2r_methods;
  }
  void badPayload(uint32_t event_id);
  // The exit rundown (when asked for) and the stats file.
  void shutdown(const char* runtime_version);

 private:
  uint64_t moduleOf(uint64_t clr_module);
  uint64_t methodOf(const MethodEvent& ev, uint64_t module);
  void error(const std::string& what, int e);
  void writeStats(const char* runtime_version);

  hostagent::Options opt_;
  std::function<ModuleInfo(uint64_t)> module_info_;
  jitprov_runtime* rt_ = nullptr;
  jitprov_rundown* rd_ = nullptr;
  hostagent::PerfMap perfmap_;

  std::mutex mu_;  // guards everything below
  struct Module {
    uint64_t id;
    bool collectible;
  };
  // The MethodLoadVerbose and MethodUnloadVerbose callbacks, from CoreCLR's call to
  // the end of the mirror's work (decoding, the mutex, jitprov's publication).
  hostagent::Hist load_cb_, unload_cb_;
  struct Timed {  // records into a Hist when it goes out of scope, under mu_
    hostagent::Hist& h;
    uint64_t t0;
    ~Timed() { h.add(hostagent::nowNs() - t0); }
  };
  std::unordered_map<uint64_t, Module> modules_;  // CoreCLR ModuleID -> jitprov module
  struct Mirrored {
    uint64_t id;          // jitprov method or version
    uint64_t clr_module;  // its CoreCLR module, to forget it when that unloads
  };
  std::unordered_map<uint64_t, Mirrored> methods_;  // MethodID -> jitprov method
  std::unordered_map<uint64_t, Mirrored> live_;     // code start -> jitprov version
  Counters c_;
};

}  // namespace jitprov::dotnet
