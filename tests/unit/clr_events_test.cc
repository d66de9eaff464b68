// SPDX-License-Identifier: MIT
// The .NET client's decoding of CoreCLR's event payloads (tools/dotnet/clr_events.h),
// on payloads built here field by field as the runtime lays them out.
#include "clr_events.h"
#include "images.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace jitprov::dotnet {
namespace {

struct Payload {
  std::vector<uint8_t> bytes;
  template <typename T>
  Payload& num(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
    return *this;
  }
  Payload& wstr(const std::u16string& s) {
    for (char16_t c : s) num<uint16_t>(c);
    return num<uint16_t>(0);
  }
};

Payload methodLoad(bool v2) {
  Payload p;
  p.num<uint64_t>(0x7f0000001000).num<uint64_t>(0x7f0000002000).num<uint64_t>(0x7f1234560000);
  p.num<uint32_t>(0x1a2).num<uint32_t>(0x06000042).num<uint32_t>(0x8 | (4u << 7));
  p.wstr(u"JitWork.C1").wstr(u"M7").wstr(u"int64  (int64)").num<uint16_t>(9);
  if (v2) p.num<uint64_t>(3);
  return p;
}

TEST(ClrEvents, MethodLoadVersion2) {
  const Payload p = methodLoad(true);
  MethodEvent ev;
  ASSERT_TRUE(decodeMethod(p.bytes.data(), p.bytes.size(), 2, &ev));
  EXPECT_EQ(ev.method_id, 0x7f0000001000u);
  EXPECT_EQ(ev.module_id, 0x7f0000002000u);
  EXPECT_EQ(ev.start, 0x7f1234560000u);
  EXPECT_EQ(ev.size, 0x1a2u);
  EXPECT_EQ(ev.token, 0x06000042u);
  EXPECT_EQ((ev.flags >> 7) & 7, 4u);
  EXPECT_EQ(ev.name_space.utf8(), "JitWork.C1");
  EXPECT_EQ(ev.name.utf8(), "M7");
  EXPECT_EQ(ev.signature.utf8(), "int64  (int64)");
  EXPECT_EQ(ev.clr_instance, 9);
  EXPECT_TRUE(ev.has_native_version);
  EXPECT_EQ(ev.native_version, 3u);
}

TEST(ClrEvents, MethodLoadVersion1HasNoNativeVersion) {
  const Payload p = methodLoad(false);
  MethodEvent ev;
  ASSERT_TRUE(decodeMethod(p.bytes.data(), p.bytes.size(), 1, &ev));
  EXPECT_FALSE(ev.has_native_version);
  EXPECT_EQ(ev.name.utf8(), "M7");
  // Read as version 2, the missing last field is a short payload.
  EXPECT_FALSE(decodeMethod(p.bytes.data(), p.bytes.size(), 2, &ev));
  EXPECT_FALSE(decodeMethod(p.bytes.data(), p.bytes.size(), 0, &ev));
}

TEST(ClrEvents, EveryTruncationIsRefused) {
  const Payload p = methodLoad(true);
  for (size_t len = 0; len < p.bytes.size(); ++len) {
    std::vector<uint8_t> cut(p.bytes.begin(), p.bytes.begin() + len);  // exact size: ASan sees any overread
    MethodEvent ev;
    EXPECT_FALSE(decodeMethod(cut.data(), cut.size(), 2, &ev)) << "length " << len;
  }
}

TEST(ClrEvents, StringWithoutTerminatorIsRefused) {
  Payload p;
  p.num<uint64_t>(1).num<uint64_t>(2).num<uint64_t>(3).num<uint32_t>(4).num<uint32_t>(5).num<uint32_t>(8);
  for (char16_t c : std::u16string(u"NoEnd")) p.num<uint16_t>(c);
  p.bytes.push_back(0);  // odd byte: half a code unit
  MethodEvent ev;
  EXPECT_FALSE(decodeMethod(p.bytes.data(), p.bytes.size(), 1, &ev));
}

TEST(ClrEvents, Utf16ToUtf8) {
  const std::u16string s = u"a\u00e9\u4e2d\U0001F600";
  EXPECT_EQ(utf16ToUtf8(s.data(), s.size()), "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
  const char16_t lone_high[] = {u'x', 0xD83D, u'y'};
  EXPECT_EQ(utf16ToUtf8(lone_high, 3), "x\xef\xbf\xbdy");
  const char16_t lone_low[] = {0xDE00};
  EXPECT_EQ(utf16ToUtf8(lone_low, 1), "\xef\xbf\xbd");
  const char16_t high_at_end[] = {0xD83D};
  EXPECT_EQ(utf16ToUtf8(high_at_end, 1), "\xef\xbf\xbd");
  // Every unit at its longest (3 bytes: the most the conversion makes room for).
  const std::u16string widest(100, 0xFFFF);
  std::string want;
  for (int i = 0; i < 100; ++i) want += "\xef\xbf\xbf";
  EXPECT_EQ(utf16ToUtf8(widest.data(), widest.size()), want);
}

TEST(ClrEvents, Utf16leBytesToUtf8) {
  // The payload's strings are read from its bytes, at any alignment: the same UTF-8 as
  // from aligned code units, surrogate pairs and lone surrogates included.
  const std::u16string s = u"a\u00e9\u4e2d\U0001F600z";
  const char16_t lone[] = {u'x', 0xD83D, u'y', 0xDE00};
  for (const std::u16string& str : {s, std::u16string(lone, 4)}) {
    std::vector<uint8_t> bytes(1 + 2 * str.size());
    for (size_t i = 0; i < str.size(); ++i) {
      bytes[1 + 2 * i] = uint8_t(str[i] & 0xFF);
      bytes[2 + 2 * i] = uint8_t(str[i] >> 8);
    }
    EXPECT_EQ(utf16leToUtf8(bytes.data() + 1, str.size()), utf16ToUtf8(str.data(), str.size()));
  }
  EXPECT_EQ(utf16leToUtf8(nullptr, 0), "");
}

TEST(ClrEvents, ModuleUnload) {
  Payload p;
  p.num<uint64_t>(0x55).num<uint64_t>(0x66).num<uint32_t>(0x8).num<uint32_t>(0);
  p.wstr(u"/app/JitWork.dll").wstr(u"").num<uint16_t>(9);
  ModuleEvent ev;
  ASSERT_TRUE(decodeModule(p.bytes.data(), p.bytes.size(), 2, &ev));
  EXPECT_EQ(ev.module_id, 0x55u);
  EXPECT_EQ(ev.assembly_id, 0x66u);
  EXPECT_EQ(ev.il_path, "/app/JitWork.dll");
  EXPECT_EQ(ev.native_path, "");
  EXPECT_FALSE(decodeModule(p.bytes.data(), p.bytes.size() - 1, 2, &ev));
}

}  // namespace
}  // namespace jitprov::dotnet

namespace jitprov::dotnet {
namespace {

// The attach's catch-up skips precompiled code by the images it lies in: an image an app
// was redeployed over keeps its mapping, named with the kernel's " (deleted)".
TEST(ImageRanges, ImagesByNameAnImageReplacedOnDiskIncluded) {
  ImageRanges r;
  for (const char* line : {
           "7f1000000000-7f1000100000 r-xp 00000000 08:01 11 /opt/app/App.dll\n",
           "7f2000000000-7f2000200000 r-xp 00001000 08:01 12 /usr/share/dotnet/shared/Microsoft.NETCore.App/"
           "10.0.12/System.Private.CoreLib.dll (deleted)\n",
           "7f3000000000-7f3000001000 r-xp 00000000 08:01 13 /opt/app/TOOL.EXE\n",
           "7f4000000000-7f4000100000 r-xp 00000000 08:01 14 /usr/share/dotnet/shared/libcoreclr.so\n",
           "7f5000000000-7f5000100000 rwxp 00000000 00:00 0 \n",
           "7f6000000000-7f6000100000 r-xp 00000000 08:01 15 /opt/app/dll (deleted)\n",
       })
    r.addMapsLine(line);
  r.sort();
  EXPECT_TRUE(r.contains(0x7f1000000000));
  EXPECT_FALSE(r.contains(0x7f1000100000));  // the end is not in it
  EXPECT_TRUE(r.contains(0x7f2000123456)) << "an image replaced on disk";
  EXPECT_TRUE(r.contains(0x7f3000000fff));
  EXPECT_FALSE(r.contains(0x7f4000000010));  // a library
  EXPECT_FALSE(r.contains(0x7f5000000010));  // anonymous: JIT'd code
  EXPECT_FALSE(r.contains(0x7f6000000010));  // a file named "dll"
  EXPECT_FALSE(r.contains(0x1000));
}

}  // namespace
}  // namespace jitprov::dotnet
