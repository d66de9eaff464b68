/* SPDX-License-Identifier: MIT */
// jitprov-verify's traces on disk: finding them below a directory, grouping them by
// session, and refusing hostile or damaged files before libbabeltrace2 opens them (a
// FIFO would hang it, /dev/zero never ends, a metadata file cut inside a packet makes
// babeltrace2 2.0 spin forever).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace jitprov::verify {

// Directories at or below `dir` that hold a CTF trace (an entry named `metadata`),
// sorted. A directory that cannot be read is an error (*why: which, and why), never
// skipped: the verdict would cover only the sessions that could be read.
std::vector<std::string> findTraces(const std::string& dir, std::string* why);

// The session a trace belongs to: the directory above its `ust` (or `kernel`) component
// (lttng's output layout SESSION/ust/uid/UID/64-bit or SESSION/ust/pid/NAME-PID-DATE),
// or the trace itself; for a rotated session's chunk (SESSION/archives/CHUNK/ust/...),
// SESSION: its chunks are read together, as one session.
std::string sessionRoot(const std::string& trace);
// A trace's path from its `ust` (or `kernel`) component on ("ust/uid/0/64-bit"): one
// stream's files in successive chunks of a rotated session share it. "" without one.
std::string streamDirKey(const std::string& trace);

// Checks a trace's metadata before libbabeltrace2 reads it: a regular file, at most
// 256 MiB, whole packets. "" or why not.
std::string checkMetadata(const std::string& trace);

// Checks the files babeltrace2 opens in a trace (besides its metadata): its stream files
// and their indexes must be regular files. "" or which is not.
std::string checkStreamFiles(const std::string& trace);

// The first packet_seq_num of each stream file of the trace (lttng-ust's packet
// context, as the trace's metadata declares it), into `first` under streamDirKey/FILE,
// keeping the smallest: the same stream's file in a rotated session's later chunk goes
// on from the earlier one's. Their sum over a session is the packets its streams lack
// before their first: babeltrace2 counts packets lost between two packets of a stream,
// never before its first (a snapshot: the buffers' last packets; a trace whose first
// files, or first chunks, were removed). Nothing for a layout it does not know.
void firstPacketSeqs(const std::string& trace, std::map<std::string, uint64_t>* first);

}  // namespace jitprov::verify
