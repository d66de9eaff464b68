// SPDX-License-Identifier: MIT
#include "usdt_notes.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string_view>

namespace jitprov::lw {

namespace {

constexpr uint32_t kStapsdtType = 3;  // NT_STAPSDT
constexpr size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Reads the NUL-terminated string at p into *out; returns what follows it, or nullptr
// when no NUL ends it before `end`.
const char* cstring(const char* p, const char* end, std::string_view* out) {
  if (p >= end) return nullptr;
  const size_t n = strnlen(p, size_t(end - p));
  if (n == size_t(end - p)) return nullptr;  // not terminated inside the note
  *out = std::string_view(p, n);
  return p + n + 1;
}

// Arguments are separated by spaces ("-4@%eax 8@%rdx"); none: an empty string.
int countArgs(std::string_view args) {
  int n = 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] != ' ' && (i == 0 || args[i - 1] == ' ')) ++n;
  return n;
}

// One note's desc: pc, base, semaphore (one address each), then provider\0name\0args\0.
void parseDesc(const char* desc, size_t size, size_t addr_size, const std::string& provider, ProbeArgs* out) {
  if (size <= 3 * addr_size) return;
  const char* end = desc + size;
  std::string_view prov, name, args;
  const char* p = cstring(desc + 3 * addr_size, end, &prov);
  if (p == nullptr || prov != provider) return;
  if ((p = cstring(p, end, &name)) == nullptr || name.empty()) return;
  if (cstring(p, end, &args) == nullptr) return;
  const int n = countArgs(args);
  auto [it, fresh] = out->emplace(std::string(name), n);
  if (!fresh) it->second = std::min(it->second, n);
}

}  // namespace

ProbeArgs parseStapsdtNotes(const void* notes, size_t size, size_t addr_size, const std::string& provider) {
  ProbeArgs probes;
  if (notes == nullptr || (addr_size != 4 && addr_size != 8)) return probes;
  const char* base = static_cast<const char*>(notes);
  // Elf32_Nhdr and Elf64_Nhdr are the same: namesz, descsz, type (4 bytes each); the
  // name and the desc follow, each padded to 4 bytes.
  for (size_t off = 0; size - off >= 12;) {
    uint32_t h[3];
    std::memcpy(h, base + off, sizeof h);
    const size_t name_off = off + 12;
    if (h[0] > size - name_off) break;  // a name past the end: the rest is unreadable
    const size_t desc_off = name_off + align4(h[0]);
    if (desc_off > size || h[1] > size - desc_off) break;
    const std::string_view name(base + name_off, h[0]);
    if (h[2] == kStapsdtType && name == std::string_view("stapsdt", 8))
      parseDesc(base + desc_off, h[1], addr_size, provider, &probes);
    const size_t next = desc_off + align4(h[1]);
    if (next <= off || next > size) break;
    off = next;
  }
  return probes;
}

ProbeArgs jitprovProbes(const std::string& path) {
  ProbeArgs probes;
  if (elf_version(EV_CURRENT) == EV_NONE) return probes;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return probes;
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    size_t shstrndx = 0;
    const char* ident = elf_getident(elf, nullptr);
    const size_t addr = ident != nullptr && ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
    for (Elf_Scn* scn = nullptr; elf_getshdrstrndx(elf, &shstrndx) == 0 && (scn = elf_nextscn(elf, scn)) != nullptr;) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_NOTE) continue;
      const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
      if (name == nullptr || std::strcmp(name, ".note.stapsdt") != 0) continue;
      for (Elf_Data* data = nullptr; (data = elf_getdata(scn, data)) != nullptr;)
        for (const auto& [probe, n] : parseStapsdtNotes(data->d_buf, data->d_size, addr, "jitprov")) {
          auto [it, fresh] = probes.emplace(probe, n);
          if (!fresh) it->second = std::min(it->second, n);
        }
    }
    elf_end(elf);
  }
  close(fd);
  return probes;
}

namespace {
std::string readlinkStr(const std::string& p) {
  char buf[4096];
  const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
  if (n < 0) return {};
  buf[n] = '\0';
  return buf;
}
bool hasJitprovProbes(const std::string& path) { return !jitprovProbes(path).empty(); }
}  // namespace

namespace {
// Each file process `pid` maps, in /proc/PID/maps's order (a file's consecutive mappings
// once), as the path this process opens it by, /proc/PID/map_files/START-END (the file
// the target maps, whatever its mount namespace, and after it was replaced or removed on
// disk), and the name the target maps it by; until `found` says true. Whether it did.
template <typename Found>
bool findMapped(const std::string& proc, Found found) {
  std::ifstream maps(proc + "/maps");
  std::string line, last;
  while (std::getline(maps, line)) {
    // START-END PERMS OFFSET DEV INODE PATH: the mapping's own link names the file.
    const size_t slash = line.find('/'), dash = line.find('-'), space = line.find(' ');
    if (slash == std::string::npos || dash == std::string::npos || space == std::string::npos || dash > space) continue;
    std::string file = line.substr(slash);
    if (file == last) continue;
    last = file;
    if (found(proc + "/map_files/" + line.substr(0, space), file)) return true;
  }
  return false;
}
}  // namespace

std::string probeObjectOf(int pid, std::string* shown) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string exe = readlinkStr(proc + "/exe");
  *shown = exe;
  if (!exe.empty() && hasJitprovProbes(proc + "/exe")) return proc + "/exe";
  std::string object;
  if (findMapped(proc, [&](const std::string& mapped, const std::string& file) {
        if (file == exe || !hasJitprovProbes(mapped)) return false;
        *shown = file;
        object = mapped;
        return true;
      }))
    return object;
  return exe.empty() ? std::string() : proc + "/exe";  // attaching then says which probe is missing
}

bool mapsFile(int pid, const std::string& path) {
  struct stat want {};
  if (stat(path.c_str(), &want) != 0) return true;
  const std::string proc = "/proc/" + std::to_string(pid);
  const auto same = [&want](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
  };
  return same(proc + "/exe") ||
         findMapped(proc, [&](const std::string& mapped, const std::string&) { return same(mapped); });
}

int tgidOf(int tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Tgid:", 0) == 0) return std::atoi(line.c_str() + 5);
  return 0;
}

}  // namespace jitprov::lw
