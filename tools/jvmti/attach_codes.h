/* SPDX-License-Identifier: MIT */
// What the JVM agent's Agent_OnAttach returns, defined once for the agent
// (jitprov_jvmti.cc) and `jitprov attach` (tools/jitprov/hotspot_attach.cc), which reads
// it from HotSpot's reply "0\nreturn code: N\n". HotSpot dlcloses an agent whose
// OnAttach returns non-zero; the agent is linked with -z nodelete, so that nothing of it
// is unmapped then (its rundown thread may already run). Its reason is printed on the
// JVM's stderr, which the command cannot read: the code says which kind it was.
#pragma once

namespace jitprov::jvmti {

enum OnAttachCode : int {
  kOnAttachOk = 0,
  kOnAttachBadOptions = 1,      // a bad option, or `help` (printed on the JVM's stdout)
  kOnAttachNoJvmti = 2,         // no JVMTI 1.2 environment
  kOnAttachRefused = 3,         // JVMTI refused a capability
  kOnAttachStartFailed = 4,     // the jitprov runtime, the jitdump or the rundown engine did not start
  kOnAttachEventsFailed = 5,    // callbacks or events not enabled (the rundown thread runs: never retried)
  kOnAttachReplayFailed = 6,    // GenerateEvents failed: the agent runs, but code compiled before the attach is missing
  kOnAttachTooOld = 7,          // a JVM before 17 (its replays do not keep their nmethods alive): not started
  kOnAttachAlreadyLoaded = 74,  // jitprov already runs in this JVM: nothing was registered again
};

inline const char* onAttachCodeName(int code) {
  switch (code) {
    case kOnAttachOk:
      return "started";
    case kOnAttachBadOptions:
      return "bad options";
    case kOnAttachNoJvmti:
      return "no JVMTI 1.2 environment";
    case kOnAttachRefused:
      return "JVMTI refused a capability";
    case kOnAttachStartFailed:
      return "jitprov did not start";
    case kOnAttachEventsFailed:
      return "its JVMTI events could not be enabled";
    case kOnAttachReplayFailed:
      return "the replay of the code compiled before the attach (GenerateEvents) failed: the agent runs, but that "
             "code is missing from the registry";
    case kOnAttachTooOld:
      return "HotSpot before 17, whose replays do not keep their nmethods alive (docs/attach.md)";
    case kOnAttachAlreadyLoaded:
      return "already loaded";
    default:
      return "unknown code";
  }
}

}  // namespace jitprov::jvmti
