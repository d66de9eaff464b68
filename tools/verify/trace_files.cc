// SPDX-License-Identifier: MIT
// jitprov-verify's traces on disk (trace_files.h).
#include "trace_files.h"

#include "verify_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <regex>
#include <utility>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace jitprov::verify {

namespace {

// What a file that is not a regular one is, for the message that refuses it.
const char* fileType(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "of another type";
}

// The largest metadata file read. lttng writes tens of KiB (the event classes of one
// trace); 256 MiB would describe millions of them. Beyond it the file is damaged or
// hostile (an 8 GiB sparse file, which babeltrace2 would read whole), refused unread.
constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 20;

}  // namespace

// Directories at or below `dir` that hold a CTF trace (an entry named `metadata`),
// sorted. A directory that cannot be read is an error (*why: which, and why), never
// skipped: the verdict would cover only the sessions that could be read.
std::vector<std::string> findTraces(const std::string& dir, std::string* why) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::vector<fs::path> todo{fs::path(dir)};
  while (!todo.empty()) {
    const fs::path d = std::move(todo.back());
    todo.pop_back();
    std::error_code ec;
    fs::directory_iterator it(d, ec);
    bool trace = false;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      // Symbolic links to directories are not followed (no cycles).
      const bool subdir = it->symlink_status(ec).type() == fs::file_type::directory;
      if (subdir) todo.push_back(it->path());
      // Of any other type: checkMetadata refuses what is not a regular file, by name.
      if (!subdir && it->path().filename() == "metadata") trace = true;
    }
    if (ec) {
      *why = (d == fs::path(dir) ? "" : d.string() + ": ") + ec.message();
      return {};
    }
    if (trace) out.push_back(d.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The directory above a trace's `ust` (or `kernel`) component, and what follows it
// (ust/uid/0/64-bit); root empty when the path has neither.
std::pair<std::filesystem::path, std::filesystem::path> splitAtDomain(const std::string& trace) {
  const std::filesystem::path p = std::filesystem::path(trace).lexically_normal();
  std::filesystem::path root, acc, rest;
  bool found = false;
  for (const auto& part : p) {
    if (part == "ust" || part == "kernel") {
      root = acc;
      rest.clear();
      found = true;
    }
    if (found) rest /= part;
    acc /= part;
  }
  return {root, rest};
}

}  // namespace

std::string sessionRoot(const std::string& trace) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(trace, ec);
  const auto [root, rest] = splitAtDomain(ec ? trace : abs.string());
  if (root.empty()) return trace;
  // A rotated session's chunk, SESSION/archives/BEGIN-END-N/ust/... (lttng's name of a
  // chunk: 20261206T005451+0000-20261206T005453+0000-0): the session's.
  std::filesystem::path r = root;
  if (r.filename().empty()) r = r.parent_path();
  static const std::regex kChunk(R"(\d{8}T\d{6}[+-]\d{4}-\d{8}T\d{6}[+-]\d{4}-\d+)");
  if (r.has_parent_path() && r.parent_path().filename() == "archives" &&
      std::regex_match(r.filename().string(), kChunk))
    return r.parent_path().parent_path().lexically_normal().string();
  // The chunk still open after a rotation, SESSION/BEGIN-N/ust/... (renamed into
  // archives/ when it closes).
  static const std::regex kOpenChunk(R"(\d{8}T\d{6}[+-]\d{4}-\d+)");
  if (r.has_parent_path() && std::regex_match(r.filename().string(), kOpenChunk))
    return r.parent_path().lexically_normal().string();
  return root.lexically_normal().string();
}

std::string streamDirKey(const std::string& trace) {
  const auto [root, rest] = splitAtDomain(trace);
  return root.empty() ? std::string() : rest.string();
}

// Checks a trace's metadata before libbabeltrace2 reads it: a regular file (a FIFO
// would hang the open, /dev/zero never ends), at most kMaxMetadataBytes, whole packets
// (babeltrace2 2.0 spins forever on a file cut in the middle of one). Reads only the
// packets' headers.
std::string checkMetadata(const std::string& trace) {
  const std::string path = trace + "/metadata";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "metadata: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "metadata: not a regular file (" + std::string(fileType(st.st_mode)) + ")";
  // Non-blocking: should a FIFO take its place after stat(), open() does not wait.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "metadata: " + std::string(std::strerror(errno));
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = "metadata: " + std::string(std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = "metadata: not a regular file (" + std::string(fileType(st.st_mode)) + ")";
  } else if (uint64_t(st.st_size) > kMaxMetadataBytes) {
    why = "metadata: " + std::to_string(st.st_size) + " bytes, more than the " +
          std::to_string(kMaxMetadataBytes >> 20) +
          " MiB a trace's metadata can sensibly be (lttng writes tens "
          "of KiB): damaged input, not read";
  } else {
    std::string io;  // why a read failed
    why = checkMetadataPackets(uint64_t(st.st_size), [&](uint64_t off, char* buf, size_t n) {
      const ssize_t got = pread(fd, buf, n, off_t(off));
      if (got == ssize_t(n)) return true;
      io = got < 0 ? std::strerror(errno) : "shorter than its size (changed while read?)";
      return false;
    });
    if (!io.empty()) why += ": " + io;
  }
  close(fd);
  return why;
}

// Checks the files babeltrace2 opens in a trace (besides its metadata): its stream files
// and their indexes must be regular files; it opens a FIFO without O_NONBLOCK and waits
// for a writer forever. Hidden files it ignores, so does this.
std::string checkStreamFiles(const std::string& trace) {
  for (const std::string& dir : {trace, trace + "/index"}) {
    std::error_code ec;
    if (dir != trace && !std::filesystem::is_directory(dir, ec)) continue;  // no index (or the loop says)
    std::filesystem::directory_iterator it(dir, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.' || (dir == trace && name == "metadata")) continue;
      const std::string shown = dir == trace ? name : "index/" + name;
      struct stat st;
      if (stat(it->path().c_str(), &st) != 0) return shown + ": " + std::strerror(errno);
      if (S_ISDIR(st.st_mode)) continue;
      if (!S_ISREG(st.st_mode)) return shown + ": not a regular file (" + fileType(st.st_mode) + ")";
    }
    if (ec) return (dir == trace ? "" : "index: ") + ec.message();
  }
  return "";
}

namespace {

uint64_t beU64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

// The packet_seq_num of the last packet of a stream file, from its index
// (index/FILE.idx: lttng's CTF packet index, big-endian, version 1.1 or later with the
// sequence number), when the index covers the file as it is; false: no usable index.
bool lastSeqFromIndex(const std::string& trace, const std::string& name, uint64_t data_size, uint64_t* last) {
  constexpr size_t kHeader = 16, kSeqAt = 64;
  const int fd = open((trace + "/index/" + name + ".idx").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // Its header and its last entry only: an index of any size (a hostile one of 8 GiB)
  // costs two reads.
  bool ok = false;
  unsigned char h[kHeader];
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, h, sizeof h, 0) == ssize_t(sizeof h)) {
    const auto be32 = [&h](size_t at) {
      return uint32_t(h[at]) << 24 | uint32_t(h[at + 1]) << 16 | uint32_t(h[at + 2]) << 8 | h[at + 3];
    };
    const uint32_t magic = be32(0), major = be32(4), minor = be32(8), len = be32(12);
    const uint64_t n = st.st_size > off_t(kHeader) && len != 0 ? (uint64_t(st.st_size) - kHeader) / len : 0;
    unsigned char e[kSeqAt + 8];
    if (magic == 0xC1F1DCC1u && major == 1 && minor >= 1 && len >= kSeqAt + 8 && n != 0 &&
        pread(fd, e, sizeof e, off_t(kHeader + (n - 1) * len)) == ssize_t(sizeof e)) {
      const uint64_t offset = beU64(e), packet_bits = beU64(e + 8);
      ok = packet_bits != 0 && packet_bits % 8 == 0 && offset <= data_size && packet_bits / 8 <= data_size - offset;
      if (ok) *last = beU64(e + kSeqAt);
    }
  }
  close(fd);
  return ok;
}

}  // namespace

void packetSeqRanges(const std::string& trace, StreamPackets* streams) {
  // lttng-ust's layout, declared in the metadata: the packet header (magic 0xC1FC1FC1,
  // uuid, stream_id at 20, stream_instance_id at 24: 32 bytes), then the packet context,
  // whose fifth field is packet_seq_num. Used only when the metadata declares it there,
  // in the trace's native byte order (little-endian here: the x86-64 the project builds
  // for).
  constexpr uint32_t kMagic = 0xC1FC1FC1;
  constexpr size_t kStreamIdAt = 20, kInstanceAt = 24, kSizeAt = 56, kSeqAt = 64;
  {
    std::ifstream meta(trace + "/metadata", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
    if (text.find("uint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;") == std::string::npos ||
        text.find("byte_order = le") == std::string::npos)
      return;  // not a layout known here: cannot tell
  }
  const std::string dir = streamDirKey(trace);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(trace, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name == "metadata" || !it->is_regular_file(ec)) continue;
    const uint64_t size = uint64_t(it->file_size(ec));
    const int fd = open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    // A packet's header at `off`: its size and sequence number; false: not a packet.
    uint32_t stream_id = 0;
    uint64_t instance = 0;
    const auto packetAt = [&](uint64_t off, uint64_t* bytes, uint64_t* seq, bool ids) {
      unsigned char p[kSeqAt + 8];
      if (pread(fd, p, sizeof p, off_t(off)) != ssize_t(sizeof p)) return false;
      uint32_t magic = 0;
      uint64_t packet_bits = 0;
      std::memcpy(&magic, p, sizeof magic);
      std::memcpy(&packet_bits, p + kSizeAt, sizeof packet_bits);
      std::memcpy(seq, p + kSeqAt, sizeof *seq);
      if (magic != kMagic || packet_bits == 0 || packet_bits % 8 != 0 || packet_bits / 8 > size - off) return false;
      if (ids) {
        std::memcpy(&stream_id, p + kStreamIdAt, sizeof stream_id);
        std::memcpy(&instance, p + kInstanceAt, sizeof instance);
      }
      *bytes = packet_bits / 8;
      return true;
    };
    uint64_t bytes = 0, first = 0, last = 0;
    if (packetAt(0, &bytes, &first, true)) {
      // The last packet: from the index, else each packet's header in turn (a snapshot
      // writes no index).
      if (!lastSeqFromIndex(trace, name, size, &last)) {
        last = first;
        uint64_t seq = 0;
        for (uint64_t off = bytes; off < size && packetAt(off, &bytes, &seq, false); off += bytes) last = seq;
      }
      // One stream by its ids, whatever its files are named (--tracefile-size splits one
      // into chan_0_0, chan_0_1...).
      (*streams)[dir + "/stream " + std::to_string(stream_id) + "." + std::to_string(instance)].push_back(
          {first, std::max(first, last)});
    }
    close(fd);
  }
}

uint64_t packetsLacking(const StreamPackets& streams) {
  // Saturating: a damaged trace's numbers must not wrap to "nothing lacking".
  const auto add = [](uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; };
  uint64_t lacking = 0;
  for (const auto& [file, given] : streams) {
    if (given.empty()) continue;
    // In the stream's order (chunks rotated within one second, or a split stream's
    // files, can sort out of it by their names).
    std::vector<std::pair<uint64_t, uint64_t>> ranges = given;
    std::sort(ranges.begin(), ranges.end());
    lacking = add(lacking, ranges.front().first);  // before the stream's first packet
    for (size_t i = 1; i < ranges.size(); ++i)     // between one file's last and the next one's first
      if (ranges[i].first > ranges[i - 1].second && ranges[i].first - ranges[i - 1].second > 1)
        lacking = add(lacking, ranges[i].first - ranges[i - 1].second - 1);
  }
  return lacking;
}

}  // namespace jitprov::verify
