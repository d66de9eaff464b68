// SPDX-License-Identifier: MIT
// `jitprov report DIR [--json] [--top N] [--plots DIR2 | --no-plots]` (report.h; docs/spec.md, "jitprov report"):
//  1. DIR checked (a directory; a trace in DIR/trace, or DIR itself a trace);
//  2. `jitprov-verify --json --top N TRACE`: its verdict, and per process the code the
//     trace shows (inventory.h: bodies and bytes by module and tier, by namespace, the
//     largest methods and the most recompiled) and the rundowns;
//  3. beside the trace, what `jitprov record` left: summary.json (the command, its
//     runtime and status), lockwait.json (--lockwait: lock waits with their blame),
//     perf.json (--perf: the hottest JIT methods perf named);
//  4. the plots (plots.h: gnuplot, each PNG beside its CSV) into --plots or DIR/report,
//     unless --no-plots; without gnuplot one line says so and the rest is reported;
//  5. one JSON document (--json) or the text, naming the files written.
#include "report.h"

#include "plots.h"
#include "run.h"
#include "json_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace jitprov::cli {
namespace {

int fail(int status, const std::string& line) {
  std::fprintf(stderr, "jitprov report: %s\n", line.c_str());
  return status;
}

// A JSON file record wrote: the object, null when there is none, or *bad says why not.
nlohmann::json readJson(const std::string& path, std::string* bad, bool last_line = false) {
  std::ifstream in(path);
  if (!in) {
    if (errno != ENOENT) *bad = path + ": " + std::strerror(errno);
    return nullptr;
  }
  try {
    if (!last_line) return nlohmann::json::parse(in);
    // jitprov-lockwait --json: one object per line, the final report last.
    std::string line, last;
    while (std::getline(in, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return nlohmann::json::parse(last);
  } catch (const std::exception& e) {
    *bad = path + ": not JSON (" + e.what() + ")";
    return nullptr;
  }
}

uint64_t num(const nlohmann::json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<uint64_t>() : 0;
}

std::string bytes(uint64_t b) {
  char s[64];
  if (b >= 10 * 1024 * 1024)
    std::snprintf(s, sizeof s, "%.0f MiB", double(b) / (1024 * 1024));
  else if (b >= 1024 * 1024)
    std::snprintf(s, sizeof s, "%.1f MiB", double(b) / (1024 * 1024));
  else if (b >= 10 * 1024)
    std::snprintf(s, sizeof s, "%.0f KiB", double(b) / 1024);
  else if (b >= 1024)
    std::snprintf(s, sizeof s, "%.1f KiB", double(b) / 1024);
  else
    std::snprintf(s, sizeof s, "%llu B", (unsigned long long)b);
  return s;
}

std::string us(uint64_t ns) {
  char s[64];
  std::snprintf(s, sizeof s, "%.1f us", double(ns) / 1e3);
  return s;
}

// The runtime's own code among the methods, by the module jitprov's agents register it
// in (docs/jvm-agent.md, docs/node.md): a stub or a builtin is not a method of the
// program, and a list of methods says so.
const char* runtimeCodeKind(const nlohmann::json& m) {
  const std::string module = m.value("module", std::string());
  if (module == "hotspot-stubs") return " (a HotSpot stub)";
  if (module == "v8-builtins") return " (a V8 builtin)";
  if (module == "v8-regexp") return " (V8 regexp code)";
  if (module == "v8-other") return " (V8 code of no function)";
  return "";
}

// A method as one line's tail: Namespace.name(signature), cut to a terminal's width.
std::string methodName(const nlohmann::json& m) {
  std::string ns = m.value("namespace", std::string()), name = m.value("name", std::string());
  std::string s = ns.empty() ? name : ns + "." + name;
  const std::string sig = m.value("signature", std::string());
  if (!sig.empty()) s += " " + sig;
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  s += runtimeCodeKind(m);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return s;
}

std::string tierList(const nlohmann::json& tiers, bool with_bytes) {
  std::string s;
  for (const auto& [t, v] : tiers.items()) {
    s += (s.empty() ? "" : ", ") + t + " ";
    if (v.is_object()) {
      s += std::to_string(num(v, "bodies"));
      if (with_bytes) s += " (" + bytes(num(v, "bytes")) + ")";
    } else {
      s += std::to_string(v.get<uint64_t>());
    }
  }
  return s;
}

// The report's document, from the verifier's and record's files.
nlohmann::json build(const std::string& dir, const std::string& trace, const nlohmann::json& v,
                     const nlohmann::json& summary, const nlohmann::json& lockwait, const nlohmann::json& perf) {
  nlohmann::json r = {{"dir", dir}, {"trace", trace}};
  if (summary.is_object()) {
    r["record"] = {{"command_line", summary.value("command_line", std::string())},
                   {"runtime", summary.value("runtime", std::string())},
                   {"seconds", summary.value("seconds", 0.0)},
                   {"exit_status", summary.value("exit_status", -1)},
                   {"exit_reason", summary.value("exit_reason", std::string())}};
    if (summary.contains("pid")) r["record"]["pid"] = summary["pid"];
  } else {
    r["record"] = nullptr;
  }
  uint64_t lost_events = 0, lost_packets = 0;
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& s : v.value("sessions", nlohmann::json::array())) {
    lost_events += num(s, "discarded_events");
    lost_packets += num(s, "discarded_packets");
    for (const auto& p : s.value("processes", nlohmann::json::array())) {
      nlohmann::json rs = nlohmann::json::array();
      for (const auto& d : p.value("rundowns", nlohmann::json::array())) {
        const int64_t dur = d.contains("rundown_end") ? d["rundown_end"].value("duration_ns", int64_t{0})
                                                      : d.value("end_ns", int64_t{0}) - d.value("begin_ns", int64_t{0});
        rs.push_back({{"rundown_id", num(d, "rundown_id")},
                      {"mode", d.value("mode", std::string())},
                      {"trigger", d.value("trigger", std::string())},
                      {"begin_ns", d.value("begin_ns", int64_t{0})},
                      {"duration_ns", dur},
                      {"method_records", num(d, "method_records")},
                      {"module_records", num(d, "module_records")},
                      {"cut_short", d.value("cut_short", false)}});
      }
      procs.push_back({{"vpid", p.value("vpid", int64_t{0})},
                       {"label", p.value("label", "process " + std::to_string(p.value("vpid", int64_t{0})))},
                       {"runtime_instance", p.value("runtime_instance", 0)},
                       {"code", p.value("code", nlohmann::json::object())},
                       {"rundowns", rs}});
    }
  }
  r["processes"] = procs;
  r["events_lost"] = lost_events;
  r["packets_lost"] = lost_packets;
  r["verdict"] = v.value("verdict", std::string());
  r["verify_exit"] = v.value("exit", -1);
  r["not_checked"] = v.value("not_checked", nlohmann::json::array());
  r["lock_waits"] = lockwait.is_object() ? lockwaitFigures(lockwait) : nlohmann::json();
  r["perf"] = perf;
  return r;
}

void printText(const nlohmann::json& r, size_t top) {
  std::printf("jitprov report: %s\n", r["dir"].get<std::string>().c_str());
  if (r["record"].is_object()) {
    const auto& c = r["record"];
    std::printf("  recorded:    %s (%s, %s s, exit %d)\n", c["command_line"].get<std::string>().c_str(),
                c["runtime"].get<std::string>().c_str(), fmtSeconds(c["seconds"].get<double>()).c_str(),
                c["exit_status"].get<int>());
  }
  std::printf("  trace:       %s\n", r["trace"].get<std::string>().c_str());
  std::printf("  verdict:     %s (jitprov-verify exit %d)\n", r["verdict"].get<std::string>().c_str(),
              r["verify_exit"].get<int>());
  std::printf("  events lost: %llu%s\n", (unsigned long long)r["events_lost"].get<uint64_t>(),
              r["packets_lost"].get<uint64_t>() != 0
                  ? (", packets lost: " + std::to_string(r["packets_lost"].get<uint64_t>())).c_str()
                  : "");
  for (const auto& p : r["processes"]) {
    const auto& c = p["code"];
    const uint32_t inst = p["runtime_instance"].get<uint32_t>();
    std::printf("\n%s%s: %llu code bodies, %s of code, %llu methods\n", p["label"].get<std::string>().c_str(),
                inst > 1 ? (" runtime " + std::to_string(inst)).c_str() : "", (unsigned long long)num(c, "bodies"),
                bytes(num(c, "bytes")).c_str(), (unsigned long long)num(c, "methods"));
    if (c.contains("by_tier")) std::printf("  by tier:     %s\n", tierList(c["by_tier"], true).c_str());
    if (c.contains("modules")) {
      std::printf("  by module:\n");
      size_t n = 0;
      for (const auto& m : c["modules"]) {
        if (n++ == top) {
          std::printf("    ... %zu modules in all (--json lists them)\n", c["modules"].size());
          break;
        }
        std::string path = m["path"].get<std::string>();
        if (path.empty()) path = "module " + std::to_string(num(m, "module_id"));
        std::printf("    %9s %7llu %-6s  %s (%s)\n", bytes(num(m, "bytes")).c_str(),
                    (unsigned long long)num(m, "bodies"), num(m, "bodies") == 1 ? "body" : "bodies", path.c_str(),
                    tierList(m["by_tier"], false).c_str());
      }
    }
    if (c.contains("namespaces") && !c["namespaces"].empty()) {
      std::printf("  namespaces with the most code:\n");
      for (const auto& n : c["namespaces"])
        std::printf("    %9s %7llu %-6s  %s\n", bytes(num(n, "bytes")).c_str(), (unsigned long long)num(n, "bodies"),
                    num(n, "bodies") == 1 ? "body" : "bodies",
                    n["namespace"].get<std::string>().empty() ? "(none)" : n["namespace"].get<std::string>().c_str());
    }
    if (c.contains("largest") && !c["largest"].empty()) {
      std::printf("  largest methods (their largest body):\n");
      for (const auto& m : c["largest"])
        std::printf("    %9s  %s\n", bytes(num(m, "largest_bytes")).c_str(), methodName(m).c_str());
    }
    // Recompiled: methods with more than one body (the verifier lists the top N by
    // bodies, one-body methods too when fewer have more).
    if (c.contains("most_bodies") && !c["most_bodies"].empty() && num(c["most_bodies"][0], "bodies") > 1) {
      std::printf("  most recompiled (bodies per method):\n");
      for (const auto& m : c["most_bodies"]) {
        if (num(m, "bodies") < 2) break;
        std::printf("    %3llu bodies (%s)  %s\n", (unsigned long long)num(m, "bodies"),
                    tierList(m["tiers"], false).c_str(), methodName(m).c_str());
      }
    }
    std::printf("  rundowns:    %zu\n", p["rundowns"].size());
    for (const auto& d : p["rundowns"])
      std::printf("    %-8s %-9s %10s  %llu method records, %llu modules%s\n", d["trigger"].get<std::string>().c_str(),
                  d["mode"].get<std::string>().c_str(), fmtMs(double(d["duration_ns"].get<int64_t>())).c_str(),
                  (unsigned long long)num(d, "method_records"), (unsigned long long)num(d, "module_records"),
                  d["cut_short"].get<bool>() ? " (cut short)" : "");
  }
  if (r["lock_waits"].is_object()) {
    const auto& l = r["lock_waits"];
    std::printf("\nlock waits (jitprov-lockwait): %s\n", lockwaitLine(l).c_str());
    for (const auto& s : l["sites"]) {
      std::string by;
      for (const auto& [holder, b] : s["blocked_by"].items())
        by += (by.empty() ? "" : ", ") + holder + " " + std::to_string(num(b, "count")) + " (" +
              fmtMs(double(num(b, "total_ns"))) + ", max " + us(num(b, "max_ns")) + ")";
      std::printf("  %-16s %8llu acquisitions, %6llu waited, %s in all, max %s%s%s\n",
                  s["site"].get<std::string>().c_str(), (unsigned long long)num(s, "acquisitions"),
                  (unsigned long long)num(s, "contended"), fmtMs(double(num(s, "wait_total_ns"))).c_str(),
                  us(num(s, "max_wait_ns")).c_str(), by.empty() ? "" : "; behind: ", by.c_str());
    }
  }
  if (r["perf"].is_object()) {
    const auto& f = r["perf"];
    std::printf("\nhottest JIT methods (perf, %llu samples, %llu in JIT code; perf report -i %s):\n",
                (unsigned long long)num(f, "samples"), (unsigned long long)num(f, "jit_samples"),
                f.value("perf_data", std::string()).c_str());
    for (const auto& m : f.value("hottest", nlohmann::json::array()))
      std::printf("  %6.2f %% %7llu  %s\n", m.value("percent", 0.0), (unsigned long long)num(m, "samples"),
                  m.value("name", std::string()).c_str());
  }
  if (!r["not_checked"].empty()) std::printf("\nnot checked: %s\n", r["not_checked"][0].get<std::string>().c_str());
  const auto& pl = r["plots"];
  if (pl.is_object() && pl.contains("none")) {
    std::printf("\nplots: none written: %s\n", pl["none"].get<std::string>().c_str());
  } else if (pl.is_object()) {
    std::printf("\nplots (gnuplot; each from the CSV and the .gp script beside it) in %s:\n",
                pl["dir"].get<std::string>().c_str());
    for (const auto& f : pl["files"]) {
      const std::string png = f["png"].get<std::string>();
      std::printf("  %-14s %s\n", png.substr(png.rfind('/') + 1).c_str(), f["what"].get<std::string>().c_str());
    }
    for (const auto& f : pl.value("failed", nlohmann::json::array()))
      std::printf("  NOT WRITTEN: %s\n", f.get<std::string>().c_str());
    if (pl.contains("waits_error"))
      std::printf("  lock waits not plotted: %s\n", pl["waits_error"].get<std::string>().c_str());
    if (pl.contains("note")) std::printf("  note: %s\n", pl["note"].get<std::string>().c_str());
  }
}

}  // namespace

nlohmann::json lockwaitFigures(const nlohmann::json& lw) {
  nlohmann::json sites = nlohmann::json::array();
  uint64_t acquisitions = 0, contended = 0, total = 0, max = 0;
  // (.items() of a temporary would dangle)
  const nlohmann::json all = lw.value("sites", nlohmann::json::object());
  for (const auto& [name, s] : all.items()) {
    uint64_t a = 0, t = 0, m = 0, c = 0;
    for (const char* part : {"outside", "rundown"}) {
      if (!s.contains(part)) continue;
      const auto& w = s[part]["wait"];
      a += num(w, "count"), t += num(w, "total_ns"), m = std::max(m, num(w, "max_ns"));
    }
    nlohmann::json by = s.value("blocked_by", nlohmann::json::object());
    for (const auto& [holder, b] : by.items()) c += num(b, "count");
    if (a == 0) continue;
    sites.push_back({{"site", name},
                     {"acquisitions", a},
                     {"contended", c},
                     {"wait_total_ns", t},
                     {"max_wait_ns", m},
                     {"blocked_by", by}});
    acquisitions += a, contended += c, total += t, max = std::max(max, m);
  }
  uint64_t lost = 0;
  const nlohmann::json drops = lw.value("drops", nlohmann::json::object());
  for (const auto& [k, n] : drops.items()) lost += n.get<uint64_t>();
  return {{"acquisitions", acquisitions},
          {"contended", contended},
          {"wait_total_ns", total},
          {"max_wait_ns", max},
          {"jit_blocked_by_rundown", lw.value("jit_blocked_by_rundown", nlohmann::json::object())},
          {"lost", lost},
          {"seconds", lw.value("seconds", 0.0)},
          {"sites", sites}};
}

std::string lockwaitLine(const nlohmann::json& f) {
  const auto& b = f["jit_blocked_by_rundown"];
  return std::to_string(num(f, "acquisitions")) + " lock acquisitions, " + std::to_string(num(f, "contended")) +
         " waited (" + fmtMs(double(num(f, "wait_total_ns"))) + " in all, max " + us(num(f, "max_wait_ns")) +
         "); JIT blocked by rundowns: " + std::to_string(num(b, "count")) + " waits, " +
         fmtMs(double(num(b, "total_ns"))) + "; lost " + std::to_string(num(f, "lost"));
}

int report(const ReportArgs& a) {
  struct stat st {};
  if (stat(a.dir.c_str(), &st) != 0) return fail(kReportNotDir, a.dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(kReportNotDir, a.dir + ": not a directory");
  // A directory that cannot be listed is not "no trace" (root passes this; others may not).
  if (access(a.dir.c_str(), R_OK | X_OK) != 0) return fail(kReportUnreadable, a.dir + ": " + std::strerror(errno));
  std::string trace = a.dir + "/trace";
  // A recording in which no process loaded the agent: its summary says so (its trace may
  // hold the metadata of the session's channels, and no event).
  std::string recorded_bad;
  const nlohmann::json recorded = readJson(a.dir + "/summary.json", &recorded_bad);
  const std::string verdict = recorded.is_object() && recorded.contains("verdict") && recorded["verdict"].is_string()
                                  ? recorded["verdict"].get<std::string>()
                                  : std::string();
  const bool in_trace = hasTrace(trace), no_trace = !in_trace && !hasTrace(a.dir);
  if (verdict.starts_with("nothing recorded"))
    return fail(kReportNoTrace, "no trace in " + a.dir + ": `jitprov record` recorded nothing there (" + verdict + ")");
  // A recording that had a trace, since removed or moved: its summary's verdict is not this
  // directory's any more.
  if (no_trace && !verdict.empty())
    return fail(kReportNoTrace, "no trace in " + a.dir + " (" + trace +
                                    " has no CTF metadata), though its summary.json says the recording was: " +
                                    verdict + "; removed or moved since?");
  if (no_trace)
    return fail(kReportNoTrace, "no trace in " + a.dir +
                                    " (no CTF metadata file in it or in its trace/: record one with `jitprov "
                                    "record -o DIR -- CMD`)");
  if (!in_trace) trace = a.dir;
  const std::string verifier = verifierPath();
  int err = 0;
  if (findCommand(verifier, &err).empty())
    return fail(kReportNoVerifier,
                verifier + " not found (JITPROV_VERIFY, beside jitprov in a build tree, installed, or in PATH)");
  // The verifier's JSON into a file of our own (its stderr apart): DIR may be read-only.
  // Unlinked at once and reached through our descriptor: nothing is left in /tmp when
  // jitprov report is interrupted (the verifier, told by PR_SET_PDEATHSIG, stops too).
  char tmp[] = "/tmp/jitprov-report.XXXXXX";
  const int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) return fail(kReportError, std::string("a temporary file in /tmp: ") + std::strerror(errno));
  unlink(tmp);
  const std::string out = "/proc/self/fd/" + std::to_string(fd);
  Progress progress("jitprov report: reading " + trace);
  const Ran ran = run({verifier, "--json", "--top", std::to_string(a.top), trace}, out);
  progress.stop();
  std::string bad;
  const nlohmann::json v = readJson(out, &bad);
  close(fd);
  if (ran.status == 2)  // jitprov-verify: usage or unreadable input
    return fail(kReportUnreadable, "cannot read the trace " + trace + ": " + firstLine(ran.output));
  if (ran.status < 0 || !v.is_object())
    return fail(kReportNoVerifier, verifier + " gave no report (exit " + std::to_string(ran.status) +
                                       "): " + firstLine(bad.empty() ? ran.output : bad));
  // What record left beside the trace, when it did.
  // One that cannot be read (jitprov-lockwait killed in its report, a file cut short)
  // costs its part of the report, said on stderr and in the JSON, not the report.
  const bool beside = trace != a.dir;
  std::string bad_files[3];
  const nlohmann::json summary = beside ? recorded : nlohmann::json();  // read above
  if (beside) bad_files[0] = recorded_bad;
  const nlohmann::json lockwait = beside ? readJson(a.dir + "/lockwait.json", &bad_files[1], true) : nlohmann::json();
  const nlohmann::json perf = beside ? readJson(a.dir + "/perf.json", &bad_files[2]) : nlohmann::json();
  nlohmann::json unreadable = nlohmann::json::array();
  for (const std::string& b : bad_files)
    if (!b.empty()) {
      std::fprintf(stderr, "jitprov report: %s: left out of the report\n", b.c_str());
      unreadable.push_back(b);
    }
  nlohmann::json r = build(a.dir, trace, v, summary, lockwait, perf);
  r["unreadable"] = unreadable;
  // The plots (plots.h): into --plots, else DIR/report; none with --no-plots.
  if (a.no_plots) {
    r["plots"] = nullptr;
  } else {
    PlotInputs in;
    in.report = &r;
    in.trace = trace;
    struct stat ws {};
    const std::string waits = a.dir + "/lockwait-waits.csv";
    if (beside && stat(waits.c_str(), &ws) == 0) in.waits_csv = waits;
    in.out_dir = a.plots.empty() ? a.dir + "/report" : a.plots;
    r["plots"] = writePlots(in);
    // Plots asked for by --plots DIR2 that could not be written there: the report is
    // printed, and the exit says so (the default directory's plots stay optional).
    if (!a.plots.empty() && r["plots"].contains("none") &&
        r["plots"]["none"].get<std::string>().rfind(a.plots + ": ", 0) == 0) {
      if (a.json)
        std::printf("%s\n", jitprov::tools::jsonText(r, 1).c_str());
      else
        printText(r, size_t(a.top));
      std::fflush(stdout);
      return fail(kReportError, "--plots " + r["plots"]["none"].get<std::string>());
    }
  }
  if (a.json)
    std::printf("%s\n", jitprov::tools::jsonText(r, 1).c_str());
  else
    printText(r, size_t(a.top));
  return kReportOk;
}

}  // namespace jitprov::cli
