// SPDX-License-Identifier: MIT
// The jitdump sink through the C API: the file read back by a reader of its own (the
// layout of jitdump-specification.txt, written out again here, not the library's
// structs): header, JIT_CODE_LOAD records with their names and code, the walk of code
// loaded before the open, JIT_CODE_DEBUG_INFO byte by byte before its load,
// JIT_CODE_CLOSE, and the counters, write errors included.
#include <jitprov/jitprov.h>

#include <gtest/gtest.h>

#include "fork_guard.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Load {
  uint64_t timestamp, vma, code_addr, code_size, code_index;
  uint32_t pid, tid;
  std::string name;
  std::vector<unsigned char> code;
};

struct DebugInfo {
  uint64_t timestamp, code_addr, nr_entry;
  uint32_t total_size;
  size_t offset;     // in the file
  size_t next_load;  // the index in `loads` of the next JIT_CODE_LOAD in the file
  std::string raw;   // the record's bytes
};

struct Dump {
  uint32_t magic = 0, version = 0, header_size = 0, elf_mach = 0, pid = 0;
  uint64_t timestamp = 0, flags = 0;
  std::vector<Load> loads;
  std::vector<DebugInfo> debug;
  std::vector<uint32_t> ids;  // every record's id, in file order
  int closes = 0;
  bool close_last = false;
  bool well_formed = false;  // every record whole, up to the end of the file
};

template <class T>
T at(const std::string& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// An independent reader: offsets from the specification, not from jitdump.cc.
Dump readDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Dump d;
  if (b.size() < 40) return d;
  d.magic = at<uint32_t>(b, 0);
  d.version = at<uint32_t>(b, 4);
  d.header_size = at<uint32_t>(b, 8);
  d.elf_mach = at<uint32_t>(b, 12);
  d.pid = at<uint32_t>(b, 20);
  d.timestamp = at<uint64_t>(b, 24);
  d.flags = at<uint64_t>(b, 32);
  size_t off = d.header_size;
  while (off + 16 <= b.size()) {
    const uint32_t id = at<uint32_t>(b, off), total = at<uint32_t>(b, off + 4);
    if (total < 16 || off + total > b.size()) return d;
    d.close_last = id == 3;
    d.ids.push_back(id);
    if (id == 3) ++d.closes;
    if (id == 2) {
      d.debug.push_back(DebugInfo{at<uint64_t>(b, off + 8), at<uint64_t>(b, off + 16), at<uint64_t>(b, off + 24), total,
                                  off, d.loads.size(), b.substr(off, total)});
    }
    if (id == 0) {
      Load l;
      l.timestamp = at<uint64_t>(b, off + 8);
      l.pid = at<uint32_t>(b, off + 16);
      l.tid = at<uint32_t>(b, off + 20);
      l.vma = at<uint64_t>(b, off + 24);
      l.code_addr = at<uint64_t>(b, off + 32);
      l.code_size = at<uint64_t>(b, off + 40);
      l.code_index = at<uint64_t>(b, off + 48);
      l.name = std::string(b.c_str() + off + 56);
      // The code is the record's last code_size bytes (as perf reads it).
      l.code.assign(b.begin() + long(off + total - l.code_size), b.begin() + long(off + total));
      d.loads.push_back(l);
    }
    off += total;
  }
  d.well_formed = off == b.size();
  return d;
}

struct DumpHost {
  jitprov_runtime* rt = nullptr;
  uint64_t module = 0;
  std::string dir;
  explicit DumpHost(uint32_t mode = JITPROV_CODE_HOST) {
    jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
    cfg.code_mode = mode;
    EXPECT_EQ(jitprov_runtime_create(&cfg, &rt), JITPROV_OK);
    EXPECT_EQ(jitprov_module_register(rt, "app.jar", 1, &module), JITPROV_OK);
    char tmpl[] = "/tmp/jitdump_test.XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~DumpHost() {
    jitprov_runtime_destroy(rt);
    std::remove(path().c_str());
    rmdir(dir.c_str());
  }
  std::string path() const { return dir + "/jit-" + std::to_string(getpid()) + ".dump"; }
  uint64_t method(const char* ns, const char* name) {
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.name_space = ns;
    d.name = name;
    uint64_t id = 0;
    EXPECT_EQ(jitprov_method_register(rt, module, &d, &id), JITPROV_OK);
    return id;
  }
  uint64_t publish(uint64_t method, const void* start, uint32_t size) {
    jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
    c.code_start = reinterpret_cast<uintptr_t>(start);
    c.code_size = size;
    uint64_t v = 0;
    EXPECT_EQ(jitprov_code_publish(rt, method, &c, &v), JITPROV_OK);
    return v;
  }
  int open(uint32_t flags) {
    jitprov_jitdump_config c = JITPROV_JITDUMP_CONFIG_INIT;
    c.dir = dir.c_str();
    c.flags = flags;
    return jitprov_jitdump_open(rt, &c);
  }
  jitprov_jitdump_stats stats() {
    jitprov_jitdump_stats s{};
    s.sz = sizeof s;
    EXPECT_EQ(jitprov_jitdump_stats_get(rt, &s), JITPROV_OK);
    return s;
  }
};

std::vector<unsigned char> bytes(const unsigned char* p, size_t n) { return {p, p + n}; }

TEST(Jitdump, HeaderLoadsRundownReuseAndClose) {
  DumpHost h;
  static unsigned char code_a[64], code_b[32], code_c[48];
  for (unsigned i = 0; i < sizeof code_a; ++i) code_a[i] = static_cast<unsigned char>(i);
  std::memset(code_b, 0xcc, sizeof code_b);
  std::memset(code_c, 0x90, sizeof code_c);
  const uint64_t a = h.method("java.lang.String", "hashCode"), b = h.method("", "stub");
  const uint64_t va = h.publish(a, code_a, sizeof code_a);  // before the open: the walk writes it
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  EXPECT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_E_BUSY);
  const uint64_t vb = h.publish(b, code_b, sizeof code_b);
  // Retire b and put another method's code at its address: the dump has both, in time.
  ASSERT_EQ(jitprov_code_retire(h.rt, vb), JITPROV_OK);
  std::memcpy(code_b, code_c, sizeof code_b);
  const uint64_t c = h.method("app.Main", "run");
  const uint64_t vc = h.publish(c, code_b, sizeof code_b);
  jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.open, 1);
  EXPECT_EQ(s.rundown_loads, 1u);
  EXPECT_EQ(s.loads, 2u);
  EXPECT_EQ(s.code_bytes, sizeof code_a + 2 * sizeof code_b);
  EXPECT_EQ(s.write_errors + s.dropped + s.loads_without_code, 0u);
  jitprov_jitdump_close(h.rt);
  s = h.stats();
  EXPECT_EQ(s.open, 0);

  const Dump d = readDump(h.path());
  EXPECT_TRUE(d.well_formed);
  EXPECT_EQ(d.magic, 0x4A695444u);
  EXPECT_EQ(d.version, 1u);
  EXPECT_EQ(d.header_size, 40u);
#if defined(__x86_64__)
  EXPECT_EQ(d.elf_mach, 62u);  // EM_X86_64
#endif
  EXPECT_EQ(d.pid, uint32_t(getpid()));
  EXPECT_EQ(d.flags, 0u);  // CLOCK_MONOTONIC stamps
  EXPECT_EQ(d.closes, 1);
  EXPECT_TRUE(d.close_last);
  ASSERT_EQ(d.loads.size(), 3u);
  EXPECT_EQ(s.bytes, 40 + 3 * 56 + std::string("java.lang.String::hashCode").size() + 1 + std::string("stub").size() +
                         1 + std::string("app.Main::run").size() + 1 + sizeof code_a + 2 * sizeof code_b + 16);
  const Load& la = d.loads[0];
  EXPECT_EQ(la.name, "java.lang.String::hashCode");
  EXPECT_EQ(la.code_addr, reinterpret_cast<uintptr_t>(code_a));
  EXPECT_EQ(la.vma, la.code_addr);
  EXPECT_EQ(la.code_index, va);
  EXPECT_EQ(la.code, bytes(code_a, sizeof code_a));
  EXPECT_EQ(la.pid, uint32_t(getpid()));
  EXPECT_GE(la.timestamp, d.timestamp);
  const Load &lb = d.loads[1], &lc = d.loads[2];
  EXPECT_EQ(lb.name, "stub");  // no namespace: the name alone
  EXPECT_EQ(lb.code_index, vb);
  EXPECT_EQ(lb.code, std::vector<unsigned char>(sizeof code_b, 0xcc));
  EXPECT_EQ(lc.name, "app.Main::run");
  EXPECT_EQ(lc.code_index, vc);
  EXPECT_EQ(lc.code_addr, lb.code_addr);  // the reused range
  EXPECT_EQ(lc.code, std::vector<unsigned char>(sizeof code_b, 0x90));
  EXPECT_LT(la.timestamp, lb.timestamp);
  EXPECT_LT(lb.timestamp, lc.timestamp);  // the reuse comes after, in time
}

// The bytes of one debug_entry (the specification: u64 addr, int lineno, int discrim,
// the file name with its NUL), written out here by hand.
std::string entryBytes(uint64_t addr, int32_t line, int32_t discrim, const std::string& file) {
  std::string e(16, '\0');
  std::memcpy(&e[0], &addr, 8);
  std::memcpy(&e[8], &line, 4);
  std::memcpy(&e[12], &discrim, 4);
  return e + file + '\0';
}

TEST(Jitdump, DebugInfoPrecedesItsLoadByteForByte) {
  DumpHost h;
  static unsigned char code[64], other[32];
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  const uintptr_t base = reinterpret_cast<uintptr_t>(code);
  const jitprov_line_entry lines[] = {{base, 10, 0, "app/Main.java"},
                                      {base + 8, 11, 0, nullptr},  // the previous entry's file
                                      {base + 8, 12, 3, nullptr},
                                      {base + 40, 7, 0, "app/Util.java"}};
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_start = base;
  c.code_size = sizeof code;
  c.lines = lines;
  c.n_lines = 4;
  uint64_t v = 0;
  ASSERT_EQ(jitprov_code_publish(h.rt, h.method("app.Main", "run"), &c, &v), JITPROV_OK);
  h.publish(h.method("app.Main", "nolines"), other, sizeof other);  // no DEBUG_INFO
  jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.debug_records, 1u);
  EXPECT_EQ(s.debug_entries, 5u);  // and one at the end
  EXPECT_EQ(s.debug_dropped + s.write_errors + s.dropped, 0u);
  EXPECT_EQ(s.loads, 2u);
  jitprov_jitdump_close(h.rt);
  const Dump d = readDump(h.path());
  ASSERT_TRUE(d.well_formed);
  ASSERT_EQ(d.ids, (std::vector<uint32_t>{2, 0, 0, 3}));  // DEBUG_INFO just before its LOAD
  ASSERT_EQ(d.debug.size(), 1u);
  ASSERT_EQ(d.loads.size(), 2u);
  const DebugInfo& di = d.debug[0];
  EXPECT_EQ(di.next_load, 0u);
  EXPECT_EQ(di.code_addr, base);
  EXPECT_EQ(d.loads[0].code_addr, base);
  EXPECT_EQ(di.timestamp, d.loads[0].timestamp);  // stamped with its load
  EXPECT_EQ(di.nr_entry, 5u);
  std::string want(32, '\0');
  const uint32_t id = 2, total = uint32_t(32 + 5 * 16 + 3 * sizeof "app/Main.java" + 2 * sizeof "app/Util.java");
  const uint64_t nr = 5;
  std::memcpy(&want[0], &id, 4);
  std::memcpy(&want[4], &total, 4);
  std::memcpy(&want[8], &di.timestamp, 8);
  std::memcpy(&want[16], &di.code_addr, 8);
  std::memcpy(&want[24], &nr, 8);
  want += entryBytes(base, 10, 0, "app/Main.java") + entryBytes(base + 8, 11, 0, "app/Main.java") +
          entryBytes(base + 8, 12, 3, "app/Main.java") + entryBytes(base + 40, 7, 0, "app/Util.java") +
          entryBytes(base + sizeof code, 7, 0, "app/Util.java");  // the code's end: its last line
  EXPECT_EQ(di.total_size, total);
  EXPECT_EQ(di.raw, want);
  EXPECT_EQ(s.bytes, 40 + want.size() + 2 * 56 + sizeof "app.Main::run" + sizeof "app.Main::nolines" + sizeof code +
                         sizeof other);
}

TEST(Jitdump, BadLinesAreRefusedAndClosedSinkIgnoresThem) {
  DumpHost h;
  static unsigned char code[64];
  const uintptr_t base = reinterpret_cast<uintptr_t>(code);
  const uint64_t m = h.method("a", "f");
  auto publish = [&](const jitprov_line_entry* lines, size_t n) {
    jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
    c.code_start = base;
    c.code_size = sizeof code;
    c.lines = lines;
    c.n_lines = n;
    uint64_t v = 0;
    const int e = jitprov_code_publish(h.rt, m, &c, &v);
    if (e == JITPROV_OK) {
      EXPECT_EQ(jitprov_code_retire(h.rt, v), JITPROV_OK);
    }
    return e;
  };
  ASSERT_EQ(h.open(0), JITPROV_OK);
  const jitprov_line_entry outside[] = {{base + 64, 1, 0, "f"}};
  const jitprov_line_entry before[] = {{base - 1, 1, 0, "f"}};
  const jitprov_line_entry backwards[] = {{base + 8, 1, 0, "f"}, {base + 4, 2, 0, nullptr}};
  const jitprov_line_entry nofile[] = {{base, 1, 0, nullptr}};
  EXPECT_EQ(publish(outside, 1), JITPROV_E_INVALID_ARGUMENT);
  EXPECT_EQ(publish(before, 1), JITPROV_E_INVALID_ARGUMENT);
  EXPECT_EQ(publish(backwards, 2), JITPROV_E_INVALID_ARGUMENT);
  EXPECT_EQ(publish(nofile, 1), JITPROV_E_INVALID_ARGUMENT);
  EXPECT_EQ(publish(nullptr, 1), JITPROV_E_INVALID_ARGUMENT);
  jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.loads + s.debug_records, 0u);  // nothing published, nothing written
  const jitprov_line_entry good[] = {{base, 1, 0, "f"}, {base + 63, 2, 0, nullptr}};
  EXPECT_EQ(publish(good, 2), JITPROV_OK);
  EXPECT_EQ(publish(nullptr, 0), JITPROV_OK);  // no lines
  jitprov_jitdump_close(h.rt);
  EXPECT_EQ(publish(good, 2), JITPROV_OK);  // closed: accepted, not written
  s = h.stats();
  EXPECT_EQ(s.loads, 2u);
  EXPECT_EQ(s.debug_records, 1u);
  EXPECT_EQ(s.debug_entries, 3u);
  // An old caller's stats struct (88 bytes) is written no further.
  struct {
    jitprov_jitdump_stats s;
    unsigned char guard[8];
  } old{};
  std::memset(&old, 0xab, sizeof old);
  old.s.sz = 88;
  ASSERT_EQ(jitprov_jitdump_stats_get(h.rt, &old.s), JITPROV_OK);
  EXPECT_EQ(old.s.loads, 2u);
  EXPECT_EQ(old.s.debug_records, 0xababababababababull);
}

TEST(Jitdump, WithoutCopyAndUnreadableRangesTheCodeIsZeros) {
  DumpHost h;
  static unsigned char code[16] = {1, 2, 3};
  // PROT_NONE: no read reaches it (and nothing else is mapped there meanwhile).
  void* gone = mmap(nullptr, size_t(sysconf(_SC_PAGESIZE)), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  h.publish(h.method("a", "unmapped"), gone, 100);
  jitprov_jitdump_close(h.rt);
  ASSERT_EQ(h.open(0), JITPROV_OK);  // reopened: the file starts again, with its walk
  h.publish(h.method("a", "notcopied"), code, sizeof code);
  const jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.rundown_loads, 1u);  // "unmapped", live at the second open
  EXPECT_EQ(s.loads, 1u);
  EXPECT_EQ(s.loads_without_code, 2u);
  EXPECT_EQ(s.code_bytes, 0u);
  jitprov_jitdump_close(h.rt);
  const Dump d = readDump(h.path());
  ASSERT_TRUE(d.well_formed);
  ASSERT_EQ(d.loads.size(), 2u);
  EXPECT_EQ(d.loads[0].name, "a::unmapped");
  EXPECT_EQ(d.loads[0].code, std::vector<unsigned char>(100, 0));
  EXPECT_EQ(d.loads[1].code, std::vector<unsigned char>(sizeof code, 0));
}

TEST(Jitdump, UnreadableRangeIsCounted) {
  DumpHost h;
  // PROT_NONE: no read reaches it (and nothing else is mapped there meanwhile).
  void* gone = mmap(nullptr, size_t(sysconf(_SC_PAGESIZE)), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  h.publish(h.method("a", "unmapped"), gone, 100);
  const jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.unreadable, 1u);
  EXPECT_EQ(s.loads_without_code, 1u);
  EXPECT_EQ(s.loads, 1u);
}

TEST(Jitdump, WriteErrorsAreCountedAndTheFileStaysWhole) {
  DumpHost h;
  static unsigned char code[4096];
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  h.publish(h.method("a", "fits"), code, 64);
  // A file size limit just past what is written: the next record fails (EFBIG).
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  const uint64_t size = h.stats().bytes;
  rlimit small = old;
  small.rlim_cur = size + 100;  // room for part of the next record
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  h.publish(h.method("a", "toolarge"), code + 64, 1024);
  h.publish(h.method("a", "toolarge2"), code + 2048, 1024);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, old_handler);
  jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.write_errors, 2u);
  EXPECT_EQ(s.dropped, 2u);
  EXPECT_EQ(s.last_errno, EFBIG);
  EXPECT_EQ(s.loads, 1u);
  EXPECT_EQ(s.bytes, size);
  // A load with lines that fails: both records dropped, counted.
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::signal(SIGXFSZ, SIG_IGN);
  const jitprov_line_entry lines[] = {{reinterpret_cast<uintptr_t>(code + 1100), 5, 0, "a/A.java"}};
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_start = reinterpret_cast<uintptr_t>(code + 1100);  // free: between toolarge and toolarge2
  c.code_size = 512;
  c.lines = lines;
  c.n_lines = 1;
  uint64_t v = 0;
  const int e = jitprov_code_publish(h.rt, h.method("a", "toolarge3"), &c, &v);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  ASSERT_EQ(e, JITPROV_OK);
  std::signal(SIGXFSZ, old_handler);
  s = h.stats();
  EXPECT_EQ(s.write_errors, 3u);
  EXPECT_EQ(s.debug_dropped, 1u);
  EXPECT_EQ(s.debug_records, 0u);
  h.publish(h.method("a", "after"), code + 3072, 64);  // over the failed record's partial bytes
  jitprov_jitdump_close(h.rt);
  s = h.stats();
  EXPECT_EQ(s.loads, 2u);
  const Dump d = readDump(h.path());
  EXPECT_TRUE(d.well_formed);
  ASSERT_EQ(d.loads.size(), 2u);
  EXPECT_EQ(d.loads[1].name, "a::after");
  EXPECT_TRUE(d.debug.empty());
  EXPECT_TRUE(d.close_last);
}

TEST(Jitdump, OneFilePerProcessAndBadDirectories) {
  DumpHost h, other;
  ASSERT_EQ(h.open(0), JITPROV_OK);
  EXPECT_EQ(other.open(0), JITPROV_E_BUSY);
  jitprov_jitdump_close(h.rt);
  jitprov_jitdump_config c = JITPROV_JITDUMP_CONFIG_INIT;
  c.dir = "/nonexistent/dir";
  EXPECT_EQ(jitprov_jitdump_open(other.rt, &c), JITPROV_E_INVALID_ARGUMENT);
  jitprov_jitdump_stats s{};
  s.sz = sizeof s;
  ASSERT_EQ(jitprov_jitdump_stats_get(other.rt, &s), JITPROV_OK);
  EXPECT_EQ(s.last_errno, ENOENT);
  c.flags = 0x80;
  EXPECT_EQ(jitprov_jitdump_open(other.rt, &c), JITPROV_E_INVALID_ARGUMENT);
  EXPECT_EQ(other.open(0), JITPROV_OK);  // free again after the close
}

TEST(Jitdump, ModelHeapLoadsHaveNoCode) {
  DumpHost h(JITPROV_CODE_MODEL_HEAP);
  ASSERT_EQ(h.open(JITPROV_JITDUMP_COPY_CODE), JITPROV_OK);
  uint64_t v = 0, start = 0;
  ASSERT_EQ(jitprov_jit_begin(h.rt, h.method("m", "f"), JITPROV_TIER0, 0, &v), JITPROV_OK);
  ASSERT_EQ(jitprov_jit_publish(h.rt, v, 256, &start), JITPROV_OK);
  jitprov_runtime_destroy(h.rt);  // closes the file
  h.rt = nullptr;
  const Dump d = readDump(h.path());
  EXPECT_TRUE(d.close_last);
  ASSERT_EQ(d.loads.size(), 1u);
  EXPECT_EQ(d.loads[0].code_addr, start);
  EXPECT_EQ(d.loads[0].code, std::vector<unsigned char>(256, 0));
}

// Publications racing the open: each version is in the file exactly once, from the
// walk (published before the open) or from its own publication (after).
TEST(Jitdump, OpenDuringPublicationsMissesNoneAndDuplicatesNone) {
  DumpHost h;
  constexpr int kThreads = 4, kEach = 3000;
  static unsigned char code[kThreads * kEach * 16];
  std::vector<uint64_t> methods;
  for (int t = 0; t < kThreads; ++t) methods.push_back(h.method("race", ("m" + std::to_string(t)).c_str()));
  std::vector<std::vector<uint64_t>> versions(kThreads);
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      started.fetch_add(1);
      for (int i = 0; i < kEach; ++i) versions[t].push_back(h.publish(methods[t], code + (t * kEach + i) * 16, 16));
    });
  while (started.load() < kThreads) std::this_thread::yield();
  ASSERT_EQ(h.open(0), JITPROV_OK);
  for (auto& th : threads) th.join();
  jitprov_jitdump_close(h.rt);
  const jitprov_jitdump_stats s = h.stats();
  EXPECT_EQ(s.loads + s.rundown_loads, uint64_t(kThreads * kEach));
  const Dump d = readDump(h.path());
  ASSERT_TRUE(d.well_formed);
  std::multiset<uint64_t> seen;
  for (const Load& l : d.loads) seen.insert(l.code_index);
  for (const auto& vs : versions)
    for (uint64_t v : vs) EXPECT_EQ(seen.count(v), 1u) << v;
  EXPECT_EQ(seen.size(), size_t(kThreads * kEach));
}

// A child of fork() leaves its parent's file alone and may open its own.
TEST(Jitdump, ForkChildWritesNothingToTheParentsFile) {
  // The runtime's reclamation thread runs, idle at the fork (tests/unit/fork_guard.h).
  SKIP_FORK_UNDER_TSAN();
  DumpHost h;
  static unsigned char code[64];
  ASSERT_EQ(h.open(0), JITPROV_OK);
  h.publish(h.method("p", "before"), code, 16);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
    c.code_start = reinterpret_cast<uintptr_t>(code + 32);
    c.code_size = 16;
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.name = "child";
    uint64_t m = 0, v = 0;
    int bad = jitprov_method_register(h.rt, h.module, &d, &m) != JITPROV_OK;
    bad |= jitprov_code_publish(h.rt, m, &c, &v) != JITPROV_OK;
    jitprov_jitdump_stats s{};
    s.sz = sizeof s;
    bad |= jitprov_jitdump_stats_get(h.rt, &s) != JITPROV_OK || s.open != 0;
    jitprov_jitdump_config cfg = JITPROV_JITDUMP_CONFIG_INIT;
    cfg.dir = h.dir.c_str();
    bad |= jitprov_jitdump_open(h.rt, &cfg) != JITPROV_OK;  // jit-CHILDPID.dump
    jitprov_jitdump_close(h.rt);
    const std::string own = h.dir + "/jit-" + std::to_string(getpid()) + ".dump";
    bad |= readDump(own).loads.size() != 2;  // the walk: "before" and "child"
    std::remove(own.c_str());
    _exit(bad);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  h.publish(h.method("p", "after"), code + 16, 16);
  jitprov_jitdump_close(h.rt);
  const Dump d = readDump(h.path());
  ASSERT_TRUE(d.well_formed);
  ASSERT_EQ(d.loads.size(), 2u);
  EXPECT_EQ(d.loads[0].name, "p::before");
  EXPECT_EQ(d.loads[1].name, "p::after");
}

// A thread's first RCU read section takes liburcu-bp's registry lock; fork()'s handlers
// take liburcu's locks and then the CVM lock (runtime/fork.cc). A host-mode publication
// with a jitdump open opens its read section under the CVM lock: if that were a thread's
// first, a fork meanwhile deadlocked the parent (the publisher holding the CVM lock and
// waiting for the registry lock, the forking thread the reverse). Here threads that each
// publish once, their first call into the runtime, come and go while the main thread
// forks; a watchdog fails the test if a fork or a thread does not come back.
TEST(Jitdump, AThreadsFirstReadSectionNeverDeadlocksAFork) {
  SKIP_FORK_WITH_BUSY_THREADS();
  DumpHost h;
  ASSERT_EQ(h.open(0), JITPROV_OK);
  static unsigned char code[4096];
  const uint64_t m = h.method("p", "fresh");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> published{0}, failures{0};
  std::thread spawner([&] {
    for (uint64_t i = 0; !stop.load(); ++i) {
      std::thread t([&, i] {
        jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
        c.code_start = reinterpret_cast<uintptr_t>(code) + (i % 256) * 16;
        c.code_size = 16;
        uint64_t v = 0;
        if (jitprov_code_publish(h.rt, m, &c, &v) != JITPROV_OK || jitprov_code_retire(h.rt, v) != JITPROV_OK)
          failures.fetch_add(1);
        published.fetch_add(1);
      });
      t.join();
    }
  });
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::atomic<int> forks{0};
  // A deadlock is no progress: no fork back in a whole minute (a fork or its child hung;
  // after the forks, the spawner's join: a publishing thread hung). A fixed bound on the
  // whole test failed a check whose side job starved it of CPU (930 publications and
  // still forking after 60 s; at nice 19 beside three CPU hogs it took 38-53 s).
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> g(mu);
    int seen = -1;
    while (!cv.wait_for(g, std::chrono::seconds(60), [&] { return done; })) {
      if (forks.load() == seen) {
        std::fprintf(stderr,
                     "deadlock: a fork or a publishing thread did not come back in 60 s (%d forks, %llu "
                     "published)\n",
                     seen, (unsigned long long)published.load());
        std::_Exit(3);
      }
      seen = forks.load();
    }
  });
  // 200 forks, and on until a publication overlapped them (a spawner starved through the
  // 200 on a loaded machine would leave nothing to check; the watchdog bounds it).
  for (; forks.load() < 200 || published.load() < 2; forks.fetch_add(1)) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
  }
  stop.store(true);
  spawner.join();
  {
    std::lock_guard<std::mutex> g(mu);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  EXPECT_GE(forks.load(), 200);
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_GE(published.load(), 2u);
  EXPECT_EQ(h.stats().loads, published.load());  // every publication in the file
}

}  // namespace
