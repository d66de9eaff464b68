// SPDX-License-Identifier: MIT
// jitprov-verify TRACE_DIR: reads CTF traces through libbabeltrace2 and checks every
// rundown in them against docs/spec.md, per lttng session and per process: G2
// consistent, G3+ complete by the publication sequence, G4 once, rundown_end's counts
// (checker.h says how), and loss: discarded events anywhere in the trace.
// Traces are grouped by session (the directory above `ust/`); events are keyed by the
// process that emitted them (the `vpid` context, or the trace of a per-process buffer)
// and the runtime instance in it (runtime_instance: ids are per runtime): processes and
// runtimes are never merged; where processes cannot be told apart, exit 2.
// Exit: 0 every check ran and holds; 1 a guarantee is violated; 2 usage, unreadable
// input, or processes that cannot be told apart; 3 events lost (violations are still
// printed); 4 nothing violated, but something could not be checked (no rundown, no
// runtime events, a trace without the sequence fields): the report says what.
//
// The parts (tools/verify/): trace_files (finding traces, refusing hostile files),
// reader (the babeltrace2 graph), decode (events into events.h's structs), checker (the
// checks, no babeltrace2), report (text and JSON); this file parses the command line
// and wires them.
#include "cli.h"
#include "reader.h"
#include "report.h"
#include "session.h"
#include "trace_files.h"
#include "json_text.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using jitprov::verify::kExitUnreadable;
using jitprov::verify::Session;
using Sessions = std::map<std::string, Session>;

struct Options {
  std::string dir;
  bool json = false;
  int show = 5;
  int top = 0;  // --top N: the code the trace shows, its lists N long (0: not asked for)
  double timeout = 0;
  bool live = false;  // dir is a live URL (net://)
};

// The command line into *o; an exit status when it must stop (usage, --help).
std::optional<int> parseOptions(int argc, char** argv, Options* o) {
  CLI::App cli{
      "jitprov-verify: check the jitprov rundowns of CTF traces, per lttng session and per process (G2 "
      "consistent, G3+ complete by the publication sequence, G4 once, rundown_end counts, lost events)"};
  cli.footer(
      "Exit status: 0 every check ran and holds, 1 a guarantee is violated, 2 usage or unreadable input "
      "(or processes that cannot be told apart), 3 events lost, 4 nothing violated but something was not "
      "checked (the report says what).");
  cli.add_option("TRACE", o->dir,
                 "trace directory (an lttng session's output, or any directory above sessions), or a live "
                 "session on a relay daemon: net://RELAY[:PORT]/host/HOSTNAME/SESSION (followed from its start, "
                 "each rundown reported as it ends, until the session is destroyed)")
      ->required();
  cli.add_flag("--json", o->json, "the report as one JSON object");
  cli.add_option("--timeout", o->timeout,
                 "live: stop following after this many seconds and check what was received (0: until the "
                 "session is destroyed)")
      ->check(jitprov::tools::finiteIn(1e9));
  cli.add_option("--top", o->top,
                 "with --json: also each process's code (\"code\": bodies and bytes by module and tier, by "
                 "namespace, the N largest methods and the N with the most bodies), as `jitprov report` shows it")
      ->check(jitprov::tools::wholeIn(1, 1000000));
  cli.add_option("--show", o->show, "violations shown per check")->check(jitprov::tools::wholeIn(0, 1000000));
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-verify", argc, argv)) return rc;
  if (o->top > 0 && !o->json) {  // was: built and never shown
    std::fprintf(stderr, "jitprov-verify: --top is shown in the --json report: give --json too\n");
    return kExitUnreadable;
  }
  o->live = o->dir.rfind("net://", 0) == 0;
  if (!o->live && o->timeout != 0) {
    std::fprintf(stderr, "jitprov-verify: --timeout is for live sessions (net://...)\n");
    return kExitUnreadable;
  }
  return std::nullopt;
}

jitprov::verify::CheckerOptions checkerOptions(const Options& o) {
  return {o.live, uint64_t(o.show), o.json ? stderr : stdout};  // stdout carries the JSON report
}

Session& sessionFor(Sessions& sessions, const std::string& root, const Options& o) {
  Session& s = sessions.try_emplace(root, checkerOptions(o)).first->second;
  s.root = root;
  if (o.top > 0 && !s.inventory) {
    s.inventory = std::make_unique<jitprov::verify::Inventory>();
    s.inventory_top = size_t(o.top);
  }
  return s;
}

// The live session named by the URL; an exit status when it names none.
std::optional<int> liveSession(const Options& o, Sessions& sessions) {
  const std::string& dir = o.dir;
  // babeltrace2 checks the URL's form; a session name is required to follow one.
  if (dir.find("/host/") == std::string::npos || dir.back() == '/') {
    std::fprintf(stderr, "jitprov-verify: %s: a live URL names one session: net://RELAY[:PORT]/host/HOSTNAME/SESSION\n",
                 dir.c_str());
    return kExitUnreadable;
  }
  Session& s = sessionFor(sessions, dir, o);
  s.traces.push_back(dir);
  if (o.timeout > 0)
    s.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(o.timeout));
  return std::nullopt;
}

// The sessions of the traces below the directory, every file checked before any is read
// (a hostile one is refused at once); an exit status when they cannot be read.
std::optional<int> fileSessions(const Options& o, Sessions& sessions) {
  const std::string& dir = o.dir;
  struct stat sb;
  if (stat(dir.c_str(), &sb) != 0) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", dir.c_str(), std::strerror(errno));
    return kExitUnreadable;
  }
  if (!S_ISDIR(sb.st_mode)) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: not a directory\n", dir.c_str());
    return kExitUnreadable;
  }
  std::string unreadable;
  const std::vector<std::string> traces = jitprov::verify::findTraces(dir, &unreadable);
  if (!unreadable.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", dir.c_str(), unreadable.c_str());
    return kExitUnreadable;
  }
  if (traces.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: no CTF trace in it (no `metadata` file below it)\n",
                 dir.c_str());
    return kExitUnreadable;
  }
  for (const std::string& t : traces) {
    std::string bad = jitprov::verify::checkMetadata(t);
    if (bad.empty()) bad = jitprov::verify::checkStreamFiles(t);
    if (!bad.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", t.c_str(), bad.c_str());
      return kExitUnreadable;
    }
  }
  std::map<std::string, jitprov::verify::StreamPackets> packets;  // session root ->
  for (const std::string& t : traces) {
    const std::string root = jitprov::verify::sessionRoot(t);
    sessionFor(sessions, root, o).traces.push_back(t);
    jitprov::verify::packetSeqRanges(t, &packets[root]);
  }
  for (const auto& [root, streams] : packets)
    sessions.at(root).packets_before_first += jitprov::verify::packetsLacking(streams);
  return std::nullopt;
}

// Every session read and its events checked as they stream; then the records still
// pending, and the second reading for the mismatches' fields. An exit status on failure.
std::optional<int> readSessions(const Options& o, Sessions& sessions) {
  jitprov::verify::Reader reader;
  uint64_t jitprov_events = 0;
  for (auto& [root, s] : sessions) {
    if (const std::string why = reader.read(s); !why.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", root.c_str(), why.c_str());
      return kExitUnreadable;
    }
    if (s.unattributed > 0) {
      std::fprintf(stderr,
                   "jitprov-verify: read trace %s: %llu jitprov events carry no process id: cannot tell processes "
                   "apart (record the vpid context: lttng add-context -u -t vpid)\n",
                   root.c_str(), (unsigned long long)s.unattributed);
      return kExitUnreadable;
    }
    if (s.pidns_partial)
      std::fprintf(stderr,
                   "jitprov-verify: trace %s: the pid_ns context is on some channels of jitprov events only: processes "
                   "told apart by vpid alone (record it on every channel: lttng add-context -u -t pid_ns, without "
                   "-c)\n",
                   root.c_str());
    for (const auto& [pid, p] : s.checker.processes()) jitprov_events += p.events;
    if (s.live && s.checker.processes().empty() && !s.timed_out) {
      std::fprintf(stderr, "jitprov-verify: live session %s: %s\n", root.c_str(),
                   !s.connection_lost.empty() ? s.connection_lost.c_str()
                                              : "the relay daemon has no such session (follow it once `lttng "
                                                "create --live` has run), or it ended without jitprov events");
      return kExitUnreadable;
    }
  }
  if (jitprov_events == 0) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: no jitprov events in it\n", o.dir.c_str());
    return kExitUnreadable;
  }
  for (auto& [root, s] : sessions) {
    s.checker.finishReading();
    if (const std::string why = reader.explain(s); !why.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s again: %s\n", root.c_str(), why.c_str());
      return kExitUnreadable;
    }
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout: the write's error, said above
  Options o;
  if (auto rc = parseOptions(argc, argv, &o)) return *rc;
  Sessions sessions;
  if (auto rc = o.live ? liveSession(o, sessions) : fileSessions(o, sessions)) return *rc;
  if (auto rc = readSessions(o, sessions)) return *rc;
  const jitprov::verify::Report report = jitprov::verify::evaluate(o.dir, sessions, o.timeout);
  if (o.json)
    std::printf("%s\n", jitprov::tools::jsonText(jitprov::verify::toJson(report), 1).c_str());
  else
    jitprov::verify::printText(report);
  // A report that could not be written (a full disk under `> verify.json`, a closed
  // pipe) is no report: said, and never the verdict's exit 0.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "jitprov-verify: the report could not be written to stdout\n");
    return kExitUnreadable;
  }
  return report.exit;
}
