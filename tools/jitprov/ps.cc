// SPDX-License-Identifier: MIT
#include "ps.h"

#include "attach_io.h"
#include "hotspot_attach.h"
#include "json_text.h"

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace jitprov::cli {

std::string coreclrVersionFromPath(const std::string& lib) {
  const size_t slash = lib.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  const size_t prev = lib.rfind('/', slash - 1);
  const std::string dir = lib.substr(prev == std::string::npos ? 0 : prev + 1, slash - (prev + 1));
  if (dir.empty() || !std::isdigit(static_cast<unsigned char>(dir[0]))) return {};
  for (char c : dir)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-' &&
        !std::isalpha(static_cast<unsigned char>(c)))
      return {};
  return dir;
}

namespace {
std::string cmdline(pid_t pid);

// Whether the process a pidfd refers to has exited (its pidfd readable); false without a
// pidfd (a kernel without pidfd_open: the pid's reuse in between is not seen there).
bool exited(const TargetInfo& t) {
  if (!t.pidfd) return false;
  pollfd p{*t.pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}
}  // namespace

std::vector<PsRow> listRuntimes() {
  std::vector<PsRow> rows;
  DIR* d = opendir("/proc");
  if (d == nullptr) return rows;
  std::vector<pid_t> pids;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long p = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && p > 0 && p != getpid()) pids.push_back(pid_t(p));
  }
  closedir(d);
  std::sort(pids.begin(), pids.end());
  for (pid_t p : pids) {
    PsRow row;
    const AttachOutcome o = findTarget(p, &row.info);
    if (o.status == kAttached) {
      row.version = row.info.target.runtime == Runtime::kHotSpot ? hotspotVersion(row.info)
                    : row.info.target.runtime == Runtime::kNode  ? nodeVersion(row.info)
                                                                 : coreclrVersionFromPath(row.info.target.runtime_lib);
      // The command line read now, then the process known to be the same one still (its
      // pidfd, taken before /proc was read): an exit in between, or another process that
      // took its pid, would give a row a command line that is not its own.
      row.command = cmdline(p);
      if (exited(row.info)) continue;
      rows.push_back(std::move(row));
    }
    // kPermission (another user's process, without CAP_SYS_PTRACE): not listed, and
    // counted in the footer; the others (gone, no runtime) are no rows.
  }
  return rows;
}

namespace {

const char* runtimeName(Runtime r) {
  return r == Runtime::kHotSpot   ? "HotSpot"
         : r == Runtime::kCoreClr ? "CoreCLR"
         : r == Runtime::kNode    ? "Node.js"
                                  : "?";
}

std::string cmdline(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), "rb");
  if (f == nullptr) return {};
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && s.size() < 65536) s.append(buf, n);
  std::fclose(f);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

// Processes of other users that /proc would not show us the maps of.
size_t othersHidden() {
  if (geteuid() == 0 || havePtraceCapability()) return 0;
  size_t n = 0;
  DIR* d = opendir("/proc");
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long p = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || p <= 0) continue;
    TargetInfo t;
    if (findTarget(pid_t(p), &t).status == kPermission) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

int ps(bool json) {
  const std::vector<PsRow> rows = listRuntimes();
  const size_t hidden = othersHidden();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const PsRow& r : rows)
      out.push_back({{"pid", r.info.target.pid},
                     {"nspid", r.info.target.nspid},
                     {"uid", r.info.target.euid},
                     {"runtime", runtimeName(r.info.target.runtime)},
                     {"version", r.version},
                     {"jitprov", r.info.target.jitprov_loaded},
                     {"command", r.command}});
    std::printf(
        "%s\n",
        jitprov::tools::jsonText(nlohmann::json{{"processes", out}, {"not_inspected_other_users", hidden}}, 2).c_str());
    return 0;
  }
  std::printf("%7s %6s  %-8s %-12s %-8s %s\n", "PID", "UID", "RUNTIME", "VERSION", "JITPROV", "COMMAND");
  for (const PsRow& r : rows) {
    // Another user's process sets its own command line (a title, argv): its control
    // characters shown as '?', never passed to the terminal (an ESC sequence, a newline
    // that would make a row of its own). --json escapes them.
    const std::string cmd = printable(r.command, r.command.size() > 100 ? 97 : 100);
    std::printf("%7d %6u  %-8s %-12s %-8s %s\n", int(r.info.target.pid), unsigned(r.info.target.euid),
                runtimeName(r.info.target.runtime), r.version.empty() ? "?" : r.version.c_str(),
                r.info.target.jitprov_loaded ? "loaded" : "-", cmd.c_str());
  }
  std::fflush(stdout);
  if (hidden > 0)
    std::fprintf(stderr,
                 "jitprov ps: %zu processes of other users could not be inspected (run as root, or with "
                 "CAP_SYS_PTRACE)\n",
                 hidden);
  return 0;
}

}  // namespace jitprov::cli
