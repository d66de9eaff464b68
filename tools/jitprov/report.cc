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
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace jitprov::cli {
namespace {

int reportFail(int status, const std::string& line) {
  std::fprintf(stderr, "jitprov report: %s\n", line.c_str());
  return status;
}

// A JSON file record wrote: the object, null when there is none, or *bad says why not
// (a FIFO or a device in its place is not waited on: readRegular).
nlohmann::json readJson(const std::string& path, std::string* bad, bool last_line = false) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 && errno == ENOENT) return nullptr;
  std::string text;
  if (std::string why = readRegular(path, size_t(64) << 20, &text); !why.empty()) {
    *bad = why;
    return nullptr;
  }
  try {
    if (!last_line) return nlohmann::json::parse(text);
    // jitprov-lockwait --json: one object per line, the final report last.
    std::istringstream in(text);
    std::string line, last;
    while (std::getline(in, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return nlohmann::json::parse(last);
  } catch (const std::exception& e) {
    *bad = path + ": not JSON (" + e.what() + ")";
    return nullptr;
  }
}

// A file whose JSON holds a field of another type than the report reads (edited by hand,
// written by another version): named, and the file left out of the report.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "a string", "an array", "null".
std::string typeOf(const nlohmann::json& j) {
  const std::string t = j.type_name();
  return j.is_null() ? t : (std::string("aeiou").find(t[0]) != std::string::npos ? "an " : "a ") + t;
}

[[noreturn]] void badField(const nlohmann::json& j, const std::string& k, const char* want) {
  throw BadField("\"" + k + "\" is " + (j.contains(k) ? typeOf(j[k]) : "missing") + ", not " + want);
}

// Type-checked fields: a missing one is the default, one of another type a BadField.
std::string strField(const nlohmann::json& j, const char* k) {
  if (!j.contains(k) || j[k].is_null()) return {};
  if (!j[k].is_string()) badField(j, k, "a string");
  return j[k].get<std::string>();
}
double numField(const nlohmann::json& j, const char* k, double def) {
  if (!j.contains(k) || j[k].is_null()) return def;
  if (!j[k].is_number()) badField(j, k, "a number");
  return j[k].get<double>();
}
const nlohmann::json& objField(const nlohmann::json& j, const char* k) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.contains(k) || j[k].is_null()) return empty;
  if (!j[k].is_object()) badField(j, k, "an object");
  return j[k];
}
const nlohmann::json& arrField(const nlohmann::json& j, const char* k) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!j.contains(k) || j[k].is_null()) return empty;
  if (!j[k].is_array()) badField(j, k, "an array");
  return j[k];
}

// summary.json's figures for the report (record's own file: docs/spec.md).
nlohmann::json recordFigures(const nlohmann::json& s) {
  if (!s.is_object()) throw BadField(typeOf(s) + ", not an object");
  nlohmann::json r = {{"command_line", strField(s, "command_line")},
                      {"runtime", strField(s, "runtime")},
                      {"seconds", numField(s, "seconds", 0.0)},
                      {"exit_status", int(numField(s, "exit_status", -1))},
                      {"exit_reason", strField(s, "exit_reason")}};
  if (s.contains("pid")) {
    if (!s["pid"].is_number_integer()) badField(s, "pid", "an integer");
    r["pid"] = s["pid"];
  }
  return r;
}

// perf.json checked as the report and its plot read it; kept as it is.
const nlohmann::json& checkedPerf(const nlohmann::json& f) {
  if (!f.is_object()) throw BadField(typeOf(f) + ", not an object");
  numField(f, "samples", 0), numField(f, "jit_samples", 0), strField(f, "perf_data");
  for (const auto& m : arrField(f, "hottest")) {
    if (!m.is_object()) throw BadField("\"hottest\" holds " + typeOf(m) + ", not an object");
    numField(m, "percent", 0), numField(m, "samples", 0), strField(m, "name");
  }
  return f;
}

// A file's figures (f: one of the above), or null with *bad naming the field.
template <class F>
nlohmann::json figuresOf(const nlohmann::json& j, const std::string& path, std::string* bad, F f) {
  if (j.is_null()) return nullptr;
  try {
    return f(j);
  } catch (const std::exception& e) {
    *bad = path + ": unexpected content (" + e.what() + ")";
    return nullptr;
  }
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
      s += std::to_string(jsonCount(v, "bodies"));
      if (with_bytes) s += " (" + bytes(jsonCount(v, "bytes")) + ")";
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
  r["record"] = summary;  // recordFigures, or null
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& s : v.value("sessions", nlohmann::json::array())) {
    for (const auto& p : s.value("processes", nlohmann::json::array())) {
      nlohmann::json rs = nlohmann::json::array();
      for (const auto& d : p.value("rundowns", nlohmann::json::array()))
        rs.push_back({{"rundown_id", jsonCount(d, "rundown_id")},
                      {"mode", d.value("mode", std::string())},
                      {"trigger", d.value("trigger", std::string())},
                      {"begin_ns", d.value("begin_ns", int64_t{0})},
                      {"duration_ns", rundownDuration(d)},
                      {"method_records", jsonCount(d, "method_records")},
                      {"module_records", jsonCount(d, "module_records")},
                      {"cut_short", d.value("cut_short", false)}});
      procs.push_back({{"vpid", p.value("vpid", int64_t{0})},
                       {"label", p.value("label", "process " + std::to_string(p.value("vpid", int64_t{0})))},
                       {"runtime_instance", p.value("runtime_instance", 0)},
                       {"code", p.value("code", nlohmann::json::object())},
                       {"rundowns", rs}});
    }
  }
  r["processes"] = procs;
  r.update(lossFigures(v));
  r["verdict"] = v.value("verdict", std::string());
  r["verify_exit"] = v.value("exit", -1);
  r["not_checked"] = v.value("not_checked", nlohmann::json::array());
  r["lock_waits"] = lockwait;  // lockwaitFigures, or null
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
  std::printf("  events lost: %s\n", lossLine(r).c_str());
  for (const auto& p : r["processes"]) {
    const auto& c = p["code"];
    const uint32_t inst = p["runtime_instance"].get<uint32_t>();
    std::printf("\n%s%s: %llu code bodies, %s of code, %llu methods\n", p["label"].get<std::string>().c_str(),
                inst > 1 ? (" runtime " + std::to_string(inst)).c_str() : "",
                (unsigned long long)jsonCount(c, "bodies"), bytes(jsonCount(c, "bytes")).c_str(),
                (unsigned long long)jsonCount(c, "methods"));
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
        if (path.empty()) path = "module " + std::to_string(jsonCount(m, "module_id"));
        std::printf("    %9s %7llu %-6s  %s (%s)\n", bytes(jsonCount(m, "bytes")).c_str(),
                    (unsigned long long)jsonCount(m, "bodies"), jsonCount(m, "bodies") == 1 ? "body" : "bodies",
                    path.c_str(), tierList(m["by_tier"], false).c_str());
      }
    }
    if (c.contains("namespaces") && !c["namespaces"].empty()) {
      std::printf("  namespaces with the most code:\n");
      for (const auto& n : c["namespaces"])
        std::printf("    %9s %7llu %-6s  %s\n", bytes(jsonCount(n, "bytes")).c_str(),
                    (unsigned long long)jsonCount(n, "bodies"), jsonCount(n, "bodies") == 1 ? "body" : "bodies",
                    n["namespace"].get<std::string>().empty() ? "(none)" : n["namespace"].get<std::string>().c_str());
    }
    if (c.contains("largest") && !c["largest"].empty()) {
      std::printf("  largest methods (their largest body):\n");
      for (const auto& m : c["largest"])
        std::printf("    %9s  %s\n", bytes(jsonCount(m, "largest_bytes")).c_str(), methodName(m).c_str());
    }
    // Recompiled: methods with more than one body (the verifier lists the top N by
    // bodies, one-body methods too when fewer have more).
    if (c.contains("most_bodies") && !c["most_bodies"].empty() && jsonCount(c["most_bodies"][0], "bodies") > 1) {
      std::printf("  most recompiled (bodies per method):\n");
      for (const auto& m : c["most_bodies"]) {
        if (jsonCount(m, "bodies") < 2) break;
        std::printf("    %3llu bodies (%s)  %s\n", (unsigned long long)jsonCount(m, "bodies"),
                    tierList(m["tiers"], false).c_str(), methodName(m).c_str());
      }
    }
    std::printf("  rundowns:    %zu\n", p["rundowns"].size());
    for (const auto& d : p["rundowns"])
      std::printf("    %-8s %-9s %10s  %llu method records, %llu modules%s\n", d["trigger"].get<std::string>().c_str(),
                  d["mode"].get<std::string>().c_str(), durationText(d["duration_ns"]).c_str(),
                  (unsigned long long)jsonCount(d, "method_records"),
                  (unsigned long long)jsonCount(d, "module_records"), d["cut_short"].get<bool>() ? " (cut short)" : "");
  }
  if (r["lock_waits"].is_object()) {
    const auto& l = r["lock_waits"];
    std::printf("\nlock waits (jitprov-lockwait): %s\n", lockwaitLine(l).c_str());
    for (const auto& s : l["sites"]) {
      std::string by;
      for (const auto& [holder, b] : s["blocked_by"].items())
        by += (by.empty() ? "" : ", ") + holder + " " + std::to_string(jsonCount(b, "count")) + " (" +
              fmtMs(double(jsonCount(b, "total_ns"))) + ", max " + us(jsonCount(b, "max_ns")) + ")";
      std::printf("  %-16s %8llu acquisitions, %6llu waited, %s in all, max %s%s%s\n",
                  s["site"].get<std::string>().c_str(), (unsigned long long)jsonCount(s, "acquisitions"),
                  (unsigned long long)jsonCount(s, "contended"), fmtMs(double(jsonCount(s, "wait_total_ns"))).c_str(),
                  us(jsonCount(s, "max_wait_ns")).c_str(), by.empty() ? "" : "; behind: ", by.c_str());
    }
  }
  if (r["perf"].is_object()) {
    const auto& f = r["perf"];
    std::printf("\nhottest JIT methods (perf, %llu samples, %llu in JIT code; perf report -i %s):\n",
                (unsigned long long)jsonCount(f, "samples"), (unsigned long long)jsonCount(f, "jit_samples"),
                f.value("perf_data", std::string()).c_str());
    for (const auto& m : f.value("hottest", nlohmann::json::array()))
      std::printf("  %6.2f %% %7llu  %s\n", m.value("percent", 0.0), (unsigned long long)jsonCount(m, "samples"),
                  m.value("name", std::string()).c_str());
  }
  if (!r["not_checked"].empty()) {
    std::printf("\nnot checked:\n");
    for (const auto& n : r["not_checked"]) std::printf("  %s\n", n.is_string() ? n.get<std::string>().c_str() : "?");
  }
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
  if (!lw.is_object()) throw BadField(typeOf(lw) + ", not an object");
  nlohmann::json sites = nlohmann::json::array();
  uint64_t acquisitions = 0, contended = 0, total = 0, max = 0;
  for (const auto& [name, s] : objField(lw, "sites").items()) {
    if (!s.is_object()) throw BadField("site \"" + name + "\" is " + typeOf(s) + ", not an object");
    uint64_t a = 0, t = 0, m = 0, c = 0;
    for (const char* part : {"outside", "rundown"}) {
      const nlohmann::json& w = objField(objField(s, part), "wait");
      a += jsonCount(w, "count"), t += jsonCount(w, "total_ns"), m = std::max(m, jsonCount(w, "max_ns"));
    }
    const nlohmann::json& by = objField(s, "blocked_by");
    for (const auto& [holder, b] : by.items()) c += jsonCount(b, "count");
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
  for (const auto& [k, n] : objField(lw, "drops").items()) {
    if (!n.is_number_unsigned()) throw BadField("drops \"" + k + "\" is " + typeOf(n) + ", not a count");
    lost += n.get<uint64_t>();
  }
  return {{"acquisitions", acquisitions},
          {"contended", contended},
          {"wait_total_ns", total},
          {"max_wait_ns", max},
          {"jit_blocked_by_rundown", objField(lw, "jit_blocked_by_rundown")},
          {"lost", lost},
          {"seconds", numField(lw, "seconds", 0.0)},
          {"sites", sites}};
}

nlohmann::json rundownDuration(const nlohmann::json& d) {
  if (d.is_object() && d.contains("rundown_end") && d["rundown_end"].is_object() &&
      d["rundown_end"].contains("duration_ns") && d["rundown_end"]["duration_ns"].is_number())
    return d["rundown_end"]["duration_ns"];
  return nullptr;
}

std::string durationText(const nlohmann::json& ns) {
  return ns.is_number() ? fmtMs(ns.get<double>()) : std::string("unfinished");
}

nlohmann::json lossFigures(const nlohmann::json& v) {
  uint64_t events = 0, packets = 0, missing = 0, uncounted = 0;
  nlohmann::json connection_lost = nlohmann::json::array();
  for (const auto& s : v.value("sessions", nlohmann::json::array())) {
    events += jsonCount(s, "discarded_events");
    packets += jsonCount(s, "discarded_packets");
    missing += jsonCount(s, "packets_before_first");
    uncounted += jsonCount(s, "discard_messages_without_count");
    if (s.contains("live_connection_lost") && s["live_connection_lost"].is_string())
      connection_lost.push_back(s.value("session", std::string()) + ": " +
                                s["live_connection_lost"].get<std::string>());
  }
  return {{"events_lost", events},
          {"packets_lost", packets},
          {"packets_missing", missing},
          {"discards_uncounted", uncounted},
          {"live_connection_lost", connection_lost}};
}

std::string lossLine(const nlohmann::json& l) {
  std::string s = std::to_string(jsonCount(l, "events_lost"));
  if (jsonCount(l, "packets_lost") != 0) s += ", packets lost: " + std::to_string(jsonCount(l, "packets_lost"));
  if (jsonCount(l, "packets_missing") != 0)
    s += ", packets missing (before a stream's first, between chunks, or from their files): " +
         std::to_string(jsonCount(l, "packets_missing"));
  if (jsonCount(l, "discards_uncounted") != 0)
    s +=
        ", discards of no count (events lost, how many unknown): " + std::to_string(jsonCount(l, "discards_uncounted"));
  for (const auto& c : l.value("live_connection_lost", nlohmann::json::array()))
    s += ", live connection lost: " + (c.is_string() ? c.get<std::string>() : std::string("?"));
  return s;
}

std::string lockwaitLine(const nlohmann::json& f) {
  const auto& b = f["jit_blocked_by_rundown"];
  return std::to_string(jsonCount(f, "acquisitions")) + " lock acquisitions, " +
         std::to_string(jsonCount(f, "contended")) + " waited (" + fmtMs(double(jsonCount(f, "wait_total_ns"))) +
         " in all, max " + us(jsonCount(f, "max_wait_ns")) +
         "); JIT blocked by rundowns: " + std::to_string(jsonCount(b, "count")) + " waits, " +
         fmtMs(double(jsonCount(b, "total_ns"))) + "; lost " + std::to_string(jsonCount(f, "lost"));
}

int report(const ReportArgs& a) {
  struct stat st {};
  if (stat(a.dir.c_str(), &st) != 0) return reportFail(kReportNotDir, a.dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return reportFail(kReportNotDir, a.dir + ": not a directory");
  // A directory that cannot be listed is not "no trace" (root passes this; others may not).
  if (access(a.dir.c_str(), R_OK | X_OK) != 0)
    return reportFail(kReportUnreadable, a.dir + ": " + std::strerror(errno));
  std::string trace = a.dir + "/trace";
  // A recording in which no process loaded the agent: its summary says so (its trace may
  // hold the metadata of the session's channels, and no event).
  std::string recorded_bad;
  const nlohmann::json recorded = readJson(a.dir + "/summary.json", &recorded_bad);
  const std::string verdict = recorded.is_object() && recorded.contains("verdict") && recorded["verdict"].is_string()
                                  ? jitprov::tools::terminalText(recorded["verdict"].get<std::string>())
                                  : std::string();
  int trace_err = 0, dir_err = 0;
  const bool in_trace = hasTrace(trace, &trace_err), no_trace = !in_trace && !hasTrace(a.dir, &dir_err);
  // A trace that is there but may not be read (record leaves DIR/trace 0770, root's) is
  // not "no trace": the first directory that could not be opened, named.
  if (no_trace && (trace_err == EACCES || dir_err == EACCES || trace_err == EPERM || dir_err == EPERM))
    return reportFail(kReportUnreadable,
                      (trace_err == EACCES || trace_err == EPERM ? trace : a.dir) + ": " +
                          std::strerror(trace_err != 0 && trace_err != ENOENT ? trace_err : dir_err) +
                          " (a trace in it cannot be looked for)");
  if (verdict.starts_with("nothing recorded"))
    return reportFail(kReportNoTrace,
                      "no trace in " + a.dir + ": `jitprov record` recorded nothing there (" + verdict + ")");
  // A recording that had a trace, since removed or moved: its summary's verdict is not this
  // directory's any more.
  if (no_trace && !verdict.empty())
    return reportFail(kReportNoTrace, "no trace in " + a.dir + " (" + trace +
                                          " has no CTF metadata), though its summary.json says the recording was: " +
                                          verdict + "; removed or moved since?");
  if (no_trace)
    return reportFail(kReportNoTrace, "no trace in " + a.dir +
                                          " (no CTF metadata file in it or in its trace/: record one with `jitprov "
                                          "record -o DIR -- CMD`)");
  if (!in_trace) trace = a.dir;
  const std::string verifier = verifierPath();
  int err = 0;
  if (findCommand(verifier, &err).empty())
    return reportFail(kReportNoVerifier,
                      verifier + " not found (JITPROV_VERIFY, beside jitprov in a build tree, installed, or in PATH)");
  // The verifier's JSON into a file of our own (its stderr apart): DIR may be read-only.
  // Unlinked at once and reached through our descriptor: nothing is left in /tmp when
  // jitprov report is interrupted (the verifier, told by PR_SET_PDEATHSIG, stops too).
  char tmp[] = "/tmp/jitprov-report.XXXXXX";
  const int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) return reportFail(kReportError, std::string("a temporary file in /tmp: ") + std::strerror(errno));
  unlink(tmp);
  const std::string out = "/proc/self/fd/" + std::to_string(fd);
  Progress progress("jitprov report: reading " + trace);
  const Ran ran = run({verifier, "--json", "--top", std::to_string(a.top), trace}, out);
  progress.stop();
  std::string bad;
  const nlohmann::json v = readJson(out, &bad);
  close(fd);
  if (ran.status == 2)  // jitprov-verify: usage or unreadable input
    return reportFail(kReportUnreadable, "cannot read the trace " + trace + ": " + firstLine(ran.output));
  // Killed (a crash, the OOM killer): said as such, with what it said before it.
  if (ran.signal != 0)
    return reportFail(kReportNoVerifier, verifier + " was killed by signal " + std::to_string(ran.signal) + " (" +
                                             strsignal(ran.signal) + ") before its report" +
                                             (ran.output.empty() ? std::string() : ": " + firstLine(ran.output)));
  if (ran.status < 0 || !v.is_object())
    return reportFail(kReportNoVerifier, verifier + " gave no report (exit " + std::to_string(ran.status) + "): " +
                                             firstLine(!ran.output.empty() ? ran.output
                                                       : bad.empty()       ? "no output"
                                                                           : bad));
  // What record left beside the trace, when it did.
  // One that cannot be read (jitprov-lockwait killed in its report, a file cut short)
  // costs its part of the report, said on stderr and in the JSON, not the report.
  const bool beside = trace != a.dir;
  std::string bad_files[3];
  nlohmann::json summary, lockwait, perf;
  if (beside) {
    bad_files[0] = recorded_bad;  // read above
    summary = figuresOf(recorded, a.dir + "/summary.json", &bad_files[0], recordFigures);
    lockwait = figuresOf(readJson(a.dir + "/lockwait.json", &bad_files[1], true), a.dir + "/lockwait.json",
                         &bad_files[1], lockwaitFigures);
    perf = figuresOf(readJson(a.dir + "/perf.json", &bad_files[2]), a.dir + "/perf.json", &bad_files[2],
                     [](const nlohmann::json& f) { return checkedPerf(f); });
  }
  nlohmann::json unreadable = nlohmann::json::array();
  for (const std::string& b : bad_files)
    if (!b.empty()) {
      std::fprintf(stderr, "jitprov report: %s: left out of the report\n", jitprov::tools::terminalText(b).c_str());
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
        printText(jitprov::tools::terminalJson(r), size_t(a.top));
      std::fflush(stdout);
      return reportFail(kReportError, "--plots " + r["plots"]["none"].get<std::string>());
    }
  }
  if (a.json)
    std::printf("%s\n", jitprov::tools::jsonText(r, 1).c_str());
  else
    printText(jitprov::tools::terminalJson(r), size_t(a.top));
  return kReportOk;
}

}  // namespace jitprov::cli
