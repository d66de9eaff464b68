/* SPDX-License-Identifier: MIT */
// `jitprov ps`: the processes running a runtime jitprov supports, read from /proc alone
// (nothing is asked of the processes): their runtime and version, and whether jitprov is
// loaded in them.
#pragma once

#include "target.h"

#include <string>
#include <vector>

namespace jitprov::cli {

struct PsRow {
  TargetInfo info;
  std::string version;  // "" unknown
  std::string command;  // its command line, read while it was known to be this process
};

// Every process of /proc running HotSpot or CoreCLR that we may inspect, by pid.
std::vector<PsRow> listRuntimes();

// CoreCLR's version from the directory libcoreclr.so is in (".../Microsoft.NETCore.App/
// 10.0.12/libcoreclr.so" -> "10.0.12"); "" when that directory's name is no version.
// Pure: unit-testable.
std::string coreclrVersionFromPath(const std::string& lib);

// `jitprov ps [--json]`: prints the rows; exit status 0.
int ps(bool json);

}  // namespace jitprov::cli
