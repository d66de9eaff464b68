/* SPDX-License-Identifier: MIT */
// HotSpot's dynamic attach, client side (docs/attach.md): the JVM's version checked, its
// attach listener started when it is not (a trigger file and one SIGQUIT, only when the
// JVM catches SIGQUIT and has not disabled attach), then one `load` request for the agent,
// sent with the target's euid and egid, and the reply read with a deadline.
#pragma once

#include "attach.h"
#include "target.h"

#include <string>

namespace jitprov::cli {

// The oldest HotSpot major version `jitprov attach` loads the agent into: 17, the one
// tested, and the first whose GenerateEvents keeps every replayed nmethod alive until its
// event is delivered (docs/attach.md).
inline constexpr int kMinHotSpotMajor = 17;

AttachOutcome attachHotSpot(const TargetInfo& t, const AttachRequest& r);

// The JVM's version without asking it anything ("17.0.21.1"; "" when unknown): its
// release file, else its hsperfdata (`jitprov ps`, and the attach's check above).
std::string hotspotVersion(const TargetInfo& t);

// From the reply of a `load` (or of jcmd JVMTI.agent_load): the status and line for
// `who` ("PID 1234 (java)"). Pure: unit-testable.
AttachOutcome parseLoadReply(const std::string& reply, const std::string& who);

// What is read of a JVM's hsperfdata file (/tmp/hsperfdata_USER/NSPID): a prologue
// (magic 0xcafec0c0 big-endian, byte order, versions, used, overflow, time stamp, entry
// offset, entry count) and entries (length, name offset, vector length, type, flags,
// units, variability, data offset). Only byte vectors (strings) are read.
struct PerfData {
  bool found = false;        // the file parsed as hsperfdata
  bool accessible = false;   // the prologue's flag: set once the JVM is in JVMTI's live phase
  std::string capabilities;  // sun.rt.jvmCapabilities: [0] '1' attachable, '0' DisableAttachMechanism
  std::string vm_version;    // java.property.java.vm.version
  std::string java_home;     // java.property.java.home
};

// The file's bytes parsed. Pure: unit-testable.
PerfData parsePerfData(const std::string& bytes);

}  // namespace jitprov::cli
