/* SPDX-License-Identifier: MIT */
// The .NET client's mirror: CoreCLR's JIT'd code, as the runtime's own events describe
// it, kept in a jitprov runtime in host mode (docs/dotnet.md):
//   - a jitprov module per CoreCLR module (ModuleID), registered at its first method,
//     collectible when CoreCLR says so; ModuleUnload unloads it with all its code;
//   - a jitprov method per MethodID, with CoreCLR's names: the MethodID is the jitprov
//     method's host key, and jitprov's index of host keys the client's (a collectible
//     module's unload in jitprov forgets its MethodIDs, which CoreCLR may reuse);
//   - a native version per code body (MethodLoadVerbose) at its address and size, the
//     tier mapped from CoreCLR's optimization tier (host_tier = CoreCLR's value);
//     superseded tier-0 bodies stay published, as CoreCLR keeps them;
//   - MethodUnloadVerbose retires the body at its address (collectible code unloaded):
//     jitprov knows live code by address in host mode; a dynamic method's unloads the
//     method with it (CoreCLR reuses its MethodID for the next dynamic method);
// So the client keeps no map of methods or code of its own, only its modules'.
// Events arrive on the thread that raised them, many at a time, and a callback holds
// CoreCLR's JIT path: no client lock is held across a jitprov call (one mutex over
// everything made every JIT path wait out its holder: 21.8 ms once, the holder
// preempted on a busy machine during a rundown). Per load: the module map's mutex, a
// host-key lookup under jitprov's loader mutex, and one acquisition of jitprov's lock
// that publishes and activates. What the client cannot mirror is counted (Counters),
// never dropped silently.
#pragma once

#include <jitprov/jitprov.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "clr_events.h"
#include "host_agent.h"

namespace jitprov::dotnet {

struct ModuleInfo {
  std::string path;
  bool collectible = false;
  bool known = false;  // false: the runtime did not tell (named "module 0x...")
};

// A body found already JIT'd when the client attached (docs/dotnet.md, "Attach"): what
// CoreCLR's enumeration, code versions and metadata say of it.
struct CaughtBody {
  uint64_t method_id = 0, module_id = 0, start = 0;
  uint32_t size = 0, token = 0;
  uint32_t host_version = 0;  // CoreCLR's native code version id, inferred from the version list's order
  uint32_t tier = JITPROV_TIER0;
  bool activate = false;
  std::string name_space, name, signature;  // as CoreCLR's own events format them
};

struct Counters {
  std::atomic<uint64_t> loads{0};  // publications jitprov accepted, its replays included
  std::atomic<uint64_t> unloads{0}, unknown_unloads{0};
  std::atomic<uint64_t> method_unloads{0};  // of unloads: dynamic methods, unloaded whole
  std::atomic<uint64_t> methods{0}, modules{0}, module_unloads{0};
  std::atomic<uint64_t> cold_parts{0};  // cold regions of split code (not mirrored: one range per version)
  // Exact generic instantiations over a collectible type, filed under that type's
  // collectible module rather than the (CoreLib) module the event names (ownerOf).
  std::atomic<uint64_t> collectible_generics{0};
  // Unloads of CoreCLR's shutdown walk, not applied (Mirror::shutdownWalk).
  std::atomic<uint64_t> shutdown_unloads{0};
  std::atomic<uint64_t> r2r_methods{0};   // precompiled (ReadyToRun) methods used: no JIT'd body to mirror
  std::atomic<uint64_t> bad_payloads{0};  // events that did not decode
  std::atomic<uint64_t> refused{0};       // jitprov refused a publication (overlap, size 0)
  std::atomic<uint64_t> errors{0};        // other jitprov errors
  std::atomic<uint64_t> not_jitted{0};    // method events of code that is not JIT'd
  std::atomic<uint64_t> by_clr_tier[8] = {};
  // The catch-up of an attach: bodies enumerated and published (replays of bodies the
  // session reported first included), skipped because CoreCLR unloaded them meanwhile,
  // precompiled (ReadyToRun) code versions of JIT'd methods, and failures to read one.
  std::atomic<uint64_t> caught{0}, caught_unloaded{0}, caught_r2r{0}, caught_errors{0};
  // ModuleUnload callbacks the catch-up's gate held (Mirror::closeGate), and the longest hold.
  std::atomic<uint64_t> gate_waits{0}, gate_wait_max_ns{0};
};

// Callback durations, recorded from any thread without a lock (relaxed counters).
struct CallbackHist {
  std::atomic<uint64_t> count{0}, total_ns{0}, max_ns{0};
  std::atomic<uint64_t> buckets[kHistBuckets] = {};
  void add(uint64_t ns) noexcept;
  hostagent::Hist snapshot() const noexcept;
};

class Mirror {
 public:
  // Creates the jitprov runtime and starts the rundowns. "" or why not.
  // module_info: a CLR module's path and whether it is collectible; method_modules: the
  // modules whose unload can free a method (methodModules(); may be empty).
  std::string start(const hostagent::Options& opt, std::function<ModuleInfo(uint64_t)> module_info,
                    std::function<std::vector<uint64_t>(uint64_t)> method_modules = {});
  // t0: when CoreCLR called the client (hostagent::nowNs()), for the callbacks' durations;
  // 0: not timed.
  void methodLoad(const MethodEvent& ev, uint64_t t0);
  void methodUnload(const MethodEvent& ev, uint64_t t0);
  void moduleUnload(const ModuleEvent& ev);
  void r2rEntry() { c_.r2r_methods.fetch_add(1, std::memory_order_relaxed); }
  void badPayload(uint32_t event_id);
  // The client's own CPU time (stats= only; hostagent::OwnCpu): the event callback's
  // spans, the start's, the rundown thread and lttng-ust's threads.
  hostagent::OwnCpu& own() { return own_; }

  // The catch-up of an attach: the code JIT'd before the client's session existed,
  // enumerated and published while the session's events flow (catchup.cc). Two
  // guards, each taken by one kind of unload callback:
  //   - the gate, for ModuleUnload: CoreCLR raises it for a collectible context before
  //     anything of the context is freed (its assemblies, its code heaps, then its
  //     loader heaps: the MethodDescs), with no lock of CoreCLR's held. While the gate
  //     is closed a ModuleUnload callback waits in it, so the context it unloads stays
  //     whole; it leaves the module's tombstone as it passes. beginCatchUp() closes it
  //     before the session starts; the catch-up opens it once every enumerated method
  //     is resolved, then closes it around each method's reads and publication. The
  //     catch-up may call into CoreCLR with the gate closed;
  //   - the catch-up mutex (holdUnloads), for MethodUnloadVerbose, which CoreCLR may
  //     raise with its code heap lock held: it guards the method tombstones (FunctionID,
  //     code address) and is held only around jitprov's own work, never across a call
  //     into CoreCLR.
  // A body is published only with the gate closed and the mutex held, when no tombstone
  // names it: an unload raised meanwhile waits and undoes the publication, one raised
  // before left its tombstone.
  void beginCatchUp();
  void closeGate();  // waits for the callbacks already waiting to pass first
  void openGate();
  // ModuleUnload callbacks waiting in the closed gate now (a test's wait for one).
  uint32_t gateWaiters() {
    const std::lock_guard g(gate_mu_);
    return gate_waiters_;
  }
  // Any of these modules unloaded since beginCatchUp: gate closed.
  bool anyModuleUnloaded(const std::vector<uint64_t>& clr_modules);
  std::unique_lock<std::mutex> holdUnloads() { return std::unique_lock<std::mutex>(catchup_mu_); }
  bool functionUnloaded(uint64_t fid) const { return dead_functions_.count(fid) != 0; }  // under holdUnloads
  // Gate closed, under holdUnloads; the method's modules checked by the caller.
  void publishCaught(const CaughtBody& b);
  // Unload events seen since beginCatchUp (the test hook's wait).
  uint64_t unloadsSeen() const { return unloads_seen_.load(std::memory_order_acquire); }
  // Rundowns its engine has completed (a test's wait for one).
  uint64_t rundownsCompleted() const { return rd_ == nullptr ? 0 : jitprov_rundown_completed(rd_); }
  void endCatchUp();
  Counters& counters() { return c_; }
  // The active code of a CoreCLR method in jitprov (0: none, or not mirrored).
  uint64_t entryPoint(uint64_t clr_method) const;
  // The exit rundown (when asked for) and the stats file; session_stops: how often the
  // app stopped the client's session (toggle=on), for the file.
  void shutdown(const char* runtime_version, uint64_t session_stops);
  // A rundown's start (jitprov_rundown_config.prepare), on the rundown's thread: waits
  // while an attach's catch-up runs (beginCatchUp to endCatchUp), up to 5 s, so that the
  // session's rundown an attach into a traced process asks for holds the code JIT'd before.
  static void prepareRundown(void* self);

 private:
  struct ModuleRef {
    uint64_t id = 0;  // 0: none (an error, counted)
    bool collectible = false;
  };
  ModuleRef moduleOf(uint64_t clr_module);
  ModuleRef ownerOf(const MethodEvent& ev, ModuleRef module, uint64_t* known);
  bool shutdownWalk(uint64_t clr_module, uint32_t method_flags, bool method);
  uint64_t methodOf(const MethodEvent& ev, uint64_t module);
  void error(const std::string& what, int e);
  void writeStats(const char* runtime_version, const jitprov_memory_stats& ms, uint64_t loads, uint64_t session_stops);

  hostagent::Options opt_;
  std::function<ModuleInfo(uint64_t)> module_info_;
  std::function<std::vector<uint64_t>(uint64_t)> method_modules_;
  jitprov_runtime* rt_ = nullptr;
  jitprov_rundown* rd_ = nullptr;
  hostagent::PerfMap perfmap_;
  hostagent::OwnCpu own_;

  Counters c_;
  // The MethodLoadVerbose and MethodUnloadVerbose callbacks, from CoreCLR's call to
  // the end of the mirror's work (decoding, the maps, jitprov's publication).
  CallbackHist load_cb_, unload_cb_;
  struct Timed {  // records into a CallbackHist when it goes out of scope (t0 != 0)
    CallbackHist& h;
    uint64_t t0;
    ~Timed() {
      if (t0 != 0) h.add(hostagent::nowNs() - t0);
    }
  };

  std::mutex modules_mu_;                            // guards modules_
  std::unordered_map<uint64_t, ModuleRef> modules_;  // CoreCLR ModuleID -> jitprov module

  // A catch-up may run: unloads take the gate or catchup_mu_.
  std::atomic<bool> catchup_{false};
  bool prepare_gave_up_ = false;            // prepareRundown waited 5 s once (gate_mu_)
  std::atomic<bool> shutting_down_{false};  // CoreCLR's shutdown walk began (shutdownWalk)
  std::mutex catchup_mu_;                   // guards the method tombstones (unloaded since beginCatchUp)
  std::unordered_set<uint64_t> dead_code_, dead_functions_;
  // Methods whose body the session's events activated since beginCatchUp (catchup_mu_):
  // the catch-up's older bodies of them are published without activating.
  std::unordered_set<uint64_t> activated_;
  std::mutex gate_mu_;  // guards the gate and the module tombstones (unloaded since beginCatchUp)
  std::condition_variable gate_cv_;
  bool gate_closed_ = false;
  uint32_t gate_waiters_ = 0;  // ModuleUnload callbacks waiting in the closed gate
  std::unordered_set<uint64_t> dead_modules_;
  std::atomic<uint64_t> unloads_seen_{0};

  std::mutex error_mu_;  // guards first_error_
  std::string first_error_;
};

}  // namespace jitprov::dotnet
