// SPDX-License-Identifier: MIT
// Concurrency stress test of the registry's lock-free read side.
// (One file past the 600 lines a file aims at: the writers, the readers and the log that
// judges them are one test, read together.)
//
// Writer threads register methods and modules, compile at tier 0, tier up, OSR, ReJIT,
// retire single versions and unload modules at random. Reader threads walk the registry
// lock-free and look up entry points. The test keeps its own log of every publication,
// retirement and unload, each with a sequence number, and checks every walk against it:
//  (a) G2: each version seen carries exactly the fields that were published for it;
//  (b) G3: every version published before the walk began, whose module was not
//      unloaded and which was not retired before the walk ended, was seen;
//  (c) G4: no version was seen twice;
//  (d) a version whose retirement had returned before the walk began is not seen;
//  (e) G3+ (registry.h P8): the walks are the rundown's complete walks, and every
//      version whose publication sequence number (the registry's own, logged with it)
//      is at most the walk's publish_seq P was seen, unless its retirement or unload had
//      begun before the walk ended; nothing numbered above P was seen. Checked at the
//      end against the whole log (a publication numbered <= P may be logged late).
// It runs twice: with the model code heap, and in host mode, where the test plays the
// host: it owns the addresses and publishes new code at a retired version's address as
// soon as retireVersion() returns (as HotSpot does), replays publications (JVMTI's
// GenerateEvents) and tries overlapping ones, which must be refused.
// It also checks that live code ranges never overlap and that every entry point a
// reader saw was the code of a published version of that method.
// The churn variants (registry.h P9) keep a small live set and register, publish, retire
// and unload at a high rate, so that every slot is reused many times during the walks:
// the field checks (a) then also prove that no walk saw a later occupant of a slot under
// an earlier id (the fields of every occupant differ: ids, names, code), and writers check
// that stale ids (of an unloaded method, a retired version) find nothing, whatever now
// lives in their slots.
//
// Why sequence numbers give "before": a writer takes a publication's number with a
// seq_cst fetch_add *after* publishCode returned; a reader reads the counter (seq_cst)
// before its walk (S0) and after it (S1). A number below S0 means the publication
// happened before the walk began. Unloads and retirements take a number *before* the
// call, so a number at or above S1 means it had not begun when the walk ended; a
// retirement also takes one *after* the call returned (kRetireEnd), and a number below
// S0 there means it was complete before the walk began.
//
// Sizes: JITPROV_STRESS_OPS (operations per writer), JITPROV_STRESS_SEED.
#include <jitprov/runtime.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitprov {
namespace {

uint64_t envOr(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : dflt;
}

struct Fields {
  MethodId method_id = 0;
  ModuleId module_id = 0;
  VersionId version_id = 0;
  RejitId rejit_id = 0;
  Tier tier = Tier::kTier0;
  uint32_t osr_il_offset = 0;
  uint16_t host_tier = 0;
  uint64_t code_start = 0;
  uint32_t code_size = 0;
  uint32_t token = 0;
  uint32_t flags = 0;
  uint64_t name_hash = 0;
  uint64_t publish_seq = 0;  // the registry's publication sequence number
  bool operator==(const Fields&) const = default;
};

uint64_t nameHash(std::string_view ns, std::string_view name, std::string_view sig) {
  std::hash<std::string_view> h;
  return h(ns) * 31 + h(name) * 7 + h(sig);
}

Fields fieldsOf(const VersionView& v) {
  return Fields{v.method_id,  v.module_id,     v.version_id,   v.rejit_id,
                v.tier,       v.osr_il_offset, v.host_tier,    v.code_start,
                v.code_size,  v.method_token,  v.method_flags, nameHash(v.name_space, v.name, v.signature),
                v.publish_seq};
}

// The test's own log: one entry per sequence number, written once by the writer that
// took the number, then marked ready (release; readers acquire).
struct LogEntry {
  enum Kind : uint8_t { kPublish, kUnload, kRetireBegin, kRetireEnd, kNoop };
  std::atomic<bool> ready{false};
  Kind kind = kNoop;
  Fields f;             // kPublish; f.version_id for kRetire*
  ModuleId module = 0;  // kUnload
};

class Log {
 public:
  explicit Log(size_t capacity) : entries_(capacity) {}
  uint64_t take() { return next_.fetch_add(1, std::memory_order_seq_cst); }
  uint64_t now() const { return next_.load(std::memory_order_seq_cst); }
  void fill(uint64_t seq, LogEntry::Kind k, const Fields& f, ModuleId mod) {
    ASSERT_LT(seq, entries_.size()) << "stress log too small";
    LogEntry& e = entries_[seq];
    e.kind = k;
    e.f = f;
    e.module = mod;
    e.ready.store(true, std::memory_order_release);
  }
  // Waits for entry seq (its writer is between take() and fill(), never blocked).
  const LogEntry& at(uint64_t seq) const {
    const LogEntry& e = entries_[seq];
    while (!e.ready.load(std::memory_order_acquire)) std::this_thread::yield();
    return e;
  }
  size_t capacity() const { return entries_.size(); }

 private:
  std::atomic<uint64_t> next_{0};
  std::vector<LogEntry> entries_;
};

// Writer-side bookkeeping of which methods exist, and the live code ranges.
struct World {
  std::mutex mu;
  std::vector<size_t> live_modules;  // indices into modules, not unloaded
  struct Mod {
    ModuleId id;
    bool collectible;
    bool unloaded = false;
    std::vector<MethodId> methods;
    // Starts of its live code ranges: published, not retired.
    std::unordered_set<uint64_t> live_starts;
    std::vector<VersionId> versions;  // published (retired ones too)
  };
  std::vector<Mod> modules;
  std::unordered_map<MethodId, size_t> module_of;  // index into modules
  struct Meta {
    uint32_t token, flags;
    uint64_t name_hash;
  };
  std::unordered_map<MethodId, Meta> meta;
  std::vector<MethodId> methods;
  std::map<uint64_t, uint64_t> live;  // start -> end, every live code range
  std::string overlap_error;
  std::string writer_error;
  std::atomic<uint64_t> unloaded_races{0};  // operations that lost a race to an unload
  // Retirement candidates: published versions of live methods -> (module index, start).
  std::unordered_map<VersionId, std::pair<size_t, uint64_t>> retirable;
  std::vector<VersionId> retirable_ids;  // the same keys, to pick from
  // Host mode: the test's own code heap of 4 KiB slots, reused LIFO right after the
  // retirement or unload that freed them returned.
  std::vector<uint64_t> free_slots;
  uint64_t next_slot = 0;
  std::vector<std::pair<uint64_t, uint32_t>> pinned;  // live for the whole test
  std::atomic<uint64_t> retires{0}, replays{0}, overlaps_refused{0};
  std::atomic<uint64_t> stale_checks{0};  // lookups by stale ids that found nothing, as they must
};

struct Observation {
  uint64_t s0, s1;
  std::vector<Fields> seen;
};

// A complete walk kept for the G3+ check at the end: what it saw, its P, and when (in
// the test's log) it ended.
struct KeptWalk {
  uint64_t s1, publish_seq;
  std::vector<VersionId> seen;  // sorted
};

struct ReaderReport {
  uint64_t walks = 0;
  uint64_t reused_seen = 0;  // versions seen whose method or version id is of a reused slot
  uint64_t versions_checked = 0;
  uint64_t completeness_checked = 0;
  uint64_t caught_up = 0;                 // versions the catch-up passes added
  uint64_t caught_up_methods = 0;         // methods only the catch-up passes had versions of
  uint64_t caught_up_reused_methods = 0;  // of those, in a slot a walked method had left
  std::vector<KeptWalk> kept;
  std::vector<std::string> errors;
  std::vector<Fields> deferred;  // seen before their log entry existed: checked at the end
  std::vector<std::pair<MethodId, uint64_t>> entry_points;
};

struct Variant {
  CodeMode mode;
  bool churn;
};

// The generation part of an id (registry.h P9): > 0 once its slot was reused.
uint64_t generationOf(uint64_t id) { return id >> 32; }

class RegistryStress : public ::testing::TestWithParam<Variant> {
 protected:
  static constexpr int kWriters = 3;
  static constexpr int kReaders = 2;
  const uint64_t ops = envOr("JITPROV_STRESS_OPS", 60000);
  const uint64_t seed = envOr("JITPROV_STRESS_SEED", std::random_device{}());

  const bool host = GetParam().mode == CodeMode::kHost;
  const bool churn = GetParam().churn;
  // Churn: a small backlog bound, so that removals are also reclaimed by their own
  // thread after a grace period (registry.h P6), under the walks.
  Runtime rt{RuntimeConfig{.code_mode = GetParam().mode,
                           .max_reclamation_backlog = GetParam().churn ? uint64_t{256} : uint64_t{0}}};
  Log log{ops * kWriters * 4 + 1024};
  static constexpr uint64_t kHostBase = 0x5500'0000'0000ULL;
  static constexpr uint64_t kSlot = 4096;
  World world;
  std::atomic<bool> stop{false};

  void SetUp() override {
    RecordProperty("seed", std::to_string(seed));
    std::printf("stress: %d writers x %llu ops, %d readers, seed %llu%s\n", kWriters,
                static_cast<unsigned long long>(ops), kReaders, static_cast<unsigned long long>(seed),
                churn ? ", churn" : "");
    for (int i = 0; i < 8; ++i) addModule(i % 4 != 0);  // a quarter of modules are not collectible
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 400; ++i) addMethod(rng);
    if (host) pinSomeCode(rng);
  }

  // Host mode: versions that are never retired, for overlap attempts to hit.
  void pinSomeCode(std::mt19937_64& rng) {
    for (int i = 0; i < 8; ++i) {
      MethodId m = 0;
      {
        std::lock_guard<std::mutex> g(world.mu);
        for (MethodId c : world.methods)
          if (!world.modules[world.module_of.at(c)].collectible && rng() % 8 == 0) m = c;
      }
      if (m == 0) continue;
      const uint64_t start = hostSlot();
      uint64_t rseq = 0;
      auto v = rt.publishHostCode(m, HostCode{start, 512, Tier::kTier1, 4, 0}, &rseq);
      if (!v.ok()) return fail(std::string("publishHostCode (pinned): ") + v.message());
      std::lock_guard<std::mutex> g(world.mu);
      world.pinned.emplace_back(start, 512);
      world.live[start] = start + 512;
      const auto& meta = world.meta.at(m);
      log.fill(log.take(), LogEntry::kPublish,
               Fields{m, world.modules[world.module_of.at(m)].id, *v, 0, Tier::kTier1, 0, 4, start, 512, meta.token,
                      meta.flags, meta.name_hash, rseq},
               0);
    }
  }

  uint64_t hostSlot() {
    std::lock_guard<std::mutex> g(world.mu);
    if (!world.free_slots.empty()) {
      const uint64_t s = world.free_slots.back();
      world.free_slots.pop_back();
      return s;
    }
    return kHostBase + kSlot * world.next_slot++;
  }
  void freeHostSlot(uint64_t start) {
    if (!host) return;
    std::lock_guard<std::mutex> g(world.mu);
    world.free_slots.push_back(start);
  }

  void fail(std::string msg) {
    std::lock_guard<std::mutex> g(world.mu);
    if (world.writer_error.empty()) world.writer_error = std::move(msg);
  }

  // Returns the module's index in world.modules (SIZE_MAX on failure).
  size_t addModule(bool collectible) {
    static std::atomic<int> n{0};
    auto id = rt.registerModule("/app/mod" + std::to_string(n.fetch_add(1)) + ".dll", collectible);
    if (!id.ok()) return fail(std::string("registerModule: ") + id.message()), SIZE_MAX;
    std::lock_guard<std::mutex> g(world.mu);
    world.modules.push_back({*id, collectible});
    world.live_modules.push_back(world.modules.size() - 1);
    return world.modules.size() - 1;
  }

  // A method in module `in` (SIZE_MAX: a random live module).
  // The new method's id, or 0.
  MethodId addMethod(std::mt19937_64& rng, size_t in = SIZE_MAX) {
    size_t mi;
    ModuleId mod;
    {
      std::lock_guard<std::mutex> g(world.mu);
      if (world.live_modules.empty()) return 0;
      mi = in != SIZE_MAX ? in : world.live_modules[rng() % world.live_modules.size()];
      if (world.modules[mi].unloaded) return 0;
      mod = world.modules[mi].id;
    }
    const std::string name = "M" + std::to_string(rng() % 100000);
    const std::string ns = "Stress.Ns" + std::to_string(mod);
    const std::string sig = rng() % 2 ? "void ()" : "int32 (string, \xE2\x82\xAC)";
    const MethodDesc d{uint32_t(0x06000000 | (rng() & 0xffff)), uint32_t(rng() & 0xff), ns, name, sig};
    auto id = rt.registerMethod(mod, d);
    if (!id.ok()) {
      if (id.error() == Errc::kModuleUnloaded) return world.unloaded_races.fetch_add(1), 0;
      return fail(std::string("registerMethod: ") + id.message()), 0;
    }
    std::lock_guard<std::mutex> g(world.mu);
    world.modules[mi].methods.push_back(*id);
    world.module_of[*id] = mi;
    world.meta[*id] = {d.token, d.flags, nameHash(ns, name, sig)};
    world.methods.push_back(*id);
    return *id;
  }

  // One JIT path: beginJit, compile (nothing), publishCode, log, maybe activate.
  void compile(std::mt19937_64& rng, MethodId m, Tier tier) {
    const uint32_t osr = tier == Tier::kTier1Osr ? uint32_t(rng() % 500 + 1) : 0;
    // The version belongs to the IL version active at beginJit: hold the test's rejit
    // mutex across it (requestRejit is made under it too) to know which one that is.
    const uint32_t size = uint32_t(rng() % 3000 + 1);
    const uint16_t host_tier = uint16_t(rng() % 5);
    const uint64_t host_start = host ? hostSlot() : 0;
    published_rejit_mu_.lock();
    const RejitId rejit = current_rejit_[m];
    uint64_t rseq = 0;
    // Host mode: half the non-OSR publications activate their version in the same
    // acquisition of the lock (HostCode::activate), the others maybe later (below).
    const bool activate_now = host && tier != Tier::kTier1Osr && rng() % 2 == 0;
    HostCode hc{host_start, size, tier, host_tier, osr};
    hc.activate = activate_now;
    Result<VersionId> v = host ? rt.publishHostCode(m, hc, &rseq) : rt.beginJit(m, tier, osr);
    published_rejit_mu_.unlock();
    if (!v.ok()) {
      freeHostSlot(host_start);
      if (v.error() == Errc::kMethodUnloaded) return world.unloaded_races.fetch_add(1), void();
      return fail(std::string(host ? "publishHostCode: " : "beginJit: ") + v.message());
    }
    Result<CodeRange> r = CodeRange{host_start, size, rseq};
    if (!host) r = rt.publishCode(*v, size);
    if (!r.ok()) {
      if (r.error() == Errc::kVersionGone) return world.unloaded_races.fetch_add(1), void();
      return fail(std::string("publishCode: ") + r.message());
    }
    if (host && rng() % 8 == 0) {
      // A replay (JVMTI GenerateEvents): the same version back, nothing new.
      auto again = rt.publishHostCode(m, HostCode{host_start, size, tier, host_tier, osr});
      if (again.ok() && *again != *v) return fail("replayed publication returned another version");
      if (!again.ok() && again.error() != Errc::kMethodUnloaded)
        return fail(std::string("replayed publishHostCode: ") + again.message());
      if (again.ok()) world.replays.fetch_add(1);
    }
    // The publication is complete: take its sequence number now (see the file comment).
    const uint64_t seq = log.take();
    size_t mi;
    {
      std::lock_guard<std::mutex> g(world.mu);
      mi = world.module_of.at(m);
      const uint64_t end = r->start + r->size;
      // A module already marked unloaded had its ranges dropped from `live`; this one
      // dies with it, and may be reused already (the unload may have returned): only
      // the ranges of live modules are checked and kept.
      if (!world.modules[mi].unloaded) {
        // Live ranges never overlap.
        auto next = world.live.lower_bound(r->start);
        if (next != world.live.end() && next->first < end) world.overlap_error = "range overlaps a later one";
        if (next != world.live.begin() && std::prev(next)->second > r->start)
          world.overlap_error = "range overlaps an earlier one";
        world.live[r->start] = end;
        world.modules[mi].live_starts.insert(r->start);
      }
    }
    // What the walk must report for it: what the registry was asked to do.
    Fields f{m, world_module_id(mi), *v, rejit, tier, osr, host ? host_tier : uint16_t(tier), r->start, r->size, 0, 0,
             0, r->publish_seq};
    {
      std::lock_guard<std::mutex> g(world.mu);
      const auto& meta = world.meta.at(m);
      f.token = meta.token;
      f.flags = meta.flags;
      f.name_hash = meta.name_hash;
    }
    log.fill(seq, LogEntry::kPublish, f, 0);
    {
      std::lock_guard<std::mutex> g(world.mu);
      if (!world.modules[mi].unloaded) {
        world.retirable.emplace(*v, std::make_pair(mi, r->start));
        world.retirable_ids.push_back(*v);
        world.modules[mi].versions.push_back(*v);
      }
    }
    if (!activate_now && tier != Tier::kTier1Osr && rng() % 4 != 0) {
      auto a = rt.activate(*v);
      if (!a.ok() && a.error() != Errc::kVersionGone) fail(std::string("activate: ") + a.message());
    }
  }

  // Host mode: publish inside a pinned live range, for another method: refused.
  void overlap(std::mt19937_64& rng, MethodId m) {
    std::pair<uint64_t, uint32_t> p;
    {
      std::lock_guard<std::mutex> g(world.mu);
      if (world.pinned.empty()) return;
      p = world.pinned[rng() % world.pinned.size()];
    }
    const uint64_t start = p.first + rng() % p.second;
    auto v = rt.publishHostCode(m, HostCode{start, uint32_t(rng() % 64 + 1), Tier::kTier0, 0, 0});
    if (v.ok()) return fail("publication overlapping a live range was accepted");
    if (v.error() == Errc::kRangeOverlap)
      world.overlaps_refused.fetch_add(1);
    else if (v.error() == Errc::kMethodUnloaded)
      world.unloaded_races.fetch_add(1);
    else
      fail(std::string("overlapping publishHostCode: ") + v.message());
  }

  // Retires one published version of a live method.
  void retire(std::mt19937_64& rng) {
    VersionId vid;
    uint64_t start;
    {
      std::lock_guard<std::mutex> g(world.mu);
      if (world.retirable_ids.empty()) return;
      const size_t i = rng() % world.retirable_ids.size();
      vid = world.retirable_ids[i];
      world.retirable_ids[i] = world.retirable_ids.back();
      world.retirable_ids.pop_back();
      auto it = world.retirable.find(vid);
      if (it == world.retirable.end()) return;  // its module was unloaded meanwhile
      start = it->second.second;
      world.modules[it->second.first].live_starts.erase(start);
      world.retirable.erase(it);
      // Its range stops being live now (model heap: reused only after a grace period;
      // host: the test reuses it once retireVersion returned).
      world.live.erase(start);
    }
    Fields f{};
    f.version_id = vid;
    log.fill(log.take(), LogEntry::kRetireBegin, f, 0);
    // Host mode: half by address (retireHostCode), which must find this very version:
    // the range is the test's until this retirement returns.
    Result<void> r;
    if (host && rng() % 2 == 0) {
      const Result<VersionId> at = rt.retireHostCode(start);
      if (at.ok() && *at != vid) return fail("retireHostCode retired another version than the one at its address");
      r = at.ok() ? Result<void>()
                  : Result<void>(at.error() == Errc::kUnknownVersion ? Errc::kVersionGone : at.error());
    } else {
      r = rt.retireVersion(vid);
    }
    if (!r.ok()) {
      if (r.error() != Errc::kVersionGone) return fail(std::string("retireVersion: ") + r.message());
      // Its module's unload took it first: the range is no longer live in the registry.
      world.unloaded_races.fetch_add(1);
      return freeHostSlot(start);
    }
    log.fill(log.take(), LogEntry::kRetireEnd, f, 0);
    world.retires.fetch_add(1);
    freeHostSlot(start);
    if (churn) {  // its id finds nothing now, even once its slot holds another version (P9)
      auto again = rt.activate(vid);
      if (again.ok() || again.error() != Errc::kVersionGone)
        return fail("activate(retired version " + std::to_string(vid) + "): " + again.message());
      world.stale_checks.fetch_add(1);
    }
  }

  ModuleId world_module_id(size_t mi) {
    std::lock_guard<std::mutex> g(world.mu);
    return world.modules[mi].id;
  }

  void unload(std::mt19937_64& rng) {
    size_t mi;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    {
      std::lock_guard<std::mutex> g(world.mu);
      std::vector<size_t> candidates;
      for (size_t i : world.live_modules)
        if (world.modules[i].collectible) candidates.push_back(i);
      if (candidates.size() < 3) return;  // keep some collectible code around
      mi = candidates[rng() % candidates.size()];
      world.modules[mi].unloaded = true;
      std::erase(world.live_modules, mi);
      // Its ranges stop being live now: the heap may reuse them once unload returned
      // and a grace period passed, never before this point.
      for (uint64_t s : world.modules[mi].live_starts) world.live.erase(s);
      for (VersionId v : world.modules[mi].versions) world.retirable.erase(v);
      // Writers mostly pick live methods from now on (a few still race with the unload).
      const std::unordered_set<MethodId> dying(world.modules[mi].methods.begin(), world.modules[mi].methods.end());
      std::erase_if(world.methods, [&](MethodId m) { return dying.count(m) != 0; });
    }
    const uint64_t seq = log.take();  // before the unload starts (see the file comment)
    log.fill(seq, LogEntry::kUnload, Fields{}, world_module_id(mi));
    auto r = rt.unloadModule(world_module_id(mi));
    if (!r.ok()) return fail(std::string("unloadModule: ") + r.message());
    checkStale(mi);
    if (host) {
      // The module's live ranges are free for the host again. (Ranges retired one by
      // one went back already; a publication that raced with the unload keeps its slot
      // out of use for the rest of the test.)
      std::lock_guard<std::mutex> g(world.mu);
      for (uint64_t s : world.modules[mi].live_starts) world.free_slots.push_back(s);
      world.modules[mi].live_starts.clear();
    }
  }

  // After module mi's unload returned: its ids find nothing, whatever occupies their
  // slots now (P9), and the errors say "gone", not "unknown".
  void checkStale(size_t mi) {
    std::vector<MethodId> methods;
    std::vector<VersionId> versions;
    {
      std::lock_guard<std::mutex> g(world.mu);
      const auto& mod = world.modules[mi];
      methods.assign(mod.methods.begin(), mod.methods.begin() + std::min<size_t>(mod.methods.size(), 2));
      versions.assign(mod.versions.begin(), mod.versions.begin() + std::min<size_t>(mod.versions.size(), 2));
    }
    for (MethodId m : methods) {
      if (rt.entryPoint(m) != 0) return fail("entry point of unloaded method " + std::to_string(m));
      auto r = rt.requestRejit(m);
      if (r.ok() || r.error() != Errc::kMethodUnloaded)
        return fail("requestRejit(unloaded method " + std::to_string(m) + "): " + r.message());
      world.stale_checks.fetch_add(1);
    }
    for (VersionId v : versions) {
      auto a = rt.activate(v);
      if (a.ok() || a.error() != Errc::kVersionGone)
        return fail("activate(version " + std::to_string(v) + " of an unloaded module): " + a.message());
      world.stale_checks.fetch_add(1);
    }
    auto u = rt.unloadModule(world_module_id(mi));
    if (u.ok() || u.error() != Errc::kModuleUnloaded)
      return fail("unloadModule(unloaded module) a second time: " + std::string(u.message()));
  }

  // Churn: modules of a few methods come and go; the live set stays small.
  void churnWriter(int index) {
    std::mt19937_64 rng(seed * 1000003 + index);
    for (uint64_t i = 0; i < ops && !world_failed(); ++i) {
      const unsigned op = unsigned(rng() % 100);
      MethodId m = 0;
      size_t live_modules;
      {
        std::lock_guard<std::mutex> g(world.mu);
        if (!world.methods.empty()) m = world.methods[rng() % world.methods.size()];
        live_modules = world.live_modules.size();
      }
      if (op < 12 && live_modules < 24) {
        const size_t mi = addModule(true);
        if (mi == SIZE_MAX) return;
        for (int k = int(rng() % 4); k >= 0; --k) addMethod(rng, mi);
      } else if (op < 40) {
        compile(rng, m, Tier::kTier0);
      } else if (op < 55) {
        compile(rng, m, rng() % 4 == 0 ? Tier::kTier1Osr : Tier::kTier1);
      } else if (op < 75) {
        retire(rng);
      } else if (op < 87) {
        unload(rng);
      } else if (op < 90 && host) {
        overlap(rng, m);
      } else {
        (void)rt.entryPoint(m);
      }
    }
  }

  void writer(int index) {
    if (churn) return churnWriter(index);
    std::mt19937_64 rng(seed * 1000003 + index);
    for (uint64_t i = 0; i < ops && !world_failed(); ++i) {
      const unsigned op = unsigned(rng() % 100);
      MethodId m = 0;
      {
        std::lock_guard<std::mutex> g(world.mu);
        if (!world.methods.empty()) m = world.methods[rng() % world.methods.size()];
      }
      if (op < 15) {
        addMethod(rng);
      } else if (op < 40) {
        compile(rng, m, Tier::kTier0);
      } else if (op < 52) {
        retire(rng);
      } else if (op < 54 && host) {
        overlap(rng, m);
      } else if (op < 70) {
        for (int c = 0; c < 40; ++c) {
          if (rt.recordCall(m)) compile(rng, m, Tier::kTier1);
        }
        if (rng() % 2) compile(rng, m, Tier::kTier1);
      } else if (op < 80) {
        compile(rng, m, Tier::kTier1Osr);
      } else if (op < 90) {
        // ReJIT: the IL version and its code. The test serialises its own record of the
        // method's current rejit id with the request, so the log says what the walk must.
        published_rejit_mu_.lock();
        auto r = rt.requestRejit(m);
        if (r.ok()) current_rejit_[m] = *r;
        published_rejit_mu_.unlock();
        if (!r.ok()) {
          if (r.error() != Errc::kMethodUnloaded) fail(std::string("requestRejit: ") + r.message());
          continue;
        }
        compile(rng, m, rng() % 2 ? Tier::kInstrumented : Tier::kOptimized);
      } else if (op < 93) {
        unload(rng);
      } else if (op < 95) {
        addModule(true);
      } else {
        (void)rt.entryPoint(m);
      }
    }
  }

  bool world_failed() {
    std::lock_guard<std::mutex> g(world.mu);
    return !world.writer_error.empty();
  }

  // Reader: walks, each checked against the log. Keeps its own replay of the log.
  void reader(int index, ReaderReport* rep) {
    std::mt19937_64 rng(seed * 7919 + index);
    std::unordered_map<VersionId, std::pair<Fields, uint64_t>> model;  // vid -> (fields, seq)
    // Versions neither unloaded nor retiring (as of the replay): what (b) must find.
    std::unordered_map<VersionId, uint64_t> standing;                // vid -> publication seq
    std::unordered_map<ModuleId, std::vector<VersionId>> of_module;  // for unloads
    std::unordered_set<ModuleId> unloaded;
    std::unordered_map<VersionId, uint64_t> retire_done;  // vid -> seq
    uint64_t replayed = 0;
    std::unordered_set<VersionId> seen_set;
    const uint64_t keep_every = ops * kWriters / 40;  // about 30 walks kept per reader
    uint64_t next_keep_at = keep_every / 4;
    while (!stop.load(std::memory_order_relaxed)) {
      Observation obs;
      obs.s0 = log.now();
      // Reader 1 yields now and then inside its walk: long read sections give writers
      // time to run in the middle of a walk, which widens every race window (and gives
      // the catch-up pass publications to catch up).
      const CompleteWalk cw = rt.walkComplete(
          WalkLocking::kNone, [](uint64_t) {},
          [&](const VersionView& v) {
            obs.seen.push_back(fieldsOf(v));
            if (index == 1 && obs.seen.size() % 32 == 0) std::this_thread::yield();
            return true;
          });
      obs.s1 = log.now();
      ++rep->walks;
      rep->caught_up += cw.caught_up;
      // rundown_end's method counts: the distinct methods of the versions visited, and
      // of them those only the catch-up visited (a method's slot reused by another
      // method in between: two methods; method_counts_stress_test.cc makes that case).
      {
        std::unordered_set<MethodId> walked, later;
        std::unordered_set<uint64_t> walked_slots;
        for (const Fields& f : obs.seen) {
          (f.publish_seq <= cw.begin_seq ? walked : later).insert(f.method_id);
          if (f.publish_seq <= cw.begin_seq) walked_slots.insert(f.method_id & 0xffffffffu);
        }
        uint64_t added = 0, reused_slot = 0;
        for (MethodId m : later) {
          if (walked.count(m) != 0) continue;
          ++added;
          reused_slot += walked_slots.count(m & 0xffffffffu);
        }
        if (cw.walk.methods != walked.size() || cw.caught_up_methods != added || cw.methods() != walked.size() + added)
          rep->errors.push_back("method counts: the walk says " + std::to_string(cw.walk.methods) + " walked + " +
                                std::to_string(cw.caught_up_methods) + " caught up, its versions show " +
                                std::to_string(walked.size()) + " + " + std::to_string(added));
        rep->caught_up_methods += added;
        rep->caught_up_reused_methods += reused_slot;
      }
      if (cw.begin_seq > cw.publish_seq || cw.publish_seq > cw.end_seq)
        rep->errors.push_back("sequence values out of order: begin " + std::to_string(cw.begin_seq) + ", P " +
                              std::to_string(cw.publish_seq) + ", E " + std::to_string(cw.end_seq));
      for (const Fields& f : obs.seen) {
        if (f.publish_seq == 0 || f.publish_seq > cw.publish_seq)
          rep->errors.push_back("G3+: version " + std::to_string(f.version_id) + " with publish_seq " +
                                std::to_string(f.publish_seq) + " seen by a walk complete up to " +
                                std::to_string(cw.publish_seq));
      }
      // Kept for the G3+ check at the end: walks spread over the writers' run (by log
      // position: walks on the small early registry are many and short, and a sample by
      // count would be nearly all of them).
      if (obs.s0 >= next_keep_at) {
        KeptWalk k{obs.s1, cw.publish_seq, {}};
        for (const Fields& f : obs.seen) k.seen.push_back(f.version_id);
        std::sort(k.seen.begin(), k.seen.end());
        rep->kept.push_back(std::move(k));
        next_keep_at = obs.s1 + keep_every;
      }
      // Replay the log up to S1.
      for (; replayed < obs.s1; ++replayed) {
        const LogEntry& e = log.at(replayed);
        if (e.kind == LogEntry::kPublish) {
          model[e.f.version_id] = {e.f, replayed};
          // A publication logged after its module's unload began dies with it.
          if (!unloaded.count(e.f.module_id)) {
            standing[e.f.version_id] = replayed;
            of_module[e.f.module_id].push_back(e.f.version_id);
          }
        }
        if (e.kind == LogEntry::kUnload) {
          unloaded.insert(e.module);
          for (VersionId v : of_module[e.module]) standing.erase(v);
          of_module.erase(e.module);
        }
        if (e.kind == LogEntry::kRetireBegin) standing.erase(e.f.version_id);
        if (e.kind == LogEntry::kRetireEnd) retire_done[e.f.version_id] = replayed;
      }
      // (a) and (c).
      seen_set.clear();
      for (const Fields& f : obs.seen) {
        if (!seen_set.insert(f.version_id).second)
          rep->errors.push_back("G4: version " + std::to_string(f.version_id) + " seen twice in one walk");
        auto it = model.find(f.version_id);
        if (it == model.end()) {
          rep->deferred.push_back(f);  // published, logged after S1
          continue;
        }
        if (!sameFields(f, it->second.first))
          rep->errors.push_back("G2: version " + std::to_string(f.version_id) + " fields differ from published");
        if (generationOf(f.version_id) != 0 || generationOf(f.method_id) != 0) ++rep->reused_seen;
        auto done = retire_done.find(f.version_id);
        if (done != retire_done.end() && done->second < obs.s0)
          rep->errors.push_back("retired: version " + std::to_string(f.version_id) + " retired at seq " +
                                std::to_string(done->second) + " < " + std::to_string(obs.s0) + " seen");
        ++rep->versions_checked;
      }
      // (b): published before S0, module not unloaded and retirement not begun before S1.
      for (const auto& [vid, pub] : standing) {
        if (pub >= obs.s0) continue;
        ++rep->completeness_checked;
        if (!seen_set.count(vid))
          rep->errors.push_back("G3: version " + std::to_string(vid) + " published at seq " + std::to_string(pub) +
                                " < " + std::to_string(obs.s0) + " not seen");
      }
      if (rep->errors.size() > 20) return;
      // Entry points of methods the walk saw (their slots may hold others by now):
      // sampled, checked at the end against the whole log.
      for (int i = 0; i < 32 && !obs.seen.empty(); ++i) {
        const MethodId m = obs.seen[rng() % obs.seen.size()].method_id;
        const uint64_t ep = rt.entryPoint(m);
        if (ep != 0 && rep->entry_points.size() < 100000) rep->entry_points.emplace_back(m, ep);
      }
    }
  }

  // G2: what the walk saw is exactly what was published, names included (by hash).
  static bool sameFields(const Fields& seen, const Fields& logged) { return seen == logged; }

  std::mutex published_rejit_mu_;
  std::unordered_map<MethodId, RejitId> current_rejit_;  // guarded by published_rejit_mu_
};

TEST_P(RegistryStress, LockFreeWalksAreConsistentCompleteAndExactlyOnce) {
  std::vector<ReaderReport> reports(kReaders);
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) readers.emplace_back([&, i] { reader(i, &reports[i]); });
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) writers.emplace_back([&, i] { writer(i); });
  for (auto& t : writers) t.join();
  stop.store(true);
  for (auto& t : readers) t.join();

  ASSERT_EQ(world.writer_error, "") << "seed " << seed;
  EXPECT_EQ(world.overlap_error, "") << "seed " << seed;

  // Deferred checks against the complete log.
  const uint64_t end = log.now();
  std::unordered_map<VersionId, Fields> all;
  std::unordered_map<MethodId, std::unordered_set<uint64_t>> code_of;
  for (uint64_t s = 0; s < end; ++s) {
    const LogEntry& e = log.at(s);
    if (e.kind != LogEntry::kPublish) continue;
    all[e.f.version_id] = e.f;
    code_of[e.f.method_id].insert(e.f.code_start);
  }
  // (e) G3+, against the whole log: for each kept walk, the removals that had begun
  // before it ended (test-log order), then every publication numbered <= its P.
  uint64_t plus_checked = 0, caught_up = 0, caught_up_methods = 0, caught_up_reused = 0;
  {
    struct Pub {
      VersionId vid;
      ModuleId module;
      uint64_t rseq;
    };
    std::vector<Pub> pubs;
    for (uint64_t s = 0; s < end; ++s) {
      const LogEntry& e = log.at(s);
      if (e.kind == LogEntry::kPublish) pubs.push_back({e.f.version_id, e.f.module_id, e.f.publish_seq});
    }
    for (ReaderReport& rep : reports) {
      caught_up += rep.caught_up;
      caught_up_methods += rep.caught_up_methods;
      caught_up_reused += rep.caught_up_reused_methods;
      uint64_t shown = 0;
      for (const KeptWalk& k : rep.kept) {
        std::unordered_set<ModuleId> unloaded;
        std::unordered_set<VersionId> retiring;
        for (uint64_t s = 0; s < k.s1; ++s) {
          const LogEntry& e = log.at(s);
          if (e.kind == LogEntry::kUnload) unloaded.insert(e.module);
          if (e.kind == LogEntry::kRetireBegin) retiring.insert(e.f.version_id);
        }
        for (const Pub& p : pubs) {
          if (p.rseq > k.publish_seq || unloaded.count(p.module) || retiring.count(p.vid)) continue;
          ++plus_checked;
          if (!std::binary_search(k.seen.begin(), k.seen.end(), p.vid) && shown++ < 10)
            ADD_FAILURE() << "G3+: version " << p.vid << " published at registry seq " << p.rseq << " <= the walk's P "
                          << k.publish_seq << " is missing (seed " << seed << ")";
        }
      }
    }
  }
  uint64_t walks = 0, checked = 0, complete = 0, eps = 0, reused = 0;
  for (ReaderReport& rep : reports) {
    reused += rep.reused_seen;
    for (const std::string& e : rep.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
    for (const Fields& f : rep.deferred) {
      auto it = all.find(f.version_id);
      if (it == all.end()) {
        ADD_FAILURE() << "version " << f.version_id << " seen but never published (seed " << seed << ")";
      } else {
        EXPECT_TRUE(sameFields(f, it->second)) << "G2 (deferred): version " << f.version_id;
        ++checked;
      }
    }
    for (auto [m, ep] : rep.entry_points) {
      EXPECT_TRUE(code_of[m].count(ep)) << "entry point " << ep << " of method " << m
                                        << " is not code published for it (seed " << seed << ")";
      ++eps;
    }
    walks += rep.walks;
    checked += rep.versions_checked;
    complete += rep.completeness_checked;
  }
  const MemoryStats ms = rt.memoryStats();
  std::printf(
      "stress (%s%s): %llu walks, %llu versions field-checked (%llu of reused slots), %llu completeness "
      "checks, %llu G3+ checks, %llu versions caught up (%llu methods new to their walk, %llu in a walked "
      "method's slot), %llu entry points, %llu stale ids checked, %llu log "
      "entries, %llu retired, %llu replays, %llu overlaps refused, %llu ops lost a race to an unload; "
      "%llu methods live, %llu ever, %llu removals reclaimed by their own thread\n",
      host ? "host" : "model heap", churn ? ", churn" : "", (unsigned long long)walks, (unsigned long long)checked,
      (unsigned long long)reused, (unsigned long long)complete, (unsigned long long)plus_checked,
      (unsigned long long)caught_up, (unsigned long long)caught_up_methods, (unsigned long long)caught_up_reused,
      (unsigned long long)eps, (unsigned long long)world.stale_checks.load(), (unsigned long long)end,
      (unsigned long long)world.retires.load(), (unsigned long long)world.replays.load(),
      (unsigned long long)world.overlaps_refused.load(), (unsigned long long)world.unloaded_races.load(),
      (unsigned long long)ms.live_methods, (unsigned long long)rt.registeredMethods(),
      (unsigned long long)ms.reclaimed_inline);
  // The test must have exercised what it claims to.
  EXPECT_GT(walks, 2u);
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(complete, 1000u);
  EXPECT_GT(plus_checked, 1000u);
  EXPECT_GT(caught_up, 0u) << "no walk had a publication to catch up: G3+ was not exercised";
  EXPECT_GT(caught_up_methods, 0u) << "no walk had a method of its own in the catch-up: its count was not exercised";
  EXPECT_GT(ms.native_versions, 0u);
  EXPECT_GT(world.retires.load(), ops / 20);
  EXPECT_EQ(ms.retired, world.retires.load());
  if (churn) {
    // Slots were reused under the walks, and stale ids were tried.
    EXPECT_GT(reused, 1000u) << "walks saw too few records of reused slots: P9 was not exercised";
    EXPECT_GT(world.stale_checks.load(), ops / 20);
    EXPECT_LT(ms.live_methods * 10, rt.registeredMethods()) << "the live set did not stay small";
    EXPECT_GT(ms.reclaimed_inline, 0u) << "no removal was reclaimed by its own thread";
  }
  if (host) {
    EXPECT_GT(world.replays.load(), 0u);
    EXPECT_GT(world.overlaps_refused.load(), 0u);
    EXPECT_EQ(ms.replayed, world.replays.load());
    EXPECT_EQ(ms.overlaps_refused, world.overlaps_refused.load());
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, RegistryStress,
                         ::testing::Values(Variant{CodeMode::kModelHeap, false}, Variant{CodeMode::kHost, false},
                                           Variant{CodeMode::kModelHeap, true}, Variant{CodeMode::kHost, true}),
                         [](const ::testing::TestParamInfo<Variant>& i) {
                           return std::string(i.param.churn ? "Churn" : "") +
                                  (i.param.mode == CodeMode::kHost ? "Host" : "ModelHeap");
                         });

}  // namespace
}  // namespace jitprov
