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
#include <set>
#include <tuple>
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

// A stream file's index (index/FILE.idx: lttng's CTF packet index, big-endian, version
// 1.1 or later with the sequence number), as much as the checks need: the
// first one's stream ids and sequence number, the last one's, and how many of its last
// entries lie past the end of the stream file's `data_size` bytes (a file cut, or emptied,
// after its packets were indexed). `ok` false: no usable index (none, another version,
// or an entry that is no packet's). Costs a few reads for an index of any size (a hostile
// one of 8 GiB): its header, its first and last entries, a binary search for the cut.
struct IndexInfo {
  bool ok = false;
  uint64_t first_seq = 0, last_seq = 0, beyond = 0;
  uint32_t stream_id = 0;
  uint64_t instance = 0;
};

IndexInfo readIndex(const std::string& trace, const std::string& name, uint64_t data_size) {
  constexpr size_t kHeader = 16, kStreamIdAt = 48, kInstanceAt = 56, kSeqAt = 64;
  IndexInfo r;
  const int fd = open((trace + "/index/" + name + ".idx").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return r;
  unsigned char h[kHeader];
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, h, sizeof h, 0) == ssize_t(sizeof h)) {
    const auto be32 = [](const unsigned char* p) {
      return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
    };
    const uint32_t magic = be32(h), major = be32(h + 4), minor = be32(h + 8), len = be32(h + 12);
    const uint64_t n = st.st_size > off_t(kHeader) && len != 0 ? (uint64_t(st.st_size) - kHeader) / len : 0;
    // Entry i: its offset in the stream file and its size in bytes (0: not a packet's).
    unsigned char e[kSeqAt + 8];
    const auto entry = [&](uint64_t i, uint64_t* offset, uint64_t* bytes) {
      if (pread(fd, e, sizeof e, off_t(kHeader + i * len)) != ssize_t(sizeof e)) return false;
      const uint64_t bits = beU64(e + 8);
      *offset = beU64(e);
      *bytes = bits % 8 == 0 ? bits / 8 : 0;
      return *bytes != 0;
    };
    uint64_t off = 0, bytes = 0;
    if (magic == 0xC1F1DCC1u && major == 1 && minor >= 1 && len >= kSeqAt + 8 && n != 0 && entry(0, &off, &bytes)) {
      r.first_seq = beU64(e + kSeqAt);
      r.stream_id = uint32_t(beU64(e + kStreamIdAt));
      r.instance = beU64(e + kInstanceAt);
      if (entry(n - 1, &off, &bytes) && beU64(e + kSeqAt) >= r.first_seq) {
        r.ok = true;
        r.last_seq = beU64(e + kSeqAt);
        const auto inFile = [data_size](uint64_t o, uint64_t b) { return o <= data_size && b <= data_size - o; };
        if (!inFile(off, bytes)) {
          // The first entry past the end (the entries go in the file's order): the
          // entries from it on are what the file lacks.
          uint64_t lo = 0, hi = n - 1;  // entry hi is past the end
          while (lo < hi) {
            const uint64_t mid = lo + (hi - lo) / 2;
            if (entry(mid, &off, &bytes) && inFile(off, bytes))
              lo = mid + 1;
            else
              hi = mid;
          }
          r.beyond = n - hi;
        }
      }
    }
  }
  close(fd);
  return r;
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
  const auto key = [&dir](uint32_t stream_id, uint64_t instance) {
    return dir + "/stream " + std::to_string(stream_id) + "." + std::to_string(instance);
  };
  std::set<std::string> with_packets;  // stream files whose first packet was read
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
      with_packets.insert(name);
      // The last packet: from the index when it covers the file, else each packet's header
      // in turn (a snapshot writes no index); the index's packets past the file's end,
      // missing.
      const IndexInfo idx = readIndex(trace, name, size);
      if (idx.ok && idx.beyond == 0) {
        last = idx.last_seq;
      } else {
        last = first;
        uint64_t seq = 0;
        for (uint64_t off = bytes; off < size && packetAt(off, &bytes, &seq, false); off += bytes) last = seq;
      }
      // One stream by its ids, whatever its files are named (--tracefile-size splits one
      // into chan_0_0, chan_0_1...).
      auto& ranges = (*streams)[key(stream_id, instance)];
      ranges.push_back({first, std::max(first, last), false});
      if (idx.ok && idx.beyond > 0 && idx.last_seq > std::max(first, last))
        ranges.push_back({std::max(first, last) + 1, idx.last_seq, true});
    }
    close(fd);
  }
  // The indexes of stream files that are gone, empty, or begin with no packet: every packet
  // they index is missing (babeltrace2 reads such a file as a stream of nothing, or skips it).
  for (std::filesystem::directory_iterator it(trace + "/index", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string idx_name = it->path().filename().string();
    if (idx_name.size() <= 4 || idx_name[0] == '.' || idx_name.compare(idx_name.size() - 4, 4, ".idx") != 0) continue;
    const std::string name = idx_name.substr(0, idx_name.size() - 4);
    if (with_packets.count(name) != 0) continue;
    std::error_code size_ec;
    const auto size = std::filesystem::file_size(trace + "/" + name, size_ec);
    const IndexInfo idx = readIndex(trace, name, size_ec ? 0 : uint64_t(size));
    if (idx.ok && idx.beyond > 0)
      (*streams)[key(idx.stream_id, idx.instance)].push_back(
          {idx.last_seq - (idx.beyond - 1) > idx.first_seq ? idx.last_seq - (idx.beyond - 1) : idx.first_seq,
           idx.last_seq, true});
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
    std::vector<SeqRange> ranges = given;
    std::sort(ranges.begin(), ranges.end(), [](const SeqRange& a, const SeqRange& b) {
      return std::tie(a.first, a.last) < std::tie(b.first, b.last);
    });
    lacking = add(lacking, ranges.front().first);  // before the stream's first packet
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].missing) lacking = add(lacking, ranges[i].last - ranges[i].first + 1);  // indexed, not in a file
      // between one file's last and the next one's first
      if (i > 0 && ranges[i].first > ranges[i - 1].last && ranges[i].first - ranges[i - 1].last > 1)
        lacking = add(lacking, ranges[i].first - ranges[i - 1].last - 1);
    }
  }
  return lacking;
}

}  // namespace jitprov::verify
