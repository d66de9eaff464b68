/* SPDX-License-Identifier: MIT */
// Paths as /proc/PID/maps and /proc/PID/exe show them.
#pragma once

#include <string>
#include <string_view>

namespace jitprov::tools {

// The path without the kernel's " (deleted)": the file was replaced or removed on disk
// (a package upgraded, an app redeployed) since it was mapped; the mapping is still the
// old file's.
inline void stripDeleted(std::string& path) {
  static constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
    path.resize(path.size() - kDeleted.size());
}

}  // namespace jitprov::tools
