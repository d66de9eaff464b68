// SPDX-License-Identifier: MIT
// CoreCLR's diagnostics IPC, the client side of the three commands `jitprov attach` sends
// (docs/dotnet.md, "Attach"). One command per connection, the server closes it after
// its reply. A message: "DOTNET_IPC_V1\0", uint16 size (header included), uint8 command
// set, uint8 command id, uint16 0, then the payload; integers little-endian, strings a
// uint32 count of UTF-16 units (the NUL included) then the units.
#include "clr_attach.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "attach_io.h"
#include "client_hresults.h"

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;

// {6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}, as a CLSID lies in memory (Data1-3 LE).
constexpr uint8_t kClientClsid[16] = {0x27, 0x8F, 0x3F, 0x6A, 0x5E, 0x5C, 0x0B, 0x4D,
                                      0x9A, 0x5C, 0x0F, 0x3E, 0x1B, 0x2C, 0x7D, 0x41};
constexpr char kMagic[14] = "DOTNET_IPC_V1";  // 13 characters and the NUL
constexpr uint8_t kSetProfiler = 0x03, kSetProcess = 0x04, kSetServer = 0xFF;
constexpr uint8_t kAttachProfiler = 0x01, kProcessInfo2 = 0x04, kProcessInfo3 = 0x08;
constexpr uint8_t kServerOk = 0x00;

constexpr uint32_t kAlreadyActive = 0x8013136Au;    // CORPROF_E_PROFILER_ALREADY_ACTIVE
constexpr uint32_t kNotAttachable = 0x80131368u;    // CORPROF_E_PROFILER_NOT_ATTACHABLE
constexpr uint32_t kCancelled = 0x80131375u;        // CORPROF_E_PROFILER_CANCEL_ACTIVATION
constexpr uint32_t kUninitialized = 0x80131371u;    // DS_IPC_E_RUNTIME_UNINITIALIZED
constexpr uint32_t kNotYetAvailable = 0x8013135Bu;  // DS_IPC_E_NOT_YET_AVAILABLE
constexpr uint32_t kUnknownCommand = 0x80131385u;   // DS_IPC_E_UNKNOWN_COMMAND
constexpr uint32_t kNotSupported = 0x80131515u;     // DS_IPC_E_NOTSUPPORTED
constexpr uint32_t kModNotFound = 0x8007007Eu;      // HRESULT_FROM_WIN32(ERROR_MOD_NOT_FOUND)
constexpr uint32_t kProcNotFound = 0x8007007Fu;     // HRESULT_FROM_WIN32(ERROR_PROC_NOT_FOUND)
constexpr uint32_t kClassNotAvailable = 0x80040111u;

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

bool readFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

// The target's TMPDIR (its environment at exec; CoreCLR reads it once at start), else /tmp.
std::string targetTmpdir(pid_t pid) {
  std::string env;
  if (readFile("/proc/" + std::to_string(pid) + "/environ", &env)) {
    for (size_t i = 0; i < env.size();) {
      size_t e = env.find('\0', i);
      if (e == std::string::npos) e = env.size();
      if (env.compare(i, 7, "TMPDIR=") == 0 && e > i + 7) {
        std::string d = env.substr(i + 7, e - i - 7);
        while (d.size() > 1 && d.back() == '/') d.pop_back();
        return d;
      }
      i = e + 1;
    }
  }
  return "/tmp";
}

// The socket's file: the exact name first, else the newest dotnet-diagnostic-NSPID-*-socket
// (a target in a time namespace sees another start time). Only a socket itself (lstat:
// no symlink followed) owned by the target's euid: in a shared /tmp anyone may bind one
// under the target's pid. "" when there is none.
bool isTargetSocket(const std::string& path, uid_t euid, struct stat* st) {
  return ::lstat(path.c_str(), st) == 0 && S_ISSOCK(st->st_mode) && st->st_uid == euid;
}
std::string findSocket(const std::string& dir, pid_t nspid, unsigned long long key, uid_t euid) {
  const std::string prefix = "dotnet-diagnostic-" + std::to_string(nspid) + "-";
  const std::string exact = prefix + std::to_string(key) + "-socket";
  struct stat st {};
  if (key != 0 && isTargetSocket(dir + "/" + exact, euid, &st)) return exact;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return "";
  std::string best;
  struct timespec best_t {};
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) != 0 || n.size() < prefix.size() + 7 ||
        n.compare(n.size() - 7, 7, "-socket") != 0)
      continue;
    if (!isTargetSocket(dir + "/" + n, euid, &st)) continue;
    if (best.empty() || st.st_mtim.tv_sec > best_t.tv_sec ||
        (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec)) {
      best = n;
      best_t = st.st_mtim;
    }
  }
  closedir(d);
  return best;
}

void put16(std::vector<uint8_t>* b, uint16_t v) {
  b->push_back(uint8_t(v));
  b->push_back(uint8_t(v >> 8));
}
void put32(std::vector<uint8_t>* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(uint8_t(v >> (8 * i)));
}

// UTF-8 to UTF-16 code units (invalid bytes become U+FFFD).
std::u16string utf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = uint8_t(s[i]);
    uint32_t cp = 0xFFFD;
    size_t n = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c >> 5) == 6 && i + 1 < s.size()) {
      cp = (c & 0x1F) << 6 | (uint8_t(s[i + 1]) & 0x3F), n = 2;
    } else if ((c >> 4) == 14 && i + 2 < s.size()) {
      cp = (c & 0x0F) << 12 | (uint8_t(s[i + 1]) & 0x3F) << 6 | (uint8_t(s[i + 2]) & 0x3F), n = 3;
    } else if ((c >> 3) == 30 && i + 3 < s.size()) {
      cp = (c & 0x07) << 18 | (uint8_t(s[i + 1]) & 0x3F) << 12 | (uint8_t(s[i + 2]) & 0x3F) << 6 |
           (uint8_t(s[i + 3]) & 0x3F),
      n = 4;
    }
    i += n;
    if (cp >= 0x10000) {
      out.push_back(char16_t(0xD800 + ((cp - 0x10000) >> 10)));
      out.push_back(char16_t(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    } else {
      out.push_back(char16_t(cp));
    }
  }
  return out;
}

std::vector<uint8_t> message(uint8_t set, uint8_t id, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> m(kMagic, kMagic + sizeof kMagic);
  put16(&m, uint16_t(20 + payload.size()));
  m.push_back(set);
  m.push_back(id);
  put16(&m, 0);
  m.insert(m.end(), payload.begin(), payload.end());
  return m;
}

using Reply = ClrReply;

// The largest reply read: a diagnostics message's size field is 16 bits.
constexpr size_t kMaxIpcReply = 65535;

// One command on a connection of its own, in runAsTarget's child (already the target's
// ids): the connected peer must be the target itself (SO_PEERCRED), the reply is read to
// the server's close, at most kMaxIpcReply bytes, before the deadline.
Reply exchange(pid_t pid, AttachDeadline deadline, const std::string& dir, const std::string& name,
               const std::vector<uint8_t>& msg) {
  Reply r;
  Fd dirfd;
  std::string path = dir + "/" + name;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {  // through a descriptor of its directory
    dirfd.fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dirfd.fd < 0) {
      r.err = errno;
      return r;
    }
    path = "/proc/self/fd/" + std::to_string(dirfd.fd) + "/" + name;
  }
  Fd sock;
  int err = 0;
  IoStatus st = connectUnix(path, deadline, &sock.fd, &err);
  if (st != IoStatus::kOk) {
    r.err = st == IoStatus::kTimedOut ? ETIMEDOUT : err != 0 ? err : ECONNRESET;
    return r;
  }
  if (!peerPidIs(sock.fd, pid, &r.peer)) {
    r.err = EPERM;
    r.wrong_peer = true;
    return r;
  }
  st = sendAll(sock.fd, std::string(msg.begin(), msg.end()), deadline, &err);
  std::string reply;
  if (st == IoStatus::kOk) st = recvAll(sock.fd, kMaxIpcReply, deadline, &reply, &err);
  if (st != IoStatus::kOk) {
    r.err = st == IoStatus::kTimedOut   ? ETIMEDOUT
            : st == IoStatus::kTooLarge ? EMSGSIZE
            : st == IoStatus::kClosed   ? ECONNRESET
                                        : (err != 0 ? err : EIO);
    return r;
  }
  if (reply.size() < 20) {
    r.err = reply.empty() ? ECONNRESET : EPROTO;  // closed before the whole reply
    return r;
  }
  uint8_t h[20];
  std::memcpy(h, reply.data(), 20);
  const int size = clrReplyPayloadSize(h);
  if (size < 0 || reply.size() != 20 + size_t(size)) {
    r.err = EPROTO;
    return r;
  }
  return decodeClrReply(h, std::vector<uint8_t>(reply.begin() + 20, reply.end()));
}

// Whether the target's .NET client runs: its ready mark (profiler.cc, markReady) in the
// maps. Its library alone says nothing: it stays mapped after a refused attach.
bool clientRuns(pid_t pid) {
  std::string maps;
  if (!readFile("/proc/" + std::to_string(pid) + "/maps", &maps)) return false;
  return maps.find("/memfd:jitprov-dotnet-ready") != std::string::npos;
}

std::string errText(int e) {
  return e == ETIMEDOUT ? "timed out" : e == EMSGSIZE ? "a reply larger than 64 KiB" : std::strerror(e);
}

}  // namespace

int clrReplyPayloadSize(const uint8_t (&h)[20]) {
  const uint16_t size = uint16_t(h[14] | h[15] << 8);
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0 || size < 20 || h[16] != kSetServer) return -1;
  return size - 20;
}

ClrReply decodeClrReply(const uint8_t (&h)[20], std::vector<uint8_t> payload) {
  ClrReply r;
  r.payload = std::move(payload);
  r.ok = h[17] == kServerOk;
  if (r.payload.size() >= 4)
    r.hresult = uint32_t(r.payload[0]) | uint32_t(r.payload[1]) << 8 | uint32_t(r.payload[2]) << 16 |
                uint32_t(r.payload[3]) << 24;
  if (!r.ok && r.payload.size() < 4) r.err = EPROTO;
  return r;
}

std::string clrProductVersion(const std::vector<uint8_t>& p, bool v3) {
  size_t off = v3 ? 4 : 0;
  off += 8 + 16;  // pid, runtime cookie
  std::string last;
  for (int i = 0; i < 5; ++i) {  // command line, OS, architecture, entry point assembly, version
    if (off + 4 > p.size()) return "";
    const uint32_t units =
        uint32_t(p[off]) | uint32_t(p[off + 1]) << 8 | uint32_t(p[off + 2]) << 16 | uint32_t(p[off + 3]) << 24;
    off += 4;
    if (units > (p.size() - off) / 2) return "";
    last.clear();
    for (uint32_t u = 0; u < units; ++u) {
      const uint16_t c = uint16_t(p[off + 2 * u] | p[off + 2 * u + 1] << 8);
      if (c == 0) break;
      last.push_back(c < 0x80 ? char(c) : '?');
    }
    off += 2 * size_t(units);
  }
  return last;
}

int clrStatusOf(uint32_t hr, bool jitprov_loaded, std::string* why) {
  using namespace jitprov::dotnet;
  switch (hr) {
    case 0:
      *why = "attached";
      return kAttached;
    case kAlreadyActive:
      if (jitprov_loaded) {
        *why = "jitprov's .NET client runs in it already (CoreCLR: CORPROF_E_PROFILER_ALREADY_ACTIVE; nothing done)";
        return kAlreadyLoaded;
      }
      *why = "another profiler is loaded in it (CoreCLR allows one: CORPROF_E_PROFILER_ALREADY_ACTIVE)";
      return kOtherProfiler;
    case kHrClientAlreadyRunning:
      *why = "jitprov's .NET client runs in it already (nothing done)";
      return kAlreadyLoaded;
    case kHrClientRuntimeTooOld:
      *why = "the runtime has no ICorProfilerInfo12: .NET 5 or later is needed";
      return kRuntimeTooOld;
    case kUnknownCommand:
      *why = "the runtime does not know AttachProfiler (.NET Core 3.0 or later has it; jitprov needs .NET 5)";
      return kRuntimeTooOld;
    case kNotSupported:
      *why = "the runtime was built without profiling (DS_IPC_E_NOTSUPPORTED)";
      return kAttachDisabled;
    case kModNotFound:
    case kProcNotFound:
    case kClassNotAvailable:
      *why = "the runtime could not load the agent library (" + hex(hr) + "): is it there in the target's view?";
      return kNoAgent;
    case kUninitialized:
    case kNotYetAvailable:
      *why = "the runtime is starting or shutting down (" + hex(hr) + "): try again";
      return kError;
    case kHrClientBadOptions:
      *why = "the client refused its options (" + hex(hr) + "; its reason is on the target's stderr)";
      return kAgentFailed;
    case kNotAttachable:
      *why = "the library is not an attachable profiler (CORPROF_E_PROFILER_NOT_ATTACHABLE)";
      return kAgentFailed;
    case kCancelled:
      *why = "the client declined the attach (CORPROF_E_PROFILER_CANCEL_ACTIVATION)";
      return kAgentFailed;
    default:
      *why = "the client failed to start: HRESULT " + hex(hr) +
             (hr == kHrClientRuntimeRefused ? " (the runtime refused its event mask or EventPipe session)"
              : hr == kHrClientStartFailed  ? " (jitprov's runtime or rundowns did not start)"
                                            : "");
      return kAgentFailed;
  }
}

namespace {

// Everything of the attach that touches what the target chose (its TMPDIR, the
// directory's names, the socket and its replies): in runAsTarget's child.
AttachOutcome attachAsTarget(const AttachRequest& req, AttachDeadline deadline) {
  AttachOutcome out;
  const Target& t = req.target;
  const std::string pid = std::to_string(t.pid);
  const std::string root = t.root.empty() ? "/proc/" + pid + "/root" : t.root;
  const std::string dir = root + targetTmpdir(t.pid);
  const std::string name = findSocket(dir, t.nspid != 0 ? t.nspid : t.pid, t.start_ticks, t.euid);
  if (::access(("/proc/" + pid).c_str(), F_OK) != 0) {
    out.status = kNoSuchProcess;
    out.line = "no process " + pid;
    return out;
  }
  if (name.empty()) {
    out.status = kAttachDisabled;
    out.not_yet = AttachOutcome::NotYet::kYoung;
    out.line = "pid " + pid + " has no diagnostics socket in " + dir + " owned by its uid " + std::to_string(t.euid) +
               " (DOTNET_EnableDiagnostics=0 or DOTNET_EnableDiagnostics_IPC=0, or not started yet)";
    return out;
  }
  auto failed = [&](const Reply& r, const char* what) {
    const int err = r.err;
    if (r.wrong_peer) {
      out.status = kError;
      out.line = dir + "/" + name + " is not pid " + pid + "'s socket: its peer is pid " + std::to_string(r.peer) +
                 " (nothing sent to it)";
      return out;
    }
    out.status = err == ETIMEDOUT                ? kTimedOut
                 : err == EACCES || err == EPERM ? kPermission
                 : err == ECONNREFUSED           ? kAttachDisabled
                                                 : kError;
    if (err == ETIMEDOUT)
      out.line = "pid " + pid + " did not answer " + what + " within " + std::to_string(req.timeout.count()) +
                 " ms (stopped? busy?)";
    else
      out.line = std::string(what) + " on " + dir + "/" + name + ": " + errText(err);
    if (err == ECONNREFUSED) out.line += " (a stale socket: no runtime listens)";
    return out;
  };

  // The version: ProcessInfo3 (.NET 8+), else ProcessInfo2 (.NET 6+).
  Reply r = exchange(t.pid, deadline, dir, name, message(kSetProcess, kProcessInfo3, {}));
  if (r.err != 0) return failed(r, "ProcessInfo");
  bool v3 = true;
  if (!r.ok && r.hresult == kUnknownCommand) {
    v3 = false;
    r = exchange(t.pid, deadline, dir, name, message(kSetProcess, kProcessInfo2, {}));
    if (r.err != 0) return failed(r, "ProcessInfo");
  }
  if (r.ok) {
    out.version = clrProductVersion(r.payload, v3);
    const int major = std::atoi(out.version.c_str());
    if (!out.version.empty() && major < 5) {
      out.status = kRuntimeTooOld;
      out.line = "pid " + pid + " runs .NET " + out.version + ": jitprov attaches to .NET 5 or later";
      return out;
    }
  }  // else a runtime before 6.0 (no ProcessInfo2): the client says whether it has what it needs

  std::vector<uint8_t> p;
  put32(&p, 0);  // no wait for a concurrent GC: the client asks for no GC events
  p.insert(p.end(), kClientClsid, kClientClsid + 16);
  const std::u16string path = utf16(req.agent);
  put32(&p, uint32_t(path.size() + 1));
  for (char16_t c : path) put16(&p, uint16_t(c));
  put16(&p, 0);
  put32(&p, uint32_t(req.options.size()));
  p.insert(p.end(), req.options.begin(), req.options.end());
  if (p.size() > 65535 - 20) {
    out.status = kUsage;
    out.line = "the agent's path and options are too long for one diagnostics message";
    return out;
  }
  r = exchange(t.pid, deadline, dir, name, message(kSetProfiler, kAttachProfiler, p));
  if (r.err == ETIMEDOUT) {
    failed(r, "AttachProfiler");
    out.line += "; the attach may still complete";
    return out;
  }
  if (r.err != 0) return failed(r, "AttachProfiler");
  const uint32_t hr = r.ok ? 0 : r.hresult;
  std::string why;
  out.status = clrStatusOf(hr, hr == kAlreadyActive && clientRuns(t.pid), &why);
  out.line = (out.status == kAttached ? "attached to pid " : "pid ") + pid +
             (out.version.empty() ? "" : " (.NET " + out.version + ")") + ": " +
             (out.status == kAttached ? "jitprov's .NET client runs in it" : why);
  // A runtime that is starting answers DS_IPC_E_NOT_YET_AVAILABLE until its EventPipe
  // runs: its diagnostics socket comes first (an attach at the socket's appearance got
  // 0x8013135B in a full check), and a runtime paused at start for a diagnostics monitor
  // (DOTNET_DefaultDiagnosticPortSuspend=1) answers so until it is resumed. Nothing was
  // loaded: attachProcess asks again.
  if (hr == kNotYetAvailable) out.not_yet = AttachOutcome::NotYet::kStarting;
  return out;
}

}  // namespace

AttachOutcome attachCoreClr(const AttachRequest& req) {
  const AttachDeadline deadline = Clock::now() + req.timeout;
  TargetInfo ti;
  ti.target = req.target;
  AttachOutcome out = runAsTarget(ti, deadline, [&] { return attachAsTarget(req, deadline); });
  // What the target chose (its version string, its TMPDIR in the lines) reaches the
  // user's terminal only through printable().
  out.version = printable(out.version, 40);
  out.line = printable(out.line, 400);
  return out;
}

}  // namespace jitprov::cli
