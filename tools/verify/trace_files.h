/* SPDX-License-Identifier: MIT */
// jitprov-verify's traces on disk: finding them below a directory, grouping them by
// session, and refusing hostile or damaged files before libbabeltrace2 opens them (a
// FIFO would hang it, /dev/zero never ends, a metadata file cut inside a packet makes
// babeltrace2 2.0 spin forever).
#pragma once

#include <string>
#include <vector>

namespace jitprov::verify {

// Directories at or below `dir` that hold a CTF trace (an entry named `metadata`),
// sorted. A directory that cannot be read is an error (*why: which, and why), never
// skipped: the verdict would cover only the sessions that could be read.
std::vector<std::string> findTraces(const std::string& dir, std::string* why);

// The session a trace belongs to: the directory above its `ust` (or `kernel`) component
// (lttng's output layout SESSION/ust/uid/UID/64-bit or SESSION/ust/pid/NAME-PID-DATE),
// or the trace itself.
std::string sessionRoot(const std::string& trace);

// Checks a trace's metadata before libbabeltrace2 reads it: a regular file, at most
// 256 MiB, whole packets. "" or why not.
std::string checkMetadata(const std::string& trace);

// Checks the files babeltrace2 opens in a trace (besides its metadata): its stream files
// and their indexes must be regular files. "" or which is not.
std::string checkStreamFiles(const std::string& trace);

// The packets the trace's streams lack before their first one: the sum of each stream
// file's first packet_seq_num (lttng-ust's packet context, as the trace's metadata
// declares it). babeltrace2 counts packets lost between two packets of a stream, never
// before its first: a snapshot (the buffers' last packets), a trace whose first files
// were removed. 0 for a layout it does not know.
uint64_t packetsBeforeFirst(const std::string& trace);

}  // namespace jitprov::verify
