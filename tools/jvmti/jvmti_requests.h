/* SPDX-License-Identifier: MIT */
// What the JVM agent asks of JVMTI, defined once: its capabilities, the events it
// enables and the events it has replayed at VMInit. The agent (jitprov_jvmti.cc) and its
// floor (jvmti_floor.cc: the same requests, callbacks that do nothing; measured beside
// the agent by tools/bench/jvm-apps) both make them through this header, so that the
// floor cannot drift from the agent: what HotSpot does for any agent that asks this much
// is the floor's cost, the rest is the agent's own.
#pragma once

#include <jvmti.h>

namespace jitprov::jvmti {

// Always: CompiledMethodLoad and CompiledMethodUnload (DynamicCodeGenerated, VMInit and
// VMDeath need no capability).
inline jvmtiCapabilities requiredCapabilities() {
  jvmtiCapabilities c{};
  c.can_generate_compiled_method_load_events = 1;
  return c;
}

// With jitdump= only, and optional (refused: loads go without source lines): the line
// tables and source file names of JIT_CODE_DEBUG_INFO.
inline jvmtiCapabilities lineCapabilities() {
  jvmtiCapabilities c{};
  c.can_get_line_numbers = 1;
  c.can_get_source_file_name = 1;
  return c;
}

// One callback for each event enabled, all required.
struct Callbacks {
  jvmtiEventCompiledMethodLoad compiled_method_load;
  jvmtiEventCompiledMethodUnload compiled_method_unload;
  jvmtiEventDynamicCodeGenerated dynamic_code_generated;
  jvmtiEventVMInit vm_init;  // must call replayEvents()
  jvmtiEventVMDeath vm_death;
};

inline constexpr jvmtiEvent kEnabledEvents[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                                                JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_INIT,
                                                JVMTI_EVENT_VM_DEATH};
// Replayed at VMInit: the code compiled and the stubs generated before the events were
// enabled (HotSpot posts them again; loads already delivered come twice).
inline constexpr jvmtiEvent kReplayedEvents[] = {JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_COMPILED_METHOD_LOAD};

// Sets the callbacks and enables kEnabledEvents. JVMTI_ERROR_NONE, or the first error,
// with *failed the event that failed (0: SetEventCallbacks).
inline jvmtiError enableEvents(jvmtiEnv* jvmti, const Callbacks& c, int* failed) {
  jvmtiEventCallbacks cb{};
  cb.CompiledMethodLoad = c.compiled_method_load;
  cb.CompiledMethodUnload = c.compiled_method_unload;
  cb.DynamicCodeGenerated = c.dynamic_code_generated;
  cb.VMInit = c.vm_init;
  cb.VMDeath = c.vm_death;
  *failed = 0;
  jvmtiError e = jvmti->SetEventCallbacks(&cb, sizeof cb);
  for (jvmtiEvent ev : kEnabledEvents) {
    if (e != JVMTI_ERROR_NONE) break;
    e = jvmti->SetEventNotificationMode(JVMTI_ENABLE, ev, nullptr);
    if (e != JVMTI_ERROR_NONE) *failed = int(ev);
  }
  return e;
}

// At VMInit: kReplayedEvents generated again. JVMTI_ERROR_NONE or the first error.
inline jvmtiError replayEvents(jvmtiEnv* jvmti) {
  for (jvmtiEvent ev : kReplayedEvents)
    if (const jvmtiError e = jvmti->GenerateEvents(ev); e != JVMTI_ERROR_NONE) return e;
  return JVMTI_ERROR_NONE;
}

}  // namespace jitprov::jvmti
