// SPDX-License-Identifier: MIT
// jitprov-lockwait's USDT note parser (tools/lockwait/usdt_notes.h): the notes of a real
// ELF built in the tree (this test binary, which links the runtime and its probes), and
// malformed or truncated note buffers, which it must skip without reading outside them.
#include "usdt_notes.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace jitprov::lw {
namespace {

// The bytes of this executable's .note.stapsdt section.
std::vector<char> ownStapsdtNotes() {
  std::vector<char> out;
  if (elf_version(EV_CURRENT) == EV_NONE) return out;
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  if (elf != nullptr && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
      if (name == nullptr || std::strcmp(name, ".note.stapsdt") != 0) continue;
      if (Elf_Data* d = elf_getdata(scn, nullptr)) out.assign((char*)d->d_buf, (char*)d->d_buf + d->d_size);
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return out;
}

// Parses a copy of exactly `n` bytes on the heap, so that a sanitizer sees any overread.
ProbeArgs parseCopy(const char* p, size_t n) {
  std::unique_ptr<char[]> copy(new char[n == 0 ? 1 : n]);
  if (n != 0) std::memcpy(copy.get(), p, n);
  return parseStapsdtNotes(copy.get(), n, 8, "jitprov");
}

TEST(UsdtNotes, ARealElfBuiltInTheTree) {
  const ProbeArgs probes = jitprovProbes("/proc/self/exe");
  // docs/spec.md "USDT probes": their names and (at least) these arguments.
  const std::pair<const char*, int> want[] = {{"lock_wait_begin", 2}, {"lock_acquired", 3}, {"lock_released", 6},
                                              {"jit_begin", 2},       {"jit_end", 6},       {"rundown_begin", 3},
                                              {"rundown_end", 4}};
  for (const auto& [name, args] : want) {
    ASSERT_EQ(probes.count(name), 1u) << name;
    EXPECT_EQ(probes.at(name), args) << name;
  }
  const std::vector<char> notes = ownStapsdtNotes();
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(parseCopy(notes.data(), notes.size()), probes);
  EXPECT_TRUE(parseStapsdtNotes(notes.data(), notes.size(), 8, "other").empty());
  EXPECT_TRUE(parseStapsdtNotes(notes.data(), notes.size(), 5, "jitprov").empty());
  EXPECT_TRUE(parseStapsdtNotes(nullptr, 100, 8, "jitprov").empty());
  EXPECT_TRUE(jitprovProbes("/nonexistent").empty());
  EXPECT_TRUE(jitprovProbes("/proc/self/maps").empty());  // not ELF
}

// Cut anywhere: what it finds is among the whole section's probes, with no fewer
// arguments than there (a minimum over fewer sites).
TEST(UsdtNotes, TruncatedBuffers) {
  const std::vector<char> notes = ownStapsdtNotes();
  ASSERT_FALSE(notes.empty());
  const ProbeArgs whole = parseCopy(notes.data(), notes.size());
  for (size_t n = 0; n < notes.size(); ++n) {
    for (const auto& [name, args] : parseCopy(notes.data(), n)) {
      ASSERT_EQ(whole.count(name), 1u) << "cut at " << n << ": " << name;
      EXPECT_GE(args, whole.at(name));
    }
  }
}

TEST(UsdtNotes, MalformedBuffers) {
  const std::vector<char> notes = ownStapsdtNotes();
  ASSERT_GE(notes.size(), 12u);
  // Sizes in the first header past the end, or wrapping around.
  for (const uint32_t bad : {0xFFFFFFFFu, 0xFFFFFFFCu, uint32_t(notes.size()), 0x80000000u}) {
    for (int field = 0; field < 2; ++field) {
      std::vector<char> b = notes;
      std::memcpy(b.data() + 4 * field, &bad, 4);
      EXPECT_TRUE(parseCopy(b.data(), b.size()).empty()) << "field " << field << " = " << bad;
    }
  }
  // A stapsdt note whose strings have no NUL before the note ends.
  std::vector<char> b(12 + 8 + 24 + 12, 'x');
  const uint32_t h[3] = {8, 24 + 12, 3};
  std::memcpy(b.data(), h, sizeof h);
  std::memcpy(b.data() + 12, "stapsdt", 8);
  std::memcpy(b.data() + 44, "jitprov", 7);  // provider without its NUL, then nothing
  EXPECT_TRUE(parseCopy(b.data(), b.size()).empty());
  // Random damage anywhere: never a crash or an overread.
  std::mt19937 rng(23);
  for (int i = 0; i < 2000; ++i) {
    std::vector<char> d = notes;
    for (int k = 0; k < 4; ++k) d[rng() % d.size()] = char(rng());
    (void)parseCopy(d.data(), d.size() - rng() % 64 % d.size());
  }
}

}  // namespace
}  // namespace jitprov::lw
