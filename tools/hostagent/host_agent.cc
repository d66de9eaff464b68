// SPDX-License-Identifier: MIT
#include "host_agent.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace jitprov::hostagent {

const char* const kCommonHelp =
    "  trigger=LIST       rundown triggers: session (an lttng session that records\n"
    "                     jitprov_rundown events starts), every:SEC, at:SEC, exit, none\n"
    "                     (default session,exit)\n"
    "  perfmap=DIR|off    write DIR/perf-PID.map at every rundown (default /tmp)\n"
    "  jitdump=DIR|off    write perf's jitdump DIR/jit-PID.dump: every code load with\n"
    "                     its time and code, for perf inject --jit (default off)\n"
    "  rundown=MODE       lockfree (default), locked, per-method\n"
    "  rate=N             cap rundown events per second (default 0: unpaced)\n"
    "  stats=FILE         write the client's counters as JSON when the runtime ends\n"
    "                     (%p in FILE: the process id)\n"
    "  verbose            log to stderr what the client found\n";

namespace {

std::string checkDir(const std::string& v);

std::vector<std::pair<std::string, std::string>> split(const std::string& s, Options* o, std::string* err) {
  std::vector<std::pair<std::string, std::string>> kv;
  size_t pos = 0;
  while (!s.empty() && pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string piece = s.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = piece.find('=');
    if (piece == "help") {
      *err = "help";
      return {};
    }
    if (piece == "verbose") {
      o->verbose = true;
    } else if (eq != std::string::npos) {
      kv.emplace_back(piece.substr(0, eq), piece.substr(eq + 1));
    } else if (!kv.empty() && kv.back().first == "trigger" && !piece.empty()) {
      kv.back().second += "," + piece;
    } else if (!piece.empty()) {
      *err = "unknown option '" + piece + "'";
      return {};
    }
    if (comma >= s.size()) break;
  }
  return kv;
}

std::string parseCommon(const std::string& k, const std::string& v, Options* o, bool* took) {
  *took = true;
  if (k == "trigger") {
    char why[256];
    if (jitprov_rundown_triggers_check(v.c_str(), why, sizeof why) != JITPROV_OK) return "trigger=" + v + ": " + why;
    o->trigger = v;
  } else if (k == "perfmap") {
    // Checked now: a bad one would fail every rundown's map, quietly, until the end.
    if (const std::string why = checkPerfMapDir(v); !why.empty()) return "perfmap=" + v + ": " + why;
    o->perfmap = v == "off" ? "" : v;
  } else if (k == "jitdump") {
    if (const std::string why = checkDir(v); !why.empty()) return "jitdump=" + v + ": " + why;
    o->jitdump = v == "off" ? "" : v;
  } else if (k == "rundown") {
    if (jitprov_rundown_mode_parse(v.c_str(), &o->mode) != JITPROV_OK)
      return "rundown=" + v + ": not one of lockfree, locked, per-method";
  } else if (k == "rate") {
    if (!parseCount(v, &o->rate))
      return "rate=" + v + ": not a number of events per second (0 to " + std::to_string(ULLONG_MAX) + ")";
  } else if (k == "stats") {
    // %p: the process id (child processes inherit the options).
    std::string path = v;
    for (size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at))
      path.replace(at, 2, std::to_string(getpid()));
    // Checked now, not at the end: never a device, a directory or a symlink.
    if (const std::string why = tools::checkOutputPath(path); !why.empty()) return "stats=" + v + ": " + why;
    o->stats = path;
  } else {
    *took = false;
  }
  return "";
}

}  // namespace

bool parseCount(const std::string& v, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long r = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end != '\0' || errno != 0) return false;
  *out = r;
  return true;
}

bool parsePublish(const std::string& v, uint32_t* ms, size_t* events, std::string* why) {
  if (v == "inline") {
    *ms = 0;
    return true;
  }
  const size_t slash = v.find('/');
  uint64_t m = 0, n = 0;
  if (!parseCount(v.substr(0, slash), &m) || m < 1 || m > 3600000 ||
      (slash != std::string::npos && (!parseCount(v.substr(slash + 1), &n) || n > 10000000))) {
    *why = "inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)";
    return false;
  }
  *ms = uint32_t(m);
  if (slash != std::string::npos) *events = size_t(n);
  return true;
}

std::string parseOptions(const std::string& text, Options* o,
                         const std::function<int(const std::string&, const std::string&, std::string*)>& extra,
                         const char* forbidden_trigger, const char* forbidden_why) {
  std::string err;
  const auto kv = split(text, o, &err);
  if (!err.empty()) return err;
  for (const auto& [k, v] : kv) {
    if (k == "trigger" && forbidden_trigger != nullptr && v.find(forbidden_trigger) != std::string::npos)
      return "trigger=" + v + ": " + forbidden_why;
    bool took = false;
    if (std::string why = parseCommon(k, v, o, &took); !why.empty()) return why;
    if (took) continue;
    std::string why;
    const int r = extra ? extra(k, v, &why) : 0;
    if (r < 0) return k + "=" + v + ": " + why;
    if (r == 0) return "unknown option '" + k + "'";
  }
  return "";
}

namespace {
// "" for "off" or a writable directory, else why not.
std::string checkDir(const std::string& v) {
  if (v.empty()) return "empty (off turns it off)";
  if (v == "off") return "";
  struct stat st;
  if (stat(v.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (access(v.c_str(), W_OK) != 0) return std::strerror(errno);
  return "";
}
}  // namespace

std::string checkPerfMapDir(const std::string& v) {
  if (v.empty()) return "empty (perfmap=off turns the perf map off)";
  std::string why = checkDir(v);
  if (why == "not a directory") why += " (the map is written as DIR/perf-PID.map)";
  return why;
}

namespace {
// Lower-case hex of v without leading zeros (at least one digit) at `out`; returns the end.
char* hexTo(char* out, uint64_t v) {
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  while (n > 0) *out++ = tmp[--n];
  return out;
}

// One perf map line, "START SIZE NAME\n" as "%" PRIx64 " %x %s\n" would print it, with
// NAME `a` or `a::b`: formatted by hand and written unlocked (only the rundown thread
// writes the map), not through fprintf's format parsing and stream lock. A rundown
// writes one line per live version: on javac that is ~5 000 lines every 5 s on the JVM's
// time (docs/jvm-agent.md, "The agent against its floor").
void perfMapLine(FILE* f, uint64_t start, uint32_t size, const char* a, const char* b) {
  char head[2 * 16 + 3];
  char* p = hexTo(head, start);
  *p++ = ' ';
  p = hexTo(p, size);
  *p++ = ' ';
  fwrite_unlocked(head, 1, size_t(p - head), f);
  fputs_unlocked(a, f);
  if (b != nullptr) {
    fputs_unlocked("::", f);
    fputs_unlocked(b, f);
  }
  fputc_unlocked('\n', f);
}
}  // namespace

void perfMapSink(void* ctx, const jitprov_sink_record* r) {
  auto& pm = *static_cast<PerfMap*>(ctx);
  switch (r->kind) {
    case JITPROV_SINK_BEGIN:
      // A fresh temporary beside the map (mkstemp: never through a planted symlink).
      pm.open = pm.file.open(pm.final_path);
      if (!pm.open) {
        ++pm.errors;
        pm.last_error = "open " + pm.final_path + ": " + pm.file.error();
      }
      pm.lines = 0;
      break;
    case JITPROV_SINK_VERSION:
      if (!pm.open) break;
      if (r->module_id == pm.bare_module)
        perfMapLine(pm.file.file(), r->code_start, r->code_size, r->name, nullptr);
      else
        perfMapLine(pm.file.file(), r->code_start, r->code_size, r->name_space, r->name);
      ++pm.lines;
      break;
    case JITPROV_SINK_END:
      if (!pm.open) break;
      pm.open = false;
      if (!pm.file.commit()) {
        ++pm.errors;
        pm.last_error = "write " + pm.final_path + ": " + pm.file.error();
      } else {
        ++pm.written;
      }
      break;
    default:
      break;
  }
}

int startRundowns(jitprov_runtime* rt, Options& o, PerfMap* pm, jitprov_rundown** out, void (*prepare)(void*),
                  void* prepare_ctx) {
  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.prepare = prepare;
  rc.prepare_ctx = prepare_ctx;
  rc.modes = &o.mode;
  rc.n_modes = 1;
  rc.triggers = o.trigger.c_str();
  rc.max_rate = o.rate;
  if (!o.perfmap.empty()) {
    pm->final_path = o.perfmap + "/perf-" + std::to_string(getpid()) + ".map";
    rc.sink = &perfMapSink;
    rc.sink_ctx = pm;
  }
  int e = jitprov_rundown_create(rt, &rc, out);
  if (e == JITPROV_OK) e = jitprov_rundown_start(*out);
  return e;
}

std::string openJitdump(jitprov_runtime* rt, const Options& o) {
  if (o.jitdump.empty()) return "";
  jitprov_jitdump_config c = JITPROV_JITDUMP_CONFIG_INIT;
  c.dir = o.jitdump.c_str();
  c.flags = JITPROV_JITDUMP_COPY_CODE;
  const int e = jitprov_jitdump_open(rt, &c);
  if (e == JITPROV_OK) return "";
  jitprov_jitdump_stats st{};
  st.sz = sizeof st;
  (void)jitprov_jitdump_stats_get(rt, &st);
  std::string why = "open " + o.jitdump + "/jit-" + std::to_string(getpid()) + ".dump: " + jitprov_strerror(e);
  if (st.last_errno != 0) why += std::string(" (") + std::strerror(st.last_errno) + ")";
  return why;
}

void jitdumpStatsJson(FILE* f, jitprov_runtime* rt, const Options& o) {
  if (o.jitdump.empty()) return;
  jitprov_jitdump_stats st{};
  st.sz = sizeof st;
  (void)jitprov_jitdump_stats_get(rt, &st);
  std::fprintf(f,
               "  \"jitdump\": {\"loads\": %" PRIu64 ", \"rundown_loads\": %" PRIu64 ", \"code_bytes\": %" PRIu64
               ", \"loads_without_code\": %" PRIu64 ", \"unreadable\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"write_errors\": %" PRIu64 ", \"dropped\": %" PRIu64
               ", \"last_errno\": %d"
               ", \"debug_records\": %" PRIu64 ", \"debug_entries\": %" PRIu64 ", \"debug_dropped\": %" PRIu64 "},\n",
               st.loads, st.rundown_loads, st.code_bytes, st.loads_without_code, st.unreadable, st.bytes,
               st.write_errors, st.dropped, st.last_errno, st.debug_records, st.debug_entries, st.debug_dropped);
}

void closeJitdump(const char* who, jitprov_runtime* rt, const Options& o) {
  if (o.jitdump.empty() || rt == nullptr) return;
  jitprov_jitdump_close(rt);
  jitprov_jitdump_stats st{};
  st.sz = sizeof st;
  (void)jitprov_jitdump_stats_get(rt, &st);
  if (st.write_errors + st.dropped + st.unreadable + st.debug_dropped != 0 || o.verbose)
    std::fprintf(
        stderr,
        "%s: jitdump: %" PRIu64 " loads (%" PRIu64 " at the open), %" PRIu64 " bytes; %" PRIu64
        " write errors, %" PRIu64 " records dropped (%" PRIu64 " line records), %" PRIu64 " unreadable ranges%s%s\n",
        who, st.loads, st.rundown_loads, st.bytes, st.write_errors, st.dropped, st.debug_dropped, st.unreadable,
        st.last_errno != 0 ? "; last error: " : "", st.last_errno != 0 ? std::strerror(st.last_errno) : "");
}

void setLttngEnvironment() {
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  const char* keep = std::getenv("JITPROV_BADDR_STATEDUMP");
  if (keep == nullptr || std::strcmp(keep, "1") != 0) setenv("LTTNG_UST_WITHOUT_BADDR_STATEDUMP", "1", 0);
}

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

RundownThreadName::RundownThreadName() {
  renamed_ = pthread_getname_np(pthread_self(), old_, sizeof old_) == 0 &&
             pthread_setname_np(pthread_self(), kRundownThread) == 0;
}

RundownThreadName::~RundownThreadName() {
  if (renamed_) (void)pthread_setname_np(pthread_self(), old_);
}

uint64_t threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

namespace {
// OwnCpu::Span nesting on this thread. Initial-exec, as libjitprov's own TLS: an access
// is a load of its offset and one at %fs, not a call to __tls_get_addr, every callback.
thread_local __attribute__((tls_model("initial-exec"))) int t_span_depth = 0;
}  // namespace

OwnCpu::Span::Span(OwnCpu& own, bool start) {
  if (!own.on) return;
  nested_ = t_span_depth++ != 0;
  if (nested_) return;
  own_ = &own;
  start_ = start;
  t0_ = start ? threadCpuNs() : nowNs();
}

OwnCpu::Span::~Span() {
  if (own_ == nullptr && !nested_) return;  // off
  --t_span_depth;
  if (own_ == nullptr) return;
  if (start_) {
    own_->start_ns.fetch_add(threadCpuNs() - t0_, std::memory_order_relaxed);
    return;
  }
  own_->callbacks_wall_ns.fetch_add(nowNs() - t0_, std::memory_order_relaxed);
  own_->callbacks.fetch_add(1, std::memory_order_relaxed);
}

void OwnCpu::snapshotThreads() {
  // Each thread of this process named kRundownThread, kPublishThread or "<comm>-ust"
  // (lttng-ust's), with the first field of its schedstat: ns on a CPU.
  threads_.clear();
  threads_ns_ = 0;
  snapped_ = true;
  if (DIR* d = opendir("/proc/self/task"); d != nullptr) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string base = std::string("/proc/self/task/") + e->d_name;
      char comm[64] = {};
      unsigned long long ns = 0;
      FILE* c = std::fopen((base + "/comm").c_str(), "re");
      if (c == nullptr) continue;
      const bool named = std::fgets(comm, sizeof comm, c) != nullptr;
      std::fclose(c);
      if (!named) continue;
      comm[std::strcspn(comm, "\n")] = '\0';
      const size_t n = std::strlen(comm);
      const bool ust = n > 4 && std::strcmp(comm + n - 4, "-ust") == 0;
      const bool ours = std::strcmp(comm, kRundownThread) == 0 || std::strcmp(comm, kPublishThread) == 0;
      if (!ust && !ours) continue;
      FILE* st = std::fopen((base + "/schedstat").c_str(), "re");
      if (st == nullptr) continue;
      const bool read = std::fscanf(st, "%llu", &ns) == 1;
      std::fclose(st);
      if (!read) continue;
      threads_ns_ += ns;
      char item[128];
      std::snprintf(item, sizeof item, "%s{\"name\": \"%s\", \"ns\": %llu}", threads_.empty() ? "" : ", ",
                    ust ? "lttng-ust" : comm, ns);
      threads_ += item;
    }
    closedir(d);
  }
}

void OwnCpu::json(FILE* f) {
  if (!snapped_) snapshotThreads();
  const uint64_t cb = callbacks_wall_ns.load(std::memory_order_relaxed), st = start_ns.load(std::memory_order_relaxed),
                 ex = exit_ns.load(std::memory_order_relaxed);
  std::fprintf(f,
               "  \"own_cpu\": {\"timed\": %s, \"callbacks\": %" PRIu64 ", \"callbacks_wall_ns\": %" PRIu64
               ", \"start_ns\": %" PRIu64 ", \"exit_ns\": %" PRIu64 ", \"threads_ns\": %" PRIu64
               ", \"total_ns\": %" PRIu64 ", \"threads\": [%s]},\n",
               on ? "true" : "false", callbacks.load(std::memory_order_relaxed), cb, st, ex, threads_ns_,
               cb + st + ex + threads_ns_, threads_.c_str());
}

void histJson(FILE* f, const char* name, const Hist& h) {
  std::fprintf(f,
               "  \"%s\": {\"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"p50_ns\": %" PRIu64
               ", \"p99_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 "},\n",
               name, h.count, h.total_ns, h.quantile(0.5), h.quantile(0.99), h.max_ns);
}

}  // namespace jitprov::hostagent
