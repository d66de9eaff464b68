// SPDX-License-Identifier: MIT
// HotSpot's attach protocol (JDK 17, Linux), written from its description in
// docs/attach.md:
//   - the listener's socket is /tmp/.java_pid<NSPID> in the JVM's mount namespace
//     (reached as /proc/PID/root/tmp), owned by the JVM's euid, mode 0600;
//   - when it is absent, a file .attach_pid<NSPID> owned by the JVM's euid in its cwd (or
//     its /tmp) and one SIGQUIT make the JVM start the listener; a JVM that does not catch
//     SIGQUIT (-Xrs) dies of it, so it is never sent one;
//   - the request is five NUL-terminated strings, "1\0load\0PATH\0true\0OPTIONS\0"; the
//     JVM checks the peer's euid and egid (SO_PEERCRED: root, or its own) and answers
//     "STATUS\n" and the command's output, here "return code: N\n", then closes.
#include "hotspot_attach.h"

#include "attach_codes.h"
#include "attach_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned long long kSigQuitBit = 1ull << (SIGQUIT - 1);
constexpr size_t kMaxPerfData = 1 << 20;  // hsperfdata: 32-64 KiB by default (-XX:PerfDataMemorySize)
constexpr size_t kMaxRelease = 64 << 10;  // <java.home>/release: about 1 KiB
constexpr size_t kMaxReply = 64 << 10;    // the reply to `load`: "0\nreturn code: N\n", or dlerror's text

AttachOutcome out(int status, std::string line, std::string version = {}) {
  return AttachOutcome{status, std::move(line), std::move(version)};
}

template <typename T>
T readAt(const std::string& b, size_t off, bool big) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof v);
  if (big) {
    if constexpr (sizeof(T) == 4) v = T(__builtin_bswap32(uint32_t(v)));
  }
  return v;
}

// hsperfdata: the JVM's performance counters (/tmp/hsperfdata_USER/NSPID in its root),
// a regular file owned by its euid, read through readSmall (no symlink, no FIFO, at most
// kMaxPerfData bytes) and resolved inside its root.
PerfData readPerfData(const TargetInfo& t) {
  PerfData pd;
  const std::string tmp = t.target.root + "/tmp";
  DIR* d = opendir(tmp.c_str());
  if (d == nullptr) return pd;
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, "hsperfdata_", 11) == 0 && names.size() < 256) names.push_back(e->d_name);
  closedir(d);
  for (const std::string& n : names) {
    std::string bytes;
    if (readSmall("/tmp/" + n + "/" + std::to_string(t.target.nspid), t.target.euid, kMaxPerfData, &bytes,
                  t.target.root)
            .empty())
      return parsePerfData(bytes);
  }
  return pd;
}

// A java.home the target named, usable as a path under its root: absolute, no ".."
// component.
bool plainHome(const std::string& h) {
  if (h.empty() || h.front() != '/' || h.size() > 4096) return false;
  for (size_t b = 0; b < h.size();) {
    size_t e = h.find('/', b);
    if (e == std::string::npos) e = h.size();
    if (h.compare(b, e - b, "..") == 0) return false;
    b = e + 1;
  }
  return true;
}

}  // namespace

PerfData parsePerfData(const std::string& b) {
  PerfData pd;
  if (b.size() < 32 || uint8_t(b[0]) != 0xca || uint8_t(b[1]) != 0xfe || uint8_t(b[2]) != 0xc0 || uint8_t(b[3]) != 0xc0)
    return pd;
  const bool big = b[4] == 0;
  pd.accessible = b[7] != 0;
  const int32_t entry_offset = readAt<int32_t>(b, 24, big), entries = readAt<int32_t>(b, 28, big);
  if (entry_offset < 0) return pd;  // hostile: size_t(negative) + 20 would wrap round
  size_t off = size_t(entry_offset);
  for (int32_t i = 0; i < entries && off <= b.size() && b.size() - off >= 20; ++i) {
    const int32_t len = readAt<int32_t>(b, off, big), name_off = readAt<int32_t>(b, off + 4, big),
                  vlen = readAt<int32_t>(b, off + 8, big), data_off = readAt<int32_t>(b, off + 16, big);
    const char type = b[off + 12];
    if (len <= 0 || size_t(len) > b.size() - off) break;
    if (name_off > 0 && size_t(name_off) < size_t(len) && type == 'B' && vlen > 0 && data_off > 0 &&
        size_t(data_off) + size_t(vlen) <= size_t(len)) {
      const std::string name(b.c_str() + off + size_t(name_off));
      std::string value(b.data() + off + size_t(data_off), size_t(vlen));
      value = value.substr(0, value.find('\0'));
      if (name == "sun.rt.jvmCapabilities")
        pd.capabilities = value;
      else if (name == "java.property.java.vm.version")
        pd.vm_version = value;
      else if (name == "java.property.java.home")
        pd.java_home = value;
    }
    off += size_t(len);
  }
  pd.found = true;
  return pd;
}

// The JVM's version: JAVA_VERSION= of its java.home's release file (java.home: the
// directory above lib/server/libjvm.so, or hsperfdata's), else hsperfdata's
// java.vm.version up to its '+'. The release file is read inside the target's root
// (readSmall: owned by its euid or root, no symlink, at most kMaxRelease bytes); a
// java.home with ".." is not followed. At most 64 printable bytes.
static std::string javaVersion(const TargetInfo& t, const PerfData& pd) {
  std::vector<std::string> homes;
  if (!pd.java_home.empty()) homes.push_back(pd.java_home);
  std::string lib = t.target.runtime_lib;
  for (int up = 0; up < 3 && lib.rfind('/') != std::string::npos; ++up) lib = lib.substr(0, lib.rfind('/'));
  if (!lib.empty()) homes.push_back(lib);
  for (const std::string& h : homes) {
    if (!plainHome(h)) continue;
    std::string text;
    if (!readSmall(h + "/release", t.target.euid, kMaxRelease, &text, t.target.root).empty() &&
        !readSmall(h + "/release", 0, kMaxRelease, &text, t.target.root).empty())
      continue;
    std::istringstream rel(text);
    for (std::string line; std::getline(rel, line);)
      if (line.rfind("JAVA_VERSION=", 0) == 0) {
        std::string v = line.substr(13);
        if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        if (!v.empty()) return printable(v, 64);
      }
  }
  return printable(pd.vm_version.substr(0, pd.vm_version.find('+')), 64);
}

std::string hotspotVersion(const TargetInfo& t) { return javaVersion(t, readPerfData(t)); }

namespace {

int majorOf(const std::string& v) {
  // "17.0.21", "11.0.2", "1.8.0_392" (8), "21"
  if (v.rfind("1.", 0) == 0) return std::atoi(v.c_str() + 2);
  return std::atoi(v.c_str());
}

bool isJvmSocket(const std::string& path, uid_t owner) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == owner;
}

// Waits while PID is stopped (State T: SIGSTOP, or t: a tracer holds it). False at the
// deadline. Nothing is sent to a stopped JVM: a request it reads late would load the
// agent after we reported a time-out.
bool waitRunning(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    const char s = processState(pid);
    if (s != 'T' && s != 't') return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The attach, run by runAsTarget in a child holding only the target's ids: everything it
// reads, creates and connects to is the target's choice.
struct Child {
  const TargetInfo& t;
  const AttachRequest& r;
  Clock::time_point deadline;
  bool disabled = false;  // hsperfdata says -XX:+DisableAttachMechanism
  std::string version;

  std::string who() const { return describe(t); }
  std::string secs() const { return std::to_string(r.timeout.count() / 1000.0).substr(0, 4) + " s"; }
  AttachOutcome done(int status, std::string line) const { return out(status, std::move(line), version); }
  AttachOutcome gone() const { return done(kNoSuchProcess, who() + " exited during the attach"); }

  AttachOutcome timedOut(const std::string& what) const {
    if (!targetAlive(t)) return gone();
    const char s = processState(t.target.pid);
    if (s == 'T' || s == 't')
      return done(kTimedOut, who() + " is stopped (state " + s + "): " + what + " within " + secs());
    return done(kTimedOut, who() + ": " + what + " within " + secs());
  }

  // The trigger: .attach_pid<NSPID> in the JVM's cwd, else in its /tmp, made with the
  // target's ids (so that the JVM accepts it) and O_EXCL: *made says whether it is ours
  // to unlink. An existing one that is a regular file of the target's euid is used as it
  // is (a jcmd's, say) and left. "" when there is none.
  std::string createTrigger(bool* made) const {
    const std::string name = "/.attach_pid" + std::to_string(t.target.nspid);
    const std::string dirs[] = {"/proc/" + std::to_string(t.target.pid) + "/cwd", t.target.root + "/tmp"};
    for (const std::string& dir : dirs) {
      const std::string p = dir + name;
      const int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0660);
      if (fd >= 0) {
        close(fd);
        *made = true;
        return p;
      }
      struct stat st {};
      if (errno == EEXIST && lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == t.target.euid) {
        *made = false;
        return p;
      }
    }
    return {};
  }

  // Starts the attach listener: trigger file, one SIGQUIT (through the pidfd), poll for
  // the socket with backoff (20 ms, +20 ms a round, at most 200 ms) until the deadline.
  AttachOutcome startListener(const std::string& sock) const {
    if (!waitRunning(t.target.pid, deadline)) return timedOut("no attach listener, and it did not run");
    bool made = false;
    const std::string trigger = createTrigger(&made);
    if (trigger.empty())
      return done(kPermission, who() + ": could not create .attach_pid" + std::to_string(t.target.nspid) +
                                   " in its working directory nor in its /tmp as uid " + std::to_string(geteuid()));
    if (const int err = signalTarget(t, SIGQUIT); err != 0) {
      if (made) unlink(trigger.c_str());
      if (err == ESRCH) return gone();
      return done(kPermission, who() + ": SIGQUIT: " + std::strerror(err));
    }
    int step = 20;
    bool up = false;
    while (!(up = isJvmSocket(sock, t.target.euid)) && Clock::now() < deadline && targetAlive(t)) {
      std::this_thread::sleep_for(
          std::min(std::chrono::milliseconds(step),
                   std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()) +
                       std::chrono::milliseconds(1)));
      step = std::min(step + 20, 200);
    }
    if (made) unlink(trigger.c_str());
    if (up) return done(kAttached, {});
    if (!targetAlive(t)) return gone();
    if (disabled)
      return done(kAttachDisabled, who() + ": attach mechanism disabled (-XX:+DisableAttachMechanism): no listener");
    const char s = processState(t.target.pid);
    if (s == 'T' || s == 't') return timedOut("attach listener not started");
    return done(kTimedOut, who() + ": attach mechanism disabled or JVM not responding: no attach listener within " +
                               secs() + " of a SIGQUIT");
  }

  // The checks made before anything is sent: the version, attach disabled, SIGQUIT safe.
  AttachOutcome check(const std::string& sock) {
    const PerfData pd = readPerfData(t);
    version = javaVersion(t, pd);
    // Unknown (-XX:-UsePerfData, and a release file owned by another user, as in some
    // container images): attached all the same; an agent that cannot run in that JVM
    // says so in its OnAttach code (no JVMTI 1.2, a capability refused).
    if (!version.empty() && majorOf(version) < kMinHotSpotMajor)
      return done(kRuntimeTooOld, who() + " runs HotSpot " + version + ": jitprov attaches to " +
                                      std::to_string(kMinHotSpotMajor) + " and later");
    disabled = pd.found && !pd.capabilities.empty() && pd.capabilities[0] == '0';
    // A JVM in its start-up (`java App & jitprov attach $!`): its hsperfdata is made
    // accessible once it is in JVMTI's live phase (Threads::create_vm), 40-70 ms after its
    // exec here. A listener started before could load the agent in the start phase, where
    // it was refused (no JVMTI 1.2 environment). Nothing is sent; attachProcess asks again
    // while the process is young (r.starting). An older JVM is attached whatever the flag
    // says.
    const bool initialized = pd.found && pd.accessible;
    if (pd.found && !pd.accessible && !disabled && r.starting) {
      AttachOutcome o = done(kAttachDisabled, who() + " is starting: its JVM is not initialized yet");
      o.not_yet = AttachOutcome::NotYet::kYoung;
      return o;
    }
    struct stat st {};
    if (lstat(sock.c_str(), &st) != 0) {
      // The listener must be started with a SIGQUIT: only when that cannot harm the JVM.
      if (disabled)
        return done(kAttachDisabled,
                    who() + ": attach mechanism disabled (-XX:+DisableAttachMechanism): no SIGQUIT sent");
      if ((t.sig_cgt & kSigQuitBit) == 0 || (t.sig_ign & kSigQuitBit) != 0) {
        AttachOutcome o = done(kAttachDisabled, who() +
                                                    " has no attach listener and does not catch SIGQUIT (-Xrs, or "
                                                    "not started yet): no SIGQUIT sent, it would end the JVM");
        // Before its handlers (its first milliseconds), or -Xrs: only an initialized JVM
        // tells them apart.
        if (!initialized) o.not_yet = AttachOutcome::NotYet::kYoung;
        return o;
      }
    }
    if (r.agent.size() > 1024 || r.options.size() > 1024)
      return done(kUsage, "the agent path and the options are at most 1024 bytes each (HotSpot's limit)");
    return done(kAttached, {});
  }

  AttachOutcome run() {
    const std::string sock = t.target.root + "/tmp/.java_pid" + std::to_string(t.target.nspid);
    if (AttachOutcome o = check(sock); o.status != kAttached) return o;
    if (!isJvmSocket(sock, t.target.euid)) {
      struct stat st {};
      if (lstat(sock.c_str(), &st) == 0)
        return done(kError, who() + ": " + printable(sock) + " is not a socket owned by its uid " +
                                std::to_string(t.target.euid) + ": not trusted");
      if (AttachOutcome o = startListener(sock); o.status != kAttached) return o;
    }
    int fd = -1, err = 0;
    switch (connectUnix(sock, deadline, &fd, &err)) {
      case IoStatus::kOk:
        break;
      case IoStatus::kTimedOut:
        return timedOut("the attach listener accepted no connection");
      default:
        if (!targetAlive(t)) return gone();
        if (err == ECONNREFUSED)
          return done(disabled ? kAttachDisabled : kError,
                      who() + ": " + printable(sock) + " refuses connections (a stale socket: no listener)" +
                          (disabled ? ", and attach is disabled (-XX:+DisableAttachMechanism)" : ""));
        if (err == EACCES || err == EPERM)
          return done(kPermission, who() + ": connect " + printable(sock) + ": " + std::strerror(err));
        return done(kError, who() + ": connect " + printable(sock) + ": " + std::strerror(err));
    }
    // The socket's listener is the target itself, not one planted under its name (or
    // swapped in after the lstat above).
    if (pid_t peer = 0; !peerPidIs(fd, t.target.pid, &peer)) {
      close(fd);
      return done(kError, who() + ": " + printable(sock) + " is served by PID " + std::to_string(peer) +
                              ", not by the JVM: not trusted");
    }
    if (!waitRunning(t.target.pid, deadline)) {
      close(fd);
      return timedOut("request not sent");
    }
    std::string req("1\0load\0", 7);
    req += r.agent;
    req.push_back('\0');
    req.append("true\0", 5);
    req += r.options;
    req.push_back('\0');
    const IoStatus sent = sendAll(fd, req, deadline, &err);
    if (sent != IoStatus::kOk) {
      close(fd);
      if (sent == IoStatus::kTimedOut) return timedOut("request not sent");
      if (!targetAlive(t)) return gone();
      if (sent == IoStatus::kClosed)
        return done(kPermission, who() + ": send the request: " + std::strerror(err) +
                                     " (the JVM closed the connection: our uid/gid refused?)");
      return done(kError, who() + ": send the request: " + std::strerror(err));
    }
    std::string reply;
    const IoStatus got = recvAll(fd, kMaxReply, deadline, &reply, &err);
    close(fd);
    switch (got) {
      case IoStatus::kOk:
        break;
      case IoStatus::kTimedOut:
        return timedOut("no reply to the load request (the agent may still be starting)");
      case IoStatus::kTooLarge:
        return done(kError, who() + ": a reply longer than " + std::to_string(kMaxReply >> 10) + " KiB: not read");
      case IoStatus::kClosed:
        if (!targetAlive(t)) return gone();
        return done(kError, who() + ": the JVM reset the connection: " + std::strerror(err));
      default:
        return done(kError, who() + ": read the reply: " + std::strerror(err));
    }
    // No reply: the JVM refused our ids, or it died (the agent may have crashed it).
    if (reply.empty() && !targetAlive(t)) return done(kNoSuchProcess, who() + " exited during the attach (no reply)");
    AttachOutcome o = parseLoadReply(reply, who());
    o.version = version;
    return o;
  }
};

}  // namespace

AttachOutcome parseLoadReply(const std::string& reply, const std::string& who) {
  if (reply.empty())
    return out(kPermission, who +
                                " closed the attach connection without a reply: it refused our uid/gid "
                                "(it accepts root or its own euid and egid)");
  std::istringstream in(reply);
  std::string first, second, rest;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, rest, '\0');
  // The target's text on one line, safe for a terminal.
  auto oneLine = [](std::string s) {
    for (char& c : s)
      if (c == '\n') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return printable(s, 400);
  };
  if (first == "0") {
    // "return code: N" with N a whole number; anything else (a reply cut short) is not
    // read as code 0.
    char* end = nullptr;
    const long code_l =
        second.rfind("return code: ", 0) == 0 && second.size() > 13 ? std::strtol(second.c_str() + 13, &end, 10) : 0;
    if (end != nullptr && end != second.c_str() + 13 && *end == '\0' && code_l >= INT32_MIN && code_l <= INT32_MAX) {
      const int code = int(code_l);
      if (code == jvmti::kOnAttachOk) return out(kAttached, {});
      if (code == jvmti::kOnAttachAlreadyLoaded)
        return out(kAlreadyLoaded, "jitprov is already loaded in " + who + ": nothing registered twice");
      if (code == jvmti::kOnAttachTooOld)
        return out(kRuntimeTooOld, who + ": " + jvmti::onAttachCodeName(code) + ": the agent did not start");
      if (code == jvmti::kOnAttachReplayFailed)
        return out(kAgentFailed, "the agent started in " + who + " but " + jvmti::onAttachCodeName(code) +
                                     " (return code 6); it stays loaded: a new attach answers 9");
      return out(kAgentFailed, "the agent refused to start in " + who + " (return code " + std::to_string(code) + ": " +
                                   jvmti::onAttachCodeName(code) + "); its reason is on the JVM's stderr");
    }
    return out(kAgentFailed, who + ": " + oneLine(second + "\n" + rest));
  }
  const std::string raw = second + "\n" + rest;
  const std::string text = oneLine(raw);
  if (first == "-1" && raw.find("Dynamic agent loading is not enabled") != std::string::npos)
    return out(kAttachDisabled, who + ": " + text);
  if (first == "-1" &&
      (raw.find("was not loaded") != std::string::npos || raw.find("Agent_OnAttach") != std::string::npos))
    return out(kAgentFailed, who + ": " + text);
  return out(kError, who + ": unexpected reply \"" + oneLine(first) + "\": " + text);
}

AttachOutcome attachHotSpot(const TargetInfo& t, const AttachRequest& r) {
  // Everything from here, even the reads of hsperfdata and the release file, in a child
  // holding only the target's ids, and bounded by the deadline (attach_io.h).
  const auto deadline = Clock::now() + r.timeout;
  return runAsTarget(t, deadline, [&] { return Child{t, r, deadline}.run(); });
}

}  // namespace jitprov::cli
