/* SPDX-License-Identifier: MIT */
/* A JVMTI agent for jvm-attach: loaded at a JVM's start (-agentpath:LIB=MS), it holds the
 * JVM in JVMTI's start phase for MS milliseconds (2000 by default): its VMStart callback
 * sleeps on the main thread. The JVM's signal dispatcher runs by then, so an attach
 * listener could start and load an agent before the live phase, which HotSpot refuses
 * (no JVMTI 1.2 environment): `jitprov attach` must wait for the live phase. */
#include <jvmti.h>

#include <stdlib.h>
#include <time.h>

static long hold_ms = 2000;

static void JNICALL onVmStart(jvmtiEnv* jvmti, JNIEnv* jni) {
  (void)jvmti;
  (void)jni;
  struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  jvmtiEnv* jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  if (options != NULL && *options != '\0') hold_ms = atol(options);
  jvmtiEventCallbacks cb = {0};
  cb.VMStart = onVmStart;
  if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE) return 1;
  return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_START, NULL) == JVMTI_ERROR_NONE ? 0
                                                                                                                 : 1;
}
