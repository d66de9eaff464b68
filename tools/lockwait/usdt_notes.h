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
// says which probe is missing); empty when the process has none. A path this process
// opens as the file the target maps, whatever the target's mount namespace (a container)
// and even when the file was since replaced or removed on disk: /proc/PID/exe, or
// /proc/PID/map_files/START-END (root only). *shown: its name as the target maps it.
std::string probeObjectOf(int pid, std::string* shown);

// The process (thread group) that thread `tid` belongs to, from /proc/TID/status; 0 when
// it cannot be read.
int tgidOf(int tid);

// Whether process `pid` maps the file at `path` (its executable, or a mapping of it: the
// same device and inode, whatever path each names it by). True when `path` cannot be
// stat'ed (the checks that follow say why).
bool mapsFile(int pid, const std::string& path);

}  // namespace jitprov::lw
