// SPDX-License-Identifier: MIT
// Unit tests of the perf map sink (tools/hostagent): its hand-formatted lines are what
// printf's "%" PRIx64 " %x %s::%s\n" would write, bare names for the bare module, the file
// appears whole at the rundown's end.
#include "host_agent.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace jitprov::hostagent {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PerfMap, LinesAsPrintfWritesThem) {
  char dir[] = "/tmp/jitprov-perfmap-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  PerfMap pm;
  pm.final_path = std::string(dir) + "/perf-1.map";
  pm.bare_module = 7;
  jitprov_sink_record r{};
  r.kind = JITPROV_SINK_BEGIN;
  perfMapSink(&pm, &r);
  ASSERT_TRUE(pm.open) << pm.last_error;
  struct Line {
    uint64_t module, start;
    uint32_t size;
    const char *ns, *name;
  };
  const Line lines[] = {{1, 0x7f0012345678, 0x1a0, "java.util.HashMap", "get"},
                        {7, 0x7f0000000000, 1, "hotspot", "Interpreter"},
                        {1, 1, 0, "", ""},
                        {1, UINT64_MAX, UINT32_MAX, "a.b$C", "<init>"},
                        {1, 0x10, 0x10, "x", "y::z"}};
  std::string want;
  for (const Line& l : lines) {
    r = jitprov_sink_record{};
    r.kind = JITPROV_SINK_VERSION;
    r.module_id = l.module;
    r.code_start = l.start;
    r.code_size = l.size;
    r.name_space = l.ns;
    r.name = l.name;
    perfMapSink(&pm, &r);
    char buf[256];
    if (l.module == pm.bare_module)
      std::snprintf(buf, sizeof buf, "%" PRIx64 " %x %s\n", l.start, l.size, l.name);
    else
      std::snprintf(buf, sizeof buf, "%" PRIx64 " %x %s::%s\n", l.start, l.size, l.ns, l.name);
    want += buf;
  }
  EXPECT_EQ(access(pm.final_path.c_str(), F_OK), -1) << "the map appears only at the rundown's end";
  r = jitprov_sink_record{};
  r.kind = JITPROV_SINK_END;
  perfMapSink(&pm, &r);
  EXPECT_EQ(pm.errors, 0u) << pm.last_error;
  EXPECT_EQ(pm.written, 1u);
  EXPECT_EQ(pm.lines, 5u);
  EXPECT_EQ(slurp(pm.final_path), want);
  unlink(pm.final_path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace jitprov::hostagent
