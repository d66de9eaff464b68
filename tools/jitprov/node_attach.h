/* SPDX-License-Identifier: MIT */
// `jitprov attach PID` for Node.js: the client addon loaded into the isolates (the main
// thread's, and its worker threads' running then) of a running node through its inspector (docs/node.md, "Attach").
// SIGUSR1 makes node open the inspector on 127.0.0.1:PORT (9229, or its --inspect-port); the command finds the listener
// in the target's /proc/PID/net/tcp (the socket must be the target's), asks /json/list for the WebSocket URL, speaks
// RFC 6455 itself (handshake, masked text frames), sends one Runtime.evaluate that loads the addon (process.dlopen),
// the same into each worker thread running then (the NodeWorker domain), closes the inspector again, and waits until
// nothing listens on the port. Every step is bounded by --timeout; the exchange runs in a child holding the target's
// ids.
#pragma once

#include "attach.h"
#include "target.h"

#include <cstdint>
#include <array>
#include <string>
#include <vector>

namespace jitprov::cli {

AttachOutcome attachNode(const TargetInfo& t, const AttachRequest& req);

// Node's inspector port unless told another.
inline constexpr int kDefaultInspectorPort = 9229;
// Where node's inspector listens when SIGUSR1 opens it, from its command line and
// NODE_OPTIONS (--inspect-port=, --inspect=, --inspect-brk=, --inspect-wait=, as
// HOST:PORT, [IPv6]:PORT, [IPv6], HOST or PORT, as node reads them). `explicit_inspect`:
// --inspect* was given (the inspector opened at start).
struct InspectorAddress {
  std::string host = "127.0.0.1";
  int port = kDefaultInspectorPort;
  bool explicit_inspect = false;
  // --inspect-publish-uid's value (node's default: "stderr,http"): without "http" the
  // inspector serves no /json/list, and its WebSocket URL cannot be found.
  std::string publish_uid = "stderr,http";
};
// args: the words of /proc/PID/cmdline (node's options end at the script); node_options:
// those of its NODE_OPTIONS, which the command line overrides. Pure: unit-testable.
InspectorAddress inspectorAddress(const std::vector<std::string>& args,
                                  const std::vector<std::string>& node_options = {});

// An IP address, IPv4 or IPv6, its bytes in network order (IPv4: the first 4).
struct IpAddr {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
  bool operator==(const IpAddr&) const = default;
};
// "127.0.0.1", "::1" or "[::1]"; false: not an IP address. Pure.
bool parseIp(const std::string& text, IpAddr* out);
// 127.0.0.0/8, ::1 or an IPv4-mapped 127.0.0.0/8 (::ffff:127.x.y.z).
bool isLoopback(const IpAddr& a);
// 0.0.0.0 or ::.
bool isAnyAddress(const IpAddr& a);
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address; any other as it is.
IpAddr unmapped(const IpAddr& a);
// As in a URL's authority: "127.0.0.1", "[::1]".
std::string urlHost(const IpAddr& a);

// A listening TCP socket of /proc/PID/net/tcp or /proc/PID/net/tcp6.
struct TcpListener {
  IpAddr addr;
  int port = 0;
  unsigned long inode = 0;
};
// The LISTEN (state 0A) rows of a /proc/net/tcp or /proc/net/tcp6 text. Pure:
// unit-testable.
std::vector<TcpListener> parseTcpListeners(const std::string& text);

// RFC 6455's Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + GUID)).
// Pure: unit-testable (the RFC's example: "dGhlIHNhbXBsZSBub25jZQ==" ->
// "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=").
std::string webSocketAccept(const std::string& key);

// One client frame: FIN, `opcode`, masked with `mask`. Pure: unit-testable.
std::string webSocketFrame(int opcode, const std::string& payload, const uint8_t (&mask)[4]);

// The JavaScript that Runtime.evaluate runs in the target: loads `addon` with `options`
// into the isolate it runs in unless it is there (answering 'loaded', 'already',
// 'refused' or 'error: ...'); in the main thread it also hooks the exit rundown and,
// with close_by_ms (ms since the epoch, > 0), closes the inspector by then itself.
std::string nodeLoadExpression(const std::string& addon, const std::string& options, bool main_thread = true,
                               int64_t close_by_ms = 0);

}  // namespace jitprov::cli
