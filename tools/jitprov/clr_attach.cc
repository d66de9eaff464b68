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

// CoreCLR's disambiguation key: the start time (field 22 of /proc/PID/stat), 0 unknown.
unsigned long long startKey(pid_t pid) {
  std::string stat;
  if (!readFile("/proc/" + std::to_string(pid) + "/stat", &stat)) return 0;
  const size_t p = stat.rfind(')');
  if (p == std::string::npos) return 0;
  std::istringstream in(stat.substr(p + 1));
  std::string tok;
  for (int field = 3; in >> tok; ++field)
    if (field == 22) return std::strtoull(tok.c_str(), nullptr, 10);
  return 0;
}

// The socket's file: the exact name first, else the newest dotnet-diagnostic-NSPID-*-socket
// (a target in a time namespace sees another start time). "" when there is none.
std::string findSocket(const std::string& dir, pid_t nspid, unsigned long long key) {
  const std::string prefix = "dotnet-diagnostic-" + std::to_string(nspid) + "-";
  const std::string exact = prefix + std::to_string(key) + "-socket";
  struct stat st {};
  if (key != 0 && ::stat((dir + "/" + exact).c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return exact;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return "";
  std::string best;
  struct timespec best_t {};
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) != 0 || n.size() < prefix.size() + 7 ||
        n.compare(n.size() - 7, 7, "-socket") != 0)
      continue;
    if (::stat((dir + "/" + n).c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (best.empty() || st.st_mtim.tv_sec > best_t.tv_sec ||
        (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec)) {
      best = n;
      best_t = st.st_mtim;
    }
  }
  closedir(d);
  return best;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Runs f as the target's effective uid and gid when we are root and they differ (the
// socket is the target's, mode 0600), then back to root. f's result, or -1 with errno
// when the ids could not be switched.
template <typename F>
int asTarget(const Target& t, F f) {
  const uid_t euid = geteuid();
  const gid_t egid = getegid();
  const bool switch_ids = euid == 0 && (t.euid != euid || t.egid != egid);
  if (switch_ids) {
    if (setegid(t.egid) != 0) return -1;
    if (seteuid(t.euid) != 0) {
      const int e = errno;
      (void)setegid(egid);
      errno = e;
      return -1;
    }
  }
  const int r = f();
  const int e = errno;
  if (switch_ids && (seteuid(euid) != 0 || setegid(egid) != 0)) {
    std::fprintf(stderr, "jitprov: cannot return to uid %d: %s\n", int(euid), std::strerror(errno));
    _exit(1);
  }
  errno = e;
  return r;
}

// A connection with a deadline on every wait.
class Conn {
 public:
  explicit Conn(Clock::time_point deadline) : deadline_(deadline) {}
  // 0, or the errno of the failure (ETIMEDOUT at the deadline).
  int open(const Target& t, const std::string& dir, const std::string& name) {
    Fd dirfd;
    std::string path = dir + "/" + name;
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) {  // through a descriptor of its directory
      dirfd.fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dirfd.fd < 0) return errno;
      path = "/proc/self/fd/" + std::to_string(dirfd.fd) + "/" + name;
      if (path.size() >= sizeof sa.sun_path) return ENAMETOOLONG;
    }
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    fd_.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_.fd < 0) return errno;
    const int r = asTarget(t, [&] { return connect(fd_.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa); });
    if (r == 0) return 0;
    if (errno != EINPROGRESS && errno != EAGAIN) return errno;
    if (!wait(POLLOUT)) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd_.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return err;
  }
  int send(const std::vector<uint8_t>& msg) {
    for (size_t off = 0; off < msg.size();) {
      const ssize_t n = ::send(fd_.fd, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += size_t(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait(POLLOUT)) return ETIMEDOUT;
      } else {
        return n < 0 ? errno : EPIPE;
      }
    }
    return 0;
  }
  int recv(uint8_t* p, size_t len) {
    for (size_t off = 0; off < len;) {
      const ssize_t n = ::recv(fd_.fd, p + off, len - off, 0);
      if (n > 0) {
        off += size_t(n);
      } else if (n == 0) {
        return ECONNRESET;  // closed before the whole reply
      } else if (errno == EAGAIN || errno == EINTR) {
        if (!wait(POLLIN)) return ETIMEDOUT;
      } else {
        return errno;
      }
    }
    return 0;
  }

 private:
  bool wait(short events) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_.fd, events, 0};
      const int r = poll(&p, 1, int(left));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }
  Clock::time_point deadline_;
  Fd fd_;
};

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

// One command on a connection of its own.
Reply exchange(const AttachRequest& req, Clock::time_point deadline, const std::string& dir, const std::string& name,
               const std::vector<uint8_t>& msg) {
  Reply r;
  Conn c(deadline);
  if ((r.err = c.open(req.target, dir, name)) != 0 || (r.err = c.send(msg)) != 0) return r;
  uint8_t h[20];
  if ((r.err = c.recv(h, sizeof h)) != 0) return r;
  const int size = clrReplyPayloadSize(h);
  if (size < 0) {
    r.err = EPROTO;
    return r;
  }
  std::vector<uint8_t> payload(size_t(size), 0);
  if ((r.err = c.recv(payload.data(), payload.size())) != 0) return r;
  return decodeClrReply(h, std::move(payload));
}

// Whether the target's .NET client runs: its ready mark (profiler.cc, markReady) in the
// maps. Its library alone says nothing: it stays mapped after a refused attach.
bool clientRuns(pid_t pid) {
  std::string maps;
  if (!readFile("/proc/" + std::to_string(pid) + "/maps", &maps)) return false;
  return maps.find("/memfd:jitprov-dotnet-ready") != std::string::npos;
}

std::string errText(int e) { return e == ETIMEDOUT ? "timed out" : std::strerror(e); }

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

AttachOutcome attachCoreClr(const AttachRequest& req) {
  AttachOutcome out;
  const Target& t = req.target;
  const std::string pid = std::to_string(t.pid);
  const auto deadline = Clock::now() + req.timeout;
  const std::string root = t.root.empty() ? "/proc/" + pid + "/root" : t.root;
  const std::string dir = root + targetTmpdir(t.pid);
  const std::string name = findSocket(dir, t.nspid != 0 ? t.nspid : t.pid, startKey(t.pid));
  if (::access(("/proc/" + pid).c_str(), F_OK) != 0) {
    out.status = kNoSuchProcess;
    out.line = "no process " + pid;
    return out;
  }
  if (name.empty()) {
    out.status = kAttachDisabled;
    out.line = "pid " + pid + " has no diagnostics socket in " + dir +
               " (DOTNET_EnableDiagnostics=0 or DOTNET_EnableDiagnostics_IPC=0, or not started yet)";
    return out;
  }
  auto failed = [&](int err, const char* what) {
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
  Reply r = exchange(req, deadline, dir, name, message(kSetProcess, kProcessInfo3, {}));
  if (r.err != 0) return failed(r.err, "ProcessInfo");
  bool v3 = true;
  if (!r.ok && r.hresult == kUnknownCommand) {
    v3 = false;
    r = exchange(req, deadline, dir, name, message(kSetProcess, kProcessInfo2, {}));
    if (r.err != 0) return failed(r.err, "ProcessInfo");
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
  r = exchange(req, deadline, dir, name, message(kSetProfiler, kAttachProfiler, p));
  if (r.err == ETIMEDOUT) {
    failed(r.err, "AttachProfiler");
    out.line += "; the attach may still complete";
    return out;
  }
  if (r.err != 0) return failed(r.err, "AttachProfiler");
  const uint32_t hr = r.ok ? 0 : r.hresult;
  std::string why;
  out.status = clrStatusOf(hr, hr == kAlreadyActive && clientRuns(t.pid), &why);
  out.line = (out.status == kAttached ? "attached to pid " : "pid ") + pid +
             (out.version.empty() ? "" : " (.NET " + out.version + ")") + ": " +
             (out.status == kAttached ? "jitprov's .NET client runs in it" : why);
  return out;
}

}  // namespace jitprov::cli
