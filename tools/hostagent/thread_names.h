/* SPDX-License-Identifier: MIT */
// The names of the threads a host client of jitprov brings into its process: its own
// in `top -H`, `perf report --comm`, the benchmarks' profiles and OwnCpu's account, and
// how `jitprov ps` and `jitprov attach` tell a node whose client started from one whose
// addon is only mapped (tools/jitprov/target.cc).
#pragma once

namespace jitprov::hostagent {

// jitprov's rundown thread's name in every agent.
inline constexpr const char* kRundownThread = "jitprov-rundown";
// The thread that publishes the loads a client's callbacks queue (docs/jvm-agent.md).
inline constexpr const char* kPublishThread = "jitprov-publish";

}  // namespace jitprov::hostagent
