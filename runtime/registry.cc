// SPDX-License-Identifier: MIT
// Runtime: the operations on the registry. Ordering rules P1-P5 are in registry.h;
// each publish()/readPublished() below names the rule it implements.
// Longer than the 600 lines a file aims at (docs/hacking.md), on purpose: every write
// of the publication protocol (link, publish, activate, retire, unload, reclaim) stays
// in this one file beside the rules it follows, so that a reviewer reads the protocol's
// writers in one place; the lock-free walk is in rundown.cc.
#include "registry.h"

#include "protocol_faults.h"

#include <jitprov/utf8.h>

#include "jitprov_usdt.h"
#include "trace.h"
#include "version_record.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace jitprov {

// The limits errcMessage() names.
static_assert(Runtime::State::ModuleTable::kCapacity == 1048575);
static_assert(Runtime::State::MethodTable::kCapacity == 67108863);
static_assert(Runtime::State::VersionTable::kCapacity == 268435455);

namespace {

// The fields of a published version. `code_start` is the value the caller loaded with
// acquire (or wrote under the lock), so code_size is visible (P2).
VersionView viewOf(const Method& m, const NativeVersion& v, uint64_t code_start) noexcept {
  return VersionView{m.id(),
                     m.module_id,
                     v.version_id,
                     v.il->rejit_id,
                     v.tier,
                     v.osr_il_offset,
                     v.host_tier,
                     v.host_version,
                     code_start,
                     v.code_size,
                     m.token,
                     m.flags,
                     {m.nameSpace(), m.nsLen()},
                     {m.name(), m.name_len},
                     {m.signature(), m.sigLen()},
                     v.publish_seq};
}

LockSite publishSite(Tier tier) noexcept {
  switch (tier) {
    case Tier::kTier0:
      return LockSite::kTier0Publish;
    case Tier::kTier1:
      return LockSite::kTier1Publish;
    case Tier::kTier1Osr:
      return LockSite::kOsrPublish;
    case Tier::kInstrumented:
    case Tier::kOptimized:
      return LockSite::kRejit;  // ReJIT code is compiled at these tiers
  }
  return LockSite::kTier1Publish;
}

bool validTier(Tier t) noexcept { return static_cast<int>(t) < kTierCount; }

Errc checkName(std::string_view s) noexcept {
  if (s.size() > kMaxNameBytes) return Errc::kNameTooLong;
  if (!isValidUtf8(s)) return Errc::kInvalidUtf8;
  return Errc::kOk;
}

// How many methods one RCU read section of a walk covers: bounds how long a walk can
// hold up a grace period (and so the reclamation of unloaded modules).
constexpr uint64_t kWalkBatch = 1024;
// Prefetch distance, in method ids, of the walk's software pipeline.
constexpr uint64_t kPrefetchMethod = 16;
constexpr uint64_t kPrefetchIl = 8;
constexpr uint64_t kPrefetchVersion = 4;
constexpr uint64_t kMethodSlot = Runtime::State::MethodTable::slotBytes();
// walkImpl's fast path takes all three slots ahead as neighbours once the farthest is in
// the chunk and below the high water: the others must be nearer.
static_assert(kPrefetchIl <= kPrefetchMethod && kPrefetchVersion <= kPrefetchMethod);

}  // namespace

Runtime::Runtime(RuntimeConfig config) : config_(config), s_(std::make_unique<State>(config_)) {
  // Code published before a rundown engine exists is traced too (method_load).
  trace::loadProvider();
  // The rest of what the runtime reads of the environment, read here too and not at a
  // first use on some other thread: a host may hold its lock of the environment around
  // the creation (the Node.js client: docs/node.md, "The start").
  (void)hugePagesWanted(Paging::kAtFirstTouch);
#if defined(JITPROV_PROTOCOL_FAULT_RUNTIME)
  (void)fault::activeFault();
#endif
}

Runtime::~Runtime() {
  jitdumpClose();  // JIT_CODE_CLOSE (no publication runs: the host's contract)
  // Every retired module's callback references s_: wait for them first. After that no
  // reader may be running (the host's contract for destroying the runtime).
  drainReclamation();
  const uint64_t hw = s_->modules.highWater();
  for (uint64_t index = 1; index <= hw; ++index) {
    Module* mod = s_->modules.at(index);
    if (mod == nullptr) continue;
    mod->methods.forEach([this](Method* m) { s_->freeMethod(m, false); });
    s_->method_bytes.fetch_sub(mod->names.bytes(), std::memory_order_relaxed);
    mod->~Module();  // the tables free their chunks
  }
}

// ---------------------------------------------------------------------------------
// Loader

Result<ModuleId> Runtime::registerModule(std::string_view path, bool collectible) {
  if (Errc e = checkName(path); e != Errc::kOk) return e;
  std::lock_guard<std::mutex> g(s_->loader);
  State::ModuleTable::Claim slot;
  if (!s_->modules.claim(&slot)) return Errc::kTooManyModules;
  auto* mod = new (slot.storage) Module(slot.id, collectible, s_.get());
  try {
    mod->path.assign(path);
  } catch (const std::bad_alloc&) {
    mod->~Module();
    s_->modules.unclaim(slot);
    return Errc::kOutOfMemory;
  }
  s_->modules.commit(slot);  // P9 (P5): after the record is complete
  s_->live_modules.fetch_add(1, std::memory_order_relaxed);
  trace::moduleLoad(s_->instance, mod->id, mod->path.c_str());
  return mod->id;
}

Result<MethodId> Runtime::registerMethod(ModuleId module, const MethodDesc& desc) {
  for (std::string_view s : {desc.name_space, desc.name, desc.signature}) {
    if (Errc e = checkName(s); e != Errc::kOk) return e;
  }

  State::PopulateAfterUnlock populate{s_.get()};  // after the loader mutex (State::askPopulate)
  std::lock_guard<std::mutex> g(s_->loader);
  Module* mod = s_->modules.load(module);
  if (mod == nullptr) return s_->missingModule(module);
  if (desc.host_key != 0 && s_->by_host_key.find(desc.host_key) != 0) return Errc::kAlreadyExists;
  State::MethodTable::Claim slot;
  if (!s_->methods.claim(&slot)) return Errc::kTooManyMethods;
  // Everything that can fail comes before commit(): once the slot is published,
  // lock-free readers (entryPoint, recordCall) may hold the record, and it could not be
  // taken back at once. Strings copied into the arena before a failure stay there,
  // unused, until the module goes.
  const uint64_t arena_before = mod->names.bytes();
  const char *ns, *name, *sig;
  try {
    ns = mod->names.intern(desc.name_space);
    name = mod->names.copyAfter(desc.name, &desc.host_key, desc.host_key != 0 ? sizeof desc.host_key : 0);
    sig = mod->names.intern(desc.signature);
    const size_t list_before = mod->methods.bytes();
    mod->methods.reserveOne();
    s_->list_bytes.fetch_add(mod->methods.bytes() - list_before, std::memory_order_relaxed);
    if (desc.host_key != 0) s_->by_host_key.insert(desc.host_key, slot.id);
  } catch (const std::bad_alloc&) {
    s_->methods.unclaim(slot);
    s_->method_bytes.fetch_add(mod->names.bytes() - arena_before, std::memory_order_relaxed);
    return Errc::kOutOfMemory;
  }
  // relaxed: ordered before the walk's reading of the count by the slot's publication
  // (commit: release) or, for a later occupant of the slot, by the grace period before
  // its claim (WalkMarks).
  const auto ordinal = static_cast<uint32_t>(s_->methods_registered.fetch_add(1, std::memory_order_relaxed));
  auto* m = new (slot.storage) Method(module, desc, ns, name, sig, ordinal);
  s_->methods.commit(slot);   // P9 (P5): after the record is complete
  mod->methods.push_back(m);  // reserved above: cannot throw
  if (slot.populate) s_->askPopulate();
  s_->method_records.fetch_add(1, std::memory_order_relaxed);
  s_->live_methods.fetch_add(1, std::memory_order_relaxed);
  // The slot, and what the module's arena grew by (its strings are counted with methods).
  s_->method_bytes.fetch_add(State::MethodTable::slotBytes() + (mod->names.bytes() - arena_before),
                             std::memory_order_relaxed);
  return slot.id;
}

Result<void> Runtime::unloadModule(ModuleId module) {
  Module* mod = nullptr;
  {
    std::lock_guard<std::mutex> g(s_->loader);
    mod = s_->modules.load(module);
    if (mod == nullptr) return s_->missingModule(module);
    if (!mod->collectible) return Errc::kNotCollectible;
    mod->unloaded = true;
    s_->modules.clear(module);  // P9
    {
      CvmLock::Guard lock(s_->lock, LockSite::kUnload, 0);
      // P8: before any slot is cleared; a module without methods removes nothing (and
      // would leave a number no event carries).
      const uint64_t unload_seq = mod->methods.empty() ? 0 : s_->takeRemovalSeq();
      mod->records = 1 + mod->methods.size();
      mod->methods.forEach([&](Method* m) { mod->records += s_->clearMethod(m, unload_seq); });
    }
    s_->live_modules.fetch_sub(1, std::memory_order_relaxed);
    s_->live_methods.fetch_sub(mod->methods.size(), std::memory_order_relaxed);
    trace::moduleUnload(s_->instance, mod->id, mod->path.c_str());
    fault::afterUnload(mod);  // P5: its strings stay until the grace period
  }
  fault::reclaimModule(s_.get(), mod);  // P4: after a grace period
  return {};
}

namespace {

// One method unloaded alone, queued for its reclamation (unloadMethod).
struct MethodReclaim {
  rcu_head rcu{};
  Method* method;
  Runtime::State* owner;
  uint64_t records;
};

}  // namespace

Result<void> Runtime::unloadMethod(MethodId method) {
  Method* m = nullptr;
  uint64_t records = 1;
  // Allocated first: nothing can fail once the method is cleared.
  auto* node = new (std::nothrow) MethodReclaim{};
  if (node == nullptr) return Errc::kOutOfMemory;
  {
    std::lock_guard<std::mutex> g(s_->loader);
    m = s_->methods.load(method);
    if (m == nullptr) {
      delete node;
      return s_->missingMethod(method);
    }
    Module* mod = s_->modules.load(m->module_id);  // live while its method is
    {
      CvmLock::Guard lock(s_->lock, LockSite::kUnload, method);
      // As unloadModule, for one method: P8 (the number before the slot is cleared),
      // P4/P9 (cleared under the lock, reclaimed after a grace period).
      records += s_->clearMethod(m, s_->takeRemovalSeq());
    }
    // Out of its module's list (loader mutex), searched from the end: a method unloaded
    // alone is most often one of the module's newest.
    (void)mod->methods.eraseOne(m);  // it is there: registered, not unloaded before
    s_->live_methods.fetch_sub(1, std::memory_order_relaxed);
  }
  node->method = m;
  node->owner = s_.get();
  node->records = records;
  s_->reclaimLater(&node->rcu, &State::reclaimMethod, records);  // P4: after a grace period
  return {};
}

void Runtime::State::reclaimMethod(rcu_head* head) {
  rcu::ReclaimScope scope;
  auto* node = reinterpret_cast<MethodReclaim*>(reinterpret_cast<char*>(head) - offsetof(MethodReclaim, rcu));
  State* owner = node->owner;
  {
    std::shared_lock<std::shared_mutex> whole(owner->reclaim_mu);  // never half done at a fork
    owner->freeMethod(node->method, true);
    owner->awaiting_reclamation.fetch_sub(node->records, std::memory_order_relaxed);
  }
  delete node;
}

uint64_t Runtime::State::clearMethod(Method* m, uint64_t unload_seq) {
  uint64_t versions_cleared = 0;
  m->unloaded = true;
  methods.clear(m->id());  // new readers can no longer reach m (P4, P9)
  // Under the lock: ordered before any publication that reuses a host range.
  trace::methodUnload(instance, m->id(), m->module_id, unload_seq);
  if (m->has_host_key) by_host_key.erase(m->hostKey());
  for (IlVersion* il = m->il_head.load(std::memory_order_relaxed); il != nullptr; il = il->next) {
    // relaxed: we hold the CVM lock, the only writer of native_head and next.
    for (NativeVersion* v = il->native_head.load(std::memory_order_relaxed); v != nullptr;
         v = v->next.load(std::memory_order_relaxed)) {
      versions.clear(v->version_id);
      ++versions_cleared;
      if (code_mode == CodeMode::kHost) eraseHostRange(v->code_start.load(std::memory_order_relaxed));
    }
  }
  return versions_cleared;
}

Result<MethodId> Runtime::findMethod(uint64_t host_key) const {
  if (host_key == 0) return Errc::kInvalidArgument;
  std::lock_guard<std::mutex> g(s_->loader);
  const MethodId id = s_->by_host_key.find(host_key);
  if (id == 0) return Errc::kUnknownMethod;
  return id;
}

void Runtime::State::reclaimModule(rcu_head* head) {
  rcu::ReclaimScope scope;
  Module* mod = reinterpret_cast<Module*>(reinterpret_cast<char*>(head) - offsetof(Module, rcu));
  State* owner = mod->owner;
  std::shared_lock<std::shared_mutex> whole(owner->reclaim_mu);  // never half done at a fork
  mod->methods.forEach([owner](Method* m) { owner->freeMethod(m, true); });
  owner->method_bytes.fetch_sub(mod->names.bytes(), std::memory_order_relaxed);
  owner->list_bytes.fetch_sub(mod->methods.bytes(), std::memory_order_relaxed);
  const ModuleId id = mod->id;
  const uint64_t records = mod->records;
  mod->~Module();
  owner->modules.recycle(id);  // P9: after the grace period, the record destroyed
  owner->awaiting_reclamation.fetch_sub(records, std::memory_order_relaxed);
}

void Runtime::State::populateAhead() noexcept {
  // acq_rel: pairs with the callback's exchange, so that a callback that cleared the flag
  // before this exchange sees the request the claim left.
  if (!populate_queued.exchange(true, std::memory_order_acq_rel))
    rcu::retire(&populate_job.rcu, &State::populateTables);
}

void Runtime::State::populateTables(rcu_head* head) noexcept {
  rcu::ReclaimScope scope;
  State* s = reinterpret_cast<PopulateJob*>(reinterpret_cast<char*>(head) - offsetof(PopulateJob, rcu))->owner;
  s->populate_queued.exchange(false, std::memory_order_acq_rel);  // before populateAhead() looks
  (void)s->methods.populateAhead();
  (void)s->versions.populateAhead();
  (void)s->ils.populateAhead();
}

void Runtime::State::reclaimLater(rcu_head* head, void (*reclaim)(rcu_head*), uint64_t records) noexcept {
  // relaxed: the counter bounds the backlog; the grace period orders the frees (P4).
  const uint64_t backlog = awaiting_reclamation.fetch_add(records, std::memory_order_relaxed) + records;
  if (max_backlog != 0 && backlog > max_backlog) {
    // The wait lasts until every read section that began before it has ended: at most a
    // rundown's batch (kWalkBatch methods) or a lookup. Measured: MemoryStats::reclaim_wait.
    const uint64_t t0 = monotonicNs();
    if (rcu::synchronize()) {
      const uint64_t waited = monotonicNs() - t0;
      {
        std::lock_guard<std::mutex> g(reclaim_wait_mu);
        reclaim_wait.record(waited);
      }
      reclaimed_inline.fetch_add(1, std::memory_order_relaxed);
      reclaim(head);  // every reader that could hold it is gone (its ReclaimScope: rcu.h)
      return;
    }
  }
  rcu::retire(head, reclaim);
}

Runtime::State::SiteLabel Runtime::State::labelFor(VersionId version) const noexcept {
  // Lock-free peek, only to name the lock site and method in the probes before taking
  // the lock; everything is checked again under it.
  rcu::ReadSection rs;
  const NativeVersion* v = versions.load(version);
  if (v == nullptr) return {LockSite::kTier1Publish, 0};
  return {publishSite(v->tier), v->method()->id()};
}

void Runtime::State::freeMethod(Method* m, bool give_back_code) {
  uint64_t bytes = 0;   // IL version nodes (native ones are counted by freeVersion)
  uint64_t rejits = 0;  // those of ReJITs (il_versions counts rejit_id != 0)
  for (IlVersion* il = m->il_head.load(std::memory_order_relaxed); il != nullptr;) {
    for (NativeVersion* v = il->native_head.load(std::memory_order_relaxed); v != nullptr;) {
      NativeVersion* next = v->next.load(std::memory_order_relaxed);  // relaxed: no writer is left
      freeVersion(v, give_back_code);
      v = next;
    }
    IlVersion* next = il->next;
    if (il->rejit_id != 0) ++rejits;
    bytes += IlTable::slotBytes();
    const uint64_t id = IlTable::idOf(il);
    il->~IlVersion();
    // After the grace period that ended its method's readers, the only ones that could
    // reach it (P4): its slot may be claimed again at once.
    ils.clear(id);
    ils.recycle(id);
    il_records.fetch_sub(1, std::memory_order_relaxed);
    il = next;
  }
  method_bytes.fetch_sub(MethodTable::slotBytes(), std::memory_order_relaxed);  // strings: with the module
  version_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  il_versions.fetch_sub(rejits, std::memory_order_relaxed);
  const MethodId id = m->id();
  m->~Method();
  methods.recycle(id);  // P9
  method_records.fetch_sub(1, std::memory_order_relaxed);
}

void Runtime::State::freeVersion(NativeVersion* v, bool give_back_code) {
  const uint64_t start = v->code_start.load(std::memory_order_relaxed);
  // Model heap only: host-mode ranges belong to the host.
  if (give_back_code && code_mode == CodeMode::kModelHeap && start != 0) heap.release(start, v->code_size);
  const VersionId id = v->version_id;
  v->~NativeVersion();
  versions.recycle(id);  // P9
  version_bytes.fetch_sub(VersionTable::slotBytes(), std::memory_order_relaxed);
  native_versions.fetch_sub(1, std::memory_order_relaxed);
}

void Runtime::State::reclaimBatch(rcu_head* head) {
  rcu::ReclaimScope scope;
  auto* b = reinterpret_cast<RetireBatch*>(reinterpret_cast<char*>(head) - offsetof(RetireBatch, rcu));
  {
    std::shared_lock<std::shared_mutex> whole(b->owner->reclaim_mu);  // never half done at a fork
    for (uint32_t i = 0; i < b->n; ++i) b->owner->freeVersion(b->versions[i], true);
    b->owner->awaiting_reclamation.fetch_sub(b->n, std::memory_order_relaxed);
  }
  delete b;
}

RetireBatch* Runtime::State::takeRetireBatch() noexcept {
  RetireBatch* b = retire_batch;
  retire_batch = nullptr;
  retire_batch_full.store(true, std::memory_order_relaxed);
  return b;
}
void Runtime::State::eraseHostRange(uint64_t start) noexcept {
  if (live_ranges.erase(start) != 0) live_host_code.fetch_sub(1, std::memory_order_relaxed);
}

NativeVersion* Runtime::State::overlapping(uint64_t start, uint32_t size, RangeMap::iterator* after) {
  const uint64_t end = start + size;
  auto it = live_ranges.lower_bound(start);
  *after = it;
  if (it != live_ranges.end() && it->first < end) return it->second;
  if (it != live_ranges.begin()) {
    const NativeVersion* prev = std::prev(it)->second;
    if (std::prev(it)->first + prev->code_size > start) return std::prev(it)->second;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------
// JIT paths

namespace {
// This thread's JIT path in progress, for jit_end's jit_ns and in_rundown: timed only
// while a tracer is attached to jit_end, and only for the version its beginJit created
// (in the runtime that created it): a publishCode of any other version (begun on
// another thread, before the tracer attached, before this thread's latest beginJit, or
// a retry after a failed publication) reports it unmeasured, never a time taken for
// another path. initial-exec: see cvm_lock.cc.
struct JitPathClock {
  const void* runtime;  // null: nothing timed
  VersionId version;
  uint64_t start_ns;
  CvmLock::RundownMark mark;
};
thread_local __attribute__((tls_model("initial-exec"))) JitPathClock t_jit_path{};
}  // namespace

Result<VersionId> Runtime::beginJit(MethodId method, Tier tier, uint32_t osr_il_offset) {
  if (!validTier(tier)) return Errc::kInvalidArgument;
  if (s_->code_mode != CodeMode::kModelHeap) return Errc::kWrongCodeMode;
  JITPROV_PROBE_JIT_BEGIN(method, static_cast<int>(tier));
  t_jit_path.runtime = nullptr;
  const bool timed = JITPROV_USDT_ENABLED(jit_end);
  const uint64_t start_ns = timed ? monotonicNs() : 0;
  const CvmLock::RundownMark mark = timed ? s_->lock.rundownMark() : CvmLock::RundownMark{};
  State::PopulateAfterUnlock populate{s_.get()};  // after the CVM lock (State::askPopulate)
  CvmLock::Guard lock(s_->lock, publishSite(tier), method);
  Method* m = s_->methods.load(method);
  if (m == nullptr) return s_->missingMethod(method);
  JITPROV_ASSERT_HELD(s_->lock);
  IlVersion* il = s_->activeIlOrCreate(m);
  if (il == nullptr) return Errc::kOutOfMemory;
  State::VersionTable::Claim slot;
  if (!s_->versions.claim(&slot)) return Errc::kTooManyVersions;
  if (slot.populate) s_->askPopulate();  // queued once the CVM lock is released
  // relaxed load of the head: we hold the CVM lock, its only writer.
  NativeVersion* const old_head = il->native_head.load(std::memory_order_relaxed);
  auto* v = new (slot.storage)
      NativeVersion(slot.id, tier, static_cast<uint16_t>(tier), 0, tier == Tier::kTier1Osr ? osr_il_offset : 0, il,
                    fault::initialNext(old_head));         // P1: next = old head
  s_->versions.commit(slot);                               // P9: lookups by id (publishCode) find it
  fault::linkNativeVersion(il->native_head, v, old_head);  // P1: the node is complete
  s_->native_versions.fetch_add(1, std::memory_order_relaxed);
  s_->version_bytes.fetch_add(State::VersionTable::slotBytes(), std::memory_order_relaxed);
  if (timed) t_jit_path = {s_.get(), slot.id, start_ns, mark};
  return slot.id;
}

namespace {
// One attempt at publishCode: the lock, the heap, the events. `path`: this thread's
// timed JIT path for the version, or null.
Result<CodeRange> publishOnce(Runtime::State& s, VersionId version, uint32_t code_size, const JitPathClock* path) {
  const Runtime::State::SiteLabel label = s.labelFor(version);
  MethodId method_id = 0;
  Tier tier = Tier::kTier0;
  CodeRange range;
  // Opened before the lock is released so that the version's method cannot be freed
  // (by an unload that runs once we release) before method_load has read it.
  rcu::ReadSection rs;
  const NativeVersion* published = nullptr;
  JitdumpWriter* jd = nullptr;
  uint64_t jd_ns = 0;
  {
    CvmLock::Guard lock(s.lock, label.site, label.method_id);
    NativeVersion* v = s.versions.load(version);
    if (v == nullptr) return s.missingVersion(version);
    JITPROV_ASSERT_HELD(s.lock);
    // relaxed: we hold the CVM lock, the only writer of code_start.
    if (v->code_start.load(std::memory_order_relaxed) != 0) return Errc::kAlreadyPublished;
    const uint64_t start = s.heap.allocate(code_size);
    if (start == 0) return Errc::kCodeHeapExhausted;
    const uint64_t seq = s.takePublicationSeq(v);  // P8: before code_start's release
    fault::publishCode(v, start, code_size);       // P2: code_start last, with release
    s.completePublication(v->method(), seq);       // P8
    method_id = v->method()->id();
    tier = v->tier;
    range = {start, code_size, seq};
    published = v;
    if ((jd = s.jitdumpEnter()) != nullptr) jd_ns = monotonicNs();  // jitdump.h: stamped under the lock
  }
  if (JITPROV_USDT_ENABLED(jit_end)) {
    JITPROV_PROBE_JIT_END(method_id, static_cast<int>(tier), range.start, range.size,
                          path != nullptr ? monotonicNs() - path->start_ns : JITPROV_USDT_UNMEASURED,
                          path != nullptr && CvmLock::rundownBetween(path->mark, s.lock.rundownMark()) ? 1 : 0);
  }
  const VersionView view = viewOf(*published->method(), *published, range.start);
  trace::methodLoad(s.instance, view);
  if (jd != nullptr) s.jitdumpWrite(jd, view, jd_ns);
  return range;
}
}  // namespace

Result<CodeRange> Runtime::publishCode(VersionId version, uint32_t code_size) {
  // This thread's timed path ends here, published or not, if it is this version's.
  const JitPathClock begun = t_jit_path;
  const bool timed_path = begun.runtime == s_.get() && begun.version == version;
  if (timed_path) t_jit_path.runtime = nullptr;
  if (code_size == 0) return Errc::kZeroCodeSize;
  if (s_->code_mode != CodeMode::kModelHeap) return Errc::kWrongCodeMode;
  const JitPathClock* path = timed_path ? &begun : nullptr;
  Result<CodeRange> r = publishOnce(*s_, version, code_size, path);
  // The heap may be full of removed code waiting for its grace period, some of it in a
  // retire batch that is not full and would wait for later retirements (a 2 GiB
  // publication failed with nothing live): wait for it, then try once more. Here,
  // with neither the lock nor a read section held, as the wait is for every reader.
  if (r.error() == Errc::kCodeHeapExhausted && s_->reclaimRetiredCode()) r = publishOnce(*s_, version, code_size, path);
  return r;
}

Result<VersionId> Runtime::publishHostCode(MethodId method, const HostCode& code, uint64_t* publish_seq) {
  if (publish_seq != nullptr) *publish_seq = 0;
  if (code.code_size == 0) return Errc::kZeroCodeSize;  // as publishCode: one error in both modes
  if (!validTier(code.tier) || code.code_start == 0 || code.code_start > UINT64_MAX - code.code_size ||
      (code.activate && code.tier == Tier::kTier1Osr))  // OSR code is never an entry point (activate)
    return Errc::kInvalidArgument;
  if (s_->code_mode != CodeMode::kHost) return Errc::kWrongCodeMode;
  if (code.n_lines != 0) {  // checked open or not: a host's mistake shows before it meets a sink
    if (code.lines == nullptr || code.lines[0].file == nullptr) return Errc::kInvalidArgument;
    uint64_t prev = code.code_start;
    for (size_t i = 0; i < code.n_lines; ++i) {
      const uint64_t a = code.lines[i].code_addr;
      if (a < prev || a - code.code_start >= code.code_size) return Errc::kInvalidArgument;
      prev = a;
    }
  }
  VersionId published = 0;
  VersionView view{};
  JitdumpWriter* jd = nullptr;
  uint64_t jd_ns = 0;
  State::PopulateAfterUnlock populate{s_.get()};  // after the CVM lock (State::askPopulate)
  // Opened under the lock, and only for the jitdump's write after it: that write reads
  // the view's strings, which an unload may free once the lock is released. Everything
  // else this publication reads of the method and the version, method_load included,
  // it reads under the lock. (A read section on every publication was 9 of the ~42 cache
  // lines a cold publication fetched: liburcu-bp's thread-local state.) The thread is
  // registered with liburcu before the lock: a first read section under it would take
  // liburcu's registry lock after ours, the order fork()'s handlers reverse (fork.cc).
  std::optional<rcu::ReadSection> rs;
  rcu::registerThread();
  {
    CvmLock::Guard lock(s_->lock, publishSite(code.tier), method);
    Method* m = s_->methods.load(method);
    if (m == nullptr) return s_->missingMethod(method);
    JITPROV_ASSERT_HELD(s_->lock);
    State::RangeMap::iterator after;  // the first range past code_start: the insertion's hint
    if (NativeVersion* other = s_->overlapping(code.code_start, code.code_size, &after)) {
      // relaxed: lock held, the only writer of code_start.
      if (other->method() == m && other->code_start.load(std::memory_order_relaxed) == code.code_start &&
          other->code_size == code.code_size) {
        s_->replayed.fetch_add(1, std::memory_order_relaxed);
        return other->version_id;  // a replay (P7): nothing new, no second event
      }
      s_->overlaps_refused.fetch_add(1, std::memory_order_relaxed);
      return Errc::kRangeOverlap;
    }
    IlVersion* il = s_->activeIlOrCreate(m);
    if (il == nullptr) return Errc::kOutOfMemory;
    State::VersionTable::Claim slot;
    if (!s_->versions.claim(&slot)) return Errc::kTooManyVersions;
    if (slot.populate) s_->askPopulate();  // queued once the CVM lock is released
    NativeVersion* const old_head = il->native_head.load(std::memory_order_relaxed);  // relaxed: lock held
    auto* v = new (slot.storage) NativeVersion(slot.id, code.tier, code.host_tier, code.host_version,
                                               code.tier == Tier::kTier1Osr ? code.osr_il_offset : 0, il, old_head);
    v->code_size = code.code_size;
    const uint64_t seq = s_->takePublicationSeq(v);  // P8: before the node is linked
    // relaxed: the node is not reachable yet; publish() of the head below releases it (P1).
    v->code_start.store(code.code_start, std::memory_order_relaxed);
    try {
      s_->live_ranges.emplace_hint(after, code.code_start, v);  // no second search
      s_->live_host_code.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::bad_alloc&) {
      v->~NativeVersion();
      s_->versions.unclaim(slot);
      return Errc::kOutOfMemory;
    }
    s_->versions.commit(slot);        // P9
    publish(il->native_head, v);      // P1 (and P2: the node is published with its code)
    s_->completePublication(m, seq);  // P8
    if (code.activate) {              // as activate(), after the node is reachable
      il->active_native = v;
      if (m->activeIl() == il) publish(m->entry_point, code.code_start);  // backpatch
    }
    if (publish_seq != nullptr) *publish_seq = seq;
    s_->native_versions.fetch_add(1, std::memory_order_relaxed);
    s_->version_bytes.fetch_add(State::VersionTable::slotBytes(), std::memory_order_relaxed);
    published = v->version_id;
    view = viewOf(*m, *v, code.code_start);
    // Under the lock in host mode: the range may be retired and published again by
    // another thread as soon as the lock is released, and the trace must show this
    // load before that code_unload (model-heap ranges wait for a grace period).
    trace::methodLoad(s_->instance, view);
    // The jitdump record's stamp too (its write comes after the lock: jitdump.h).
    if ((jd = s_->jitdumpEnter()) != nullptr) {
      jd_ns = monotonicNs();
      rs.emplace();
    }
  }
  if (jd != nullptr) s_->jitdumpWrite(jd, view, jd_ns, code.lines, code.n_lines);
  return published;
}

Result<void> Runtime::retireVersion(VersionId version) {
  return s_
      ->retire(s_->labelFor(version).method_id,
               [&](MethodId*) -> Result<NativeVersion*> {
                 NativeVersion* v = s_->versions.load(version);
                 if (v == nullptr) return s_->missingVersion(version);
                 return v;
               })
      .error();
}

Result<VersionId> Runtime::retireHostCode(uint64_t code_start) {
  if (s_->code_mode != CodeMode::kHost) return Errc::kWrongCodeMode;
  // The method is known once the lock is held: the lock's wait and acquisition probes
  // carry 0, its release the method.
  return s_->retire(0, [&](MethodId* method) -> Result<NativeVersion*> {
    auto it = s_->live_ranges.find(code_start);
    if (it == s_->live_ranges.end()) return Errc::kUnknownVersion;
    *method = it->second->method()->id();
    return it->second;
  });
}

Result<VersionId> Runtime::retireHostCodeOf(uint64_t code_start, uint64_t host_key, HostRetired* out) {
  *out = HostRetired{};
  if (s_->code_mode != CodeMode::kHost) return Errc::kWrongCodeMode;
  const auto describe = [out](const NativeVersion* v) {
    const Method* m = v->method();
    out->method = m->id();
    out->module = m->module_id;
    out->host_key = m->hostKey();
    out->code_size = v->code_size;
  };
  bool last = false;
  const Result<VersionId> r = s_->retire(
      0,
      [&](MethodId* method) -> Result<NativeVersion*> {
        auto it = s_->live_ranges.find(code_start);
        if (it == s_->live_ranges.end()) return Errc::kUnknownVersion;
        describe(it->second);
        if (host_key != 0 && out->host_key != host_key) return Errc::kUnknownVersion;  // another method's
        *method = out->method;
        return it->second;
      },
      &last);
  if (!r.ok()) {
    if (r.error() != Errc::kUnknownVersion) *out = HostRetired{};
    return r;
  }
  out->version = *r;
  out->last = last;
  return r;
}

Result<uint64_t> Runtime::findHostOverlap(uint64_t start, uint32_t size) const {
  if (s_->code_mode != CodeMode::kHost) return Errc::kWrongCodeMode;
  if (size == 0 || start > UINT64_MAX - size) return Errc::kInvalidArgument;
  CvmLock::Guard lock(s_->lock, LockSite::kLookup, 0);
  JITPROV_ASSERT_HELD(s_->lock);
  // The lowest start: a range that begins below `start` and reaches into it comes first
  // (overlapping() looks at the one at or above `start` first, for publish's hint).
  const auto it = s_->live_ranges.lower_bound(start);
  if (it != s_->live_ranges.begin()) {
    const auto below = std::prev(it);
    if (below->first + below->second->code_size > start) return below->first;
  }
  if (it != s_->live_ranges.end() && it->first < start + size) return it->first;
  return Errc::kUnknownVersion;
}

uint64_t Runtime::State::liveVersions(const Method* m) noexcept {
  uint64_t n = 0;
  // relaxed: the CVM lock is held, the only writer of both lists.
  for (const IlVersion* il = m->il_head.load(std::memory_order_relaxed); il != nullptr; il = il->next)
    for (const NativeVersion* v = il->native_head.load(std::memory_order_relaxed); v != nullptr;
         v = v->next.load(std::memory_order_relaxed))
      n += v->code_start.load(std::memory_order_relaxed) != 0 ? 1 : 0;
  return n;
}

Result<uint64_t> Runtime::liveCodeOfMethod(MethodId method) const {
  CvmLock::Guard lock(s_->lock, LockSite::kLookup, method);
  JITPROV_ASSERT_HELD(s_->lock);
  const Method* m = s_->methods.load(method);
  if (m == nullptr) return s_->missingMethod(method);
  return State::liveVersions(m);
}

Result<uint64_t> Runtime::liveCodeOfModule(ModuleId module) const {
  std::lock_guard<std::mutex> g(s_->loader);  // the module's method list
  const Module* mod = s_->modules.load(module);
  if (mod == nullptr) return s_->missingModule(module);
  CvmLock::Guard lock(s_->lock, LockSite::kLookup, 0);
  JITPROV_ASSERT_HELD(s_->lock);
  uint64_t n = 0;
  mod->methods.forEach([&n](const Method* m) {
    if (!m->unloaded) n += State::liveVersions(m);
  });
  return n;
}

Result<VersionId> Runtime::State::retire(MethodId label, FunctionRef<Result<NativeVersion*>(MethodId*)> find,
                                         bool* last) {
  // A batch for this retirement, allocated before the lock when the current one is
  // full, so that retirement cannot fail for memory once it has begun.
  std::unique_ptr<RetireBatch> fresh;
  if (retire_batch_full.load(std::memory_order_relaxed)) {  // relaxed: a hint
    fresh.reset(new (std::nothrow) RetireBatch());
    if (!fresh) return Errc::kOutOfMemory;
  }
  RetireBatch* full = nullptr;
  VersionId id = 0;
  {
    CvmLock::Guard guard(lock, LockSite::kUnload, label);
    JITPROV_ASSERT_HELD(lock);
    MethodId method = label;
    const Result<NativeVersion*> found = find(&method);
    if (!found) return found.error();
    guard.label(method);
    NativeVersion* const v = *found;
    // Find what points at v: its IL version's head or its predecessor's `next`.
    // relaxed loads: we hold the CVM lock, the only writer of both.
    IlVersion* il = v->il;
    std::atomic<NativeVersion*>* link = &il->native_head;
    while (link->load(std::memory_order_relaxed) != v) {
      NativeVersion* cur = link->load(std::memory_order_relaxed);
      if (cur == nullptr) return Errc::kInternal;  // not in its own list: a registry bug, never a host error
      link = &cur->next;
    }
    std::unique_lock<std::mutex> batch_lock(retire_batch_mu);
    if (retire_batch == nullptr) {
      if (!fresh) fresh.reset(new (std::nothrow) RetireBatch());  // another retirement took ours
      if (!fresh) return Errc::kOutOfMemory;
      retire_batch = fresh.release();
      retire_batch->owner = this;
      retire_batch_full.store(false, std::memory_order_relaxed);
    }
    const uint64_t retire_seq = takeRemovalSeq();             // P8: before the unlink
    publish(*link, v->next.load(std::memory_order_relaxed));  // P6: unlink; v->next stays
    fault::afterUnlink(v);
    versions.clear(v->version_id);                                         // P9
    const uint64_t start = v->code_start.load(std::memory_order_relaxed);  // relaxed: lock held
    if (code_mode == CodeMode::kHost) eraseHostRange(start);
    if (il->active_native == v) {
      il->active_native = nullptr;
      if (v->method()->activeIl() == il) publish(v->method()->entry_point, uint64_t{0});  // nothing to run
    }
    retired.fetch_add(1, std::memory_order_relaxed);
    if (last != nullptr) *last = liveVersions(v->method()) == 0;  // v is unlinked
    // Under the lock: the event is ordered with the publication that may reuse the range.
    trace::codeUnload(instance, v->method()->id(), v->version_id, start, v->code_size, retire_seq);
    id = v->version_id;
    if (!fault::reclaimRetiredAtOnce(this, v)) {  // P4, P6: after a grace period
      RetireBatch* b = retire_batch;
      b->versions[b->n++] = v;
      if (b->n == RetireBatch::kCapacity) full = takeRetireBatch();
    }
  }
  if (full != nullptr) reclaimLater(&full->rcu, &State::reclaimBatch, full->n);  // P4, P6
  return id;
}

void Runtime::State::completePublication(Method* m, uint64_t s) noexcept {
  // relaxed: ordered before the release of seq below, which readers acquire (P8).
  m->last_publish_seq.store(s, std::memory_order_relaxed);
  publish(seq, s);
}

uint64_t Runtime::State::takeRemovalSeq() noexcept {
  const uint64_t r = seq.load(std::memory_order_relaxed) + 1;  // relaxed: lock held, the only writer
  publish(seq, r);                                             // P8: before the caller unlinks or clears anything
  return r;
}

IlVersion* Runtime::State::newIlVersion(RejitId rejit, IlVersion* next, Method* m) noexcept {
  IlTable::Claim slot;
  if (!ils.claim(&slot)) return nullptr;
  auto* il = new (slot.storage) IlVersion(rejit, next, m);
  ils.commit(slot);  // its id word (IlTable::idOf), for freeMethod
  if (slot.populate) askPopulate();
  il_records.fetch_add(1, std::memory_order_relaxed);
  version_bytes.fetch_add(IlTable::slotBytes(), std::memory_order_relaxed);
  return il;
}

IlVersion* Runtime::State::activeIlOrCreate(Method* m) noexcept {
  if (IlVersion* il = m->activeIl()) return il;
  IlVersion* il = newIlVersion(0, nullptr, m);
  if (il == nullptr) return nullptr;
  fault::linkIlVersion(m->il_head, il);  // P1: the node is complete
  return il;
}

Errc Runtime::State::missingModule(ModuleId module) const noexcept {
  return modules.state(module) == ModuleTable::State::kGone ? Errc::kModuleUnloaded : Errc::kUnknownModule;
}

Errc Runtime::State::missingMethod(MethodId method) const noexcept {
  return methods.state(method) == MethodTable::State::kGone ? Errc::kMethodUnloaded : Errc::kUnknownMethod;
}

Errc Runtime::State::missingVersion(VersionId version) const noexcept {
  return versions.state(version) == VersionTable::State::kGone ? Errc::kVersionGone : Errc::kUnknownVersion;
}

Result<void> Runtime::activate(VersionId version) {
  CvmLock::Guard lock(s_->lock, LockSite::kActivate, s_->labelFor(version).method_id);
  NativeVersion* v = s_->versions.load(version);
  if (v == nullptr) return s_->missingVersion(version);
  JITPROV_ASSERT_HELD(s_->lock);
  // OSR code is entered from a running frame, never through the entry point.
  if (v->tier == Tier::kTier1Osr) return Errc::kInvalidArgument;
  const uint64_t start = v->code_start.load(std::memory_order_relaxed);  // relaxed: lock held
  if (start == 0) return Errc::kNotPublished;
  v->il->active_native = v;
  if (v->method()->activeIl() == v->il) publish(v->method()->entry_point, start);  // backpatch
  return {};
}

Result<RejitId> Runtime::requestRejit(MethodId method) {
  State::PopulateAfterUnlock populate{s_.get()};  // after the CVM lock (State::askPopulate)
  CvmLock::Guard lock(s_->lock, LockSite::kRejit, method);
  Method* m = s_->methods.load(method);
  if (m == nullptr) return s_->missingMethod(method);
  JITPROV_ASSERT_HELD(s_->lock);
  IlVersion* const newest = s_->activeIlOrCreate(m);
  if (newest == nullptr) return Errc::kOutOfMemory;
  IlVersion* il = s_->newIlVersion(newest->rejit_id + 1, newest, m);
  if (il == nullptr) return Errc::kOutOfMemory;
  publish(m->il_head, il);               // P1; and the new IL version is the active one (P3)
  publish(m->entry_point, uint64_t{0});  // back to "not compiled" until the new code is activated
  s_->il_versions.fetch_add(1, std::memory_order_relaxed);
  trace::rejitRequest(s_->instance, m->id(),
                      il->rejit_id);  // under the lock: ordered with the IL version's publication
  return il->rejit_id;
}

bool Runtime::recordCall(MethodId method) noexcept {
  rcu::ReadSection rs;
  Method* m = s_->methods.load(method);
  if (m == nullptr) return false;
  // The count stops at the threshold (give or take the calls racing the one that reaches
  // it): a 32-bit count that went on would reach the threshold again after 2^32 calls,
  // a second "tier up"; and a hot method's line is only read once it has tiered up.
  if (m->call_count.load(std::memory_order_relaxed) >= config_.tier_up_threshold) return false;
  return m->call_count.fetch_add(1, std::memory_order_relaxed) + 1 == config_.tier_up_threshold;
}

uint32_t Runtime::callsCounted(MethodId method) const noexcept {
  rcu::ReadSection rs;
  const Method* m = s_->methods.load(method);
  return m == nullptr ? 0 : m->call_count.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------
// Reads

uint64_t Runtime::entryPoint(MethodId method) const noexcept {
  rcu::ReadSection rs;
  const Method* m = s_->methods.load(method);
  return m == nullptr ? 0 : readPublished(m->entry_point);
}

Result<uint64_t> Runtime::entryPointLocked(MethodId method) {
  CvmLock::Guard lock(s_->lock, LockSite::kLookup, method);
  const Method* m = s_->methods.load(method);
  if (m == nullptr) return Errc::kUnknownMethod;
  return m->entry_point.load(std::memory_order_relaxed);  // relaxed: lock held
}

namespace {

// Visits the published versions of one method. Caller is inside an RCU read section.
// kNextOrder: acquire (P1, P6) in every walk; relaxed only in walkBaselineForBench().
// Only versions with after < publish_seq <= upto are passed to `emit` (P8). Returns
// how many it counted: all, or those `emit` returned true for.
template <std::memory_order kNextOrder, class Emit>
[[gnu::always_inline]] inline uint64_t visitMethod(const Method* m, const Emit& emit, WalkStats* st, uint64_t after,
                                                   uint64_t upto) {
  uint64_t kept = 0;
  for (const IlVersion* il = readPublished(m->il_head); il != nullptr; il = il->next) {                      // P1
    for (const NativeVersion* v = readPublished(il->native_head); v != nullptr;                              // P1
         v = kNextOrder == std::memory_order_acquire ? readPublished(v->next) : v->next.load(kNextOrder)) {  // P6
      const uint64_t start = readPublished(v->code_start);                                                   // P2
      if (start == 0) {
        ++st->skipped;
        continue;
      }
      // code_size and publish_seq are read after code_start's acquire (P2, P8).
      if (v->publish_seq <= after || v->publish_seq > upto) continue;
      if constexpr (std::is_void_v<decltype(emit(*m, *v, start))>) {
        emit(*m, *v, start);
        ++kept;
      } else {
        kept += emit(*m, *v, start) ? 1 : 0;
      }
    }
  }
  st->versions += kept;
  if (kept != 0) ++st->methods;
  return kept;
}

// The walk's visitors take VersionViews: each version's view, built for the call.
template <class Visit>
auto viewing(const Visit& visit) {
  return [&visit](const Method& m, const NativeVersion& v, uint64_t start) { return visit(viewOf(m, v, start)); };
}

// The rundown event's record of a version, in place (walkCompleteRecords): the same
// fields as viewOf() and trace.cc's record from a view, without the view between.
inline void fillRecord(trace::VersionRecord* rec, const Method& m, const NativeVersion& v, uint64_t code_start) {
  jitprov_method_record& r = rec->r;
  r.method_id = m.id();
  r.version_id = v.version_id;
  r.code_start = code_start;
  r.module_id = m.module_id;
  r.rejit_id = v.il->rejit_id;
  r.code_size = v.code_size;
  r.method_token = m.token;
  r.method_flags = m.flags;
  r.tier = static_cast<uint8_t>(v.tier);
  r.host_tier = v.host_tier;
  r.host_version = v.host_version;
  r.publish_seq = v.publish_seq;
  r.name_space = m.nameSpace();
  r.name = m.name();
  r.signature = m.signature();
  rec->ns_len = m.nsLen();
  rec->name_len = m.name_len;
  rec->sig_len = m.sigLen();
}

}  // namespace

// The first pass's record of its methods, so that the catch-up counts exactly the
// methods it adds (CompleteWalk::caught_up_methods: a method with records in both
// passes is one method). Per slot index a bit: the first pass kept a version of that
// slot's method; per batch of kWalkBatch slots the registration count read at the
// batch's end, inside its read section (R). In the catch-up, the method m in slot i is
// one the first pass already counted exactly when bit i is set and m's ordinal is
// below R of i's batch:
//  - m itself was counted: it was in the slot when the first pass read it, committed
//    after its ordinal was taken; the slot's acquire orders that before R's read, so
//    ordinal < R.
//  - another method counted in that slot (m came later): it left, and m claimed the
//    slot only after a grace period that began after it was cleared, so after the
//    batch's read section ended and R was read; m's ordinal, taken after its claim,
//    is >= R (relaxed is enough for both: the slot's release/acquire, and the grace
//    period, give the happens-before; the count's coherence does the rest).
// Ordinals are 32 bits and compared modulo 2^32: exact while fewer than 2^31 methods
// are registered during one rundown. Memory: a bit per slot (1.25 MB at 10 M methods)
// and 4 bytes per 1024 slots, for the rundown's time. If it cannot be allocated, every
// method of the catch-up counts as added (a count above the records, which the
// verifier reports), never fewer.
struct Runtime::WalkMarks {
  std::vector<uint64_t> bits;       // by slot index
  std::vector<uint32_t> batch_reg;  // by batch: methods_registered at its end (mod 2^32)
  bool ok = false;
  bool catching_up = false;  // set between the passes (the catch-up's `after` may be 0)
  uint64_t added = 0;        // the catch-up's methods the first pass did not count

  void prepare(uint64_t high_water) noexcept {
    try {
      bits.assign(high_water / 64 + 1, 0);
      batch_reg.assign(high_water / kWalkBatch + 1, 0);
      ok = true;
    } catch (const std::bad_alloc&) {
      ok = false;
    }
  }
  void counted(uint64_t index) noexcept {
    if (ok) bits[index / 64] |= uint64_t{1} << (index % 64);
  }
  void batchEnd(uint64_t batch_index, uint64_t registered) noexcept {
    if (ok) batch_reg[batch_index] = static_cast<uint32_t>(registered);
  }
  void caughtUp(uint64_t index, const Method& m) noexcept {
    const bool seen = ok && index / 64 < bits.size() && (bits[index / 64] >> (index % 64) & 1) != 0 &&
                      static_cast<int32_t>(m.ordinal - batch_reg[(index - 1) / kWalkBatch]) < 0;
    if (!seen) ++added;
  }
};

WalkStats Runtime::walk(WalkLocking locking, FunctionRef<void(const VersionView&)> visit) const {
  return walkImpl<std::memory_order_acquire>(
      locking, viewing(visit), 0, UINT64_MAX, [] {}, nullptr);
}

WalkStats Runtime::walkBaselineForBench(FunctionRef<void(const VersionView&)> visit) const {
  return walkImpl<std::memory_order_relaxed>(
      WalkLocking::kNone, viewing(visit), 0, UINT64_MAX, [] {}, nullptr);
}

uint64_t Runtime::publicationSeq() const noexcept { return readPublished(s_->seq); }

CompleteWalk Runtime::walkComplete(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                   FunctionRef<bool(const VersionView&)> visit) const {
  return walkComplete(locking, begin, visit, [] {});
}

CompleteWalk Runtime::walkComplete(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                   FunctionRef<bool(const VersionView&)> visit,
                                   FunctionRef<void()> between_batches) const {
  return walkCompleteImpl(locking, begin, viewing(visit), between_batches);
}

CompleteWalk Runtime::walkCompleteRecords(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                          trace::VersionRecord* rec, FunctionRef<bool()> visit,
                                          FunctionRef<void()> between_batches) const {
  return walkCompleteImpl(
      locking, begin,
      [rec, &visit](const Method& m, const NativeVersion& v, uint64_t start) {
        fillRecord(rec, m, v, start);
        return visit();
      },
      between_batches);
}

CompleteWalk Runtime::walkCompleteRecords(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                          trace::RecordEmitter& out, FunctionRef<void()> between_batches) const {
  return walkCompleteImpl(
      locking, begin,
      [&out](const Method& m, const NativeVersion& v, uint64_t start) {
        fillRecord(&out.rec, m, v, start);
        return out.emit();
      },
      between_batches);
}

template <class Emit>
CompleteWalk Runtime::walkCompleteImpl(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                       const Emit& emit, FunctionRef<void()> between_batches) const {
  CompleteWalk c;
  WalkMarks marks;
  c.begin_seq = publicationSeq();  // P8 (a)
  begin(c.begin_seq);
  c.walk = walkImpl<std::memory_order_acquire>(locking, emit, 0, c.begin_seq, between_batches, &marks);
  c.publish_seq = publicationSeq();
  if (fault::catchUp() && c.publish_seq != c.begin_seq) {
    between_batches();  // the passes' read sections are apart too
    const uint64_t t0 = monotonicNs();
    marks.catching_up = true;
    c.caught_up =
        walkImpl<std::memory_order_acquire>(locking, emit, c.begin_seq, c.publish_seq, between_batches, &marks)
            .versions;
    c.caught_up_methods = marks.added;
    c.catch_up_ns = monotonicNs() - t0;
  }
  c.end_seq = publicationSeq();  // P8 (b)
  return c;
}

template <std::memory_order kNextOrder, class Emit>
WalkStats Runtime::walkImpl(WalkLocking locking, const Emit& emit, uint64_t after, uint64_t upto,
                            FunctionRef<void()> between_batches, WalkMarks* marks) const {
  WalkStats st;
  std::optional<CvmLock::Guard> whole;
  rcu::registerThread();  // before the lock: the batches' read sections open under it
  if (locking == WalkLocking::kWholeWalk) whole.emplace(s_->lock, LockSite::kRundown, 0);
  const uint64_t hw = s_->methods.highWater();  // P5
  const bool first_pass = marks != nullptr && !marks->catching_up;
  if (first_pass) marks->prepare(hw);
  for (uint64_t batch = 1; batch <= hw; batch += kWalkBatch) {
    if (batch != 1) between_batches();  // outside any read section (and, kWholeWalk aside, the lock)
    const uint64_t end = std::min(hw + 1, batch + kWalkBatch);
    rcu::ReadSection rs;  // P4, bounded to one batch
    // The slot of `index`, stepped through its chunk (contiguous slots: no table lookup
    // per slot), and the first index past that chunk.
    const char* slot = nullptr;
    uint64_t chunk_end = 0;
    for (uint64_t index = batch; index < end; ++index) {
      if (slot != nullptr && index < chunk_end) {
        slot += kMethodSlot;
      } else {
        slot = static_cast<const char*>(s_->methods.slotAddress(index));
        chunk_end = (index | (State::MethodTable::kChunkSize - 1)) + 1;
      }
      // Software pipeline: the method record kPrefetchMethod ids ahead (both lines its
      // 88-byte slot spans: il_head is on the second), its newest IL version and its
      // name kPrefetchIl ahead (the record should be in cache by then; the name's first
      // and last byte, as a third of names straddle two lines and lttng-ust's strlen
      // stalled on the second: +25 ns a version, docs/measurements.md), and that IL
      // version's newest native version kPrefetchVersion ahead, so that the cold walk
      // does not stall on each pointer (loads with acquire, as the walk's own: P1). Ahead
      // across the batch's end too (up to hw: a record is live in any read section that
      // found it so, and one found here is only prefetched from, never visited), so that
      // each batch does not start cold (docs/measurements.md, "The walk's prefetch").
      // Nearly always the three slots ahead are in this chunk and below the high water:
      // they are then this slot's neighbours, with no test or table lookup of their own.
      const char *ahead_method, *ahead_il, *ahead_version;
      if (slot != nullptr && index + kPrefetchMethod < chunk_end && index + kPrefetchMethod <= hw) [[likely]] {
        ahead_method = slot + kPrefetchMethod * kMethodSlot;
        ahead_il = slot + kPrefetchIl * kMethodSlot;
        ahead_version = slot + kPrefetchVersion * kMethodSlot;
      } else {
        // The slot of index + k (nullptr past the high water or in an unmapped chunk).
        const auto slotOf = [&](uint64_t k) -> const char* {
          if (index + k > hw) return nullptr;
          if (slot != nullptr && index + k < chunk_end) return slot + k * kMethodSlot;
          return static_cast<const char*>(s_->methods.slotAddress(index + k));
        };
        ahead_method = slotOf(kPrefetchMethod);
        ahead_il = slotOf(kPrefetchIl);
        ahead_version = slotOf(kPrefetchVersion);
      }
      if (ahead_method != nullptr) {
        __builtin_prefetch(ahead_method);
        __builtin_prefetch(ahead_method + 64);  // inside the slot (88 bytes)
      }
      if (const Method* ahead = ahead_il != nullptr ? State::MethodTable::liveAt(ahead_il) : nullptr) {
        __builtin_prefetch(readPublished(ahead->il_head));
        __builtin_prefetch(ahead->name());
        __builtin_prefetch(ahead->name() + ahead->name_len);  // its NUL: the last line
      }
      if (const Method* ahead = ahead_version != nullptr ? State::MethodTable::liveAt(ahead_version) : nullptr) {
        if (const IlVersion* il = readPublished(ahead->il_head)) __builtin_prefetch(readPublished(il->native_head));
      }
      const Method* m = slot != nullptr ? State::MethodTable::liveAt(slot) : nullptr;  // P9
      if (m == nullptr) continue;                                                      // free, or unloaded
      // The catch-up pass: nothing of this method was published after `after` (P8).
      if (after != 0 && m->last_publish_seq.load(std::memory_order_relaxed) <= after) continue;
      uint64_t kept = 0;
      if (locking == WalkLocking::kPerMethod) {
        CvmLock::Guard lock(s_->lock, LockSite::kRundown, m->id());
        // unloaded: lock-protected, read under it
        if (!m->unloaded) kept = visitMethod<kNextOrder>(m, emit, &st, after, upto);
      } else {
        kept = visitMethod<kNextOrder>(m, emit, &st, after, upto);
      }
      if (marks != nullptr && kept != 0) {
        if (first_pass)
          marks->counted(index);
        else
          marks->caughtUp(index, *m);
      }
    }
    // WalkMarks: inside the read section, after the batch's last slot was read.
    if (first_pass) marks->batchEnd(batch / kWalkBatch, s_->methods_registered.load(std::memory_order_relaxed));
  }
  return st;
}

uint64_t Runtime::walkModules(FunctionRef<void(const ModuleView&)> visit) const {
  uint64_t n = 0;
  const uint64_t hw = s_->modules.highWater();  // P5, P9
  rcu::ReadSection rs;
  for (uint64_t index = 1; index <= hw; ++index) {
    const Module* mod = s_->modules.at(index);
    if (mod == nullptr) continue;
    visit(ModuleView{mod->id, mod->collectible, mod->path});
    ++n;
  }
  return n;
}

uint32_t Runtime::instance() const noexcept { return s_->instance; }

Runtime::RundownTurn Runtime::takeRundownTurn() {
  RundownTurn t{std::unique_lock<std::mutex>(s_->rundown_turn_mu), 0};
  t.id = s_->next_rundown_id++;
  return t;
}

uint64_t Runtime::registeredMethods() const noexcept { return s_->methods_registered.load(std::memory_order_relaxed); }

MemoryStats Runtime::memoryStats() const {
  MemoryStats m;
  m.live_modules = s_->live_modules.load(std::memory_order_relaxed);
  m.live_methods = s_->live_methods.load(std::memory_order_relaxed);
  m.il_versions = s_->il_versions.load(std::memory_order_relaxed);
  m.native_versions = s_->native_versions.load(std::memory_order_relaxed);
  m.method_bytes = s_->method_bytes.load(std::memory_order_relaxed);
  m.version_bytes = s_->version_bytes.load(std::memory_order_relaxed);
  // The tables' chunks, less the slots counted above as method and version records.
  const uint64_t records = s_->method_records.load(std::memory_order_relaxed) * State::MethodTable::slotBytes() +
                           m.native_versions * State::VersionTable::slotBytes() +
                           s_->il_records.load(std::memory_order_relaxed) * State::IlTable::slotBytes();
  const uint64_t tables = s_->methods.allocatedBytes() + s_->versions.allocatedBytes() + s_->modules.allocatedBytes() +
                          s_->ils.allocatedBytes();
  m.table_bytes = (tables > records ? tables - records : 0) + s_->list_bytes.load(std::memory_order_relaxed);
  m.retired = s_->retired.load(std::memory_order_relaxed);
  m.replayed = s_->replayed.load(std::memory_order_relaxed);
  m.overlaps_refused = s_->overlaps_refused.load(std::memory_order_relaxed);
  m.live_host_code = s_->live_host_code.load(std::memory_order_relaxed);
  m.awaiting_reclamation = s_->awaiting_reclamation.load(std::memory_order_relaxed);
  m.reclaimed_inline = s_->reclaimed_inline.load(std::memory_order_relaxed);
  m.reclaim_wait = s_->reclaim_wait.snapshot();
  m.max_reclamation_backlog = s_->max_backlog;
  const auto methods = s_->methods.populateStats();
  const auto versions = s_->versions.populateStats();
  const auto ils = s_->ils.populateStats();
  m.huge_pages_ahead = methods.ahead + versions.ahead + ils.ahead;
  m.huge_pages_late = methods.late + versions.late + ils.late;
  m.huge_pages_failed = methods.failed + versions.failed + ils.failed;
  m.slots_retired = s_->methods.exhaustedSlots() + s_->methods.lostSlots() + s_->versions.exhaustedSlots() +
                    s_->versions.lostSlots() + s_->modules.exhaustedSlots() + s_->modules.lostSlots() +
                    s_->ils.exhaustedSlots() + s_->ils.lostSlots();
  return m;
}

LockStatsSnapshot Runtime::lockStats() const { return s_->lock.snapshot(); }
void Runtime::resetLockStats() noexcept { s_->lock.resetStats(); }
void Runtime::rundownActive(bool active) noexcept { s_->lock.rundownActive(active); }
void Runtime::drainReclamation() { s_->drainReclamation(); }

void Runtime::State::drainReclamation() noexcept {
  RetireBatch* b = nullptr;
  {
    std::lock_guard<std::mutex> g(retire_batch_mu);
    b = takeRetireBatch();
  }
  if (b != nullptr) reclaimLater(&b->rcu, &State::reclaimBatch, b->n);
  rcu::barrier();
}

bool Runtime::State::reclaimRetiredCode() noexcept {
  if (!rcu::canWait()) return false;
  bool partial_batch = false;
  {
    std::lock_guard<std::mutex> g(retire_batch_mu);
    partial_batch = retire_batch != nullptr && retire_batch->n != 0;
  }
  // relaxed: a hint; a removal queued after the load is another publication's to wait for.
  if (!partial_batch && awaiting_reclamation.load(std::memory_order_relaxed) == 0) return false;
  drainReclamation();
  return true;
}

}  // namespace jitprov
