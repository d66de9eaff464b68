/* SPDX-License-Identifier: MIT */
// The JVM agent's options: -agentpath:/path/libjitprov-jvmti.so=OPTION,... (`help`
// lists them; docs/jvm-agent.md). Those of every host client (tools/hostagent), no
// signal trigger (HotSpot owns SIGUSR2).
#pragma once

#include "host_agent.h"

namespace jitprov::jvmti {

// False when the JVM must not start: `help` (printed on stdout) or a bad option (one
// line on stderr).
bool parseOptions(const char* text, hostagent::Options* o);

}  // namespace jitprov::jvmti
