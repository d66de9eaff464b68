/* SPDX-License-Identifier: MIT */
/* jitprov.h: the C API of libjitprov, the stable ABI a JIT runtime embeds.
 *
 * libjitprov keeps a registry of the host's compiled code (modules, methods, their
 * ReJIT (IL) versions and native code versions) that a rundown thread reads lock-free,
 * and emits LTTng-UST events (providers jitprov_runtime and jitprov_rundown) so that
 * addresses in a trace map back to methods. docs/spec.md is the contract for the events.
 *
 * Conventions
 *  - Every function that can fail returns an int: JITPROV_OK (0) or a positive
 *    jitprov_error; jitprov_strerror() names it. Outputs are written only on success
 *    (except where a function says otherwise).
 *  - Handles are opaque. Structs passed in start with `sz`, the caller's
 *    sizeof(struct): use the *_INIT macros. A newer library accepts an older, shorter
 *    struct; an older library refuses a longer one whose unknown tail is not zero. An
 *    `sz` above JITPROV_STRUCT_SZ_MAX (64 KiB) is no struct of any version (an
 *    uninitialised field, most likely): JITPROV_E_INVALID_ARGUMENT, and nothing past
 *    the fields this library knows is read.
 *  - Strings are NUL-terminated UTF-8 and are copied. NULL means "".
 *  - Nothing here throws, aborts, prints or installs signal handlers.
 *
 * Threads
 *  - Any thread may call any function, concurrently, except that a runtime must not be
 *    destroyed while other calls on it are running, and a rundown engine is destroyed
 *    before its runtime (jitprov_rundown_destroy() itself may overlap run_now calls:
 *    see there). Threads may be created and destroyed freely: liburcu-bp registers a
 *    thread on its first lock-free read and unregisters it when the thread exits; the
 *    host does nothing.
 *  - jitprov_entry_point(), jitprov_call_record() and the rundown's walk are
 *    lock-free. Mutations take the library's code-version-manager lock briefly (never
 *    across a compile) and fire the jitprov:lock_* USDT probes.
 *  - fork(): the child of a fork may go on using the runtimes it inherited, from any
 *    number of threads, and reclaims memory as the parent does. An inherited rundown
 *    engine has no thread in the child (it was the parent's) and no rundown in
 *    progress: destroy it there, or use jitprov_rundown_run_now(); start a new engine
 *    for triggers.
 *
 * Tracing
 *  - jitprov_runtime_create() loads the LTTng-UST provider (libjitprov-lttng.so, found
 *    in the jitprov/ directory beside libjitprov.so.1 where it is installed, next to it
 *    in a build tree, or at $JITPROV_PROVIDER); without it the runtime runs untraced
 *    (jitprov_trace_provider_status() says why).
 *  - For lossless rundowns into a channel with --blocking-timeout (docs/tracing.md), set
 *    LTTNG_UST_ALLOW_BLOCKING=1 in the environment before the first runtime is created.
 */
#ifndef JITPROV_JITPROV_H
#define JITPROV_JITPROV_H

#include <stddef.h>
#include <stdint.h>

#include <jitprov/trace_abi.h>

#if defined(__GNUC__)
#define JITPROV_API __attribute__((visibility("default")))
#else
#define JITPROV_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define JITPROV_VERSION_MAJOR 0
#define JITPROV_VERSION_MINOR 4

/* The largest `sz` an input struct may declare (Conventions above). */
#define JITPROV_STRUCT_SZ_MAX 65536

/* ---- errors ------------------------------------------------------------------ */

enum jitprov_error {
  JITPROV_OK = 0,
  JITPROV_E_UNKNOWN_MODULE = 1,
  JITPROV_E_UNKNOWN_METHOD = 2,
  JITPROV_E_UNKNOWN_VERSION = 3,
  JITPROV_E_MODULE_UNLOADED = 4,
  JITPROV_E_METHOD_UNLOADED = 5,
  JITPROV_E_NOT_COLLECTIBLE = 6,
  JITPROV_E_ALREADY_PUBLISHED = 7,
  JITPROV_E_NOT_PUBLISHED = 8,
  JITPROV_E_ZERO_CODE_SIZE = 9,
  JITPROV_E_INVALID_UTF8 = 10,  /* a name is not UTF-8 (see JITPROV_METHOD_SANITIZE_NAMES) */
  JITPROV_E_NAME_TOO_LONG = 11, /* a name is longer than 64 KiB */
  JITPROV_E_INVALID_ARGUMENT = 12,
  JITPROV_E_CAPACITY = 13,  /* a system resource (thread, file descriptor) is exhausted */
  JITPROV_E_CODE_HEAP = 14, /* the model code heap is exhausted */
  JITPROV_E_BUSY = 15,
  JITPROV_E_EXISTS = 16,        /* a live method has this host key (its id is returned) */
  JITPROV_E_RANGE_OVERLAP = 17, /* the code range overlaps live code of another version */
  JITPROV_E_VERSION_GONE = 18,  /* the version was retired or its method unloaded */
  JITPROV_E_WRONG_CODE_MODE = 19,
  JITPROV_E_NO_MEMORY = 20,
  JITPROV_E_INTERNAL = 21,
  /* The registry's limits are on records live or awaiting reclamation at once, never on
   * ids handed out (ids are 64-bit and never reused): */
  JITPROV_E_TOO_MANY_MODULES = 22,  /* 1048575 modules */
  JITPROV_E_TOO_MANY_METHODS = 23,  /* 67108863 methods */
  JITPROV_E_TOO_MANY_VERSIONS = 24, /* 268435455 native code versions */
  JITPROV_E_CUT_SHORT = 25          /* jitprov_rundown_stop()/destroy() ended the rundown early */
};

/* A sentence fragment for an error ("unknown method id"); never NULL. */
JITPROV_API const char* jitprov_strerror(int error);

/* ---- trace ABI enumerations (values appear in traces: never renumbered) -------- */

/* Values and names: jitprov/trace_abi.h, the one place they are defined. */
enum jitprov_tier { JITPROV_TIERS(JITPROV_ABI_C_ENUMERATOR) };
/* lockfree: never takes the code-version-manager lock; locked: holds it across the whole
 * rundown (to measure against); per-method: takes it around each method. */
enum jitprov_rundown_mode { JITPROV_RUNDOWN_MODES(JITPROV_ABI_C_ENUMERATOR) };
enum jitprov_rundown_trigger { JITPROV_RUNDOWN_TRIGGERS(JITPROV_ABI_C_ENUMERATOR) };
/* The `site` of the lock probes and the index of the lock statistics. */
enum jitprov_lock_site { JITPROV_LOCK_SITE_LIST(JITPROV_ABI_C_ENUMERATOR) };

/* "tier0", "tier1", "tier1_osr", "instrumented", "optimized"; "invalid" otherwise. */
JITPROV_API const char* jitprov_tier_name(int tier);
/* "lockfree", "locked", "per-method"; "invalid" otherwise. */
JITPROV_API const char* jitprov_rundown_mode_name(int mode);
/* "api", "session", "signal", "exit", "at", "every"; "invalid" otherwise. */
JITPROV_API const char* jitprov_rundown_trigger_name(int trigger);
/* Parse the names above; JITPROV_E_INVALID_ARGUMENT for anything else. */
JITPROV_API int jitprov_tier_parse(const char* name, int* tier);
JITPROV_API int jitprov_rundown_mode_parse(const char* name, int* mode);

/* ---- runtime ------------------------------------------------------------------- */

typedef struct jitprov_runtime jitprov_runtime;

enum jitprov_code_mode {
  /* jitprov's model code heap hands out addresses: jitprov_jit_begin + jitprov_jit_publish
   * (the simulator's way; addresses are numbers in a reserved, unmapped range). */
  JITPROV_CODE_MODEL_HEAP = 0,
  /* The host owns its code: jitprov_code_publish with real addresses. */
  JITPROV_CODE_HOST = 1
};

typedef struct jitprov_runtime_config {
  size_t sz;
  uint32_t code_mode;         /* enum jitprov_code_mode */
  uint32_t tier_up_threshold; /* calls before jitprov_call_record() says "tier up"; 0 = 30 */
  int lock_stats;             /* nonzero: keep per-site lock wait/hold histograms */
  /* Records removed (retired code, unloaded modules) and not yet reclaimed beyond which
   * the thread that removes more waits for a grace period (until every lock-free read
   * that began before ends: at most one rundown batch of 1024 methods) and frees its
   * removal itself, so that memory stays bounded when the reclamation thread falls
   * behind. 0 = JITPROV_DEFAULT_RECLAMATION_BACKLOG; UINT64_MAX = no bound (no thread
   * ever waits for a reader). jitprov_memory_stats' reclaim_wait measures the waits. */
  uint64_t max_reclamation_backlog;
} jitprov_runtime_config;

#define JITPROV_DEFAULT_RECLAMATION_BACKLOG 16384
#define JITPROV_RUNTIME_CONFIG_INIT \
  { sizeof(jitprov_runtime_config), JITPROV_CODE_MODEL_HEAP, 0, 1, 0 }

/* config may be NULL (model heap, defaults). */
JITPROV_API int jitprov_runtime_create(const jitprov_runtime_config* config, jitprov_runtime** out);
/* Waits for pending reclamation, then frees everything. NULL is a no-op. */
JITPROV_API void jitprov_runtime_destroy(jitprov_runtime* rt);
/* The runtime's instance number in its process: 1 for the first runtime created, never
 * handed out twice (0 for NULL). Ids (modules, methods, versions, rundowns) are per
 * runtime, so two runtimes of one process hand out the same ones: every event carries
 * the instance (field runtime_instance), and a trace reader keys by process and it. */
JITPROV_API uint32_t jitprov_runtime_instance(const jitprov_runtime* rt);

/* ---- modules and methods --------------------------------------------------------- */

/* Registers a module; collectible modules can be unloaded. */
JITPROV_API int jitprov_module_register(jitprov_runtime* rt, const char* path, int collectible, uint64_t* module_id);
/* Unloads a collectible module with its methods and all their code (fires
 * method_unload and module_unload). Host-mode ranges are free again when it returns. */
JITPROV_API int jitprov_module_unload(jitprov_runtime* rt, uint64_t module_id);
/* Unloads one method with all its code, its module staying (fires method_unload): for
 * a method the host destroys alone, such as CoreCLR's dynamic methods. Its host key is
 * free for a new method when it returns; host-mode ranges are free again. Its strings
 * stay with its module until the module unloads. */
JITPROV_API int jitprov_method_unload(jitprov_runtime* rt, uint64_t method_id);

/* jitprov_method_desc.options */
#define JITPROV_METHOD_SANITIZE_NAMES 0x1u /* replace ill-formed UTF-8 by U+FFFD, never refuse */

typedef struct jitprov_method_desc {
  size_t sz;
  uint64_t host_key; /* the host's identity (e.g. a jmethodID); 0 = none */
  uint32_t token;    /* metadata token */
  uint32_t flags;
  const char* name_space; /* declaring type, e.g. "java.lang.String" */
  const char* name;
  const char* signature;
  uint32_t options; /* JITPROV_METHOD_* */
} jitprov_method_desc;

#define JITPROV_METHOD_DESC_INIT \
  { sizeof(jitprov_method_desc), 0, 0, 0, NULL, NULL, NULL, 0 }

/* Registers a method. Names are immutable afterwards. When a live method already has
 * desc->host_key, returns JITPROV_E_EXISTS and writes that method's id to *method_id. */
JITPROV_API int jitprov_method_register(jitprov_runtime* rt, uint64_t module_id, const jitprov_method_desc* desc,
                                        uint64_t* method_id);
/* The live method registered with host_key (!= 0); JITPROV_E_UNKNOWN_METHOD if none. */
JITPROV_API int jitprov_method_find(jitprov_runtime* rt, uint64_t host_key, uint64_t* method_id);

/* ---- native code versions -------------------------------------------------------- */

/* One source line of published code (jitprov_code_desc.lines): the code from
 * `code_addr` up to the next entry's (or the range's end) comes from `line` of `file`.
 * The layout is fixed: a later one would come with a new field of jitprov_code_desc. */
typedef struct jitprov_line_entry {
  uint64_t code_addr;     /* inside the published range; entries in ascending order */
  uint32_t line;          /* source line, from 1 */
  uint32_t discriminator; /* DWARF's column discriminator, 0 by default */
  const char* file;       /* source file name, NUL-terminated; NULL: the previous entry's */
} jitprov_line_entry;

typedef struct jitprov_code_desc {
  size_t sz;
  uint64_t code_start;    /* != 0 */
  uint32_t code_size;     /* > 0, else JITPROV_E_ZERO_CODE_SIZE */
  uint32_t tier;          /* enum jitprov_tier */
  uint32_t host_tier;     /* the host's own tier number (0-65535), e.g. HotSpot's comp level */
  uint32_t osr_il_offset; /* for JITPROV_TIER1_OSR */
  uint32_t host_version;  /* the host's own id of this native version (CoreCLR: its native
                             code version id); 0 when the host has none. */
  /* --- since line tables (40 bytes before: the original layout) --- */
  /* Optional (host mode): the code's source lines, for the jitdump sink only: written
   * as a JIT_CODE_DEBUG_INFO record just before the publication's JIT_CODE_LOAD while
   * the sink is open, ignored otherwise (a host may leave them out when it is closed).
   * Read during the call only. Checked whether the sink is open or not: the first entry
   * needs a file; every code_addr inside [code_start, code_start + code_size), in
   * ascending (non-decreasing) order; else JITPROV_E_INVALID_ARGUMENT, nothing
   * published. An older library refuses a desc with lines (its unknown tail is not zero). */
  const jitprov_line_entry* lines;
  size_t n_lines;
  /* --- since publication flags (56 bytes before: the layout of line tables) --- */
  uint32_t flags; /* JITPROV_CODE_* below; other bits: JITPROV_E_INVALID_ARGUMENT */
} jitprov_code_desc;

/* jitprov_code_desc.flags: also make the new version the active one (as
 * jitprov_code_activate, in the same acquisition of the lock: one instead of two). Not
 * with JITPROV_TIER1_OSR (JITPROV_E_INVALID_ARGUMENT). A replay activates nothing. */
#define JITPROV_CODE_ACTIVATE 1u

#define JITPROV_CODE_DESC_INIT \
  { sizeof(jitprov_code_desc), 0, 0, JITPROV_TIER0, 0, 0, 0, NULL, 0, 0 }

/* Host mode: records code the host compiled for method_id at [code_start,
 * code_start + code_size) as a new native version of the method's active IL version,
 * published at once (fires method_load). Publishing the same method, start and size
 * again returns the existing version and emits nothing (replays). A range that
 * overlaps live code of another version is refused: JITPROV_E_RANGE_OVERLAP (counted
 * in jitprov_memory_stats). A range is free again once the version using it was
 * retired (or its module unloaded). code_size 0: JITPROV_E_ZERO_CODE_SIZE (as
 * jitprov_jit_publish); no address, or a range past the end of the address space:
 * JITPROV_E_INVALID_ARGUMENT. */
JITPROV_API int jitprov_code_publish(jitprov_runtime* rt, uint64_t method_id, const jitprov_code_desc* code,
                                     uint64_t* version_id);

/* Model-heap mode: starts a JIT path (a native version of `tier`, code not yet
 * published; fires jit_begin). Compile outside, then jitprov_jit_publish. */
JITPROV_API int jitprov_jit_begin(jitprov_runtime* rt, uint64_t method_id, int tier, uint32_t osr_il_offset,
                                  uint64_t* version_id);
/* Model-heap mode: allocates code_size bytes of model heap and publishes them (fires
 * jit_end and method_load). code_size 0: JITPROV_E_ZERO_CODE_SIZE. When the heap is
 * full and retired or unloaded code is still waiting for its grace period, waits for
 * it (for every lock-free read in progress, a rundown sink's callback included) and
 * tries once more: JITPROV_E_CODE_HEAP if it is still full. */
JITPROV_API int jitprov_jit_publish(jitprov_runtime* rt, uint64_t version_id, uint32_t code_size, uint64_t* code_start);

/* Retires one native version (fires code_unload). A lock-free rundown that begins
 * after this returns does not report it; one running meanwhile may. If it was the
 * method's active code, the entry point goes back to 0. */
JITPROV_API int jitprov_code_retire(jitprov_runtime* rt, uint64_t version_id);

/* Host mode: retires the live native version whose code starts at code_start, as
 * jitprov_code_retire, for a host that knows its code by address only (so that it need
 * not keep a map of its own); *version_id (when not NULL) receives the version.
 * JITPROV_E_UNKNOWN_VERSION when no live code starts there; JITPROV_E_WRONG_CODE_MODE
 * in model-heap mode. */
JITPROV_API int jitprov_code_retire_at(jitprov_runtime* rt, uint64_t code_start, uint64_t* version_id);

/* What jitprov_code_retire_host retired (or found instead). Set sz = sizeof before the
 * call (a growable struct, as jitprov_memory_stats). */
typedef struct jitprov_host_retired {
  size_t sz;
  uint64_t version_id; /* 0: nothing retired */
  uint64_t method_id;  /* its method; when nothing was retired, another method's code
                          that is live at code_start (0: none) */
  uint64_t module_id;  /* that method's module */
  uint64_t host_key;   /* that method's host key (0: none) */
  uint32_t code_size;
  uint32_t flags; /* JITPROV_HOST_RETIRED_LAST */
} jitprov_host_retired;
/* The retired version was its method's last live code. */
#define JITPROV_HOST_RETIRED_LAST 1u

/* Host mode: retires the live native version whose code starts at code_start when its
 * method's host key is host_key (any method's when 0), as jitprov_code_retire, and says
 * what it retired in *out, so that a host need keep no map of its own code: the
 * method, its module and key, and whether the method has live code left (a host that
 * unloads a method with its last version). JITPROV_E_UNKNOWN_VERSION when no live code
 * of that method starts there: out->method_id then names another method's code that
 * starts at that address (an unload that came after newer code was published there),
 * or is 0 (nothing starts there; code that only covers the address is not named).
 * JITPROV_E_INVALID_ARGUMENT for a NULL rt or out, or out->sz too small;
 * JITPROV_E_WRONG_CODE_MODE in model-heap mode. */
JITPROV_API int jitprov_code_retire_host(jitprov_runtime* rt, uint64_t code_start, uint64_t host_key,
                                         jitprov_host_retired* out);

/* Host mode: *code_start receives the start of the live code with the lowest start that
 * overlaps [start, start + size) (JITPROV_E_RANGE_OVERLAP from jitprov_code_publish
 * tells there is some), JITPROV_E_UNKNOWN_VERSION when none does.
 * JITPROV_E_INVALID_ARGUMENT for a NULL rt or code_start, size 0, or a range past 2^64;
 * JITPROV_E_WRONG_CODE_MODE in model-heap mode. */
JITPROV_API int jitprov_code_find_overlap(jitprov_runtime* rt, uint64_t start, uint32_t size, uint64_t* code_start);

/* *versions receives the live (published, not retired) native versions of a method, or
 * of every method of a module. JITPROV_E_INVALID_ARGUMENT for a NULL rt or versions;
 * JITPROV_E_UNKNOWN_METHOD / _METHOD_UNLOADED, JITPROV_E_UNKNOWN_MODULE / _MODULE_UNLOADED. */
JITPROV_API int jitprov_method_live_code(const jitprov_runtime* rt, uint64_t method_id, uint64_t* versions);
JITPROV_API int jitprov_module_live_code(const jitprov_runtime* rt, uint64_t module_id, uint64_t* versions);

/* Makes a published version the active one (backpatches the method's entry point when
 * its IL version is the active one). Not for OSR versions. */
JITPROV_API int jitprov_code_activate(jitprov_runtime* rt, uint64_t version_id);

/* Adds an IL version (ReJIT); new native versions belong to it. Fires rejit_request. */
JITPROV_API int jitprov_rejit_request(jitprov_runtime* rt, uint64_t method_id, uint32_t* rejit_id);

/* Lock-free: counts a call; returns 1 for exactly one call, the one that reaches the
 * tier-up threshold, 0 otherwise (and for unknown methods). */
JITPROV_API int jitprov_call_record(jitprov_runtime* rt, uint64_t method_id);

/* Lock-free: the method's active code, 0 when none (or unknown/unloaded). */
JITPROV_API uint64_t jitprov_entry_point(const jitprov_runtime* rt, uint64_t method_id);

/* ---- statistics ------------------------------------------------------------------ */

/* JITPROV_HIST_BUCKETS (trace_abi.h): bucket i: 2^(i-1) <= ns < 2^i; bucket 0: 0 ns */
#define JITPROV_LOCK_SITES (JITPROV_LOCK_SITE_MAX + 1) /* index = USDT site value; 0 unused */

typedef struct jitprov_hist {
  uint64_t count;
  uint64_t total_ns;
  uint64_t max_ns;
  uint64_t buckets[JITPROV_HIST_BUCKETS];
} jitprov_hist;

typedef struct jitprov_memory_stats {
  size_t sz;
  uint64_t live_modules;
  uint64_t live_methods;
  uint64_t il_versions;      /* ReJIT IL versions */
  uint64_t native_versions;  /* live, and retired ones awaiting their grace period */
  uint64_t method_bytes;     /* method records with their names */
  uint64_t version_bytes;    /* IL and native version nodes */
  uint64_t table_bytes;      /* id -> record tables, modules' method lists */
  uint64_t retired;          /* native versions retired (jitprov_code_retire) */
  uint64_t replayed;         /* host publications that returned an existing version */
  uint64_t overlaps_refused; /* host publications refused with JITPROV_E_RANGE_OVERLAP */
  /* --- since the reclamation bound --- */
  uint64_t awaiting_reclamation;    /* records removed, waiting for their grace period */
  uint64_t max_reclamation_backlog; /* the bound in force (0: none) */
  uint64_t reclaimed_inline;        /* removals whose thread waited (past the bound) */
  struct jitprov_hist reclaim_wait; /* how long each of those waited */
  /* --- since publication flags --- */
  uint64_t live_host_code; /* host mode: live published versions (ranges) */
} jitprov_memory_stats;

/* out->sz must be set by the caller; fields beyond it are not written. */
JITPROV_API int jitprov_memory_stats_get(const jitprov_runtime* rt, jitprov_memory_stats* out);

typedef struct jitprov_lock_stats {
  size_t sz;
  /* [0] outside rundowns, [1] while a rundown ran; [site]. */
  jitprov_hist wait[2][JITPROV_LOCK_SITES];
  jitprov_hist hold[2][JITPROV_LOCK_SITES];
} jitprov_lock_stats;

/* Zeros when the runtime was created without lock_stats. */
JITPROV_API int jitprov_lock_stats_get(const jitprov_runtime* rt, jitprov_lock_stats* out);
/* Zeroes the lock statistics. It takes the code-version-manager lock (whose holder
 * writes them): never call it from a rundown sink, which may run under that lock. */
JITPROV_API void jitprov_lock_stats_reset(jitprov_runtime* rt);
/* Site name for a USDT site value: "tier0_publish", ...; "invalid" otherwise. */
JITPROV_API const char* jitprov_lock_site_name(int site);

/* ---- rundown engine -------------------------------------------------------------- */

typedef struct jitprov_rundown jitprov_rundown;

/* A second consumer of each rundown's walk (e.g. a perf map writer). */
enum jitprov_sink_kind {
  JITPROV_SINK_BEGIN = 0,   /* a rundown starts: rundown_id */
  JITPROV_SINK_MODULE = 1,  /* module_id, module_path */
  JITPROV_SINK_VERSION = 2, /* one live native version: every field below but module_path */
  JITPROV_SINK_END = 3      /* the rundown is complete */
};

typedef struct jitprov_sink_record {
  uint32_t kind; /* enum jitprov_sink_kind */
  uint64_t rundown_id;
  uint64_t module_id;
  const char* module_path;
  uint64_t method_id;
  uint64_t version_id;
  uint32_t rejit_id;
  uint32_t tier;
  uint32_t host_tier;
  uint64_t code_start;
  uint32_t code_size;
  /* NUL-terminated UTF-8, valid until the callback returns. */
  const char* name_space;
  const char* name;
  const char* signature;
} jitprov_sink_record;

/* Called on the thread running the rundown (the engine's, or jitprov_rundown_run_now's
 * caller), one rundown at a time, in order. It must not call jitprov: in the locked modes
 * it runs with the code-version-manager lock held. */
typedef void (*jitprov_rundown_sink)(void* ctx, const jitprov_sink_record* record);

typedef struct jitprov_rundown_config {
  size_t sz;
  /* Modes of successive triggered rundowns, taken in turn (NULL/0: lockfree). */
  const int* modes;
  size_t n_modes;
  /* Comma list: session, signal, exit, at:SEC, every:SEC, or none (NULL = none). An API
   * request always works. The library installs no signal handler: for "signal", call
   * jitprov_rundown_request_from_signal() from the host's handler. */
  const char* triggers;
  /* Cap on lock-free rundown events per second (0 = as fast as the tracer takes them). */
  uint64_t max_rate;
  /* Optional: every rundown's walk is also handed to sink(sink_ctx, ...). */
  jitprov_rundown_sink sink;
  void* sink_ctx;
  /* Optional (after sink_ctx: a config of the earlier size leaves it unset):
   * prepare(prepare_ctx) at the start of every rundown, before its rundown_begin, on the
   * thread that runs it, one rundown at a time (in the engine's order: it must not call
   * jitprov_rundown_* on this engine, and a stop waits for it), with no lock of the
   * registry held: it may publish. A host that queues its runtime's code events and publishes them
   * later publishes what it queued here, so that each rundown holds everything the
   * runtime reported before the rundown began. */
  void (*prepare)(void* ctx);
  void* prepare_ctx;
} jitprov_rundown_config;

#define JITPROV_RUNDOWN_CONFIG_INIT \
  { sizeof(jitprov_rundown_config), NULL, 0, NULL, 0, NULL, NULL, NULL, NULL }

/* Checks a trigger list; on error writes why into `why` (may be NULL) and returns
 * JITPROV_E_INVALID_ARGUMENT. */
JITPROV_API int jitprov_rundown_triggers_check(const char* triggers, char* why, size_t why_len);

/* A rundown engine over `rt`. A runtime may have several, one after another or at once:
 * their rundowns take the runtime's ids (from 1, never twice) and begin in the ids'
 * order, one at a time up to each rundown_begin. */
JITPROV_API int jitprov_rundown_create(jitprov_runtime* rt, const jitprov_rundown_config* config,
                                       jitprov_rundown** out);
/* Starts the engine's thread, which answers the triggers. */
JITPROV_API int jitprov_rundown_start(jitprov_rundown* rd);
/* Stops the thread and cuts short the rundown in progress (the engine's, or a
 * jitprov_rundown_run_now() on another thread), waiting for it to end; then runs the
 * exit rundown when that trigger is set and the thread was running. run_now works after
 * it; start starts the engine again. */
JITPROV_API void jitprov_rundown_stop(jitprov_rundown* rd);
/* stop(), then frees. May be called while jitprov_rundown_run_now() runs on other
 * threads: their rundowns are cut short and destroy waits for them to return (a call
 * that begins after destroy did is the caller's bug). NULL is a no-op. */
JITPROV_API void jitprov_rundown_destroy(jitprov_rundown* rd);
/* Queues a rundown (trigger api); coalesced with one already queued. */
JITPROV_API void jitprov_rundown_request(jitprov_rundown* rd);
/* Async-signal-safe: queues a rundown with trigger signal (if that trigger is set). */
JITPROV_API void jitprov_rundown_request_from_signal(jitprov_rundown* rd);

typedef struct jitprov_rundown_result {
  uint64_t rundown_id;
  uint32_t mode;    /* enum jitprov_rundown_mode */
  uint32_t trigger; /* enum jitprov_rundown_trigger */
  uint64_t method_count;
  uint64_t modules;
  uint64_t methods;  /* methods with records in it: walked or caught up, each once */
  uint64_t versions; /* its method records */
  uint64_t skipped;  /* versions seen whose code was not published yet */
  uint64_t retried;  /* emission stalls waiting for trace buffer space */
  uint64_t begin_ns; /* CLOCK_MONOTONIC */
  uint64_t duration_ns;
  int traced; /* recorded into at least one lttng session */
  /* --- since the publication sequence (first 88 bytes: the original layout) --- */
  uint32_t sessions;    /* lttng sessions it was recorded into */
  uint64_t begin_seq;   /* the publication sequence when it began */
  uint64_t publish_seq; /* P: complete up to this publication (docs/spec.md G3+) */
  uint64_t end_seq;     /* E: the sequence at its end */
  uint64_t caught_up;   /* versions published during the walk, added by its catch-up */
  uint64_t catch_up_ns; /* time the catch-up took */
  int cut_short;        /* 1: jitprov_rundown_stop()/destroy() ended it early: not complete */
  /* --- since methods were counted by their records --- */
  uint64_t caught_up_methods; /* of `methods`, those only the catch-up added records of */
} jitprov_rundown_result;

/* Runs one rundown on the calling thread (trigger api), into every lttng session that
 * records the rundown events. out may be NULL; it receives the original layout only
 * (the fields up to `traced`, 88 bytes): read the rest with jitprov_rundown_results().
 * JITPROV_E_CUT_SHORT (out filled all the same): a jitprov_rundown_stop() or
 * jitprov_rundown_destroy() on another thread ended it early, or it began after destroy
 * did (no rundown: rundown_id 0). Before 0.4.0 that returned JITPROV_OK. */
JITPROV_API int jitprov_rundown_run_now(jitprov_rundown* rd, int mode, jitprov_rundown_result* out);
/* Rundowns completed so far. */
JITPROV_API uint64_t jitprov_rundown_completed(const jitprov_rundown* rd);
/* The engine keeps the results of its last JITPROV_RUNDOWN_RESULTS_KEPT rundowns
 * (jitprov_rundown_completed() counts them all): copies the oldest min(cap, kept) of
 * those into out (result_sz = sizeof(jitprov_rundown_result)); returns how many are
 * kept. */
#define JITPROV_RUNDOWN_RESULTS_KEPT 1024
JITPROV_API size_t jitprov_rundown_results(const jitprov_rundown* rd, jitprov_rundown_result* out, size_t cap,
                                           size_t result_sz);

/* ---- jitdump sink ---------------------------------------------------------------- */

/* perf's jitdump (tools/perf/Documentation/jitdump-specification.txt in the Linux tree):
 * DIR/jit-PID.dump, read by `perf inject --jit` into a profile taken with
 * `perf record -k 1` (CLOCK_MONOTONIC, the clock of the records' time stamps), so that
 * every sample in JIT code is named by the version at its address at its time, and
 * `perf annotate` shows the code. One file per process: one runtime at a time. */

/* jitprov_jitdump_config.flags */
/* Host mode: every published range is readable by this process, copy its bytes into
 * the records (read by the kernel: a range unmapped by then gives zeros, counted in
 * `unreadable`, never a fault). Without it, and in model-heap mode, the code is zeros. */
#define JITPROV_JITDUMP_COPY_CODE 0x1u

typedef struct jitprov_jitdump_config {
  size_t sz;
  const char* dir; /* the directory of jit-PID.dump; NULL = "." */
  uint32_t flags;  /* JITPROV_JITDUMP_* */
} jitprov_jitdump_config;

#define JITPROV_JITDUMP_CONFIG_INIT \
  { sizeof(jitprov_jitdump_config), NULL, 0 }

/* Creates DIR/jit-PID.dump (truncating an old one), writes its header, maps its first
 * page PROT_EXEC (the mmap event by which perf finds the file: perf record must be
 * running by then), writes a JIT_CODE_LOAD for every version live now (a walk, stamped
 * with the open's time), then one for every publication (jitprov_code_publish,
 * jitprov_jit_publish), stamped under the code-version-manager lock and written after
 * it on the publishing thread, until jitprov_jitdump_close(); before it, with the same
 * stamp and in the same write, a JIT_CODE_DEBUG_INFO when the publication has lines
 * (jitprov_code_desc.lines). JITPROV_E_BUSY when a
 * runtime of this process has the file open; JITPROV_E_INVALID_ARGUMENT when it
 * cannot be created or mapped (errno in the stats' last_errno). config may be NULL. */
JITPROV_API int jitprov_jitdump_open(jitprov_runtime* rt, const jitprov_jitdump_config* config);
/* Writes JIT_CODE_CLOSE and closes the file, once the publications in flight have
 * written their records. No-op when not open; jitprov_runtime_destroy() closes it. */
JITPROV_API void jitprov_jitdump_close(jitprov_runtime* rt);

typedef struct jitprov_jitdump_stats {
  size_t sz;
  int open;
  uint64_t loads;              /* JIT_CODE_LOAD records of publications */
  uint64_t rundown_loads;      /* ... of code live when the file was opened (the walk) */
  uint64_t code_bytes;         /* code bytes copied */
  uint64_t loads_without_code; /* records whose code is zeros */
  uint64_t unreadable;         /* of those: ranges the kernel could not read */
  uint64_t bytes;              /* the file's size */
  uint64_t write_errors;       /* failed writes; each dropped its record */
  uint64_t dropped;            /* records not in the file (write errors, > 4 GiB) */
  int last_errno;              /* of the last failed open, mmap or write */
  /* --- since line tables (the first 88 bytes: the original layout) --- */
  uint64_t debug_records; /* JIT_CODE_DEBUG_INFO records written (jitprov_code_desc.lines) */
  uint64_t debug_entries; /* line entries in them (the host's, and one at each code's end) */
  uint64_t debug_dropped; /* DEBUG_INFO records not in the file: write errors (counted in
                             write_errors, the load with them), > 4 GiB */
} jitprov_jitdump_stats;

/* The last file's counters (zeros before the first open). out->sz must be set. */
JITPROV_API int jitprov_jitdump_stats_get(const jitprov_runtime* rt, jitprov_jitdump_stats* out);

/* ---- trace provider -------------------------------------------------------------- */

/* "loaded PATH" or "not loaded, running untraced: WHY". Loads the provider on first
 * call. Valid for the life of the process. */
JITPROV_API const char* jitprov_trace_provider_status(void);
/* 1 when the LTTng-UST provider is loaded. */
JITPROV_API int jitprov_trace_provider_loaded(void);

#ifdef __cplusplus
}
#endif

#endif /* JITPROV_JITPROV_H */
