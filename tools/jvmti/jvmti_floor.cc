// SPDX-License-Identifier: MIT
// libjitprov-jvmti-floor.so: the JVM agent's floor, a benchmark artefact (built with
// the benchmarks, never installed; tools/bench/jvm-apps runs it beside the agent).
//
//   java -agentpath:/path/libjitprov-jvmti-floor.so[=lines] ...
//
// It asks JVMTI for exactly what libjitprov-jvmti.so asks (jvmti_requests.h: the same
// capabilities, the same events enabled, the same replays at VMInit) and does nothing
// in its callbacks, so that a JVM under it pays what HotSpot does for any agent that
// asks this much: the Service Thread making every CompiledMethodLoad event (the
// address-location map and inline records decoded from the nmethod's scopes, the
// jmethodID) and delivering it, and the same for unloads and stubs. What the agent
// costs above this floor is its own. `lines` asks for the line-number capabilities
// too, as the agent does with jitdump=.
#include "jvmti_requests.h"

#include <jvmti.h>

#include <cstdio>
#include <cstring>

namespace {

void JNICALL onCompiledMethodLoad(jvmtiEnv*, jmethodID, jint, const void*, jint, const jvmtiAddrLocationMap*,
                                  const void*) {}
void JNICALL onCompiledMethodUnload(jvmtiEnv*, jmethodID, const void*) {}
void JNICALL onDynamicCodeGenerated(jvmtiEnv*, const char*, const void*, jint) {}
void JNICALL onVMInit(jvmtiEnv* jvmti, JNIEnv*, jthread) {
  // The agent's replays are HotSpot's work too: the floor asks for them as it does.
  if (jitprov::jvmti::replayEvents(jvmti) != JVMTI_ERROR_NONE)
    std::fprintf(stderr, "jitprov-jvmti-floor: GenerateEvents failed\n");
}
void JNICALL onVMDeath(jvmtiEnv*, JNIEnv*) {}

jint start(JavaVM* vm, const char* options) {
  const bool lines = options != nullptr && std::strcmp(options, "lines") == 0;
  if (options != nullptr && *options != '\0' && !lines) {
    std::fprintf(stderr, "jitprov-jvmti-floor: unknown options '%s' (none, or 'lines')\n", options);
    return JNI_ERR;
  }
  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK) {
    std::fprintf(stderr, "jitprov-jvmti-floor: this JVM offers no JVMTI 1.2 environment\n");
    return JNI_ERR;
  }
  if (const jvmtiCapabilities caps = jitprov::jvmti::requiredCapabilities();
      jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
    std::fprintf(stderr, "jitprov-jvmti-floor: JVMTI refuses can_generate_compiled_method_load_events\n");
    return JNI_ERR;
  }
  if (const jvmtiCapabilities lc = jitprov::jvmti::lineCapabilities();
      lines && jvmti->AddCapabilities(&lc) != JVMTI_ERROR_NONE)
    std::fprintf(stderr, "jitprov-jvmti-floor: JVMTI refuses line numbers\n");
  int failed = 0;
  if (jitprov::jvmti::enableEvents(jvmti,
                                   jitprov::jvmti::Callbacks{&onCompiledMethodLoad, &onCompiledMethodUnload,
                                                             &onDynamicCodeGenerated, &onVMInit, &onVMDeath},
                                   &failed) != JVMTI_ERROR_NONE) {
    std::fprintf(stderr, "jitprov-jvmti-floor: %s %d failed\n", failed == 0 ? "SetEventCallbacks" : "enable event",
                 failed);
    return JNI_ERR;
  }
  return JNI_OK;
}

}  // namespace

extern "C" {
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) { return start(vm, options); }
}
