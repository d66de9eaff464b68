/* SPDX-License-Identifier: MIT */
// The code-version registry: modules, methods, IL versions, native code versions.
//
// Shape (one writer at a time, many lock-free readers, like folly's HazptrSWMRSet):
//
//   methods_ table (id -> Method*)
//     Method ── il_head ──> IlVersion(rejit n) ──next──> ... ──> IlVersion(rejit 0) ──> null
//                              └─ native_head ──> NativeVersion ──next──> older ... ──> null
//
// A method's first IL version (rejit 0) is allocated when its code is first needed
// (beginJit, publishHostCode, requestRejit): a method never compiled has no IL version
// (il_head null), and its record stays small (P1 covers the first IL version's
// publication as any other's).
//
// Lists grow at the head only. A native version leaves its list in two ways: its whole
// module is unloaded (its methods are cleared from the tables under the lock and freed
// after an RCU grace period), or the host retires that one version (RCU list deletion,
// P6). IL versions leave only with their module.
//
// Ordering guarantees (docs/correctness.md):
//  P1 A node is fully initialised, including `next` = the current head, before publish()
//     links it (release). Readers load heads and `next` with readPublished() (acquire),
//     so they see every field of every node they reach.
//  P2 publishCode writes code_size, then publish()es code_start (release). A reader that
//     sees code_start != 0 with readPublished() (acquire) sees the code_size and every
//     immutable field written before. 0 means "not compiled yet"; a published
//     code_start never changes. (Host-mode versions are linked already published: P1
//     covers their code_start.)
//  P3 Readers never read the lock-protected control state (active_native, unloaded);
//     call_count is relaxed and only a counter. The active IL version is the newest
//     (il_head: requestRejit makes each new one active), read under the lock.
//  P4 Memory a reader may reach is freed, or reused, only from an RCU callback (rcu.h),
//     queued after the memory became unreachable for new readers.
//  P5 Registration copies the method's strings into its module's NameArena and
//     constructs the Method in its slot, then commit()s the slot (its id word, then the
//     high-water mark: both publish()): a reader that finds the method sees its strings,
//     which are freed with the module, after its methods (P4). A walk reads the
//     high-water mark once (acquire) and visits slots 1..hw, so a method registered
//     before the walk started is visited; one registered after may be missed. The walk
//     is O(hw), and hw stays at the most records ever live or awaiting reclamation at
//     once (P9).
//  P6 Retiring one native version V (under the CVM lock): publish() V's successor into
//     whatever points at V (its IL version's native_head, or its predecessor's `next`),
//     clear V's version-table slot, then queue V for reclamation after a grace period
//     (P4, P9), in a batch of up to RetireBatch::kCapacity retirements that goes to RCU
//     when full (or at drainReclamation() and destruction, or when a model-heap
//     publication finds the heap full: State::reclaimRetiredCode): a retired version's
//     memory, slot and model-heap range wait for at most that many later retirements. With a
//     max_backlog set, past that many records awaiting reclamation the removing thread
//     waits for a grace period and reclaims its own removal (P4 holds either way; this
//     bounds memory, and makes that thread wait for readers: off by default). V's own `next` is never changed: a walker
//     standing on V when it is unlinked continues to V's successor, so it sees V or not, and every other node exactly
//     once (G3, G4), and never freed memory (the successor, if retired later, waits
//     for its own grace period, which cannot end before the walker's read section).
//     A walk that starts after retireVersion() returned cannot reach V (its pointer is
//     gone from every list before the lock is released).
//  P7 Host-mode code ranges: live_ranges (CVM lock only) holds every live host-mode
//     range. A publication that overlaps a live range of another version is refused
//     (kRangeOverlap); one of the same method, start and size returns that version
//     (JVMTI replays loads). A range becomes free for another publication when
//     retireVersion()/retireHostCode()/unloadModule()/unloadMethod() returns: a walker that still
//     holds the retired node reads that node's own immutable fields, never the new
//     occupant's (G2). retireHostCode finds the version by its range's start in
//     live_ranges, under the lock, and retires it as retireVersion does (State::retire).
//  P8 The publication sequence `seq` (docs/spec.md "The publication sequence"; CVM lock only for
//     writers). A publication takes s = seq + 1, writes v->publish_seq = s before v's
//     code is published (P1/P2), then stores m->last_publish_seq = s and publish()es
//     seq = s. A removal (retireVersion, unloadModule, unloadMethod) takes r = seq + 1 and publish()es
//     seq = r *before* it unlinks or clears anything (the events carry r). So, for a
//     reader that loads seq with readPublished():
//      (a) every version with publish_seq <= the value read is reachable by a walk
//          that starts afterwards, unless removed (its publication happened before);
//      (b) a walk that failed to reach a version because of a removal reads, after
//          that walk, a seq >= the removal's number (the unlink/clear is a release
//          store after seq's, and the walk's acquire load saw it).
//     walkComplete(): B = seq; pass 1 visits versions with publish_seq <= B; P = seq;
//     pass 2 (the catch-up) visits those with B < publish_seq <= P, skipping methods
//     whose last_publish_seq <= B (read relaxed: ordered by the acquire of P); E = seq.
//     By (a) and (b), every version with publish_seq <= P that no removal numbered
//     <= E took away is visited, by exactly one pass (the ranges are disjoint and
//     publish_seq never changes), and nothing with publish_seq > P is (G3+).
//  P9 Slots and ids (slot_table.h; docs/spec.md "The runtime model"). Modules, methods and native
//     versions live in place in the slots of their tables; an id is its slot index
//     combined with the slot's generation, so it is unique in the process and never
//     reused, while the slot is. Removal: clear() the slot (id word -> "free", a
//     release) under the same lock as the unlink (P6) or unload, then, after a grace
//     period (P4: from the RCU callback, or from the removing thread once
//     rcu::synchronize() returned, past max_backlog), destroy the record and recycle()
//     the slot; the next claim() takes the lowest free index with the next generation.
//     So a reader that loaded a record (by id, or by slot index in a walk) reads that
//     record's own fields until its read section ends, never a later occupant's (G2);
//     a lookup by a stale id finds nothing (the id word holds the new id, or "free");
//     a walker standing on a retired version follows its unchanged `next` (P6). A walk
//     visits slots 1..hw once each, so reuse cannot show it a record twice (G4); a
//     record committed into a slot the walk already passed was published after the
//     walk read that slot (P8 places it by its publish_seq). Limits (kCapacity) are on
//     records live or awaiting reclamation, never on ids handed out; a generation that
//     would overflow retires its slot for good.
//
// Which operations may run concurrently:
//  - walk(kNone), entryPoint(), recordCall(): with everything, on any thread.
//  - registerModule/registerMethod/findMethod/unloadModule/unloadMethod: serialised by the loader
//    mutex.
//  - beginJit/publishCode/publishHostCode/retireVersion/retireHostCode/activate/
//    requestRejit/unloadModule/unloadMethod/entryPointLocked/walk(kWholeWalk|kPerMethod): serialised
//    by the CVM lock. publishHostCode with HostCode::activate does activate()'s writes
//    after its own, in the same critical section.
//  Lock order: loader mutex, then CVM lock.
#pragma once

#include <jitprov/function_ref.h>
#include <jitprov/host_key_index.h>
#include <jitprov/runtime.h>

#include <absl/container/btree_map.h>

#include "chunked_list.h"
#include "code_heap.h"
#include "cvm_lock.h"
#include "fork.h"
#include "jitdump.h"
#include "name_arena.h"
#include "rcu.h"
#include "slot_table.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitprov {

struct Method;
struct IlVersion;
struct Module;

struct NativeVersion {
  NativeVersion(VersionId vid, Tier t, uint16_t ht, uint32_t hv, uint32_t osr, IlVersion* i, NativeVersion* n)
      : version_id(vid), il(i), next(n), osr_il_offset(osr), tier(t), host_tier(ht), host_version(hv) {}

  // Published state. Writer: publishCode under the CVM lock. Readers: lock-free.
  // code_start: publish() after code_size (P2); readPublished() by readers. 0 = not yet.
  std::atomic<uint64_t> code_start{0};

  // Immutable: written by the constructor, before the node is linked (P1).
  const VersionId version_id;
  // Its IL version, and through it its method (il->method: the walk never reads it, so
  // it is kept there and the node is 56 bytes, its slot one cache line).
  IlVersion* const il;
  // The older version of the same IL version. Set before the node is linked (P1);
  // afterwards written only by retireVersion() under the CVM lock, to unlink this
  // node's successor (P6), with publish(); readers: readPublished().
  std::atomic<NativeVersion*> next;
  // Plain: written once under the lock before code_start's release store; readers read
  // it only after an acquire load of code_start returned non-zero (P2).
  uint32_t code_size = 0;
  const uint32_t osr_il_offset;
  const Tier tier;
  const uint16_t host_tier;
  const uint32_t host_version;  // in the padding after host_tier: the node stays 64 bytes
  // Plain: written once under the lock before the version's code is published (P8, like
  // code_size); read by walkers after code_start's acquire.
  uint64_t publish_seq = 0;

  Method* method() const noexcept;  // il->method
};
// With its slot's id word, a version is one 64-byte line: the slots of the version table
// are 64 bytes, in chunks mapped at 2 MB boundaries (slot_table.h), so a walk reads one
// line per version (docs/measurements.md, "The walk at the emission floor").
static_assert(sizeof(NativeVersion) <= 56, "a native version's slot is one cache line (docs/measurements.md)");

struct IlVersion {
  IlVersion(RejitId r, IlVersion* n, Method* m) : rejit_id(r), next(n), method(m) {}

  const RejitId rejit_id;
  IlVersion* const next;  // older IL version; immutable (P1)
  // Its method; immutable (P1). Here rather than in each native version: 40 bytes, the
  // same malloc chunk (48 bytes) as the 32 before.
  Method* const method;
  // Head of this IL version's native versions, newest first. Writer: beginJit under the
  // CVM lock, publish() after the node is initialised (P1). Readers: readPublished().
  std::atomic<NativeVersion*> native_head{nullptr};
  // CVM lock only (P3).
  NativeVersion* active_native = nullptr;
};

struct Method {
  // `ns` and `sig` come from NameArena::intern() (their lengths are stored before them),
  // `name` from copyAfter(name, &d.host_key, 8) when d.host_key != 0, else copy().
  Method(ModuleId mod, const MethodDesc& d, const char* ns, const char* name, const char* sig, uint32_t ord)
      : module_id(mod),
        ns_(ns),
        name_(name),
        sig_(sig),
        token(d.token),
        flags(d.flags),
        name_len(uint32_t(d.name.size())),
        has_host_key(d.host_key != 0),
        ordinal(ord) {}

  // Its id: not stored here, its slot's id word holds it (SlotTable::idOf, P9): 8 bytes
  // less in every method slot the walk reads (88 bytes, 96 with its id word before;
  // docs/measurements.md, "The walk at the emission floor"). Defined after State.
  MethodId id() const noexcept;
  // Immutable after registration (P5).
  const ModuleId module_id;
  // namespace, name, signature: NUL-terminated, in the module's NameArena (namespace and
  // signature interned there), freed with the module after a grace period (P4).
  const char* const ns_;
  const char* const name_;
  const char* const sig_;
  const uint32_t token;
  const uint32_t flags;
  const uint32_t name_len;
  // relaxed: a counter deciding tier-up; exactly one increment reaches the threshold
  // whatever the ordering, and nothing else is read through it.
  std::atomic<uint32_t> call_count{0};
  const bool has_host_key;  // its host key is stored just before its name (hostKey())
  bool unloaded = false;    // CVM lock only (P3)
  // Its registration's number (State::methods_registered before it, mod 2^32), taken
  // before its slot is committed: the rundown tells a method from a later occupant of
  // its slot by it (registry.cc, WalkMarks). In the padding before il_head.
  const uint32_t ordinal;

  // Head of the IL versions, newest first; null until the method's code is first needed
  // (State::activeIlOrCreate: IL version 0). Writers: that and requestRejit, under the
  // CVM lock, publish() (P1). Readers: readPublished().
  std::atomic<IlVersion*> il_head{nullptr};
  // The code callers run, 0 = none. Writer: activate/requestRejit under the CVM lock,
  // publish(). Readers: entryPoint(), readPublished(): pairs so that the code's
  // publication (P2) is visible to whoever jumps to it.
  std::atomic<uint64_t> entry_point{0};
  // The newest publish_seq of the method's versions (P8). Writer: publications under the
  // CVM lock; readers: the catch-up pass (relaxed, ordered by its acquire of seq).
  std::atomic<uint64_t> last_publish_seq{0};

  // The active IL version: the newest (P3), null before the first. CVM lock held
  // (relaxed: its only writer).
  IlVersion* activeIl() const noexcept { return il_head.load(std::memory_order_relaxed); }

  // The host's key, 0 = none: kept in the arena, so that methods without one (every
  // model-heap host's) do not pay 8 bytes for it.
  uint64_t hostKey() const noexcept {
    uint64_t k = 0;
    if (has_host_key) std::memcpy(&k, name_ - sizeof k, sizeof k);
    return k;
  }
  const char* nameSpace() const noexcept { return ns_; }
  const char* name() const noexcept { return name_; }
  const char* signature() const noexcept { return sig_; }
  uint32_t nsLen() const noexcept { return NameArena::internedLength(ns_); }
  uint32_t sigLen() const noexcept { return NameArena::internedLength(sig_); }
};

static_assert(sizeof(Method) <= 80, "a method record stays 80 bytes (bytes per method: docs/measurements.md)");

inline Method* NativeVersion::method() const noexcept { return il->method; }

struct Module {
  Module(ModuleId i, bool c, Runtime::State* o) : id(i), collectible(c), owner(o) {}
  const ModuleId id;
  const bool collectible;
  std::string path;  // assigned before the record is committed (P9), then immutable
  // Loader mutex only.
  ChunkedList<Method*> methods;
  // Its methods' strings: written under the loader mutex at registration, read by anyone
  // holding one of its methods, freed with the module (P4).
  NameArena names;
  bool unloaded = false;
  // For retire(): the reclamation callback frees the module, its methods, their
  // versions, and gives their code back to the heap.
  rcu_head rcu{};
  Runtime::State* const owner;
  uint64_t records = 0;  // its records awaiting reclamation (State::awaiting_reclamation)
};

// Retired native versions waiting for their grace period (P6), handed to RCU together:
// one callback per batch, not per version, so that the reclamation keeps pace with
// churn (and a retirement allocates nothing but, once per batch, the next batch).
struct RetireBatch {
  static constexpr uint32_t kCapacity = 250;
  rcu_head rcu{};
  Runtime::State* owner = nullptr;
  uint32_t n = 0;
  NativeVersion* versions[kCapacity];
};

struct Runtime::State {
  explicit State(const RuntimeConfig& cfg)
      : instance(nextInstance()),
        lock(cfg.lock_stats),
        code_mode(cfg.code_mode),
        max_backlog(cfg.max_reclamation_backlog) {
    fork::track(this);
  }
  ~State() { fork::untrack(this); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Capacities, in records live or awaiting reclamation at once (P9): 67M methods,
  // 268M native versions, 268M IL versions, 1M modules. Ids are never reused.
  // The method and version tables beyond their first 2 MB (23 830 methods, 32 767
  // versions) are in huge pages, populated two ahead of the registering or JIT thread,
  // off its path (populateAhead): on a VM whose host takes free 2 MB blocks back a huge
  // page's first touch costs far more than 512 small ones (1.7-8 ms here), and the
  // thread paid it, a JIT thread under the CVM lock (docs/measurements.md, "Huge pages").
  using MethodTable = SlotTable<Method, 16, 1024, Paging::kAhead>;
  using VersionTable = SlotTable<NativeVersion, 16, 4096, Paging::kAhead>;
  using ModuleTable = SlotTable<Module, 12, 256>;
  // IL version nodes (48-byte slots, as malloc's chunks for them were), paged as the
  // method table: the walk reads one a method (docs/measurements.md, "Huge pages").
  using IlTable = SlotTable<IlVersion, 16, 4096, Paging::kAhead>;

  // This runtime's number in the process, from 1, never handed out twice (a process may
  // hold several runtimes, and create them after destroying others): every event
  // carries it, since ids are per runtime (Runtime::instance()).
  static uint32_t nextInstance() noexcept {
    static std::atomic<uint32_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);  // relaxed: uniqueness only
  }
  const uint32_t instance;
  // Rundown ids, by whichever engine (Runtime::takeRundownTurn): the next one, and the
  // mutex held from taking one to its rundown_begin's emission.
  std::mutex rundown_turn_mu;
  uint64_t next_rundown_id = 1;  // guarded by rundown_turn_mu
  CvmLock lock;
  std::mutex loader;  // registration and unload of modules and methods
  const CodeMode code_mode;
  CodeHeap heap;  // model-heap mode

  // Host mode (P7): code_start -> the live version whose range starts there. CVM lock.
  // A B-tree: a publication's overlap search touched a red-black tree's nodes one cache
  // miss each, a fifth of the .NET client's work on a JIT path; a B-tree's nodes hold
  // dozens of keys. Its iterators do not survive an insertion or erasure: none is kept.
  using RangeMap = absl::btree_map<uint64_t, NativeVersion*>;
  RangeMap live_ranges;
  // Host keys of live methods. Loader mutex.
  HostKeyIndex by_host_key;

  // Versions retired since the last batch went to RCU (P6). Guarded by retire_batch_mu,
  // taken under the CVM lock by retireVersion() (lock order: CVM lock, then it) and alone
  // by drainReclamation() and the destructor, which hand a partial batch over early.
  std::mutex retire_batch_mu;
  RetireBatch* retire_batch = nullptr;
  // Whether the next retirement needs a new batch (relaxed: a hint, so that it can
  // allocate one before taking the lock; checked again under it).
  std::atomic<bool> retire_batch_full{true};

  // Records (modules, methods, native versions) removed and not reclaimed yet: the
  // reclamation backlog, which the tables' high-water marks (and so memory and the walk)
  // follow. Past max_backlog (0: no bound), the thread that removes more waits for a
  // grace period and reclaims what it removed itself, instead of queueing it for
  // liburcu's call_rcu thread (which fell behind). Relaxed: a bound, not a
  // synchronisation.
  const uint64_t max_backlog;  // RuntimeConfig::max_reclamation_backlog
  std::atomic<uint64_t> awaiting_reclamation{0};
  std::atomic<uint64_t> reclaimed_inline{0};  // removals that did so (MemoryStats)
  // How long those removals waited for their grace period (AtomicHist's one writer at a
  // time: the mutex; a rare path, after a wait far longer than it).
  std::mutex reclaim_wait_mu;
  AtomicHist reclaim_wait;
  // Queues `head` for reclamation after a grace period, or, past max_backlog, waits for
  // one and reclaims it now. `records`: how many records it frees. No lock held.
  void reclaimLater(rcu_head* head, void (*reclaim)(rcu_head*), uint64_t records) noexcept;

  // The method, version and IL tables' next huge pages are populated (Paging::kAhead) on
  // liburcu's call_rcu thread, not on the registering or JIT thread (their 4 KB pages, 64
  // KB at a time, by the claim, a system call where 16 page faults were): a claim that asks
  // for it queues the job, once at a time (populate_queued; the callback clears it
  // before it looks, so a request made meanwhile queues it again). drainReclamation()
  // waits for it too.
  void populateAhead() noexcept;
  // A claim asked for pages under the loader mutex or the CVM lock: liburcu's call_rcu
  // may take its own locks (a thread's first read section, the first call_rcu of the
  // process), which fork() holds before ours (fork.cc), so the job is queued once the
  // lock is released, by a PopulateAfterUnlock declared before it.
  std::atomic<bool> populate_pending{false};
  void askPopulate() noexcept { populate_pending.store(true, std::memory_order_release); }
  struct PopulateAfterUnlock {
    State* s;
    ~PopulateAfterUnlock() {
      // relaxed first: a JIT path pays a load; acq_rel: pairs with askPopulate's release.
      if (s->populate_pending.load(std::memory_order_relaxed) &&
          s->populate_pending.exchange(false, std::memory_order_acq_rel))
        s->populateAhead();
    }
  };
  static void populateTables(rcu_head* head) noexcept;
  struct PopulateJob {
    rcu_head rcu{};
    State* owner;
  } populate_job{{}, this};
  std::atomic<bool> populate_queued{false};

  // Methods registered ever: rundown_begin's method_count, and each method's ordinal.
  // Writer: registerMethod under the loader mutex, before the slot's commit; readers:
  // the walk at each batch's end (WalkMarks, relaxed: see there), statistics.
  std::atomic<uint64_t> methods_registered{0};
  // The publication sequence (P8). Writer: CVM lock, publish(); readers: readPublished().
  std::atomic<uint64_t> seq{0};
  // P8's two halves, for the writers (CVM lock held).
  uint64_t takePublicationSeq(NativeVersion* v) noexcept {
    v->publish_seq = seq.load(std::memory_order_relaxed) + 1;  // relaxed: lock held, the only writer
    return v->publish_seq;
  }
  void completePublication(Method* m, uint64_t s) noexcept;
  uint64_t takeRemovalSeq() noexcept;

  // The jitdump sink (jitdump.h). jitdump: the open writer, null when none; written
  // under the CVM lock (and jitdump_mu), read by publications under the CVM lock.
  // jitdump_writer: created at the first open, lives as long as the runtime.
  // jitdump_inflight: publications that read the writer and have not written yet.
  std::mutex jitdump_mu;  // open/close
  std::atomic<JitdumpWriter*> jitdump{nullptr};
  std::unique_ptr<JitdumpWriter> jitdump_writer;
  std::atomic<uint32_t> jitdump_inflight{0};
  // CVM lock held: the open writer (then jitdumpWrite() must follow), or null.
  JitdumpWriter* jitdumpEnter() noexcept;
  // After the lock, inside the publication's read section (the view's strings).
  // `lines`: the publication's source lines (HostCode), written just before its load.
  void jitdumpWrite(JitdumpWriter* w, const VersionView& v, uint64_t ts_ns, const LineEntry* lines = nullptr,
                    size_t n_lines = 0) noexcept;
  // In the child of a fork (fork.cc): no jitdump open, the parent's file left alone.
  void jitdumpForgetInChild() noexcept;

  // Statistics (relaxed counters, updated under the lock that guards the change).
  std::atomic<uint64_t> live_methods{0}, live_modules{0}, il_versions{0}, native_versions{0};
  std::atomic<uint64_t> method_bytes{0}, version_bytes{0};
  std::atomic<uint64_t> list_bytes{0};      // modules' method lists (Module::methods.bytes())
  std::atomic<uint64_t> method_records{0};  // methods in their slots, unloaded ones until reclaimed
  std::atomic<uint64_t> retired{0}, replayed{0}, overlaps_refused{0};
  std::atomic<uint64_t> live_host_code{0};  // live_ranges.size(), for statistics (written under the CVM lock)

  struct SiteLabel {
    LockSite site;
    MethodId method_id;
  };
  SiteLabel labelFor(VersionId version) const noexcept;
  // Held shared by every reclamation callback for its whole run (on liburcu's call_rcu
  // thread, or inline past max_backlog) and exclusive by fork()'s handlers (fork.cc), so
  // that a child never inherits a reclamation half done (a slot table's recycling
  // mutex held, a batch half freed: the child hung taking it).
  std::shared_mutex reclaim_mu;
  static void reclaimModule(rcu_head* head);
  static void reclaimMethod(rcu_head* head);  // unloadMethod()'s MethodReclaim
  // An unload's writes for one method, under the CVM lock and the loader mutex, its
  // removal number taken (P8): unloaded, its slot and its versions' cleared (P9), its
  // host key and host ranges free, method_unload fired. Returns the versions cleared.
  uint64_t clearMethod(Method* m, uint64_t unload_seq);
  static void reclaimBatch(rcu_head* head);
  // Retires the version `find` returns, called with the CVM lock held (site unload,
  // labelled `label` until `find` names the method through its argument):
  // retireVersion, retireHostCode.
  // *last (when not null): whether the version's method has no live code left.
  Result<VersionId> retire(MethodId label, FunctionRef<Result<NativeVersion*>(MethodId*)> find, bool* last = nullptr);
  // A method's live native versions (published, every IL version's). CVM lock held.
  static uint64_t liveVersions(const Method* m) noexcept;
  // Takes the batch being filled, if any. retire_batch_mu held.
  RetireBatch* takeRetireBatch() noexcept;
  // Hands the batch being filled to RCU and waits until every reclamation queued so far
  // has run. No lock held, outside any read section.
  void drainReclamation() noexcept;
  // For a publication the model heap refused: when removed code is waiting for its
  // grace period (the batch being filled, or anything queued to RCU), drains it, so that
  // its ranges are back in the heap, and returns true. False, without waiting, when
  // nothing waits or this thread cannot wait (rcu::canWait()). No lock held.
  bool reclaimRetiredCode() noexcept;
  // The method's active IL version, its first one (rejit 0) allocated and published now
  // if it has none (P1); null when out of memory. CVM lock held.
  IlVersion* activeIlOrCreate(Method* m) noexcept;
  // A new IL version node in ils (CVM lock held), or nullptr when out of slots or memory.
  IlVersion* newIlVersion(RejitId rejit, IlVersion* next, Method* m) noexcept;
  void freeMethod(Method* m, bool give_back_code);
  void freeVersion(NativeVersion* v, bool give_back_code);
  // Host mode: the live version whose range overlaps [start, start + size), or null;
  // *after: the first range that starts at or past `start` (an insertion's hint).
  NativeVersion* overlapping(uint64_t start, uint32_t size, RangeMap::iterator* after);
  // Host mode, CVM lock held: forgets the live range starting at `start`.
  void eraseHostRange(uint64_t start) noexcept;
  // The error for a module, method or version id that is not in its table.
  Errc missingModule(ModuleId module) const noexcept;
  Errc missingMethod(MethodId method) const noexcept;
  Errc missingVersion(VersionId version) const noexcept;

  // The records, in place (P9), last: the tables' chunk arrays are 10-65 KB each, and
  // every field above them that a registration or a publication touches fits in the
  // State's first pages (a TLB miss each on a thread whose caches its compiler keeps
  // cold; docs/measurements.md, "The cold registration and publication"). Methods:
  // claim/commit under the loader mutex, clear under both (unload). Modules: loader
  // mutex. Versions: CVM lock; load() from outside the lock only inside an RCU read
  // section, and only to choose a lock site label. recycle(): reclamation callbacks.
  MethodTable methods;
  ModuleTable modules;
  VersionTable versions;
  // IL version nodes: claim/commit under the CVM lock (their creators hold it); clear and
  // recycle in freeMethod, after the grace period that ended its method's readers (no
  // reader reaches a node but through its method). Never looked up by id.
  IlTable ils;
  std::atomic<uint64_t> il_records{0};  // nodes in ils (MemoryStats: the tables' bytes)
};

inline MethodId Method::id() const noexcept { return Runtime::State::MethodTable::idOf(this); }

}  // namespace jitprov
