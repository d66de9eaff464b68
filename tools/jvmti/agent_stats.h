/* SPDX-License-Identifier: MIT */
// The JVM agent's stats= file (JSON, written at VM death; docs/jvm-agent.md), with the
// callbacks' duration histograms (hostagent::Hist).
#pragma once

namespace jitprov::jvmti {

struct Agent;

// Writes the agent's counters to the stats= file, if one was asked for. Takes Agent::mu.
void writeStats(Agent& a);

}  // namespace jitprov::jvmti
