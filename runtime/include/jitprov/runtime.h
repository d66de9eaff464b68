/* SPDX-License-Identifier: MIT */
// libjitprov: the in-process model of a JIT runtime's code-version registry.
//
// Concurrency contract (runtime/registry.h owns the structures and
// documents their ordering):
//  - Every mutation of code-version state (adding an IL version, adding a native
//    version, publishing code, activating, unloading) takes the one code-version-manager
//    lock (CvmLock), naming its LockSite, and fires the jitprov:lock_* USDT probes.
//  - Module and method registration take the loader mutex, not the CVM lock (as in
//    CoreCLR, creating a method descriptor is not a code-version operation).
//  - entryPoint() and walk(kNone) never take a lock and may run concurrently with every
//    other call, on any thread. They follow the publication protocol of docs/spec.md.
//  - Memory a lock-free reader can reach is reclaimed only after an RCU grace period.
#pragma once

#include <jitprov/function_ref.h>
#include <jitprov/lock_stats.h>
#include <jitprov/result.h>
#include <jitprov/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace jitprov {

namespace trace {
struct VersionRecord;  // runtime/version_record.h: the rundown event's record
class RecordEmitter;   // runtime/version_record.h: the rundown engine's emission of it
}  // namespace trace

struct RuntimeConfig {
  // Calls before a tier-0 method is promoted (CoreCLR's TC_CallCountThreshold).
  uint32_t tier_up_threshold = 30;
  // Keep in-process wait/hold histograms for every lock acquisition.
  bool lock_stats = true;
  // Who owns code addresses: the model heap (beginJit/publishCode) or the host
  // (publishHostCode).
  CodeMode code_mode = CodeMode::kModelHeap;
  // Records removed and not yet reclaimed beyond which a thread that removes more waits
  // for a grace period and reclaims its removal itself (registry.h P6, P9): bounds the
  // memory and the walk when liburcu's reclamation thread falls behind (a host churning
  // code with the other core busy: issue 22), at the price of that wait, which lasts
  // until every reader's current read section ends (a rundown's batch of 1024 methods
  // included; MemoryStats::reclaim_wait measures it). 0: no bound, no thread ever waits
  // for readers. tools/bench/churn measures both.
  static constexpr uint64_t kDefaultMaxReclamationBacklog = 16384;
  uint64_t max_reclamation_backlog = kDefaultMaxReclamationBacklog;
};

// How a walk synchronises with writers.
enum class WalkLocking : uint8_t {
  kNone,       // lock-free: never touches the CVM lock (rundown mode lockfree)
  kWholeWalk,  // holds the CVM lock (site rundown) across the whole walk (mode locked)
  kPerMethod,  // takes the CVM lock (site rundown) around each method (mode per-method)
};

struct WalkStats {
  uint64_t methods = 0;   // live methods with at least one version counted in `versions`
  uint64_t versions = 0;  // published native versions passed to the visitor (and that it kept)
  uint64_t skipped = 0;   // native versions seen whose code was not published yet
};

// A walk that is complete as of its end (G3+, runtime/registry.h P8): the walk of
// everything published up to begin_seq, then a lock-free catch-up of what was published
// up to publish_seq while it ran. Every native version with a publish_seq at most
// `publish_seq` was visited exactly once, unless it was removed (retired or unloaded)
// with a sequence number at most `end_seq`.
struct CompleteWalk {
  uint64_t begin_seq = 0;    // the sequence when the walk began
  uint64_t publish_seq = 0;  // P: what the walk is complete up to
  uint64_t end_seq = 0;      // E >= P: the sequence when it ended (bounds the removals it saw)
  WalkStats walk;            // the first pass (skipped is counted here only)
  uint64_t caught_up = 0;    // versions the catch-up kept (publish_seq in (begin, P])
  // Methods with versions kept by the catch-up and none by the first pass: the methods
  // with records in the walk are walk.methods + caught_up_methods, exactly (a method
  // whose slot was reused meanwhile is another method: registry.cc, WalkMarks).
  uint64_t caught_up_methods = 0;
  uint64_t catch_up_ns = 0;  // time the catch-up took
  uint64_t methods() const noexcept { return walk.methods + caught_up_methods; }
};

struct MemoryStats {
  uint64_t live_modules = 0;
  uint64_t live_methods = 0;
  uint64_t il_versions = 0;  // ReJIT IL versions (not counted: each method's original, allocated
                             // with its first code)
  uint64_t native_versions = 0;
  uint64_t method_bytes = 0;             // method records (their slots) and their names
  uint64_t version_bytes = 0;            // IL version nodes and native version records (slots)
  uint64_t table_bytes = 0;              // the rest of the tables (free slots, directories) and modules' method lists
  uint64_t retired = 0;                  // native versions retired one by one (retireVersion)
  uint64_t replayed = 0;                 // host publications that returned an existing version
  uint64_t overlaps_refused = 0;         // host publications refused for overlapping live code
  uint64_t live_host_code = 0;           // host mode: live published code ranges (versions)
  uint64_t awaiting_reclamation = 0;     // records removed, waiting for their grace period
  uint64_t reclaimed_inline = 0;         // removals whose thread waited for the grace period
                                         // itself (the backlog was past its bound)
  uint64_t slots_retired = 0;            // table slots never reused again: their generations ran out,
                                         // or recording them for reuse ran out of memory
  HistSnapshot reclaim_wait;             // the waits of the reclaimed_inline removals
  uint64_t max_reclamation_backlog = 0;  // the bound in force (0: none)
  // The method, native version and IL version tables' huge pages (2 MB), populated two
  // ahead of the thread that fills them (registration, a JIT or a code publication):
  uint64_t huge_pages_ahead = 0;   // before it reached them
  uint64_t huge_pages_late = 0;    // after (it paid their first touch itself)
  uint64_t huge_pages_failed = 0;  // not (no memory, an old kernel): the table's next regions
                                   // stay in 4 KB pages
};

// The jitdump sink (runtime/jitdump.h; docs/spec.md "The jitdump sink").
struct JitdumpOptions {
  std::string dir;         // the file is DIR/jit-PID.dump
  bool copy_code = false;  // host mode: published ranges are readable, copy their bytes
};

struct JitdumpStats {
  bool open = false;
  uint64_t loads = 0;               // JIT_CODE_LOAD records written for publications
  uint64_t rundown_loads = 0;       // ... for code published before the open (its walk)
  uint64_t code_bytes = 0;          // code bytes copied into the records
  uint64_t loads_without_code = 0;  // records whose code is zeros (not readable, or not copied)
  uint64_t unreadable = 0;          // of those, ranges the kernel could not read (EFAULT)
  uint64_t bytes = 0;               // the file's size
  uint64_t write_errors = 0;        // failed writes (each drops its record, or retries it without code)
  uint64_t dropped = 0;             // records lost to write errors
  int last_errno = 0;               // the last error's errno (open, mmap, write)
  uint64_t debug_records = 0;       // JIT_CODE_DEBUG_INFO records written (HostCode::lines)
  uint64_t debug_entries = 0;       // line entries in them (the host's, one more at the end)
  uint64_t debug_dropped = 0;       // DEBUG_INFO records lost (write errors, > 4 GiB, no memory)
};

// Whether the LTTng-UST provider (libjitprov-lttng.so) is loaded, and from where or why
// not. Loads it on first call ($JITPROV_PROVIDER overrides the path). Without it the
// runtime runs untraced.
std::string traceProviderStatus();

class Runtime {
 public:
  explicit Runtime(RuntimeConfig config = {});
  ~Runtime();  // waits for every pending reclamation of this runtime
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // --- loader -------------------------------------------------------------------
  Result<ModuleId> registerModule(std::string_view path, bool collectible);
  Result<MethodId> registerMethod(ModuleId module, const MethodDesc& desc);
  // Unloads a collectible module and all its methods (site unload). Their memory and
  // code ranges are reclaimed after a grace period.
  Result<void> unloadModule(ModuleId module);
  // Unloads one method with all its code, its module staying (site unload): a method the
  // host destroys alone (CoreCLR's dynamic methods, whose MethodIDs it hands out again).
  // Fires method_unload with its own unload_seq; its host key is free again when it
  // returns; the record is reclaimed after a grace period. Its strings stay in the
  // module's arena until the module goes (counted in MemoryStats::method_bytes).
  Result<void> unloadMethod(MethodId method);
  // The live method registered with this host key (MethodDesc::host_key), if any.
  Result<MethodId> findMethod(uint64_t host_key) const;

  // --- JIT paths ----------------------------------------------------------------
  // Starts a JIT path: adds a native version of `tier` to the method's active IL
  // version (code not yet published) and fires jit_begin. The caller compiles
  // outside the lock, then calls publishCode.
  Result<VersionId> beginJit(MethodId method, Tier tier, uint32_t osr_il_offset = 0);
  // Allocates the code range and publishes it (release store of code_start); fires
  // jit_end and the method_load event. When the model heap is full and removed code is
  // waiting for its grace period, waits for it (drainReclamation) and tries once more:
  // kCodeHeapExhausted after that (or at once, called inside an RCU read section).
  Result<CodeRange> publishCode(VersionId version, uint32_t code_size);
  // Host mode: records code the host compiled at its own address, as a new native
  // version of the method's active IL version, published at once (one lock
  // acquisition, site by tier); fires method_load. Publishing the same method, start
  // and size again returns the existing version (no second event); a range that
  // overlaps live code of another version is refused (kRangeOverlap).
  // *publish_seq (optional) receives the publication's sequence number (0 for a replay).
  Result<VersionId> publishHostCode(MethodId method, const HostCode& code, uint64_t* publish_seq = nullptr);
  // Retires one published native version (site unload): lock-free walks that start
  // after this returns never see it; its memory, and in model-heap mode its code range,
  // are reclaimed after a grace period. In host mode the range may be published again
  // as soon as this returns. Fires code_unload. If it was the active code, the method's
  // entry point goes back to 0.
  Result<void> retireVersion(VersionId version);
  // Host mode: retires the live version whose code starts at code_start, as
  // retireVersion, and returns it; kUnknownVersion when no live code starts there,
  // kWrongCodeMode in model-heap mode. For a host that knows its code by address only.
  Result<VersionId> retireHostCode(uint64_t code_start);
  // What retireHostCodeOf retired, or found instead.
  struct HostRetired {
    VersionId version = 0;  // 0: nothing retired
    MethodId method = 0;    // its method; the other method's when nothing was retired
    ModuleId module = 0;    // that method's module
    uint64_t host_key = 0;  // that method's host key (0: none)
    uint32_t code_size = 0;
    bool last = false;  // retired: the method has no live code left
  };
  // Host mode: retires the live version whose code starts at code_start when its
  // method's host key is host_key (any method's when 0), and says what it retired.
  // kUnknownVersion when no live code of that method starts there, with out->method,
  // module and host_key naming another method's code live there (0: none).
  Result<VersionId> retireHostCodeOf(uint64_t code_start, uint64_t host_key, HostRetired* out);
  // Host mode: the start of the live code with the lowest start that overlaps
  // [start, start + size); kUnknownVersion when none does.
  Result<uint64_t> findHostOverlap(uint64_t start, uint32_t size) const;
  // The live native versions of a method (published, not retired), and of every method
  // of a module.
  Result<uint64_t> liveCodeOfMethod(MethodId method) const;
  Result<uint64_t> liveCodeOfModule(ModuleId module) const;
  // Makes a published version the active one of its IL version; when that IL version is
  // the method's active one, backpatches the entry point (site activate).
  Result<void> activate(VersionId version);
  // Adds an IL version (rejit_id = previous + 1) and makes it the method's active IL
  // version; the entry point goes back to "not compiled" until its code is activated.
  Result<RejitId> requestRejit(MethodId method);
  // Lock-free call counting: true for exactly one call, the one that reaches the
  // tier-up threshold. Unknown methods return false.
  bool recordCall(MethodId method) noexcept;
  // The calls recordCall() counted for `method` (0: unknown): it stops counting at the
  // threshold, give or take the calls racing the one that reached it.
  uint32_t callsCounted(MethodId method) const noexcept;

  // --- reads --------------------------------------------------------------------
  // Lock-free: the code callers of `method` run, 0 when none is active or the method
  // is unknown or unloaded.
  uint64_t entryPoint(MethodId method) const noexcept;
  // The same lookup under the CVM lock (site lookup): the behaviour lock-free reads
  // replace, kept for comparison.
  Result<uint64_t> entryPointLocked(MethodId method);

  // Calls `visit` once for every published native version of every live method.
  // With WalkLocking::kNone it is lock-free and gives docs/spec.md's G2-G4 for the walk.
  // A method registered after the walk started may be missed; one registered before
  // may not. `visit` must not call back into this runtime's mutating API.
  WalkStats walk(WalkLocking locking, FunctionRef<void(const VersionView&)> visit) const;
  // The rundown's walk (P8): `begin(begin_seq)` is called first, then `visit` once for
  // every version published up to the returned publish_seq, caught up after the first
  // pass. `visit` returns whether the version counts (the rundown: it was emitted);
  // the counts of versions and methods are of those. Same locking and threads as walk().
  CompleteWalk walkComplete(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                            FunctionRef<bool(const VersionView&)> visit) const;
  // The same, calling `between_batches` between the walk's RCU read sections (every
  // 1024 methods, and between the two passes), where the caller may sleep (pacing)
  // without holding up reclamation.
  CompleteWalk walkComplete(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                            FunctionRef<bool(const VersionView&)> visit, FunctionRef<void()> between_batches) const;
  // As walkComplete, but each version is written into `*rec` (every field but
  // runtime_instance, which the caller sets once) before `visit()`: the event's record
  // built in place, without a VersionView to copy from (docs/measurements.md, "The walk
  // at the emission floor"). For tests; the rundown engine takes the overload below.
  CompleteWalk walkCompleteRecords(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                   trace::VersionRecord* rec, FunctionRef<bool()> visit,
                                   FunctionRef<void()> between_batches) const;
  // The rundown engine's own walk: the same, each record emitted by `out` (out.rec
  // filled, then out.emit(), inlined: no call through a FunctionRef per version).
  CompleteWalk walkCompleteRecords(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin,
                                   trace::RecordEmitter& out, FunctionRef<void()> between_batches) const;
  // The publication sequence: the number of the last publication or removal (acquire).
  uint64_t publicationSeq() const noexcept;
  // Benchmark only: the lock-free walk as it was before retirement existed, reading
  // `next` as an immutable field (relaxed). Not safe with concurrent retireVersion().
  WalkStats walkBaselineForBench(FunctionRef<void(const VersionView&)> visit) const;
  // Lock-free walk over live modules.
  uint64_t walkModules(FunctionRef<void(const ModuleView&)> visit) const;

  // Upper bound of method ids handed out so far (lock-free; acquire).
  uint64_t registeredMethods() const noexcept;
  // This runtime's instance number in its process: 1 for the first runtime created, never
  // handed out twice. Every event carries it (field runtime_instance), because ids are
  // per runtime: two runtimes of one process hand out the same ones.
  uint32_t instance() const noexcept;
  // A rundown's turn, taken by any engine of this runtime (RundownEngine::run): its id,
  // the next of this runtime's (from 1, never handed out twice: an engine made again,
  // or a second engine, goes on from the last), and the lock held until its
  // rundown_begin is emitted, so that this runtime's rundowns begin in their ids' order
  // (a reader tells a vpid's next process by an id not above the last begun:
  // docs/spec.md, "jitprov-verify"). Release the lock once the begin is emitted.
  struct RundownTurn {
    std::unique_lock<std::mutex> lock;
    uint64_t id = 0;
  };
  RundownTurn takeRundownTurn();
  MemoryStats memoryStats() const;

  // --- jitdump ------------------------------------------------------------------
  // Opens DIR/jit-PID.dump (one per process: kBusy when this or another runtime has it
  // open; kInvalidArgument when it cannot be created, errno in jitdumpStats()), writes
  // a JIT_CODE_LOAD for every version live now (a walk, stamped with the open's time),
  // then one for every publication, on the publishing thread, until jitdumpClose().
  Result<void> jitdumpOpen(const JitdumpOptions& opt);
  // Writes JIT_CODE_CLOSE and closes the file (after publications in flight wrote
  // theirs). No-op when not open. The destructor closes it too.
  void jitdumpClose() noexcept;
  JitdumpStats jitdumpStats() const;

  // --- instrumentation ------------------------------------------------------------
  LockStatsSnapshot lockStats() const;
  // Zeroes the lock statistics (counts taken meanwhile may be half-counted: call it
  // while the lock is idle, e.g. before the application's threads start).
  void resetLockStats() noexcept;
  // Marks lock acquisitions as "during a rundown" in the stats while > 0.
  void rundownActive(bool active) noexcept;
  // Waits until every reclamation queued so far has run (tests, shutdown).
  void drainReclamation();

  const RuntimeConfig& config() const noexcept { return config_; }

  struct State;  // runtime/registry.h

 private:
  struct WalkMarks;  // registry.cc: the first pass's methods, for the catch-up's count
  // Emit: called as emit(const Method&, const NativeVersion&, uint64_t code_start) for
  // each version, returning void (every version counts) or bool (whether it counts).
  template <std::memory_order kNextOrder, class Emit>
  WalkStats walkImpl(WalkLocking locking, const Emit& emit, uint64_t after, uint64_t upto,
                     FunctionRef<void()> between_batches, WalkMarks* marks) const;
  template <class Emit>
  CompleteWalk walkCompleteImpl(WalkLocking locking, FunctionRef<void(uint64_t begin_seq)> begin, const Emit& emit,
                                FunctionRef<void()> between_batches) const;

  RuntimeConfig config_;
  std::unique_ptr<State> s_;
};

}  // namespace jitprov
