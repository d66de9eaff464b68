/* SPDX-License-Identifier: MIT */
// jitprov-lockwait: the USDT probes an ELF file declares (its .note.stapsdt section),
// and which object of a process holds the jitprov ones.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace jitprov::lw {

// Probe name -> its fewest arguments over its sites.
using ProbeArgs = std::map<std::string, int>;

// The probes of `provider` in the bytes of a .note.stapsdt section (`addr_size`: 8 for
// ELFCLASS64, 4 for ELFCLASS32). Notes that are malformed, truncated or of another
// provider are skipped; nothing is read outside [notes, notes + size).
ProbeArgs parseStapsdtNotes(const void* notes, size_t size, size_t addr_size, const std::string& provider);

// The jitprov probes of the ELF file at `path`; empty when it has none (or is not ELF).
ProbeArgs jitprovProbes(const std::string& path);

// The object in process `pid` that holds the jitprov probes: its executable, or the
// first mapped file that has them (libjitprov.so.1); else its executable (attaching then
// says which probe is missing); empty when the process has none.
std::string probeObjectOf(int pid);

}  // namespace jitprov::lw
