/* SPDX-License-Identifier: MIT */
// jitprov-verify's traces on disk: finding them below a directory, grouping them by
// session, and refusing hostile or damaged files before libbabeltrace2 opens them (a
// FIFO would hang it, /dev/zero never ends, a metadata file cut inside a packet makes
// babeltrace2 2.0 spin forever).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace jitprov::verify {

// Directories at or below `dir` that hold a CTF trace (an entry named `metadata`),
// sorted. A directory that cannot be read is an error (*why: which, and why), never
// skipped: the verdict would cover only the sessions that could be read.
std::vector<std::string> findTraces(const std::string& dir, std::string* why);

// The session a trace belongs to: the directory above its `ust` (or `kernel`) component
// (lttng's output layout SESSION/ust/uid/UID/64-bit or SESSION/ust/pid/NAME-PID-DATE),
// or the trace itself; for a rotated session's chunk (SESSION/archives/CHUNK/ust/...),
// SESSION (and so for the chunk still open, SESSION/BEGIN-N/ust/...): its chunks are
// read together, as one session.
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

// packet_seq_num first to last of one of a stream's files, or (missing) of packets its
// index lists that the file lacks.
struct SeqRange {
  uint64_t first = 0, last = 0;
  bool missing = false;
};
// Stream (streamDirKey, its stream_id and stream_instance_id) -> its files' ranges in a
// session's traces (a rotated session's chunks, the files --tracefile-size splits it
// into).
using StreamPackets = std::map<std::string, std::vector<SeqRange>>;
// Adds the trace's stream files to `streams` (lttng-ust's packet context, as the trace's
// metadata declares it; nothing for a layout it does not know), and the packets their
// indexes list that the files lack: a file gone, emptied, or cut after its packets were
// indexed (babeltrace2 reads what is there, and says nothing).
void packetSeqRanges(const std::string& trace, StreamPackets* streams);
// The packets a session's streams lack that babeltrace2 does not count: before each
// stream's first packet (a snapshot: the buffers' last packets; a trace whose first
// files, or first chunks, were removed), between one chunk's last packet of a stream
// and the next chunk's first (a chunk removed): babeltrace2 counts only the packets lost
// between two packets of a stream in one trace; and those indexed but not in their files.
uint64_t packetsLacking(const StreamPackets& streams);

}  // namespace jitprov::verify
