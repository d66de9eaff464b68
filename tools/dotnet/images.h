// SPDX-License-Identifier: MIT
// The mapped images (*.dll, *.exe) of a .NET process, from its /proc/PID/maps:
// precompiled (ReadyToRun) code lies in them, JIT'd code never does (CoreCLR's code
// heaps are anonymous memory or its double mapping). An image replaced or removed on
// disk since it was mapped (an app redeployed under it) keeps its code: the kernel's
// " (deleted)" is not part of its name.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "proc_path.h"

namespace jitprov::dotnet {

class ImageRanges {
 public:
  // The current process's images.
  static ImageRanges ofSelf() {
    ImageRanges r;
    FILE* f = std::fopen("/proc/self/maps", "re");
    if (f == nullptr) return r;
    char line[4096];
    while (std::fgets(line, sizeof line, f) != nullptr) r.addMapsLine(line);
    std::fclose(f);
    r.sort();
    return r;
  }

  // One line of /proc/PID/maps; sort() once they are all added.
  void addMapsLine(const char* line) {
    unsigned long long lo = 0, hi = 0;
    int path = 0;
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &path) < 2 || path == 0) return;
    std::string p = line + path;
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    tools::stripDeleted(p);
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const bool image =
        p.size() > 4 && (p.compare(p.size() - 4, 4, ".dll") == 0 || p.compare(p.size() - 4, 4, ".exe") == 0);
    if (image) ranges_.emplace_back(lo, hi);
  }
  void sort() { std::sort(ranges_.begin(), ranges_.end()); }

  bool contains(uint64_t a) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(a, ~uint64_t(0)));
    return it != ranges_.begin() && a < std::prev(it)->second;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

}  // namespace jitprov::dotnet
