/* SPDX-License-Identifier: MIT */
// `jitprov attach PID` for CoreCLR: the .NET client loaded into a running process over
// CoreCLR's diagnostics IPC (docs/dotnet.md, "Attach"). The diagnostics socket is found
// in the target's view of the file system (/proc/PID/root, its TMPDIR), the runtime's
// version read (ProcessInfo3, else ProcessInfo2), then AttachProfiler sent with the
// client's class id, the agent's path and the options as client data; the runtime
// answers once the client's InitializeForAttach and ProfilerAttachComplete returned.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attach.h"

namespace jitprov::cli {

AttachOutcome attachCoreClr(const AttachRequest& req);

// What an HRESULT of an AttachProfiler reply means for the user, and its exit status
// (AttachStatus). `agent_loaded_jitprov`: jitprov's .NET client runs in the target (its
// ready mark in the maps; for CORPROF_E_PROFILER_ALREADY_ACTIVE: jitprov itself, or
// another profiler).
int clrStatusOf(uint32_t hresult, bool agent_loaded_jitprov, std::string* why);

// A diagnostics IPC reply, decoded from its 20-byte header and its payload.
struct ClrReply {
  int err = 0;  // errno of the exchange (ETIMEDOUT at the deadline, EPROTO: not a reply), 0 when a reply came
  bool wrong_peer = false;  // the socket's peer is not the target (err EPERM)
  pid_t peer = 0;           // then its pid (0: unknown)
  bool ok = false;
  uint32_t hresult = 0;  // an error reply's (or the first uint32 of an OK reply's payload)
  std::vector<uint8_t> payload;
};

// The payload's size a reply header announces; -1 when the header is not a server
// reply (magic, size below 20, command set). Pure: unit-testable.
int clrReplyPayloadSize(const uint8_t (&header)[20]);

// The reply of that header once its payload is read (EPROTO: an error reply without its
// HRESULT). Pure: unit-testable.
ClrReply decodeClrReply(const uint8_t (&header)[20], std::vector<uint8_t> payload);

// The product version of a ProcessInfo2 (v3 false) or ProcessInfo3 reply's payload
// ("10.0.12"); "" when it does not parse. Pure: unit-testable.
std::string clrProductVersion(const std::vector<uint8_t>& payload, bool v3);

}  // namespace jitprov::cli
