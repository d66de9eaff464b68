// SPDX-License-Identifier: MIT
// `jitprov attach PID` for Node.js over its inspector (node_attach.h, docs/node.md).
#include "node_attach.h"

#include "attach_io.h"
#include "json_text.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxHttp = 64 * 1024;     // /json/list's reply, the handshake's
constexpr size_t kMaxFrame = 1024 * 1024;  // one WebSocket message from the inspector
// The last message: inspector.close() (process._debugEnd) ends every session (ours gets
// a close frame, no reply) and stops the listener before it returns; through the load's
// closeNow when the load ran, which also cancels its close by the deadline; in either
// case again in a setImmediate (see nodeLoadExpression).
constexpr char kCloseExpression[] =
    "(() => { const ck = Symbol.for('jitprov.node.close'), f = globalThis[ck]; delete globalThis[ck];"
    " if (f) return f(); const pr = globalThis.process;"
    " const tm = typeof pr.getBuiltinModule === 'function' ? pr.getBuiltinModule('timers') : globalThis;"
    " pr._debugEnd(); tm.setImmediate(() => pr._debugEnd()); })()";
constexpr int kOpText = 1, kOpClose = 8, kOpPing = 9, kOpPong = 10;

AttachOutcome fail(int status, std::string line) { return AttachOutcome{status, std::move(line), {}}; }
// The status of an I/O step's failure: its deadline (kTimedOut), else kError.
int ioStatus(const std::string& why) { return why.find("timed out") != std::string::npos ? kTimedOut : kError; }

int msLeft(AttachDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<long long>(left, 0, 1 << 30));
}

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string readText(const std::string& path, size_t max = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  char buf[8192];
  while (in && s.size() < max) {
    in.read(buf, sizeof buf);
    s.append(buf, size_t(in.gcount()));
  }
  return s;
}

std::vector<std::string> splitNul(const std::string& s) {
  std::vector<std::string> out;
  for (size_t a = 0; a < s.size();) {
    size_t b = s.find('\0', a);
    if (b == std::string::npos) b = s.size();
    out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

std::vector<std::string> splitBlanks(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The socket inodes among the open files of PID.
std::set<unsigned long> socketInodes(pid_t pid) {
  std::set<unsigned long> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char link[64];
    const ssize_t n = readlink((dir + "/" + e->d_name).c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    unsigned long ino = 0;
    if (std::sscanf(link, "socket:[%lu]", &ino) == 1) out.insert(ino);
  }
  closedir(d);
  return out;
}

// The listening TCP sockets of PID's network namespace, IPv4 and IPv6.
std::vector<TcpListener> listenersIn(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/net/";
  std::vector<TcpListener> rows = parseTcpListeners(readText(dir + "tcp"));
  for (TcpListener& l : parseTcpListeners(readText(dir + "tcp6"))) rows.push_back(l);
  return rows;
}

// The target's own listening sockets.
std::vector<TcpListener> listenersOf(pid_t pid) {
  std::vector<TcpListener> out;
  const auto mine = socketInodes(pid);
  for (const TcpListener& l : listenersIn(pid))
    if (mine.count(l.inode) != 0) out.push_back(l);
  return out;
}

// Who listens on addr:port in the target's network namespace: 0 nobody, 1 the target, 2
// another process. IPv4-mapped IPv6 addresses are their IPv4 ones; a socket on the any
// address of the same family takes that port too, and so does an IPv6 one on :: for
// IPv4 (dual-stack; one with IPV6_V6ONLY is counted too, erring towards "in use").
int listenerOf(pid_t pid, const IpAddr& addr, int port) {
  std::vector<unsigned long> inodes;
  const IpAddr want = unmapped(addr);
  for (const TcpListener& l : listenersIn(pid))
    if (l.port == port && (unmapped(l.addr) == want || (isAnyAddress(l.addr) && (l.addr.v6 || !want.v6))))
      inodes.push_back(l.inode);
  if (inodes.empty()) return 0;
  const auto mine = socketInodes(pid);
  for (unsigned long i : inodes)
    if (mine.count(i) != 0) return 1;
  return 2;
}

// --- SHA-1 (FIPS 180-4) and base64, for the handshake's Sec-WebSocket-Accept ----------

std::string sha1(const std::string& msg) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string m = msg;
  const uint64_t bits = uint64_t(msg.size()) * 8;
  m.push_back(char(0x80));
  while (m.size() % 64 != 56) m.push_back('\0');
  for (int i = 7; i >= 0; --i) m.push_back(char(bits >> (i * 8)));
  auto rol = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(uint8_t(m[off + 4 * i])) << 24 | uint32_t(uint8_t(m[off + 4 * i + 1])) << 16 |
             uint32_t(uint8_t(m[off + 4 * i + 2])) << 8 | uint32_t(uint8_t(m[off + 4 * i + 3]));
    for (int i = 16; i < 80; ++i) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      const uint32_t f = i < 20   ? (b & c) | (~b & d)
                         : i < 40 ? b ^ c ^ d
                         : i < 60 ? (b & c) | (b & d) | (c & d)
                                  : b ^ c ^ d;
      const uint32_t k = i < 20 ? 0x5A827999 : i < 40 ? 0x6ED9EBA1 : i < 60 ? 0x8F1BBCDC : 0xCA62C1D6;
      const uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = rol(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  }
  std::string out;
  for (uint32_t x : h)
    for (int i = 3; i >= 0; --i) out.push_back(char(x >> (i * 8)));
  return out;
}

std::string base64(const std::string& in) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i < in.size()) {
    const uint32_t v = uint32_t(uint8_t(in[i])) << 16 | (i + 1 < in.size() ? uint32_t(uint8_t(in[i + 1])) << 8 : 0);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// --- a TCP connection to the inspector, every call bounded by the deadline -------------

class Conn {
 public:
  explicit Conn(AttachDeadline deadline) : deadline_(deadline) {}
  AttachDeadline deadline() const { return deadline_; }
  void setDeadline(AttachDeadline d) { deadline_ = d; }
  ~Conn() {
    if (fd_ >= 0) close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // "" or why not.
  std::string connect(const IpAddr& addr, int port) {
    fd_ = socket(addr.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return std::string("socket: ") + std::strerror(errno);
    sockaddr_storage ss{};
    socklen_t sa_len = 0;
    if (addr.v6) {
      auto* sa = reinterpret_cast<sockaddr_in6*>(&ss);
      sa->sin6_family = AF_INET6;
      sa->sin6_port = htons(uint16_t(port));
      std::memcpy(&sa->sin6_addr, addr.bytes.data(), 16);
      sa_len = sizeof *sa;
    } else {
      auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
      sa->sin_family = AF_INET;
      sa->sin_port = htons(uint16_t(port));
      std::memcpy(&sa->sin_addr, addr.bytes.data(), 4);
      sa_len = sizeof *sa;
    }
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), sa_len) == 0) return {};
    if (errno != EINPROGRESS) return std::string("connect: ") + std::strerror(errno);
    pollfd p{fd_, POLLOUT, 0};
    if (poll(&p, 1, msLeft(deadline_)) <= 0) return "connect: timed out";
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    return err == 0 ? std::string() : std::string("connect: ") + std::strerror(err);
  }

  std::string send(const std::string& data) {
    for (size_t done = 0; done < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += size_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN) return std::string("send: ") + std::strerror(errno);
      pollfd p{fd_, POLLOUT, 0};
      if (poll(&p, 1, msLeft(deadline_)) <= 0) return "send: timed out";
    }
    return {};
  }

  // Reads at least `n` bytes into buf_ (kept beyond what is consumed). "" or why not;
  // "closed" at EOF.
  std::string fill(size_t n) {
    while (buf_.size() < n) {
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, msLeft(deadline_));
      if (r == 0) return "timed out";
      if (r < 0 && errno == EINTR) continue;
      char tmp[16384];
      const ssize_t got = recv(fd_, tmp, sizeof tmp, 0);
      if (got == 0) return "closed";
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return std::string("recv: ") + std::strerror(errno);
      }
      buf_.append(tmp, size_t(got));
    }
    return {};
  }

  // An HTTP response's head and body (Content-Length, or until the header's end when 0).
  std::string httpResponse(std::string* head, std::string* body, bool want_body) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (buf_.size() > kMaxHttp) return "an HTTP header over 64 KiB";
      if (std::string e = fill(buf_.size() + 1); !e.empty()) return e;
    }
    *head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    if (!want_body) return {};
    std::string lower = *head;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const size_t cl = lower.find("content-length:");
    if (cl == std::string::npos) return "no Content-Length";
    const size_t n = std::strtoul(lower.c_str() + cl + 15, nullptr, 10);
    if (n > kMaxHttp) return "a reply over 64 KiB";
    if (std::string e = fill(n); !e.empty()) return e;
    *body = buf_.substr(0, n);
    buf_.erase(0, n);
    return {};
  }

  // One whole message (text), pings answered; "closed" on a close frame or EOF.
  std::string readMessage(std::string* out) {
    out->clear();
    for (;;) {
      if (std::string e = fill(2); !e.empty()) return e;
      const uint8_t b0 = uint8_t(buf_[0]), b1 = uint8_t(buf_[1]);
      if (b1 & 0x80) return "a masked frame from the server";
      uint64_t len = b1 & 0x7f;
      size_t hdr = 2;
      if (len == 126) hdr = 4;
      if (len == 127) hdr = 10;
      if (std::string e = fill(hdr); !e.empty()) return e;
      if (hdr == 4) len = uint64_t(uint8_t(buf_[2])) << 8 | uint8_t(buf_[3]);
      if (hdr == 10) {
        len = 0;
        for (int i = 2; i < 10; ++i) len = len << 8 | uint8_t(buf_[i]);
      }
      if (len > kMaxFrame || out->size() + len > kMaxFrame) return "a message over 1 MiB";
      if (std::string e = fill(hdr + size_t(len)); !e.empty()) return e;
      const std::string payload = buf_.substr(hdr, size_t(len));
      buf_.erase(0, hdr + size_t(len));
      const int op = b0 & 0x0f;
      if (op == kOpClose) return "closed";
      if (op == kOpPing) {
        if (std::string e = send(webSocketFrame(kOpPong, payload, mask())); !e.empty()) return e;
        continue;
      }
      if (op == kOpPong) continue;
      *out += payload;
      if (b0 & 0x80) return {};
    }
  }

  static const uint8_t (&mask())[4] {
    static thread_local uint8_t m[4];
    std::random_device rd;
    for (uint8_t& b : m) b = uint8_t(rd());
    return m;
  }

 private:
  AttachDeadline deadline_;
  int fd_ = -1;
  std::string buf_;
};

std::string randomKey() {
  std::random_device rd;
  std::string k;
  for (int i = 0; i < 16; ++i) k.push_back(char(rd()));
  return base64(k);
}

// A Runtime.evaluate's reply (the object with its "result" or "error"): the string the
// load expression returned into *answer, else the failure.
AttachOutcome evaluateAnswer(const std::string& who, const nlohmann::json& j, const std::string& what,
                             std::string* answer) {
  if (j.contains("error"))
    return fail(kError, who + ": " + what + ": " + printable(jitprov::tools::jsonText(j["error"]), 300));
  const auto& r = j.value("result", nlohmann::json::object());
  if (r.contains("exceptionDetails"))
    return fail(kAgentFailed, who + ": " + what + ": loading the client threw: " +
                                  printable(jitprov::tools::jsonText(r["exceptionDetails"]), 300));
  const auto v = r.value("result", nlohmann::json::object()).value("value", nlohmann::json());
  if (!v.is_string())
    return fail(kError, who + ": " + what + ": an unexpected answer " + printable(jitprov::tools::jsonText(j), 300));
  *answer = v.get<std::string>();
  return AttachOutcome{kAttached, {}, {}};
}

// Without the command-line API: the load and the close use none of it, and asking for it
// makes node install its console extensions in that thread, which in a worker still in
// its bootstrap ran node's module code early ("testEnabled is not a function").
nlohmann::json evaluateRequest(int id, const std::string& expr) {
  return {{"id", id},
          {"method", "Runtime.evaluate"},
          {"params", {{"expression", expr}, {"returnByValue", true}, {"silent", true}}}};
}

// A deadline for a step before the close: a second before `end` (half what is left when
// less than two seconds are), so that the close is still sent, and answered, in time.
AttachDeadline keepForClose(AttachDeadline end) {
  const auto left = end - Clock::now();
  return left > std::chrono::seconds(2) ? end - std::chrono::seconds(1) : Clock::now() + left / 2;
}

// The worker threads running now, each given the client over the main session
// (NodeWorker.enable reports every worker before its reply; NodeWorker.
// sendMessageToWorker carries a Runtime.evaluate into each; the answers come back as
// receivedMessageFromWorker events). A worker that ends meanwhile is counted as ended.
// On success *summary says how many were loaded (and ended), for the line.
AttachOutcome loadWorkers(Conn& c, const std::string& who, const std::string& worker_expr, std::string* summary) {
  constexpr int kEnableId = 3, kFirstSendId = 100;
  // The workers get the time to the deadline less a second (half what is left, when that
  // is less than two), so that the close still fits: a worker blocked in a native call
  // (no V8 interrupt reaches it) must not keep the inspector open.
  const AttachDeadline end = c.deadline();
  c.setDeadline(keepForClose(end));
  struct Restore {
    Conn& c;
    AttachDeadline end;
    ~Restore() { c.setDeadline(end); }
  } restore{c, end};
  const nlohmann::json enable = {
      {"id", kEnableId}, {"method", "NodeWorker.enable"}, {"params", {{"waitForDebuggerOnStart", false}}}};
  if (std::string e = c.send(webSocketFrame(kOpText, jitprov::tools::jsonText(enable), Conn::mask())); !e.empty())
    return fail(kError, who + ": NodeWorker.enable: " + e);
  std::vector<std::string> sessions;
  for (;;) {
    std::string msg;
    if (std::string e = c.readMessage(&msg); !e.empty()) return fail(ioStatus(e), who + ": NodeWorker.enable: " + e);
    const auto j = nlohmann::json::parse(msg, nullptr, false);
    if (!j.is_object()) continue;
    if (j.value("method", "") == "NodeWorker.attachedToWorker") {
      const auto sid = j.value("params", nlohmann::json::object()).value("sessionId", nlohmann::json());
      if (sid.is_string() && sessions.size() < 4096) sessions.push_back(sid.get<std::string>());
      continue;
    }
    if (!j.contains("id") || j["id"] != kEnableId) continue;
    if (j.contains("error"))
      return fail(kError, who + ": NodeWorker.enable: " + printable(jitprov::tools::jsonText(j["error"]), 300));
    break;
  }
  auto sendLoad = [&](size_t i) {
    const nlohmann::json send = {
        {"id", kFirstSendId + int(i)},
        {"method", "NodeWorker.sendMessageToWorker"},
        {"params",
         {{"sessionId", sessions[i]}, {"message", jitprov::tools::jsonText(evaluateRequest(1, worker_expr))}}}};
    return c.send(webSocketFrame(kOpText, jitprov::tools::jsonText(send), Conn::mask()));
  };
  for (size_t i = 0; i < sessions.size(); ++i)
    if (std::string e = sendLoad(i); !e.empty()) return fail(kError, who + ": NodeWorker.sendMessageToWorker: " + e);
  // Each worker's outcome: "" pending, else its answer ("loaded", "already", "refused",
  // "error: ...") or "ended".
  std::vector<std::string> outcome(sessions.size());
  auto indexOf = [&sessions](const nlohmann::json& params) -> size_t {
    const auto sid = params.value("sessionId", nlohmann::json());
    if (!sid.is_string()) return sessions.size();
    return size_t(std::find(sessions.begin(), sessions.end(), sid.get<std::string>()) - sessions.begin());
  };
  size_t pending = sessions.size(), starting = 0;  // starting: pending workers whose last answer was 'not yet'
  std::vector<bool> not_yet(sessions.size());
  while (pending > 0) {
    std::string msg;
    if (std::string e = c.readMessage(&msg); !e.empty())
      return fail(ioStatus(e),
                  who + ": the client is loaded in the main thread, but " + std::to_string(pending) + " of its " +
                      std::to_string(sessions.size()) + " worker threads did not answer" +
                      (e != "timed out"      ? ": " + e
                       : starting == pending ? " in time (still in their bootstrap: 'not yet')"
                                             : " in time (blocked in a native call, where no interrupt reaches it?)"));
    const auto j = nlohmann::json::parse(msg, nullptr, false);
    if (!j.is_object()) continue;
    const std::string method = j.value("method", "");
    const auto params = j.value("params", nlohmann::json::object());
    size_t i = sessions.size();
    std::string result;
    if (method == "NodeWorker.receivedMessageFromWorker") {
      i = indexOf(params);
      const auto inner = nlohmann::json::parse(params.value("message", ""), nullptr, false);
      if (!inner.is_object() || !inner.contains("id") || inner["id"] != 1) continue;  // an event of the worker's
      const AttachOutcome a = evaluateAnswer(who, inner, "a worker thread", &result);
      if (a.status != kAttached) return a;
      // A worker still in its bootstrap (no process.dlopen yet): again, 50 ms later,
      // until the deadline (not sooner: an evaluation dispatched in a worker's bootstrap,
      // should it be terminated then, aborts node; docs/node.md).
      if (result == "not yet" && i < sessions.size() && outcome[i].empty()) {
        if (!not_yet[i]) ++starting;
        not_yet[i] = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (std::string e = sendLoad(i); !e.empty())
          return fail(kError, who + ": NodeWorker.sendMessageToWorker: " + e);
        continue;
      }
    } else if (method == "NodeWorker.detachedFromWorker") {
      i = indexOf(params);
      result = "ended";
    } else if (j.contains("id") && j["id"].is_number_integer() && j.contains("error")) {
      const long id = j["id"].get<long>() - kFirstSendId;
      if (id < 0 || size_t(id) >= sessions.size()) continue;
      i = size_t(id);
      result = "error: " + jitprov::tools::jsonText(j["error"]);
    }
    if (i >= sessions.size() || !outcome[i].empty()) continue;
    outcome[i] = result.empty() ? "error: an empty answer" : result;
    --pending;
    if (not_yet[i]) --starting;
  }
  size_t loaded = 0, already = 0, ended = 0;
  std::string bad;
  for (const std::string& o : outcome) {
    if (o == "loaded")
      ++loaded;
    else if (o == "already")
      ++already;
    else if (o == "ended")
      ++ended;
    else if (bad.empty())
      bad = o;
  }
  if (sessions.empty()) return AttachOutcome{kAttached, {}, {}};  // no worker thread: nothing to say
  const size_t failed = sessions.size() - loaded - already - ended;
  *summary = "worker threads: " + std::to_string(loaded) + " of " + std::to_string(sessions.size()) + " loaded";
  if (already > 0) *summary += ", " + std::to_string(already) + " had it";
  if (ended > 0) *summary += ", " + std::to_string(ended) + " ended meanwhile";
  if (failed > 0)
    return fail(kAgentFailed, who + ": the client is loaded in the main thread, but not in " + std::to_string(failed) +
                                  " of its " + std::to_string(sessions.size()) + " worker threads (" +
                                  printable(bad, 200) + "; " + *summary + ")");
  return AttachOutcome{kAttached, {}, {}};
}

// The main target's WebSocket URL in node's /json/list reply; "" when it names none.
// Node writes the process's title into that JSON without escaping its control characters
// (node 20.20.2: `process.title = "a\nb"`, or an ESC, makes the reply invalid JSON), and
// the title is the program's to set. So control characters are read as blanks (JSON's
// whitespace between tokens; inside a string only the title's text changes), and where
// the reply still does not parse (a title of bytes that are not UTF-8, set by native
// code), the first "webSocketDebuggerUrl" member is found by its text: the URL is
// checked against the inspector's address after, whichever way it came.
std::string webSocketUrlOf(std::string body) {
  for (char& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_array()) {
    if (!j.empty() && j[0].is_object() && j[0].contains("webSocketDebuggerUrl") &&
        j[0]["webSocketDebuggerUrl"].is_string())
      return j[0]["webSocketDebuggerUrl"].get<std::string>();
    return "";
  }
  const std::string member = "\"webSocketDebuggerUrl\"";
  size_t at = body.find(member);
  if (at == std::string::npos) return "";
  at = body.find_first_not_of(' ', at + member.size());
  if (at == std::string::npos || body[at] != ':') return "";
  at = body.find_first_not_of(' ', at + 1);
  if (at == std::string::npos || body[at] != '"') return "";
  const size_t end = body.find('"', at + 1);
  return end == std::string::npos ? "" : body.substr(at + 1, end - at - 1);
}

// The exchange, in runAsTarget's child: /json/list, the WebSocket, Runtime.evaluate of
// the load in the main thread, then in each worker thread, then of inspector.close().
// The outcome's version field carries the main thread's answer on success, its line
// the workers' summary.
AttachOutcome exchange(const std::string& who, const IpAddr& addr, int port, const std::string& expr,
                       const std::string& worker_expr, AttachDeadline deadline) {
  const std::string at = urlHost(addr) + ":" + std::to_string(port);
  std::string url_path;
  {
    Conn c(deadline);
    if (std::string e = c.connect(addr, port); !e.empty())
      return fail(ioStatus(e), who + ": inspector at " + at + ": " + e);
    if (std::string e = c.send("GET /json/list HTTP/1.1\r\nHost: " + at + "\r\nConnection: close\r\n\r\n"); !e.empty())
      return fail(ioStatus(e), who + ": inspector at " + at + ": " + e);
    std::string head, body;
    if (std::string e = c.httpResponse(&head, &body, true); !e.empty())
      return fail(ioStatus(e), who + ": inspector at " + at + ": /json/list: " + e);
    if (head.rfind("HTTP/1.0 200", 0) != 0 && head.rfind("HTTP/1.1 200", 0) != 0)
      return fail(kError, who + ": inspector at " + at + ": /json/list: " + printable(head.substr(0, head.find('\r'))));
    const std::string ws = webSocketUrlOf(body);
    if (ws.empty())
      return fail(kError, who + ": inspector at " + at + ": /json/list names no WebSocket: " + printable(body, 200));
    const std::string prefix = "ws://" + at + "/";
    if (ws.rfind(prefix, 0) != 0 || ws.size() > prefix.size() + 64)
      return fail(kError, who + ": inspector at " + at + ": an unexpected WebSocket URL " + printable(ws));
    url_path = ws.substr(prefix.size() - 1);
  }
  Conn c(deadline);
  if (std::string e = c.connect(addr, port); !e.empty())
    return fail(ioStatus(e), who + ": inspector at " + at + ": " + e);
  const std::string key = randomKey();
  if (std::string e = c.send("GET " + url_path + " HTTP/1.1\r\nHost: " + at +
                             "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                             "\r\nSec-WebSocket-Version: 13\r\n\r\n");
      !e.empty())
    return fail(ioStatus(e), who + ": WebSocket handshake: " + e);
  std::string head, body;
  if (std::string e = c.httpResponse(&head, &body, false); !e.empty())
    return fail(ioStatus(e), who + ": WebSocket handshake: " + e);
  if (head.rfind("HTTP/1.1 101", 0) != 0 ||
      head.find("Sec-WebSocket-Accept: " + webSocketAccept(key)) == std::string::npos)
    return fail(kError, who + ": WebSocket handshake refused: " + printable(head.substr(0, head.find('\r'))));
  if (std::string e = c.send(webSocketFrame(kOpText, jitprov::tools::jsonText(evaluateRequest(1, expr)), Conn::mask()));
      !e.empty())
    return fail(kError, who + ": Runtime.evaluate: " + e);
  // The answer, by a second before the deadline: whatever it is, or if none comes (the
  // main thread blocked in a native call), the close is sent after it.
  std::string answer;
  AttachOutcome main_outcome{kAttached, {}, {}};
  const AttachDeadline end = c.deadline();
  c.setDeadline(keepForClose(end));
  for (;;) {
    std::string msg;
    if (std::string e = c.readMessage(&msg); !e.empty()) {
      main_outcome = fail(
          ioStatus(e), who + ": Runtime.evaluate: no answer" +
                           (e == "timed out" ? std::string(" in time (its main thread blocked in a native call?); the "
                                                           "load and the close wait for it")
                                             : ": " + e));
      break;
    }
    const auto j = nlohmann::json::parse(msg, nullptr, false);
    if (!j.is_object() || !j.contains("id") || j["id"] != 1) continue;  // an event: not ours
    main_outcome = evaluateAnswer(who, j, "Runtime.evaluate", &answer);
    break;
  }
  c.setDeadline(end);
  // The worker threads, once the main thread has the client (the close follows in any case).
  std::string workers;
  AttachOutcome worker_outcome{kAttached, {}, {}};
  if (main_outcome.status == kAttached && answer == "loaded")
    worker_outcome = loadWorkers(c, who, worker_expr, &workers);
  // The close, whatever the answer: the window must end.
  const nlohmann::json close = {
      {"id", 2}, {"method", "Runtime.evaluate"}, {"params", {{"expression", kCloseExpression}}}};
  if (std::string e = c.send(webSocketFrame(kOpText, jitprov::tools::jsonText(close), Conn::mask())); !e.empty())
    return main_outcome.status != kAttached ? main_outcome
                                            : fail(kError, who + ": the client answered '" + printable(answer) +
                                                               "', but the close was not sent: " + e);
  for (;;) {
    std::string msg;
    const std::string e = c.readMessage(&msg);
    if (e == "closed") break;
    if (e.empty()) {
      const auto j = nlohmann::json::parse(msg, nullptr, false);
      if (!j.is_object() || !j.contains("id")) continue;  // an event
      if (j["id"] == 1 && main_outcome.status == kTimedOut) {
        // The load's answer after all, late (its thread was blocked a while): said as it
        // is, still not 0 (the worker threads were not reached).
        const AttachOutcome a = evaluateAnswer(who, j, "Runtime.evaluate", &answer);
        main_outcome = a.status != kAttached
                           ? a
                           : fail(kTimedOut, who + ": the client answered '" + printable(answer) +
                                                 "' only after the time kept for it (its main thread blocked a "
                                                 "while); its worker threads, if any, were not reached");
        continue;
      }
      if (j["id"] == 2) {  // a reply: the close did not end the session
        std::string ignored;
        const AttachOutcome a = evaluateAnswer(who, j, "the close", &ignored);
        return main_outcome.status != kAttached ? main_outcome
               : a.status != kAttached          ? fail(kError, a.line)
                                                : fail(kError, who + ": the close answered, the session goes on");
      }
      continue;
    }
    return main_outcome.status != kAttached ? main_outcome
           : e == "timed out"
               ? fail(kTimedOut, who + ": the client answered '" + printable(answer) +
                                     "', but inspector.close() got no answer in time (its main thread blocked "
                                     "in a native call?); the inspector closes itself once that thread is free")
               : fail(kError, who + ": inspector.close(): " + e);
  }
  if (main_outcome.status != kAttached) return main_outcome;
  if (worker_outcome.status != kAttached) return worker_outcome;
  return AttachOutcome{kAttached, workers, answer};
}

// "[H]" as "H"; anything else as it is.
std::string unbracket(const std::string& h) {
  return h.size() >= 2 && h.front() == '[' && h.back() == ']' ? h.substr(1, h.size() - 2) : h;
}

}  // namespace

InspectorAddress inspectorAddress(const std::vector<std::string>& args, const std::vector<std::string>& node_options) {
  InspectorAddress a;
  // As node reads HOST:PORT, [IPv6], HOST or PORT (its SplitHostPort and
  // HostPort::Update): a host alone takes node's default port again, an empty host
  // leaves the host as it was, and the brackets go.
  auto hostPort = [&a](const std::string& v) {
    auto portOf = [](const std::string& p) {
      return !p.empty() && p.size() <= 5 && std::all_of(p.begin(), p.end(), ::isdigit) ? std::atoi(p.c_str()) : -1;
    };
    std::string host;
    int port = -1;
    const size_t colon = v.rfind(':');
    if (unbracket(v).size() < v.size()) {
      host = unbracket(v);
      port = kDefaultInspectorPort;
    } else if (colon == std::string::npos) {
      port = portOf(v);
      if (port < 0) {
        host = v;
        port = kDefaultInspectorPort;
      }
    } else {
      host = unbracket(v.substr(0, colon));
      port = portOf(v.substr(colon + 1));
    }
    if (!host.empty()) a.host = host;
    if (port >= 0) a.port = port;
  };
  // Node's options that take their value as the next word: that word is not the script.
  static const std::set<std::string> kValued = {"-r",
                                                "--require",
                                                "--import",
                                                "--loader",
                                                "--experimental-loader",
                                                "-e",
                                                "--eval",
                                                "-p",
                                                "--print",
                                                "--input-type",
                                                "--inspect-port",
                                                "--debug-port",
                                                "--title",
                                                "-C",
                                                "--conditions",
                                                "--redirect-warnings",
                                                "--experimental-policy",
                                                "--icu-data-dir",
                                                "--openssl-config",
                                                "--dns-result-order",
                                                "--unhandled-rejections",
                                                "--diagnostic-dir",
                                                "--report-dir",
                                                "--report-directory",
                                                "--report-filename",
                                                "--report-signal",
                                                "--secure-heap",
                                                "--secure-heap-min",
                                                "--heapsnapshot-signal",
                                                "--cpu-prof-dir",
                                                "--cpu-prof-name",
                                                "--heap-prof-dir",
                                                "--heap-prof-name",
                                                "--env-file",
                                                "--watch-path",
                                                "--stack-trace-limit",
                                                "--disable-proto",
                                                "--tls-cipher-list",
                                                "--tls-keylog",
                                                "--use-largepages",
                                                "--trace-event-categories",
                                                "--trace-event-file-pattern",
                                                "--inspect-publish-uid"};
  // NODE_OPTIONS first: the command line overrides it. On the command line, node's own
  // options end at the script (or "--"): what follows is the program's.
  auto scan = [&](const std::vector<std::string>& words, size_t from, bool whole) {
    for (size_t i = from; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w == "--") break;
      if (!whole && (w.empty() || w[0] != '-' || w == "-")) break;  // the script, or stdin
      for (const char* opt : {"--inspect-port", "--debug-port", "--inspect", "--inspect-brk", "--inspect-wait"}) {
        const std::string o = opt;
        const bool is_port = o == "--inspect-port" || o == "--debug-port";
        if (w == o) {
          if (is_port && i + 1 < words.size()) hostPort(words[i + 1]);
          if (!is_port) a.explicit_inspect = true;
        } else if (w.rfind(o + "=", 0) == 0) {
          hostPort(w.substr(o.size() + 1));
          if (!is_port) a.explicit_inspect = true;
        }
      }
      // --inspect-publish-uid=stderr: no /json/list, so the WebSocket URL (its UUID) is
      // on the target's stderr only.
      if (w == "--inspect-publish-uid" && i + 1 < words.size())
        a.publish_uid = words[i + 1];
      else if (w.rfind("--inspect-publish-uid=", 0) == 0)
        a.publish_uid = w.substr(22);
      if (kValued.count(w) != 0) ++i;  // its value
    }
  };
  scan(node_options, 0, true);
  scan(args, 1, false);
  if (a.host == "localhost") a.host = "127.0.0.1";
  return a;
}

bool parseIp(const std::string& text, IpAddr* out) {
  const std::string t = unbracket(text);
  IpAddr a;
  if (inet_pton(AF_INET, t.c_str(), a.bytes.data()) == 1) {
    *out = a;
    return true;
  }
  a.v6 = true;
  if (inet_pton(AF_INET6, t.c_str(), a.bytes.data()) != 1) return false;
  *out = a;
  return true;
}

IpAddr unmapped(const IpAddr& a) {
  const auto& b = a.bytes;
  const bool mapped = a.v6 && std::all_of(b.begin(), b.begin() + 10, [](uint8_t x) { return x == 0; }) &&
                      b[10] == 0xff && b[11] == 0xff;
  if (!mapped) return a;
  IpAddr v4;
  std::copy(b.begin() + 12, b.end(), v4.bytes.begin());
  return v4;
}

bool isLoopback(const IpAddr& a) {
  const IpAddr u = unmapped(a);  // ::ffff:127.x.y.z is 127.x.y.z
  if (!u.v6) return u.bytes[0] == 127;
  static constexpr std::array<uint8_t, 16> kV6Loopback = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return u.bytes == kV6Loopback;
}

bool isAnyAddress(const IpAddr& a) {
  return std::all_of(a.bytes.begin(), a.bytes.begin() + (a.v6 ? 16 : 4), [](uint8_t x) { return x == 0; });
}

std::string urlHost(const IpAddr& a) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), text, sizeof text);
  return a.v6 ? "[" + std::string(text) + "]" : std::string(text);
}

std::vector<TcpListener> parseTcpListeners(const std::string& text) {
  std::vector<TcpListener> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    char addr[33] = {};
    unsigned port = 0, state = 0;
    unsigned long inode = 0;
    // sl local rem st tx:rx tr:when retr uid timeout inode; an address of 8 hex digits
    // (tcp) or 32 (tcp6)
    if (std::sscanf(line.c_str(),
                    " %*d: %32[0-9A-Fa-f]:%4X %*[0-9A-Fa-f]:%*4X %2X %*8X:%*8X %*2X:%*8X %*8X %*u %*d %lu", addr, &port,
                    &state, &inode) != 4)
      continue;
    const size_t digits = std::strlen(addr);
    if (state != 0x0A || (digits != 8 && digits != 32)) continue;
    // The kernel prints the address as 32-bit words, each as the host reads it from
    // memory: copied back as they are, they are its bytes in network order.
    TcpListener l;
    l.addr.v6 = digits == 32;
    for (size_t w = 0; w < digits / 8; ++w) {
      const uint32_t word = uint32_t(std::strtoul(std::string(addr + 8 * w, 8).c_str(), nullptr, 16));
      std::memcpy(l.addr.bytes.data() + 4 * w, &word, 4);
    }
    l.port = int(port);
    l.inode = inode;
    out.push_back(l);
  }
  return out;
}

std::string webSocketAccept(const std::string& key) {
  return base64(sha1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"));
}

std::string webSocketFrame(int opcode, const std::string& payload, const uint8_t (&mask)[4]) {
  std::string f;
  f.push_back(char(0x80 | (opcode & 0x0f)));
  const uint64_t n = payload.size();
  if (n < 126) {
    f.push_back(char(0x80 | n));
  } else if (n < 65536) {
    f.push_back(char(0x80 | 126));
    f.push_back(char(n >> 8));
    f.push_back(char(n));
  } else {
    f.push_back(char(0x80 | 127));
    for (int i = 7; i >= 0; --i) f.push_back(char(n >> (i * 8)));
  }
  f.append(reinterpret_cast<const char*>(mask), 4);
  for (size_t i = 0; i < payload.size(); ++i) f.push_back(char(payload[i] ^ char(mask[i % 4])));
  return f;
}

// The load itself, one JavaScript function for every thread: (self, main) where self is
// its own source, so that the load a thread gives a new worker is this same function.
// ADDON and OPTIONS are replaced by JSON strings.
//
// `process.dlopen`, not `require`: the inspector's command-line `require` is shadowed by a
// program's own global one, and a worker in its bootstrap has neither ready; such a worker
// may lack `process.dlopen` too ('not yet': the caller tries again).
//
// Worker threads started after the attach (docs/node.md, "Isolates"): a worker inherits
// the main thread's start-up options, whose --require list lacks preload.js. So every
// thread that took the client hooks node's 'worker' event (a thread's own new workers;
// in a worker, posted to the main thread over a BroadcastChannel, since only the main
// thread's inspector has the NodeWorker domain, which reports workers of workers too).
// On it the main thread connects an in-process inspector session (no port, nothing
// paused), enables NodeWorker, gives each worker it reports this load (an answer of
// 'not yet', or a throw, is tried again 50 ms later, 40 times at most; a worker left
// without the client, or not reported within 2 s, gets one line on stderr), detaches
// from each once it answered and disconnects once no new worker is pending: while a
// session is connected, node also passes every console call to the inspector
// (console.log 2.4x slower), so it is kept no longer. Workers known to have the client
// are detached from at once; others running when the session connects answer 'already'
// (the command's).
constexpr std::string_view kLoadFunction = R"JS(function (self, main, until) {
  const p = globalThis.process;
  if (typeof p !== 'object' || p === null || typeof p.dlopen !== 'function') return 'not yet';
  const key = Symbol.for('jitprov.node.attach'), opt = Symbol.for('jitprov.node.options');
  if (globalThis[key]) return 'already';
  const m = { exports: {} };
  globalThis[opt] = OPTIONS;
  try { p.dlopen(m, ADDON); } catch (e) { return 'error: ' + e.message; } finally { delete globalThis[opt]; }
  // Refused (its options): the mark is not set, and another attach may try again.
  if (!m.exports.started) return m.exports.disabled ? 'disabled' : 'refused';
  globalThis[key] = true;
  const say = (what) => { try { p.stderr.write('jitprov-node: ' + what + '\n'); } catch (e) {} };
  // Nothing thrown from here on reaches the program: every callback of the watch is
  // wrapped, and says what went wrong.
  const guard = (f) => (...a) => { try { return f(...a); } catch (e) { say('the watch of new workers: ' + e.message); } };
  if (main) p.on('exit', guard(() => m.exports.finish()));
  const channel = 'jitprov.node.worker', gm = (n) => p.getBuiltinModule(n);
  if (typeof p.getBuiltinModule !== 'function') {
    say('worker threads started after the attach will not be traced (node ' + p.version +
        ' has no process.getBuiltinModule: 20.16 or later)');
  } else if (!main) {
    // Nothing of node's is loaded here: this may run in the worker's bootstrap, where
    // loading a builtin module leaves node's internals half made (a later new Worker()
    // threw 'throwIfBuildingSnapshot is not a function'). In the event, user code runs.
    // (The parent's thread id goes with each start: when a worker ends, its own workers
    // end too, and their 'exit' events, in it, never come.) A worker made before this
    // load whose event comes after it (the load ran in an interrupt of the code that made
    // it) is passed on too: were it one the command loads, the second load answers
    // 'already'.
    p.on('worker', guard((w) => {
      try {
        const wt = gm('worker_threads'), tid = w.threadId;
        const post = (msg) => { const c = new wt.BroadcastChannel(channel); c.postMessage(msg); c.close(); };
        post({ start: tid, parent: wt.threadId });
        w.once('exit', guard(() => post({ exit: tid })));
      } catch (e) {
        say('[worker ' + w.threadId + '], started after the attach: not traced (' + e.message + ')');
      }
    }));
  } else {
    try {
      const insp = gm('inspector'), tm = gm('timers'), wt = gm('worker_threads');
      const we = '(' + self + ')(' + JSON.stringify(self) + ', false, 0)';
      const now = () => Number(p.hrtime.bigint() / 1000000n);  // ms, monotonic
      // loaded: thread ids of workers that have the client, until they exit; failed: of
      // those that refused it or never answered (not tried again); expected: new workers
      // not reported yet (thread id -> the time to give up, 2 s after its 'worker'
      // event); parentOf: a new worker's parent (0: this thread); before: the workers
      // running at the attach (the command's: never sent the load here, since one blocked
      // in a native call would keep a session connected); cur: the session while
      // connected.
      const loaded = new Set(), failed = new Set(), expected = new Map(), parentOf = new Map(), before = new Set();
      let cur = null, timer = null, missed = 0, ticked = false;
      // A new worker that ran without the client: one that ended (or was still waiting at
      // node's exit) before it took it, said here for the first three; one never reported,
      // said where it is found. All counted (said at exit beyond three;
      // globalThis[Symbol.for('jitprov.node.watch')].missed()). `sent`: its load had gone.
      const miss = (tid, sent) => {
        if (++missed <= 3)
          say('[worker ' + tid + '], started after the attach, ended before it took the client: ' +
              (sent ? 'may not be traced (its load had not answered)' : 'not traced'));
      };
      p.on('exit', guard(() => {
        for (const tid of expected.keys()) miss(tid, false);
        if (cur !== null)
          for (const w of cur.pending.values())
            if (!w.gone && !loaded.has(w.tid) && parentOf.has(w.tid)) miss(w.tid, w.sent);
        if (missed > 3) say(missed + ' worker threads started after the attach ran without the client: not traced');
      }));
      // As in a worker: a 'worker' event before this tick is of a worker made before the load.
      p.nextTick(() => { ticked = true; });
      const tidOf = (params) => {
        const t = /^\[worker (\d+)\]/.exec(params.workerInfo ? String(params.workerInfo.title) : '');
        return t ? Number(t[1]) : -1;
      };
      // Only while the command is there to load them: a load that ran after its
      // deadline (the main thread was blocked) leaves them to the watch.
      const commandThere = until > 0 && Date.now() <= until;
      if (commandThere) {
        const s0 = new insp.Session();
        s0.connect();
        s0.on('NodeWorker.attachedToWorker', ({ params }) => before.add(tidOf(params)));
        s0.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, () => {});
        s0.disconnect();
      }
      // Disconnected once nothing is pending, from a later turn of the loop: never from
      // inside the session's own event (node is still walking its sessions then: a
      // disconnect there crashed in WorkerManager::WorkerStarted). Until then the session
      // stays the current one and keeps what it reports.
      const disconnect = () => {
        const c = cur;
        if (c === null || c.closing || c.pending.size > 0 || expected.size > 0) return;
        c.closing = true;
        tm.setImmediate(guard(() => {
          c.closing = false;
          if (cur !== c || c.pending.size > 0 || expected.size > 0) return;
          cur = null;
          c.s.disconnect();
        }));
      };
      const arm = () => {
        if (timer !== null || expected.size === 0) return;
        const next = Math.min(...expected.values());
        timer = tm.setTimeout(guard(() => {
          timer = null;
          const t0 = now(), late = [];
          for (const [tid, t] of expected) if (t <= t0) late.push(tid);
          for (const tid of late) expected.delete(tid);
          missed += late.length;
          if (late.length > 0)
            say(late.map((t) => '[worker ' + t + ']').join(', ') +
                ', started after the attach: never reported by the inspector within 2 s, not traced');
          arm();
          disconnect();
        }), Math.max(0, next - now()));
        if (typeof timer.unref === 'function') timer.unref();
      };
      // A worker's load comes 50 ms after it is reported: a worker it made before then was
      // never announced (its 'worker' hook came later), and is reported only to a session
      // connected when its inspector starts, or at the next enable. So 20 ms, 200 ms and 2 s
      // after the last new load the watch connects again if it is not connected, and a
      // worker it has not heard of takes the client then (counted: late()).
      let sweep = null, late = 0;
      const gaps = [20, 180, 1800];
      const sweepLater = (i) => {
        if (sweep !== null) tm.clearTimeout(sweep);
        sweep = tm.setTimeout(guard(() => {
          sweep = null;
          if (cur === null) connect();
          if (i + 1 < gaps.length) sweepLater(i + 1);
        }), gaps[i]);
        if (typeof sweep.unref === 'function') sweep.unref();
      };
      const connect = () => {
        const c = { s: new insp.Session(), pending: new Map(), tids: new Set(), id: 0, closing: false };
        cur = c;
        const send = (sid) => {
          const w = c.pending.get(sid);
          if (cur === c && w !== undefined) w.sent = true;
          if (cur === c && w !== undefined)
            c.s.post('NodeWorker.sendMessageToWorker', { sessionId: sid, message: JSON.stringify({ id: ++c.id,
              method: 'Runtime.evaluate', params: { expression: we, returnByValue: true, silent: true } }) },
              guard((err) => {
                if (!err) return;
                say(w.title + ', started after the attach: not traced (' + err.message + ')');
                done(sid, false, true);
              }));
        };
        // The load goes 50 ms after the report, and again 50 ms after a 'not yet': an
        // evaluation dispatched while the worker is still in node's bootstrap, should it
        // be terminated then, aborts node (docs/node.md, "Workers started after the
        // attach"); few workers are terminated that young.
        const later = (sid) => {
          const h = tm.setTimeout(guard(() => send(sid)), 50);
          if (typeof h.unref === 'function') h.unref();
        };
        // ok: it has the client; bad: it refused it or did not answer (not tried again).
        const done = (sid, ok, bad) => {
          const w = c.pending.get(sid);
          if (w === undefined) return;
          c.pending.delete(sid);
          if (w.t !== undefined) tm.clearTimeout(w.t);
          if (ok) loaded.add(w.tid);
          if (bad) failed.add(w.tid);
          if (cur === c) c.s.post('NodeWorker.detach', { sessionId: sid }, () => {});
          disconnect();
        };
        c.s.connect();
        c.s.on('NodeWorker.attachedToWorker', guard(({ params }) => {
          if (cur !== c) return;
          const sid = params.sessionId, title = params.workerInfo ? String(params.workerInfo.title) : '';
          const tid = tidOf(params), w = { n: 0, title: title || 'a worker thread', tid };
          expected.delete(tid);
          c.tids.add(tid);
          c.pending.set(sid, w);
          // Loaded in an earlier session, refused it, or running at the attach: detached
          // at once.
          if (loaded.has(tid) || failed.has(tid) || before.has(tid)) return done(sid, loaded.has(tid));
          // Neither announced nor expected: made by a worker before its load, or running at
          // an attach whose command had gone (its parent unknown, -1).
          if (!parentOf.has(tid)) {
            parentOf.set(tid, -1);
            late++;
          }
          // A worker that stops answering (blocked in a native call) must not keep the
          // session: 3 s at most.
          w.t = tm.setTimeout(guard(() => {
            if (c.pending.get(sid) !== w) return;
            say(w.title + ', started after the attach: no answer within 3 s, not traced');
            done(sid, false, true);
          }), 3000);
          if (typeof w.t.unref === 'function') w.t.unref();
          later(sid);
        }));
        // A new worker gone while its load was pending: it ended before it took the client.
        c.s.on('NodeWorker.detachedFromWorker', guard(({ params }) => {
          const w = c.pending.get(params.sessionId);
          if (w !== undefined && !w.gone && !loaded.has(w.tid) && parentOf.has(w.tid)) {
            w.gone = true;
            miss(w.tid, w.sent);
          }
          done(params.sessionId, false);
        }));
        c.s.on('NodeWorker.receivedMessageFromWorker', guard(({ params }) => {
          const w = c.pending.get(params.sessionId);
          let j;
          try { j = JSON.parse(params.message); } catch (e) { return; }
          if (w === undefined || j === null || typeof j !== 'object' || typeof j.id !== 'number') return;  // the worker's events
          const r = j.result || {}, v = r.result ? r.result.value : undefined;
          if (v === 'loaded' || v === 'already') {
            sweepLater(0);
            return done(params.sessionId, true);
          }
          if ((v === 'not yet' || r.exceptionDetails) && ++w.n < 40) return later(params.sessionId);
          say(w.title + ', started after the attach: not traced (' +
              (typeof v === 'string' ? v : JSON.stringify(j.error || r.exceptionDetails || j).slice(0, 200)) + ')');
          done(params.sessionId, false, true);
        }));
        c.s.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, guard((err) => {
          if (err) {
            say('worker threads started after the attach: not traced (NodeWorker.enable: ' + err.message + ')');
            c.pending.clear();
            expected.clear();
          } else {
            // The reports above are every worker alive now: what is not among them has
            // ended (its 'exit' never seen: a worker of the attach, or a worker's worker).
            for (const t of [...loaded]) if (!c.tids.has(t)) loaded.delete(t);
            for (const t of [...failed]) if (!c.tids.has(t)) failed.delete(t);
            for (const [t, par] of [...parentOf])
              if (!c.tids.has(t) && !expected.has(t)) parentOf.delete(t);
              else if (expected.has(t) && par !== 0 && !c.tids.has(par) && !expected.has(par)) ended(t);
          }
          disconnect();
        }));
      };
      // A new worker, by its thread id: reported by the domain once its inspector is up,
      // which is after the event. A worker running at the attach is not new (its event
      // comes after the load when the thread that made it was busy since: a nextTick).
      const started = (tid, parent) => {
        if (typeof tid !== 'number' || before.has(tid)) return;
        if (parentOf.get(tid) === -1) late--;  // reported by a look before its announcement came
        parentOf.set(tid, typeof parent === 'number' ? parent : 0);
        if (loaded.has(tid) || (cur !== null && cur.tids.has(tid))) return;
        expected.set(tid, now() + 2000);
        arm();
        if (cur === null) connect();  // (a session closing keeps it: the domain reports the worker)
      };
      // A worker ended: its own workers with it (their 'exit' events never come).
      const ended = (tid) => {
        // Not reported by the inspector yet, or its load pending: it never took the client.
        let gone = expected.has(tid), sent = false;
        if (cur !== null)
          for (const w of cur.pending.values())
            if (w.tid === tid && !w.gone && !loaded.has(tid) && parentOf.has(tid)) {
              gone = w.gone = true;
              sent = w.sent === true;
            }
        if (gone) miss(tid, sent);
        loaded.delete(tid);
        failed.delete(tid);
        expected.delete(tid);
        parentOf.delete(tid);
        for (const [child, parent] of [...parentOf]) if (parent === tid) ended(child);
        disconnect();
      };
      p.on('worker', guard((w) => {
        const tid = w.threadId;
        // Made before the load: the command's, while it is there; else the watch's.
        // (One the load's session did not list, its inspector not up yet, may come after
        // the command's list too: the watch loads it, and a second load answers 'already'.)
        if (!ticked && commandThere && before.has(tid)) return;
        started(tid, 0);
        w.once('exit', guard(() => ended(tid)));
      }));
      const bc = new wt.BroadcastChannel(channel);
      bc.onmessage = guard((e) => {
        const d = e.data;
        if (d !== null && typeof d === 'object' && typeof d.start === 'number') started(d.start, d.parent);
        else if (d !== null && typeof d === 'object' && typeof d.exit === 'number') ended(d.exit);
      });
      if (typeof bc.unref === 'function') bc.unref();
      // For a look from the program (and node-attach's test): is a session connected now?
      // The command gone (this load ran after its deadline): the workers running now are
      // the watch's, loaded at its first look.
      if (!commandThere) sweepLater(0);
      globalThis[Symbol.for('jitprov.node.watch')] = { connected: () => cur !== null, pending: () => expected.size,
        missed: () => missed, late: () => late };
    } catch (e) {
      say('worker threads started after the attach will not be traced (' + e.message + ')');
    }
  }
  return 'loaded';
})JS";

std::string nodeLoadExpression(const std::string& addon, const std::string& options, bool main_thread,
                               int64_t close_by_ms) {
  // Placed in the template, the later one first: neither text can then be taken for the
  // other's placeholder.
  std::string f(kLoadFunction);
  const size_t at_options = f.find("OPTIONS"), at_addon = f.find("ADDON");
  f.replace(at_addon, 5, nlohmann::json(addon).dump());
  f.replace(at_options, 7, nlohmann::json(options).dump());
  // until: the command's deadline (ms since the epoch; 0 none): the main thread's watch
  // leaves the workers running at the attach to the command only while it is there.
  const std::string call = "(" + f + ")(" + nlohmann::json(f).dump() + ", " + (main_thread ? "true" : "false") + ", " +
                           std::to_string(main_thread && close_by_ms > 0 ? close_by_ms : 0) + ")";
  // In the main thread, the inspector closes itself by close_by_ms (the command's
  // deadline, ms since the epoch) if the command's own close has not come: a load that
  // runs late (its thread was blocked in a native call past --timeout, the command gone
  // and its queued close dropped with its session) must not leave the inspector open.
  // Each close is done twice, the second in a setImmediate: a SIGUSR1 leaves a start of
  // the inspector pending in node's loop (an async handle beside the interrupt that
  // started it) which, when the main thread was blocked, runs after a close made from the
  // interrupt and opens the inspector again; the check phase comes after it.
  if (!main_thread || close_by_ms <= 0) return call;
  return "(() => {\n"
         // node's own timers and inspector close (inspector.close is process._debugEnd):
         // neither `require` (a program's own global `require` shadows the command-line
         // API's) nor timer globals a program may have replaced (fake timers).
         "  const pr = globalThis.process, ck = Symbol.for('jitprov.node.close');\n"
         "  const tm = typeof pr.getBuiltinModule === 'function' ? pr.getBuiltinModule('timers') : globalThis;\n"
         "  const end = () => pr._debugEnd();\n"
         "  const closeNow = () => { end(); tm.setImmediate(end); };\n"
         "  const t = tm.setTimeout(() => { delete globalThis[ck]; closeNow(); }, Math.max(0, " +
         std::to_string(close_by_ms) +
         " - Date.now()));\n"
         "  globalThis[ck] = () => { tm.clearTimeout(t); closeNow(); };\n"
         "  if (t && typeof t.unref === 'function') t.unref();\n"
         "  return " +
         call + ";\n})()";
}

AttachOutcome attachNode(const TargetInfo& t, const AttachRequest& req) {
  const std::string who = describe(t);
  const pid_t pid = t.target.pid;
  const auto start = Clock::now();
  AttachDeadline deadline = start + req.timeout;  // extended once the inspector listens (below)
  if (t.node_client_started)
    return fail(kAlreadyLoaded, who + ": jitprov's Node.js client is loaded already (nothing done)");
  // Both go into the load's JavaScript as JSON strings: text that is not UTF-8 cannot
  // (the JSON encoder would throw after the signal, the inspector left open).
  for (const std::string* text : {&req.agent, &req.options}) {
    try {
      (void)nlohmann::json(*text).dump();
    } catch (const nlohmann::json::exception&) {
      return fail(
          kError,
          who + ": the agent's path or the options are not UTF-8 text (" +
              printable(nlohmann::json(*text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 200) +
              "): nothing sent");
    }
  }
  const unsigned long long usr1 = 1ULL << (SIGUSR1 - 1);
  if ((t.sig_cgt & usr1) == 0 || (t.sig_ign & usr1) != 0) {
    AttachOutcome o = fail(kAttachDisabled, who +
                                                " does not catch SIGUSR1 (--disable-sigusr1, a node without the "
                                                "inspector, or not started yet): its inspector cannot be opened, "
                                                "nothing sent");
    o.not_yet = AttachOutcome::NotYet::kYoung;
    return o;
  }
  if (t.state == 'T' || t.state == 't') return fail(kTimedOut, who + " is stopped: nothing sent");
  const std::vector<std::string> args = splitNul(readText("/proc/" + std::to_string(pid) + "/cmdline"));
  std::vector<std::string> node_options;
  for (const std::string& e : splitNul(readText("/proc/" + std::to_string(pid) + "/environ")))
    if (e.rfind("NODE_OPTIONS=", 0) == 0) node_options = splitBlanks(e.substr(13));
  const InspectorAddress ia = inspectorAddress(args, node_options);
  IpAddr addr;
  if (!parseIp(ia.host, &addr))
    return fail(kAttachDisabled, who + ": its inspector would listen on " + printable(ia.host) + ":" +
                                     std::to_string(ia.port) +
                                     ", a host name (this command takes IP addresses and localhost): refused, "
                                     "nothing sent");
  if (!isLoopback(addr))
    return fail(kAttachDisabled, who + ": its inspector would listen on " + urlHost(addr) + ":" +
                                     std::to_string(ia.port) + ", beyond loopback: refused, nothing sent");
  if (ia.publish_uid.find("http") == std::string::npos)
    return fail(kAttachDisabled,
                who + ": its inspector would not serve its WebSocket URL over HTTP (--inspect-publish-uid=" +
                    printable(ia.publish_uid) + "): refused, nothing sent");
  // Port 0 (--inspect-port=0): node picks one when it opens; found below, as the first
  // new listener of the target's on that address.
  int port = ia.port;
  std::string at = urlHost(addr) + ":" + (port == 0 ? std::string("(a port node picks)") : std::to_string(port));
  // A target in another network namespace (a container's): its loopback is not ours, so
  // the exchange's child enters that namespace first (root only). /proc/PID/net/tcp,
  // where the listener is watched for, is already the target's namespace's view.
  Fd netns;
  std::string netns_name;
  {
    // Opened first, then compared by its inode with ours: the namespace decided on is the
    // one entered. Opened while the target lives (its pidfd): it is the target's.
    const std::string ns_path = "/proc/" + std::to_string(pid) + "/ns/net";
    struct stat ours {
    }, theirs{};
    if (stat("/proc/self/ns/net", &ours) != 0)
      return fail(kError, std::string("cannot read our own network namespace: ") + std::strerror(errno));
    netns.fd = open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (netns.fd < 0 || fstat(netns.fd, &theirs) != 0) {
      const int err = errno;
      if (!targetAlive(t) || err == ENOENT || err == ESRCH) return fail(kNoSuchProcess, who + " exited");
      return fail(err == EACCES || err == EPERM ? kPermission : kError,
                  who + ": cannot open its network namespace (" + ns_path + "): " + std::strerror(err));
    }
    if (!targetAlive(t)) return fail(kNoSuchProcess, who + " exited");
    if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev) {
      close(netns.fd);
      netns.fd = -1;
    } else {
      netns_name = "net:[" + std::to_string(theirs.st_ino) + "]";
      if (const int err = tryEnterNetns(netns.fd); err > 0)
        return fail(err == EPERM || err == EACCES ? kPermission : kError,
                    who + " is in another network namespace (" + netns_name +
                        "), which this command cannot enter: " + std::strerror(err) +
                        (err == EPERM ? " (it takes CAP_SYS_ADMIN: run as root)" : "") + "; nothing sent");
      else if (err < 0)
        return fail(kError, who + " is in another network namespace (" + netns_name +
                                "): trying to enter it: " + std::strerror(-err) + "; nothing sent");
    }
  }
  // Where the inspector listens, for the lines: its address, and its namespace when not ours.
  std::string where = netns_name.empty() ? at : at + " in " + netns_name;
  // --inspect=0 (or --inspect-port=0 with --inspect*): its inspector opened at start on a
  // port node chose, which nothing here can tell from the program's own listeners.
  if (port == 0 && ia.explicit_inspect)
    return fail(kInUse, who +
                            ": its inspector was opened at start (--inspect) on a port node chose: in use, "
                            "left as it is");
  switch (port == 0 ? 0 : listenerOf(pid, addr, port)) {
    case 1:
      return fail(kInUse, who + ": its inspector is open already on " + at +
                              (ia.explicit_inspect ? " (--inspect)" : "") + ": in use, left as it is");
    case 2:
      return fail(kInUse, who + ": another process listens on its inspector's port " + at +
                              ": node could not open it, nothing sent");
    default:
      break;
  }
  // What the target listens on before: a socket it opens after SIGUSR1 elsewhere than
  // `at` (an --inspect-port this command could not see) is named if the wait fails.
  std::set<unsigned long> listening_before;
  for (const TcpListener& l : listenersOf(pid)) listening_before.insert(l.inode);
  // The window opens here.
  const auto t_signal = Clock::now();
  if (const int err = signalTarget(t, SIGUSR1); err != 0)
    return fail(err == ESRCH ? kNoSuchProcess : kError, who + ": SIGUSR1: " + std::strerror(err));
  bool listening = false;
  while (Clock::now() < deadline) {
    if (port == 0) {
      for (const TcpListener& l : listenersOf(pid))
        if (listening_before.count(l.inode) == 0 && l.addr == addr) {
          port = l.port;  // the first new one
          break;
        }
      if (port != 0) {
        at = urlHost(addr) + ":" + std::to_string(port);
        where = netns_name.empty() ? at : at + " in " + netns_name;
        listening = true;
        break;
      }
    } else if (listenerOf(pid, addr, port) == 1) {
      listening = true;
      break;
    }
    if (!targetAlive(t)) return fail(kNoSuchProcess, who + " exited after SIGUSR1");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double open_ms = msSince(t_signal);
  if (!listening) {
    std::string opened;
    for (const TcpListener& l : listenersOf(pid))
      if (listening_before.count(l.inode) == 0)
        opened += std::string(opened.empty() ? "" : ", ") + urlHost(l.addr) + ":" + std::to_string(l.port);
    if (!opened.empty())
      return fail(kError, who + ": its inspector did not open on " + at + " within " + std::to_string(int(open_ms)) +
                              " ms of SIGUSR1, but it listens on " + opened +
                              " since: an inspector may be STILL OPEN there (nothing sent to it)");
    return fail(kAttachDisabled, who + ": its inspector did not open on " + at + " within " +
                                     std::to_string(int(open_ms)) +
                                     " ms of SIGUSR1 (a SIGUSR1 listener of the program's own, no inspector, or "
                                     "its main thread blocked in a native call: then it opens once that thread is "
                                     "free, and stays open)");
  }
  // The inspector listens now: whatever the wait took, the exchange gets two seconds at
  // least, so that the load (which arranges its own close) and the close can be sent.
  deadline = std::max(deadline, Clock::now() + std::chrono::seconds(2));
  const int64_t close_by_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          (std::chrono::system_clock::now() + (deadline - Clock::now()) + std::chrono::milliseconds(500))
              .time_since_epoch())
          .count();
  const std::string expr = nodeLoadExpression(req.agent, req.options, true, close_by_ms);
  const std::string worker_expr = nodeLoadExpression(req.agent, req.options, false);
  const std::string who_there = netns_name.empty() ? who : who + " (" + netns_name + ")";
  AttachOutcome o = runAsTarget(
      t, deadline, [&] { return exchange(who_there, addr, port, expr, worker_expr, deadline); }, netns.fd);
  const double eval_ms = msSince(t_signal);
  // The window closes when nothing listens any more; waited for even after a failure, up
  // to the deadline plus a second, so that the line can say whether it is still open.
  bool closed = false;
  while (Clock::now() < deadline + std::chrono::seconds(1)) {
    if (listenerOf(pid, addr, port) != 1) {
      closed = true;
      break;
    }
    if (!targetAlive(t)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double window_ms = msSince(t_signal);
  char figures[224];
  std::snprintf(figures, sizeof figures, "inspector on %s open %.0f ms (listening after %.0f, session over after %.0f)",
                where.c_str(), window_ms, open_ms, eval_ms);
  const std::string still = closed ? "" : "; ITS INSPECTOR IS STILL OPEN on " + where;
  if (o.status != kAttached) return fail(o.status, o.line + still);
  const std::string answer = o.version;
  if (answer == "already")
    return fail(kAlreadyLoaded, who + ": jitprov's client is loaded already (" + figures + ")" + still);
  if (answer == "disabled")
    return fail(kAgentFailed, who +
                                  ": jitprov's client is disabled in this process for its life (options refused at its "
                                  "start, or its start failed: the reason went to the target's stderr then; " +
                                  figures + ")" + still);
  if (answer == "refused")
    return fail(kAgentFailed,
                who + ": the client refused to start (its reason on the target's stderr; " + figures + ")" + still);
  if (answer != "loaded") return fail(kAgentFailed, who + ": loading the client: " + printable(answer) + still);
  if (!closed) return fail(kError, who + ": the client is loaded, but" + still.substr(1));
  return AttachOutcome{kAttached, o.line.empty() ? std::string(figures) : figures + ("; " + o.line), nodeVersion(t)};
}

}  // namespace jitprov::cli
