// SPDX-License-Identifier: MIT
// `jitprov attach`'s pure parsers (tools/jitprov/): HotSpot's reply to a `load`
// (parseLoadReply), a JVM's hsperfdata file (parsePerfData, on files built here in the
// layout HotSpot writes), /proc/PID/status (parseProcStatus), CoreCLR's diagnostics IPC
// replies, HRESULTs and ProcessInfo versions (clr_attach.h), and the .NET client's
// method signature text (tools/dotnet/clr_names.h) on metadata blobs built here; node's
// inspector address, /proc/net/tcp listeners and the WebSocket handshake and frames.
#include <gtest/gtest.h>

#include "fork_guard.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "clr_names.h"
#include "client_hresults.h"
#include "attach_io.h"
#include "clr_attach.h"
#include "hotspot_attach.h"
#include "node_attach.h"
#include "target.h"
#include "jvmti/attach_codes.h"

namespace jitprov::cli {
namespace {

const std::string kWho = "PID 1234 (java)";

// --- HotSpot: the reply to `load` -------------------------------------------------------

TEST(LoadReply, ReturnCodeZeroIsAttached) {
  const AttachOutcome o = parseLoadReply("0\nreturn code: 0\n", kWho);
  EXPECT_EQ(o.status, kAttached);
  EXPECT_EQ(o.line, "");
}

TEST(LoadReply, AlreadyLoadedIs74) {
  const AttachOutcome o = parseLoadReply("0\nreturn code: 74\n", kWho);
  EXPECT_EQ(o.status, kAlreadyLoaded);
  EXPECT_NE(o.line.find(kWho), std::string::npos) << o.line;
}

TEST(LoadReply, NonZeroCodesAreTheAgentsRefusal) {
  for (int code : {1, 2, 3, 4, 5, -1, 75}) {
    const AttachOutcome o = parseLoadReply("0\nreturn code: " + std::to_string(code) + "\n", kWho);
    EXPECT_EQ(o.status, kAgentFailed) << code;
    EXPECT_NE(o.line.find("return code " + std::to_string(code) + ": " + jvmti::onAttachCodeName(code)),
              std::string::npos)
        << o.line;
  }
  EXPECT_NE(parseLoadReply("0\nreturn code: 1\n", kWho).line.find("bad options"), std::string::npos);
  EXPECT_NE(parseLoadReply("0\nreturn code: -1\n", kWho).line.find("unknown code"), std::string::npos);
}

TEST(LoadReply, LibraryNotLoadedKeepsDlerrorOnOneLine) {
  const AttachOutcome o = parseLoadReply(
      "-1\n/opt/j/libjitprov-jvmti.so was not loaded.\n/opt/j/libjitprov-jvmti.so: cannot open shared object "
      "file: No such file or directory\n",
      kWho);
  EXPECT_EQ(o.status, kAgentFailed);
  EXPECT_EQ(o.line.find('\n'), std::string::npos) << o.line;
  EXPECT_NE(o.line.find("was not loaded. /opt/j/libjitprov-jvmti.so: cannot open"), std::string::npos) << o.line;
}

// JDK 21 (JvmtiAgent::load): a library without the entry point, and
// -XX:-EnableDynamicAgentLoading (attachListener.cpp's load_agent).
TEST(LoadReply, Jdk21Forms) {
  const AttachOutcome missing = parseLoadReply("-1\nAgent_OnAttach is not available in /opt/j/libother.so\n", kWho);
  EXPECT_EQ(missing.status, kAgentFailed);
  EXPECT_NE(missing.line.find("Agent_OnAttach is not available"), std::string::npos);
  const AttachOutcome disabled = parseLoadReply(
      "-1\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.\n", kWho);
  EXPECT_EQ(disabled.status, kAttachDisabled);
  // JDK 21 answers an agent's refusal as 17 does: status 0, then its code.
  EXPECT_EQ(parseLoadReply("0\nreturn code: 3\n", kWho).status, kAgentFailed);
}

TEST(LoadReply, NoReplyIsOurCredentialsRefused) {
  const AttachOutcome o = parseLoadReply("", kWho);
  EXPECT_EQ(o.status, kPermission);
  EXPECT_NE(o.line.find("uid/gid"), std::string::npos);
}

// A reply cut short is never read as a success.
TEST(LoadReply, TruncatedRepliesAreNotAttached) {
  for (const char* r : {"0", "0\n", "0\nreturn", "0\nreturn code:", "0\nreturn code: ", "0\nreturn code: \n",
                        "0\nreturn code: -\n", "0\nreturn code: 0x\n", "0\nreturn code: 99999999999999999999\n"}) {
    const AttachOutcome o = parseLoadReply(r, kWho);
    EXPECT_NE(o.status, kAttached) << '"' << r << '"';
    EXPECT_EQ(o.line.find('\n'), std::string::npos) << o.line;
  }
  // Without its final newline the code is whole: the JVM closed after writing it.
  EXPECT_EQ(parseLoadReply("0\nreturn code: 0", kWho).status, kAttached);
  EXPECT_EQ(parseLoadReply("0\nreturn code: 74", kWho).status, kAlreadyLoaded);
}

TEST(LoadReply, ReplayFailedIsTheAgentFailedThoughItRuns) {
  const AttachOutcome o = parseLoadReply("0\nreturn code: 6\n", kWho);
  EXPECT_EQ(o.status, kAgentFailed);
  EXPECT_NE(o.line.find("GenerateEvents"), std::string::npos) << o.line;
  EXPECT_NE(o.line.find("stays loaded"), std::string::npos) << o.line;
}

TEST(LoadReply, TheTargetsTextIsPrintableAndShort) {
  const AttachOutcome o =
      parseLoadReply("-1\nx was not loaded.\x1b]0;owned\x07\r" + std::string(5000, 'y') + "\n", kWho);
  EXPECT_EQ(o.status, kAgentFailed);
  for (char c : o.line) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << o.line;
  EXPECT_LT(o.line.size(), 500u);
  const AttachOutcome g = parseLoadReply("\x1b[2J\n\x1b[31m", kWho);
  EXPECT_EQ(g.status, kError);
  EXPECT_EQ(g.line.find('\x1b'), std::string::npos) << g.line;
}

TEST(LoadReply, GarbageIsAnUnexpectedReply) {
  for (const std::string& r :
       {std::string("HTTP/1.1 400 Bad Request\r\n\r\n"), std::string("-1\n"), std::string("1\nreturn code: 0\n"),
        std::string("\x01\x02\x03", 3), std::string("\0\0\0", 3), std::string(" 0\nreturn code: 0\n")}) {
    const AttachOutcome o = parseLoadReply(r, kWho);
    EXPECT_EQ(o.status, kError) << r;
    EXPECT_NE(o.line.find("unexpected reply"), std::string::npos) << o.line;
  }
}

// --- HotSpot: hsperfdata ----------------------------------------------------------------

// An hsperfdata file as HotSpot writes it (perfMemory.hpp, perfData.cpp): a 32-byte
// prologue, then entries of a 20-byte header, the NUL-terminated name and the data.
class PerfFile {
 public:
  explicit PerfFile(bool big_endian = false) : big_(big_endian), bytes_(32, '\0') {
    const uint8_t magic[4] = {0xca, 0xfe, 0xc0, 0xc0};
    std::memcpy(&bytes_[0], magic, 4);
    bytes_[4] = big_ ? 0 : 1;  // byte order: 0 big, 1 little
    bytes_[5] = 2;             // major
    bytes_[6] = 0;             // minor
    bytes_[7] = 1;             // accessible
    put(24, 32);               // entry offset
  }
  // A byte vector (type 'B'), `capacity` bytes long, holding `value` and NULs.
  PerfFile& string(const std::string& name, const std::string& value, size_t capacity = 0) {
    return entry(name, 'B', value + std::string(capacity > value.size() ? capacity - value.size() : 1, '\0'));
  }
  // A long (type 'J'): vector length 0.
  PerfFile& jlong(const std::string& name, int64_t v) {
    std::string d(8, '\0');
    std::memcpy(&d[0], &v, 8);
    return entry(name, 'J', d, 0);
  }
  PerfFile& entry(const std::string& name, char type, const std::string& data, int vlen = -1) {
    const size_t start = bytes_.size();
    const size_t name_off = 20, data_off = (name_off + name.size() + 1 + 7) & ~size_t(7);
    const size_t len = (data_off + data.size() + 7) & ~size_t(7);
    bytes_.resize(start + len, '\0');
    put(start, int32_t(len));
    put(start + 4, int32_t(name_off));
    put(start + 8, vlen < 0 ? int32_t(data.size()) : vlen);
    bytes_[start + 12] = type;
    bytes_[start + 13] = 0;  // flags
    bytes_[start + 14] = 5;  // units: string
    bytes_[start + 15] = 1;  // variability: constant
    put(start + 16, int32_t(data_off));
    std::memcpy(&bytes_[start + name_off], name.c_str(), name.size() + 1);
    std::memcpy(&bytes_[start + data_off], data.data(), data.size());
    put(28, ++entries_);
    put(8, int32_t(bytes_.size()));  // used
    return *this;
  }
  void put(size_t off, int32_t v) {
    uint32_t u = uint32_t(v);
    if (big_) u = __builtin_bswap32(u);
    std::memcpy(&bytes_[off], &u, 4);
  }
  const std::string& bytes() const { return bytes_; }
  std::string& bytes() { return bytes_; }

 private:
  bool big_;
  std::string bytes_;
  int32_t entries_ = 0;
};

PerfFile jvm17(const std::string& capabilities, bool big_endian = false) {
  PerfFile f(big_endian);
  f.jlong("sun.rt.createVmBeginTime", 1700000000000)
      .string("java.property.java.vm.version", "17.0.21+7-Debian-1deb12u1", 64)
      .string("java.property.java.home", "/usr/lib/jvm/java-17-openjdk-amd64", 256)
      .jlong("sun.os.hrt.frequency", 1000000000)
      .string("sun.rt.jvmCapabilities", capabilities, 64);
  return f;
}

TEST(PerfData, ReadsTheStringsTheAttachNeeds) {
  const PerfData pd = parsePerfData(jvm17("1000000000000000000000000000000000000000000000000000000000000000").bytes());
  EXPECT_TRUE(pd.found);
  EXPECT_EQ(pd.capabilities[0], '1');
  EXPECT_EQ(pd.capabilities.size(), 64u);
  EXPECT_EQ(pd.vm_version, "17.0.21+7-Debian-1deb12u1");
  EXPECT_EQ(pd.java_home, "/usr/lib/jvm/java-17-openjdk-amd64");
  EXPECT_TRUE(pd.accessible);
}

// A JVM in its start-up: its prologue's accessible flag is 0 until JVMTI's live phase
// (the attach waits for it while the JVM is young).
TEST(PerfData, AStartingJvmIsNotAccessible) {
  PerfFile f = jvm17("1");
  f.bytes()[7] = 0;
  const PerfData pd = parsePerfData(f.bytes());
  EXPECT_TRUE(pd.found);
  EXPECT_FALSE(pd.accessible);
  EXPECT_EQ(pd.capabilities, "1");
}

// -XX:+DisableAttachMechanism: HotSpot writes '0' first in sun.rt.jvmCapabilities.
TEST(PerfData, DisableAttachMechanismIsCapabilityZero) {
  const PerfData pd = parsePerfData(jvm17("0000000000000000000000000000000000000000000000000000000000000000").bytes());
  EXPECT_TRUE(pd.found);
  ASSERT_FALSE(pd.capabilities.empty());
  EXPECT_EQ(pd.capabilities[0], '0');
}

TEST(PerfData, BigEndianFile) {
  const PerfData pd = parsePerfData(jvm17("01", /*big_endian=*/true).bytes());
  EXPECT_TRUE(pd.found);
  EXPECT_EQ(pd.capabilities, "01");
  EXPECT_EQ(pd.vm_version, "17.0.21+7-Debian-1deb12u1");
}

TEST(PerfData, NotHsperfdata) {
  EXPECT_FALSE(parsePerfData("").found);
  EXPECT_FALSE(parsePerfData(std::string(31, '\0')).found);
  std::string b = jvm17("1").bytes();
  b[0] = 'X';
  EXPECT_FALSE(parsePerfData(b).found);
}

// Entries cut short or lying about their sizes are skipped or end the walk; nothing is
// read outside the file.
TEST(PerfData, TruncatedAndHostileEntries) {
  PerfFile f = jvm17("1");
  const std::string whole = f.bytes();
  for (size_t cut = 32; cut < whole.size(); cut += 3) {
    const PerfData pd = parsePerfData(whole.substr(0, cut));
    EXPECT_TRUE(pd.found);
    EXPECT_TRUE(pd.capabilities.empty()) << cut;  // the last entry: never whole before the end
  }

  PerfFile lies;
  lies.string("sun.rt.jvmCapabilities", "1", 8);
  lies.put(32 + 16, 4000);  // data offset past the entry
  EXPECT_TRUE(parsePerfData(lies.bytes()).capabilities.empty());
  lies.put(32 + 16, 24);
  lies.put(32 + 8, 1 << 30);  // vector length past the entry
  EXPECT_TRUE(parsePerfData(lies.bytes()).capabilities.empty());
  lies.put(32 + 8, 8);
  lies.put(32, 0);  // an entry of length 0: the walk ends
  EXPECT_TRUE(parsePerfData(lies.bytes()).capabilities.empty());
  lies.put(32, 1 << 30);  // an entry longer than the file
  EXPECT_TRUE(parsePerfData(lies.bytes()).capabilities.empty());

  PerfFile count = jvm17("1");
  count.put(28, 1 << 30);  // more entries than the file holds
  EXPECT_EQ(parsePerfData(count.bytes()).capabilities, "1");
  count.put(24, -8);  // a negative entry offset
  EXPECT_TRUE(parsePerfData(count.bytes()).capabilities.empty());

  // A long named like the capabilities is not read as them.
  PerfFile typed;
  typed.jlong("sun.rt.jvmCapabilities", 0x30);
  EXPECT_TRUE(parsePerfData(typed.bytes()).capabilities.empty());
}

// --- /proc/PID/status ------------------------------------------------------------------

const char kStatus[] =
    "Name:\tjava\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4242\n"
    "Ngid:\t0\n"
    "Pid:\t4242\n"
    "PPid:\t4200\n"
    "TracerPid:\t0\n"
    "Uid:\t1000\t1001\t1002\t1003\n"
    "Gid:\t2000\t2001\t2002\t2003\n"
    "FDSize:\t256\n"
    "Groups:\t27 100 \n"
    "NStgid:\t4242\t1\n"
    "NSpid:\t4242\t7\t1\n"
    "NSpgid:\t4200\t0\n"
    "Threads:\t21\n"
    "SigQ:\t0/63448\n"
    "SigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\n"
    "SigBlk:\t0000000000000000\n"
    "SigIgn:\t0000000000000001\n"
    "SigCgt:\t2000000181005ccf\n"
    "CapInh:\t0000000000000000\n";

TEST(ProcStatus, ReadsTheFieldsTheAttachUses) {
  TargetInfo t;
  t.target.nspid = 4242;
  ASSERT_TRUE(parseProcStatus(kStatus, &t));
  EXPECT_EQ(t.target.nspid, 1);     // NSpid's last field: its innermost pid namespace
  EXPECT_EQ(t.target.euid, 1001u);  // Uid's second field
  EXPECT_EQ(t.target.egid, 2001u);
  EXPECT_EQ(t.sig_cgt, 0x2000000181005ccfull);
  EXPECT_EQ(t.sig_ign, 0x1ull);
  EXPECT_NE(t.sig_cgt & (1ull << (SIGQUIT - 1)), 0u);  // HotSpot catches SIGQUIT
  EXPECT_EQ(t.state, 'S');
}

TEST(ProcStatus, StateAndNoNamespace) {
  TargetInfo t;
  t.target.nspid = 99;
  ASSERT_TRUE(parseProcStatus("State:\tt (tracing stop)\nUid:\t0\t0\t0\t0\nNSpid:\t99\nSigCgt:\t0\n", &t));
  EXPECT_EQ(t.state, 't');
  EXPECT_EQ(t.target.nspid, 99);
  EXPECT_EQ(t.sig_cgt, 0u);  // -Xrs: SIGQUIT not caught
}

TEST(ProcMaps, APathReplacedOnDiskKeepsItsName) {
  std::string p = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so (deleted)";
  jitprov::cli::stripDeleted(p);
  EXPECT_EQ(p, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so");
  jitprov::cli::stripDeleted(p);
  EXPECT_EQ(p, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so");
  std::string only = " (deleted)";
  jitprov::cli::stripDeleted(only);
  EXPECT_EQ(only, " (deleted)");
}

TEST(ProcStatus, WithoutUidTheProcessIsGone) {
  TargetInfo t;
  EXPECT_FALSE(parseProcStatus("", &t));
  EXPECT_FALSE(parseProcStatus("Name:\tjava\nState:\tZ (zombie)\n", &t));
  EXPECT_FALSE(parseProcStatus("Uid:\t1000\n", &t));  // no effective uid field
  // Lines without fields and garbage are skipped.
  EXPECT_TRUE(parseProcStatus("State:\nNSpid:\n\n:::\nUid:\t5\t6\t7\t8\ngarbage\n", &t));
  EXPECT_EQ(t.target.euid, 6u);
}

// --- CoreCLR: diagnostics IPC replies -------------------------------------------------

void header(uint8_t (&h)[20], uint16_t size, uint8_t set, uint8_t id) {
  std::memcpy(h, "DOTNET_IPC_V1", 14);
  h[14] = uint8_t(size);
  h[15] = uint8_t(size >> 8);
  h[16] = set;
  h[17] = id;
  h[18] = h[19] = 0;
}

TEST(ClrReply, HeaderAndPayload) {
  uint8_t h[20];
  header(h, 24, 0xFF, 0x00);
  EXPECT_EQ(clrReplyPayloadSize(h), 4);
  const ClrReply ok = decodeClrReply(h, {0, 0, 0, 0});
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.err, 0);
  EXPECT_EQ(ok.hresult, 0u);

  header(h, 24, 0xFF, 0xFF);  // an error reply: its HRESULT, little-endian
  const ClrReply err = decodeClrReply(h, {0x85, 0x13, 0x13, 0x80});
  EXPECT_FALSE(err.ok);
  EXPECT_EQ(err.err, 0);
  EXPECT_EQ(err.hresult, 0x80131385u);

  header(h, 22, 0xFF, 0xFF);  // an error reply without a whole HRESULT
  EXPECT_EQ(decodeClrReply(h, {1, 2}).err, EPROTO);
}

TEST(ClrReply, NotAServerReply) {
  uint8_t h[20];
  header(h, 20, 0xFF, 0x00);
  EXPECT_EQ(clrReplyPayloadSize(h), 0);
  header(h, 19, 0xFF, 0x00);  // shorter than its own header
  EXPECT_EQ(clrReplyPayloadSize(h), -1);
  header(h, 24, 0x04, 0x00);  // not the server command set
  EXPECT_EQ(clrReplyPayloadSize(h), -1);
  header(h, 24, 0xFF, 0x00);
  h[12] = '2';  // DOTNET_IPC_V2
  EXPECT_EQ(clrReplyPayloadSize(h), -1);
  header(h, 24, 0xFF, 0x00);
  h[13] = 'x';  // the magic's NUL
  EXPECT_EQ(clrReplyPayloadSize(h), -1);
}

TEST(ClrStatus, HResults) {
  std::string why;
  EXPECT_EQ(clrStatusOf(0, false, &why), kAttached);
  EXPECT_EQ(clrStatusOf(0x8013136Au, true, &why), kAlreadyLoaded);  // CORPROF_E_PROFILER_ALREADY_ACTIVE
  EXPECT_EQ(clrStatusOf(0x8013136Au, false, &why), kOtherProfiler);
  EXPECT_NE(why.find("another profiler"), std::string::npos);
  EXPECT_EQ(clrStatusOf(dotnet::kHrClientAlreadyRunning, false, &why), kAlreadyLoaded);
  EXPECT_EQ(clrStatusOf(dotnet::kHrClientRuntimeTooOld, false, &why), kRuntimeTooOld);
  EXPECT_EQ(clrStatusOf(0x80131385u, false, &why), kRuntimeTooOld);   // DS_IPC_E_UNKNOWN_COMMAND
  EXPECT_EQ(clrStatusOf(0x80131515u, false, &why), kAttachDisabled);  // DS_IPC_E_NOTSUPPORTED
  for (uint32_t hr : {0x8007007Eu, 0x8007007Fu, 0x80040111u}) {
    EXPECT_EQ(clrStatusOf(hr, false, &why), kNoAgent) << std::hex << hr;
  }
  EXPECT_EQ(clrStatusOf(0x80131371u, false, &why), kError);  // DS_IPC_E_RUNTIME_UNINITIALIZED
  EXPECT_NE(why.find("0x80131371"), std::string::npos) << why;
  EXPECT_EQ(clrStatusOf(0x8013135Bu, false, &why), kError);
  EXPECT_EQ(clrStatusOf(dotnet::kHrClientBadOptions, false, &why), kAgentFailed);
  EXPECT_EQ(clrStatusOf(0x80131368u, false, &why), kAgentFailed);  // not attachable
  EXPECT_EQ(clrStatusOf(0x80131375u, false, &why), kAgentFailed);  // cancelled
  EXPECT_EQ(clrStatusOf(dotnet::kHrClientRuntimeRefused, false, &why), kAgentFailed);
  EXPECT_NE(why.find("event mask"), std::string::npos) << why;
  EXPECT_EQ(clrStatusOf(0x80004005u, false, &why), kAgentFailed);  // E_FAIL
  EXPECT_NE(why.find("0x80004005"), std::string::npos) << why;
}

// A ProcessInfo2 payload (ProcessInfo3: a uint32 version first, a RID last).
std::vector<uint8_t> processInfo(bool v3, const std::vector<std::u16string>& strings) {
  std::vector<uint8_t> p;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) p.push_back(uint8_t(v >> (8 * i)));
  };
  if (v3) u32(0);
  for (int i = 0; i < 8; ++i) p.push_back(uint8_t(0x11 * i));  // pid
  for (int i = 0; i < 16; ++i) p.push_back(uint8_t(i));        // runtime cookie
  for (const std::u16string& s : strings) {
    u32(uint32_t(s.size() + 1));
    for (char16_t c : s) {
      p.push_back(uint8_t(c));
      p.push_back(uint8_t(c >> 8));
    }
    p.push_back(0);
    p.push_back(0);
  }
  return p;
}

TEST(ClrProcessInfo, Version) {
  const std::vector<std::u16string> s = {u"/usr/bin/dotnet app.dll", u"Linux", u"x64", u"app", u"10.0.12"};
  EXPECT_EQ(clrProductVersion(processInfo(false, s), false), "10.0.12");
  std::vector<std::u16string> s3 = s;
  s3.back() = u"8.0.11+0f0d7a1b";
  s3.push_back(u"linux-x64");
  EXPECT_EQ(clrProductVersion(processInfo(true, s3), true), "8.0.11+0f0d7a1b");
  // Read as the wrong version, the strings are misaligned: nothing, not garbage.
  EXPECT_EQ(clrProductVersion(processInfo(false, s), true), "");
  // Non-ASCII units are '?'.
  std::vector<std::u16string> odd = s;
  odd.back() = u"9.0.1-\u00e9";
  EXPECT_EQ(clrProductVersion(processInfo(false, odd), false), "9.0.1-?");
}

TEST(ClrProcessInfo, TruncatedOrHostile) {
  const std::vector<uint8_t> whole =
      processInfo(false, {u"/usr/bin/dotnet app.dll", u"Linux", u"x64", u"app", u"10.0.12"});
  for (size_t cut = 0; cut + 16 < whole.size(); ++cut) {  // the version's count is missing or too large
    EXPECT_EQ(clrProductVersion(std::vector<uint8_t>(whole.begin(), whole.begin() + cut), false), "") << cut;
  }
  std::vector<uint8_t> huge = whole;
  huge[24] = huge[25] = huge[26] = huge[27] = 0xFF;  // the command line's count: 4G units
  EXPECT_EQ(clrProductVersion(huge, false), "");
  EXPECT_EQ(clrProductVersion({}, true), "");
}

// --- attach_io: what root reads and runs against a target's choices -------------------

// A fresh directory under /tmp, removed with its files at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/jitprov-io-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name, const std::string& bytes) const {
    const std::string p = path + "/" + name;
    FILE* f = std::fopen(p.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return p;
  }
};

TEST(ReadSmall, ReadsARegularFileOfItsOwner) {
  TempDir d;
  const std::string p = d.file("hs", "abc\ndef");
  std::string s;
  EXPECT_EQ(readSmall(p, geteuid(), 100, &s), "");
  EXPECT_EQ(s, "abc\ndef");
  EXPECT_EQ(readSmall(p, kAnyOwner, 100, &s), "");
}

TEST(ReadSmall, AFifoDoesNotBlock) {
  TempDir d;
  const std::string p = d.path + "/fifo";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  std::string s = "stale";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = readSmall(p, geteuid(), 100, &s);
  // Returned rather than blocked in open(2) for a writer; a loaded machine's stall is not
  // a block (was 2 s).
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
  EXPECT_EQ(s, "");
}

TEST(ReadSmall, ASymlinkIsRefused) {
  TempDir d;
  const std::string target = d.file("real", "secret");
  const std::string link = d.path + "/link";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  std::string s;
  const std::string why = readSmall(link, kAnyOwner, 100, &s);
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_EQ(s, "");
  // A device (a symlink's usual aim, /dev/zero) is no regular file either.
  EXPECT_NE(readSmall("/dev/zero", kAnyOwner, 100, &s), "");
  EXPECT_EQ(s, "");
}

TEST(ReadSmall, AnotherOwnerIsRefused) {
  TempDir d;
  const std::string p = d.file("hs", "abc");
  std::string s;
  const std::string why = readSmall(p, geteuid() + 1, 100, &s);
  EXPECT_NE(why.find("owned by uid " + std::to_string(geteuid())), std::string::npos) << why;
  EXPECT_EQ(s, "");
}

TEST(ReadSmall, AtMostMaxBytes) {
  TempDir d;
  const std::string p = d.file("big", std::string(1 << 20, 'x'));
  std::string s;
  EXPECT_EQ(readSmall(p, geteuid(), 4096, &s), "");
  EXPECT_EQ(s.size(), 4096u);
  EXPECT_EQ(readSmall(p, geteuid(), 5000, &s), "");
  EXPECT_EQ(s.size(), 5000u);
}

TEST(ReadSmall, InsideARootSymlinksAndDotDotStayUnderIt) {
  TempDir d;
  ASSERT_EQ(mkdir((d.path + "/root").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((d.path + "/root/jdk").c_str(), 0700), 0);
  d.file("root/jdk/release", "JAVA_VERSION=\"17\"\n");
  d.file("outside", "host file");
  // An absolute symlink and a ".." path, both aimed at our own file system.
  ASSERT_EQ(symlink((d.path + "/outside").c_str(), (d.path + "/root/jdk/abs").c_str()), 0);
  ASSERT_EQ(symlink("/", (d.path + "/root/up").c_str()), 0);
  std::string s;
  EXPECT_EQ(readSmall("/jdk/release", geteuid(), 100, &s, d.path + "/root"), "");
  EXPECT_EQ(s, "JAVA_VERSION=\"17\"\n");
  EXPECT_NE(readSmall("/jdk/abs", kAnyOwner, 100, &s, d.path + "/root"), "");
  EXPECT_NE(readSmall("/../outside", kAnyOwner, 100, &s, d.path + "/root"), "");
  EXPECT_NE(readSmall("/up" + d.path + "/outside", kAnyOwner, 100, &s, d.path + "/root"), "");
  EXPECT_EQ(s, "");
}

TEST(Printable, ControlCharactersAndLength) {
  EXPECT_EQ(printable("java"), "java");
  EXPECT_EQ(printable("a\x1b[2Jb\rc\nd\x7f\te"), "a?[2Jb?c?d??e");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a?b");
  EXPECT_EQ(printable(std::string(500, 'x')), std::string(200, 'x') + "...");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("\xc3\xa9"), "\xc3\xa9");  // UTF-8 kept
}

TEST(Printable, DescribeFiltersComm) {
  TargetInfo t;
  t.target.pid = 7;
  t.comm = "ja\x1b]0;pwned\x07va";
  EXPECT_EQ(describe(t), "PID 7 (ja?]0;pwned?va)");
}

TargetInfo self() {
  TargetInfo t;
  t.target.pid = getpid();
  t.target.euid = geteuid();
  t.target.egid = getegid();
  t.comm = "self";
  return t;
}

// runAsTarget forks; in this test binary earlier tests leave threads running (jitprov's
// runtimes, liburcu), whose fork handlers start threads in the child, which
// ThreadSanitizer does not support (it kills the child): run in the main and ASan builds
// only, as CApi's fork tests (the jitprov command itself forks with one thread).

TEST(RunAsTarget, TheOutcomeComesBack) {
  SKIP_FORK_UNDER_TSAN();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const AttachOutcome o = runAsTarget(self(), deadline, [] {
    return AttachOutcome{kAgentFailed, "line with\nnewline " + std::to_string(getpid()), "17.0.1"};
  });
  EXPECT_EQ(o.status, kAgentFailed);
  EXPECT_EQ(o.version, "17.0.1");
  EXPECT_EQ(o.line.rfind("line with\nnewline ", 0), 0u) << o.line;
  EXPECT_NE(o.line, "line with\nnewline " + std::to_string(getpid()));  // it ran in a child
}

TEST(RunAsTarget, TheDeadlineKillsTheChildAndIsTimedOut) {
  SKIP_FORK_UNDER_TSAN();
  const auto t0 = std::chrono::steady_clock::now();
  const AttachOutcome o = runAsTarget(self(), t0 + std::chrono::milliseconds(300), [] {
    for (;;) pause();  // a connect or a read that never returns
    return AttachOutcome{};
  });
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(o.status, kTimedOut) << o.line;
  EXPECT_NE(o.line.find("PID " + std::to_string(getpid()) + " (self)"), std::string::npos) << o.line;
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::seconds(30));  // returned at its deadline, not hung (was 1.5 s)
}

TEST(RunAsTarget, AChildThatDiesIsAnError) {
  SKIP_FORK_UNDER_TSAN();
  const AttachOutcome o = runAsTarget(self(), std::chrono::steady_clock::now() + std::chrono::seconds(30), [] {
    _exit(3);
    return AttachOutcome{};
  });
  EXPECT_EQ(o.status, kError);
  EXPECT_NE(o.line.find("exit 3"), std::string::npos) << o.line;
}

TEST(RunAsTarget, DropsEveryIdAndGroupOfRoot) {
  SKIP_FORK_UNDER_TSAN();
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  TargetInfo t = self();
  t.target.euid = 65534;
  t.target.egid = 65533;
  // Root with supplementary groups (4, adm: what a root shell often has), in a child of
  // our own, so that the drop has some to remove.
  const AttachOutcome o = runAsTarget(self(), std::chrono::steady_clock::now() + std::chrono::seconds(30), [&t] {
    const gid_t extra[] = {0, 4};
    if (setgroups(2, extra) != 0) return AttachOutcome{kError, "setgroups", {}};
    return runAsTarget(t, std::chrono::steady_clock::now() + std::chrono::seconds(30), [] {
      uid_t r, e, s;
      gid_t gr, ge, gs;
      getresuid(&r, &e, &s);
      getresgid(&gr, &ge, &gs);
      const int groups = getgroups(0, nullptr);
      return AttachOutcome{kAttached,
                           std::to_string(r) + " " + std::to_string(e) + " " + std::to_string(s) + " " +
                               std::to_string(gr) + " " + std::to_string(ge) + " " + std::to_string(gs) + " " +
                               std::to_string(groups),
                           {}};
    });
  });
  EXPECT_EQ(o.status, kAttached);
  EXPECT_EQ(o.line, "65534 65534 65534 65533 65533 65533 0");
}

TEST(RunAsTarget, WithoutThePrivilegeToSwitchItIsPermission) {
  SKIP_FORK_UNDER_TSAN();
  TargetInfo t = self();
  t.target.euid = geteuid() == 0 ? 0 : geteuid() + 1;
  bool ran = false;
  const auto run = [&ran] {
    ran = true;
    return AttachOutcome{kAttached, "ran", {}};
  };
  if (geteuid() == 0) {
    // As root, drop first in a child of our own, then ask for root back.
    const AttachOutcome o = runAsTarget(self(), std::chrono::steady_clock::now() + std::chrono::seconds(30), [&] {
      if (setresuid(65534, 65534, 65534) != 0) return AttachOutcome{kError, "setresuid", {}};
      TargetInfo root = self();
      root.target.euid = 0;
      return runAsTarget(root, std::chrono::steady_clock::now() + std::chrono::seconds(30), run);
    });
    EXPECT_EQ(o.status, kPermission) << o.line;
    EXPECT_NE(o.line.find("cannot take its ids"), std::string::npos) << o.line;
  } else {
    const AttachOutcome o = runAsTarget(t, std::chrono::steady_clock::now() + std::chrono::seconds(30), run);
    EXPECT_EQ(o.status, kPermission) << o.line;
  }
}

// node in a network namespace of its own (a container's), its ids root's as ours: the
// exchange's child enters that namespace, closes its descriptor, and holds no capability
// while it talks to what the target serves there.
TEST(RunAsTarget, EntersTheNetworkNamespaceAndHoldsNoCapability) {
  SKIP_FORK_UNDER_TSAN();
  if (geteuid() != 0) GTEST_SKIP() << "needs root (setns)";
  int ready[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    const char c = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  const bool got = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  const std::string ns_path = "/proc/" + std::to_string(holder) + "/ns/net";
  char want[64] = {}, ours[64] = {};
  const bool named =
      readlink(ns_path.c_str(), want, sizeof want - 1) > 0 && readlink("/proc/self/ns/net", ours, sizeof ours - 1) > 0;
  Fd ns(open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
  const int try_enter = ns.fd >= 0 ? tryEnterNetns(ns.fd) : -1;
  const int fd = ns.fd;
  const AttachOutcome o = runAsTarget(
      self(), std::chrono::steady_clock::now() + std::chrono::seconds(30),
      [fd] {
        const bool closed = fcntl(fd, F_GETFD) == -1;  // before anything here takes its number again
        char now[64] = {};
        if (readlink("/proc/self/ns/net", now, sizeof now - 1) <= 0) return AttachOutcome{kError, "readlink", {}};
        std::ifstream in("/proc/self/status");
        std::string line, caps;
        while (std::getline(in, line))
          if (line.rfind("CapEff:", 0) == 0 || line.rfind("CapPrm:", 0) == 0 || line.rfind("NoNewPrivs:", 0) == 0)
            caps += " " + line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
        return AttachOutcome{kAttached, now + caps + (closed ? " closed" : " open"), {}};
      },
      ns.fd);
  kill(holder, SIGKILL);  // our own child
  waitpid(holder, nullptr, 0);
  ASSERT_TRUE(got && c == 'y') << "unshare(CLONE_NEWNET) in the holder";
  ASSERT_TRUE(named);
  ASSERT_STRNE(want, ours);
  EXPECT_EQ(try_enter, 0);
  EXPECT_EQ(o.status, kAttached) << o.line;
  // Its namespace; CapPrm and CapEff empty; no new privileges; the descriptor closed.
  EXPECT_EQ(o.line, std::string(want) + " 0000000000000000 0000000000000000 1 closed");
}

// A Unix listener with its backlog full: HotSpot's listener, stuck, with jcmd clients
// queued. The connect must end at the deadline.
TEST(ConnectUnix, AFullBacklogTimesOut) {
  TempDir d;
  const std::string path = d.path + "/sock";
  const int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(l, 0), 0);
  std::vector<int> queued;
  for (int i = 0; i < 8; ++i) {
    const int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(c);
      break;
    }
    queued.push_back(c);
  }
  const auto t0 = std::chrono::steady_clock::now();
  int fd = -1, err = 0;
  const IoStatus st = connectUnix(path, t0 + std::chrono::milliseconds(300), &fd, &err);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(st, IoStatus::kTimedOut);
  EXPECT_EQ(fd, -1);
  EXPECT_LT(took, std::chrono::seconds(30));  // returned at its deadline, not hung (was 1.5 s)
  // Accepted, the listener's queue has room: then it connects, and the peer is us.
  for (int c : queued) {
    const int s = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (s >= 0) close(s);
    close(c);
  }
  ASSERT_EQ(connectUnix(path, std::chrono::steady_clock::now() + std::chrono::seconds(2), &fd, &err), IoStatus::kOk);
  pid_t peer = 0;
  EXPECT_TRUE(peerPidIs(fd, getpid(), &peer));
  EXPECT_EQ(peer, getpid());
  EXPECT_FALSE(peerPidIs(fd, getpid() + 1));
  close(fd);
  close(l);
  EXPECT_EQ(connectUnix(d.path + "/none", std::chrono::steady_clock::now() + std::chrono::seconds(1), &fd, &err),
            IoStatus::kError);
  EXPECT_EQ(err, ENOENT);
}

TEST(RecvAll, CapAndDeadline) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
  int err = 0;
  std::string got;
  ASSERT_EQ(sendAll(sv[1], std::string(100, 'r'), std::chrono::steady_clock::now() + std::chrono::seconds(1), &err),
            IoStatus::kOk);
  EXPECT_EQ(recvAll(sv[0], 1 << 16, std::chrono::steady_clock::now() + std::chrono::milliseconds(100), &got, &err),
            IoStatus::kTimedOut);  // no EOF yet
  EXPECT_EQ(got.size(), 100u);
  ASSERT_EQ(sendAll(sv[1], std::string(200, 'r'), std::chrono::steady_clock::now() + std::chrono::seconds(1), &err),
            IoStatus::kOk);
  got.clear();
  EXPECT_EQ(recvAll(sv[0], 150, std::chrono::steady_clock::now() + std::chrono::seconds(1), &got, &err),
            IoStatus::kTooLarge);
  close(sv[1]);
  got.clear();
  EXPECT_EQ(recvAll(sv[0], 150, std::chrono::steady_clock::now() + std::chrono::seconds(1), &got, &err), IoStatus::kOk);
  close(sv[0]);
}

}  // namespace
}  // namespace jitprov::cli

// --- the .NET client's signature text (CoreCLR's own form) ------------------------------

namespace jitprov::dotnet {
namespace {

SigNames names() {
  SigNames n;
  n.type_name = [](uint32_t token) {
    if (token == 0x02000002) return std::string("JitWork.Node");
    if (token == 0x01000005) return std::string("System.Collections.Generic.List`1");
    return std::string("T") + std::to_string(token);
  };
  n.type_spec = [](uint32_t token, const uint8_t** sig, size_t* len) {
    static const uint8_t kListOfInt[] = {0x15, 0x12, (5 << 2) | 1, 0x01, 0x08};  // List`1<int32>
    if (token != 0x1B000001) return false;
    *sig = kListOfInt;
    *len = sizeof kListOfInt;
    return true;
  };
  return n;
}

std::string format(const std::vector<uint8_t>& sig, bool* ok = nullptr) {
  std::string out;
  const bool r = formatMethodSig(sig.data(), sig.size(), names(), &out);
  if (ok != nullptr) *ok = r;
  return out;
}

TEST(ClrNames, CoreClrsForm) {
  EXPECT_EQ(format({0x00, 0x02, 0x08, 0x08, 0x0E}), "int32  (int32,class System.String)");
  EXPECT_EQ(format({0x20, 0x00, 0x01}), "instance void  ()");
  EXPECT_EQ(format({0x20, 0x01, 0x01, 0x12, (2 << 2) | 0}), "instance void  (class JitWork.Node)");
  EXPECT_EQ(format({0x00, 0x01, 0x1D, 0x0A, 0x11, (2 << 2) | 0}), "int64[]  (value class JitWork.Node)");
  EXPECT_EQ(format({0x30, 0x01, 0x01, 0x1E, 0x00, 0x1D, 0x13, 0x00}), "instance generic !!0  (!0[])");
  // A generic instantiation, inline in the blob and through a TypeSpec token (in a modifier).
  EXPECT_EQ(format({0x00, 0x01, 0x01, 0x15, 0x12, (5 << 2) | 1, 0x01, 0x08}),
            "void  (class System.Collections.Generic.List`1<int32>)");
  bool ok = false;
  EXPECT_NE(format({0x00, 0x01, 0x01, 0x1F, (1 << 2) | 2, 0x08}, &ok).find("List`1<int32> int32)"), std::string::npos);
  EXPECT_TRUE(ok);
  // vararg: the count holds the parameters after the sentinel too.
  EXPECT_EQ(format({0x05, 0x02, 0x01, 0x08, 0x41, 0x0E}), "vararg void  (int32,...,class System.String)");
}

TEST(ClrNames, TruncatedBlobsDoNotParse) {
  const std::vector<uint8_t> whole = {0x20, 0x02, 0x01, 0x12, (2 << 2) | 0, 0x1D, 0x08};
  bool ok = false;
  EXPECT_EQ(format(whole, &ok), "instance void  (class JitWork.Node,int32[])");
  EXPECT_TRUE(ok);
  // Cut anywhere, also between two parameters: the count says one is missing.
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    format(std::vector<uint8_t>(whole.begin(), whole.begin() + cut), &ok);
    EXPECT_FALSE(ok) << cut;
  }
  format({0x00, 0x01, 0x01, 0x1F, (2 << 2) | 2, 0x08}, &ok);  // an unknown TypeSpec
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace jitprov::dotnet

// --- node (node_attach.h) ------------------------------------------------------------

TEST(NodeAttach, WebSocketAcceptIsTheRfcExample) {
  EXPECT_EQ(jitprov::cli::webSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(NodeAttach, WebSocketFrameIsMaskedWithItsLength) {
  const uint8_t mask[4] = {0x37, 0xfa, 0x21, 0x3d};
  // RFC 6455 5.7: a masked "Hello".
  EXPECT_EQ(jitprov::cli::webSocketFrame(1, "Hello", mask),
            std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
  const std::string big = jitprov::cli::webSocketFrame(1, std::string(300, 'x'), mask);
  ASSERT_EQ(big.size(), 2u + 2 + 4 + 300);
  EXPECT_EQ(uint8_t(big[1]), 0x80 | 126);
  EXPECT_EQ(uint8_t(big[2]) << 8 | uint8_t(big[3]), 300);
  const std::string huge = jitprov::cli::webSocketFrame(1, std::string(70000, 'x'), mask);
  EXPECT_EQ(uint8_t(huge[1]), 0x80 | 127);
  EXPECT_EQ(huge.size(), 2u + 8 + 4 + 70000);
}

TEST(NodeAttach, InspectorAddressFromItsOptions) {
  using jitprov::cli::inspectorAddress;
  auto a = inspectorAddress({"node", "app.js"});
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9229);
  EXPECT_FALSE(a.explicit_inspect);
  a = inspectorAddress({"node", "--inspect-port=127.0.0.2:4000", "app.js"});
  EXPECT_EQ(a.host, "127.0.0.2");
  EXPECT_EQ(a.port, 4000);
  EXPECT_FALSE(a.explicit_inspect);
  a = inspectorAddress({"node", "--inspect-port", "5000", "app.js"});
  EXPECT_EQ(a.port, 5000);
  a = inspectorAddress({"node", "--inspect=0.0.0.0:9230", "app.js"});
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 9230);
  EXPECT_TRUE(a.explicit_inspect);
  a = inspectorAddress({"node", "--inspect", "app.js"});
  EXPECT_TRUE(a.explicit_inspect);
  EXPECT_EQ(a.port, 9229);
  a = inspectorAddress({"node", "--inspect-brk=localhost", "app.js"});
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9229);
  // IPv6 in brackets, with or without a port; and the values as node reads them
  // (SplitHostPort, HostPort::Update): a bare IPv6 address splits at its last colon, a
  // host alone takes the default port again, an empty host is no host.
  struct Case {
    std::vector<std::string> args;
    const char* host;
    int port;
  };
  const Case cases[] = {
      {{"--inspect-port=[::1]:9333"}, "::1", 9333},
      {{"--inspect=[::1]"}, "::1", 9229},
      {{"--inspect-port=[::]:4003"}, "::", 4003},
      {{"--inspect-port=::1"}, ":", 1},  // no address: node would not have started
      {{"--inspect-port=::1:9333"}, "::1", 9333},
      {{"--inspect-port=9333", "--inspect=[::1]"}, "::1", 9229},
      {{"--inspect-port=9333", "--inspect=myhost"}, "myhost", 9229},
      {{"--inspect-port=[]:9334"}, "127.0.0.1", 9334},
      {{"--inspect-port=[::1]:4005", "--inspect-port=4006"}, "::1", 4006},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"node"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.push_back("app.js");
    a = inspectorAddress(args);
    EXPECT_EQ(a.host, c.host) << c.args.back();
    EXPECT_EQ(a.port, c.port) << c.args.back();
  }
  a = inspectorAddress({"node", "--", "--inspect-port=1"});
  EXPECT_EQ(a.port, 9229);  // the program's arguments
  // Node's options end at the script: what follows is the program's.
  a = inspectorAddress({"node", "app.js", "--inspect-port=9300"});
  EXPECT_EQ(a.port, 9229);
  a = inspectorAddress({"node", "-r", "pre.js", "--inspect-port", "4001", "app.js", "--inspect-port=9300"});
  EXPECT_EQ(a.port, 4001);  // -r's value is not the script
  // NODE_OPTIONS applies, and the command line overrides it.
  a = inspectorAddress({"node", "app.js"}, {"--require", "x.js", "--inspect-port=6000"});
  EXPECT_EQ(a.port, 6000);
  a = inspectorAddress({"node", "--inspect-port=5000", "app.js"}, {"--inspect-port=6000"});
  EXPECT_EQ(a.port, 5000);
  // --inspect-publish-uid: node's default serves /json/list; stderr alone does not.
  EXPECT_EQ(inspectorAddress({"node", "app.js"}).publish_uid, "stderr,http");
  EXPECT_EQ(inspectorAddress({"node", "--inspect-publish-uid=stderr", "app.js"}).publish_uid, "stderr");
  a = inspectorAddress({"node", "--inspect-publish-uid", "http", "--inspect-port", "4002", "app.js"});
  EXPECT_EQ(a.publish_uid, "http");
  EXPECT_EQ(a.port, 4002);  // the value was not taken for the script
  EXPECT_EQ(inspectorAddress({"node", "app.js"}, {"--inspect-publish-uid=stderr"}).publish_uid, "stderr");
}

// A parsed listener is at the address `ip` (written in a URL as `url_host`), port, inode.
static void expectListener(const jitprov::cli::TcpListener& l, const char* ip, const char* url_host, int port,
                           unsigned long inode) {
  jitprov::cli::IpAddr want;
  ASSERT_TRUE(jitprov::cli::parseIp(ip, &want)) << ip;
  EXPECT_EQ(l.addr, want);
  EXPECT_EQ(jitprov::cli::urlHost(l.addr), url_host);
  EXPECT_EQ(l.port, port);
  EXPECT_EQ(l.inode, inode);
}

TEST(NodeAttach, TcpListenersOfProcNetTcp) {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:240D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1115899 1 "
      "000000001c6438cb 100 0 0 10 0\n"
      "   1: 0100007F:240D 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 "
      "000000001c6438cb 100 0 0 10 0\n";
  const auto l = jitprov::cli::parseTcpListeners(text);
  ASSERT_EQ(l.size(), 1u);
  expectListener(l[0], "127.0.0.1", "127.0.0.1", 9229, 1115899);
  EXPECT_FALSE(l[0].addr.v6);
}

// /proc/net/tcp6 (node --inspect-port=[::1]:9333 after SIGUSR1, as this machine printed
// it), and a listener on :: beside it.
TEST(NodeAttach, TcpListenersOfProcNetTcp6) {
  const std::string text =
      "  sl  local_address                         remote_address                        st tx_queue rx_queue tr "
      "tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000001000000:2475 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 1278375 1 00000000047cb5d5 100 0 0 10 0\n"
      "   1: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 77 1 00000000047cb5d5 100 0 0 10 0\n"
      "   2: 00000000000000000000000001000000:2475 00000000000000000000000001000000:D431 01 00000000:00000000 "
      "00:00000000 00000000     0        0 78 1 00000000047cb5d5 100 0 0 10 0\n";
  const auto l = jitprov::cli::parseTcpListeners(text);
  ASSERT_EQ(l.size(), 2u);
  expectListener(l[0], "[::1]", "[::1]", 9333, 1278375);
  EXPECT_TRUE(jitprov::cli::isLoopback(l[0].addr));
  EXPECT_TRUE(jitprov::cli::isAnyAddress(l[1].addr));
  EXPECT_TRUE(l[1].addr.v6);
  EXPECT_EQ(l[1].port, 8080);
}

TEST(NodeAttach, IpAddresses) {
  using jitprov::cli::IpAddr;
  auto ip = [](const char* t) {
    IpAddr a;
    EXPECT_TRUE(jitprov::cli::parseIp(t, &a)) << t;
    return a;
  };
  EXPECT_TRUE(jitprov::cli::isLoopback(ip("127.0.0.1")));
  EXPECT_TRUE(jitprov::cli::isLoopback(ip("127.1.2.3")));
  EXPECT_TRUE(jitprov::cli::isLoopback(ip("::1")));
  EXPECT_TRUE(jitprov::cli::isLoopback(ip("::ffff:127.0.0.1")));
  EXPECT_FALSE(jitprov::cli::isLoopback(ip("0.0.0.0")));
  EXPECT_FALSE(jitprov::cli::isLoopback(ip("::")));
  EXPECT_FALSE(jitprov::cli::isLoopback(ip("::2")));
  EXPECT_FALSE(jitprov::cli::isLoopback(ip("fe80::1")));
  EXPECT_FALSE(jitprov::cli::isLoopback(ip("10.0.0.1")));
  EXPECT_TRUE(jitprov::cli::isAnyAddress(ip("0.0.0.0")));
  EXPECT_TRUE(jitprov::cli::isAnyAddress(ip("[::]")));
  EXPECT_FALSE(jitprov::cli::isAnyAddress(ip("::1")));
  EXPECT_EQ(jitprov::cli::urlHost(ip("::ffff:127.0.0.1")), "[::ffff:127.0.0.1]");
  EXPECT_EQ(jitprov::cli::unmapped(ip("::ffff:127.0.0.1")), ip("127.0.0.1"));
  EXPECT_EQ(jitprov::cli::unmapped(ip("::1")), ip("::1"));
  EXPECT_EQ(jitprov::cli::unmapped(ip("10.1.2.3")), ip("10.1.2.3"));
  IpAddr a;
  EXPECT_FALSE(jitprov::cli::parseIp("localhost", &a));
  EXPECT_FALSE(jitprov::cli::parseIp("[::1", &a));
  EXPECT_FALSE(jitprov::cli::parseIp("", &a));
}
