// SPDX-License-Identifier: MIT
// jitprov-clr-attach PID [--agent PATH] [--options OPTS] [--timeout MS]: attachCoreClr()
// alone, the target read from /proc as the `jitprov` command will (a temporary harness:
// tools/jitprov-clr-driver/meson.build). Prints the outcome's line and exits with its
// status (tools/jitprov/attach.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "clr_attach.h"
#include "cli.h"

namespace {

// Uid:/Gid: second fields and NSpid's last, from /proc/PID/status.
bool readTarget(pid_t pid, jitprov::cli::Target* t) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  if (!f) return false;
  t->pid = pid;
  t->nspid = pid;
  t->root = "/proc/" + std::to_string(pid) + "/root";
  for (std::string line; std::getline(f, line);) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    long a = 0, b = 0;
    if (key == "Uid:" && in >> a >> b) t->euid = uid_t(b);
    if (key == "Gid:" && in >> a >> b) t->egid = gid_t(b);
    if (key == "NSpid:")
      while (in >> a) t->nspid = pid_t(a);
  }
  t->runtime = jitprov::cli::Runtime::kCoreClr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jitprov-clr-attach: loads jitprov's .NET client into a running .NET process (test harness)"};
  int pid = 0;
  std::string agent, options;
  long timeout_ms = 10000;
  app.add_option("pid", pid, "the .NET process")->required()->check(CLI::PositiveNumber);
  app.add_option("--agent", agent, "the client library (absolute path in the target's view)")->required();
  app.add_option("--options", options, "the client's options (JITPROV_DOTNET's syntax)");
  app.add_option("--timeout", timeout_ms, "milliseconds to wait for the target (default 10000)")
      ->check(CLI::Range(1L, 3600000L));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : jitprov::cli::kUsage;
  }
  jitprov::cli::AttachRequest req;
  if (!readTarget(pid_t(pid), &req.target)) {
    std::fprintf(stderr, "jitprov-clr-attach: no process %d\n", pid);
    return jitprov::cli::kNoSuchProcess;
  }
  req.agent = agent;
  req.options = options;
  req.timeout = std::chrono::milliseconds(timeout_ms);
  const jitprov::cli::AttachOutcome out = jitprov::cli::attachCoreClr(req);
  std::fprintf(out.status == 0 ? stdout : stderr, "jitprov-clr-attach: %s\n", out.line.c_str());
  return out.status;
}
