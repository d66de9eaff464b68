// SPDX-License-Identifier: MIT
// The plots of `jitprov report` (plots.h): for each plot whose data the recording holds,
//  1. NAME.csv, its data, with a header line (written whole: atomic_file.h);
//  2. NAME.gp, the gnuplot script that reads NAME.csv (pngcairo, 1000x600);
//  3. gnuplot run on it into a temporary, renamed to NAME.png when it succeeded.
// The times of the rundowns are the trace's (its clock "monotonic", ns from the epoch);
// the lock waits' are CLOCK_MONOTONIC (bpf_ktime_get_ns): the trace's clock offset from
// its metadata puts both on one timeline, in seconds from the first of them.
#include "plots.h"

#include "atomic_file.h"
#include "run.h"

#include <jitprov/names.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace jitprov::cli {
namespace {

namespace fs = std::filesystem;

// The text of a CTF metadata file: lttng writes it in packets, each a 37-byte header
// (magic 0x75d11d57, uuid, checksum, content and packet sizes in bits, schemes,
// version) before its text; a file without the magic is text already.
std::string metadataText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string raw;
  raw.resize(4 << 20);  // far more than any clock declaration needs
  in.read(raw.data(), std::streamsize(raw.size()));
  raw.resize(size_t(in.gcount()));
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, raw.data() + at, 4);
    return v;
  };
  constexpr size_t kHeader = 37;
  if (raw.size() < kHeader || u32(0) != 0x75d11d57u) return raw;
  std::string text;
  for (size_t at = 0; at + kHeader <= raw.size() && u32(at) == 0x75d11d57u;) {
    const size_t content = u32(at + 24) / 8, packet = u32(at + 28) / 8;
    if (content < kHeader || packet < content) break;
    text.append(raw, at + kHeader, std::min(content, raw.size() - at) - kHeader);
    at += packet;
  }
  return text;
}

// A CSV field: quoted when it holds a separator or a quote (as gnuplot reads it: a
// quote inside becomes an apostrophe), control characters as '?'.
std::string csvField(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
    if (c == '"') c = '\'';
  }
  return s.find_first_of(", ") == std::string::npos ? s : "\"" + s + "\"";
}

// A string in a gnuplot script: single quotes, an apostrophe doubled.
std::string gpString(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One plot: its CSV lines and its script's body (after the terminal and output lines).
struct Plot {
  std::string name, what, csv, script;
};

// The terminal every plot shares: 1000x600 PNG (the test checks the size).
constexpr int kWidth = 1000, kHeight = 600;

std::string tiersCsv(const nlohmann::json& procs) {
  std::string s = "vpid,runtime_instance,tier,bodies,bytes,label\n";
  for (const auto& p : procs) {
    const nlohmann::json by = p["code"].value("by_tier", nlohmann::json::object());
    const std::string pid = std::to_string(p["vpid"].get<int64_t>());
    // jitprov-verify's label tells apart two processes of one vpid (another pid
    // namespace, or the pid reused).
    const std::string who = p.value("label", "process " + pid);
    for (const auto& [tier, v] : by.items())
      s += pid + "," + std::to_string(p["runtime_instance"].get<int>()) + "," + csvField(tier) + "," +
           std::to_string(jsonCount(v, "bodies")) + "," + std::to_string(jsonCount(v, "bytes")) + "," +
           csvField(procs.size() > 1 ? who + " " + tier : tier) + "\n";
  }
  return s;
}

// A waits file's lines as fields by its header's names; false when it is not one.
struct Wait {
  uint64_t begin_ns = 0, wait_ns = 0;
  std::string tid, site, blocked_by, in_rundown;
};
bool readWaits(const std::string& path, std::vector<Wait>* out, std::string* why) {
  std::string text;  // (a FIFO in its place is not waited on)
  if (std::string e = readRegular(path, size_t(1) << 30, &text); !e.empty()) {
    *why = e;
    return false;
  }
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line != "begin_ns,tid,site,wait_ns,hold_ns,blocked_by,in_rundown") {
    *why = path + ": not jitprov-lockwait --waits' CSV";
    return false;
  }
  const std::set<std::string> jit = [] {
    std::set<std::string> s;
    for (int i = kFirstJitSite; i <= kLastJitSite; ++i) s.emplace(lockSiteName(LockSite(i)));
    return s;
  }();
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (f.size() != 7) continue;
    if (jit.count(f[2]) == 0) continue;  // the JIT paths' waits only
    Wait w;
    w.begin_ns = std::strtoull(f[0].c_str(), nullptr, 10);
    w.tid = f[1], w.site = f[2], w.blocked_by = f[5], w.in_rundown = f[6];
    w.wait_ns = std::strtoull(f[3].c_str(), nullptr, 10);
    out->push_back(std::move(w));
  }
  return true;
}

std::string header() {
  return "set terminal pngcairo size " + std::to_string(kWidth) + "," + std::to_string(kHeight) +
         " noenhanced font ',10'\nset datafile separator ','\nset datafile columnheaders\n";
}

}  // namespace

uint64_t jsonCount(const nlohmann::json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<uint64_t>() : 0;
}

bool traceClockOffset(const std::string& trace, int64_t* offset_ns) {
  std::error_code ec;
  fs::recursive_directory_iterator it(trace, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 8) it.disable_recursion_pending();
    if (it->path().filename() != "metadata" || !it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const std::string text = metadataText(it->path().string());
    static const std::regex clock(R"(clock\s*\{([^}]*)\})");
    for (std::sregex_iterator m(text.begin(), text.end(), clock), e; m != e; ++m) {
      const std::string body = (*m)[1];
      if (body.find("name = \"monotonic\"") == std::string::npos && body.find("name = monotonic") == std::string::npos)
        continue;
      auto field = [&](const char* name, long double dflt) {
        std::smatch v;
        const std::regex re(std::string(R"((?:^|[;\s]))") + name + R"(\s*=\s*(-?[0-9]+)\s*;)");
        return std::regex_search(body, v, re) ? std::stold(v[1].str()) : dflt;
      };
      const long double freq = field("freq", 1e9);
      if (freq <= 0) continue;
      *offset_ns = int64_t(field("offset_s", 0) * 1e9L + field("offset", 0) * (1e9L / freq));
      return true;
    }
  }
  return false;
}

nlohmann::json writePlots(const PlotInputs& in) {
  nlohmann::json out = {{"dir", in.out_dir}};
  const nlohmann::json& r = *in.report;
  int err = 0;
  const std::string gnuplot = findCommand("gnuplot", &err);
  if (gnuplot.empty()) {
    out["none"] = "gnuplot not found in PATH (Debian: apt install gnuplot-nox)";
    return out;
  }
  // The plots whose data is there.
  std::vector<Plot> plots;
  const nlohmann::json& procs = r["processes"];
  std::string tiers = tiersCsv(procs);
  if (tiers.find('\n') + 1 < tiers.size()) {
    plots.push_back({"tiers", "code bodies by tier, per process", tiers,
                     "set title 'Code bodies by tier (" +
                         (r["record"].is_object() ? r["record"].value("runtime", std::string()) + ", " : "") +
                         "jitprov-verify: distinct versions the trace shows)'\n"
                         "set style fill solid 0.7 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
                         "set ylabel 'code bodies'\nset grid ytics\nset xtics noenhanced\nunset key\n"
                         "plot $DATA using 0:4:xtic(6) with boxes lc rgb '#4477aa', "
                         "'' using 0:4:(sprintf('%d (%.1f KiB)', $4, $5 / 1024.0)) with labels offset 0,0.8\n"});
  }
  // Rundowns on the recording's timeline; the lock waits on the same.
  struct Rd {
    int64_t vpid, begin_ns, duration_ns;  // duration_ns -1: unfinished (no end in the trace)
    uint64_t id, records, modules;
    std::string trigger, mode;
  };
  std::vector<Rd> rds;
  for (const auto& p : procs)
    for (const auto& d : p["rundowns"])
      rds.push_back({p["vpid"].get<int64_t>(), d.value("begin_ns", int64_t{0}),
                     d["duration_ns"].is_number() ? d["duration_ns"].get<int64_t>() : int64_t{-1},
                     jsonCount(d, "rundown_id"), jsonCount(d, "method_records"), jsonCount(d, "module_records"),
                     d.value("trigger", std::string()), d.value("mode", std::string())});
  std::sort(rds.begin(), rds.end(), [](const Rd& a, const Rd& b) { return a.begin_ns < b.begin_ns; });
  std::vector<Wait> waits;
  std::string waits_why;
  bool waits_read = false;  // a waits file, even of no wait: a timeline where no JIT path waited
  if (!in.waits_csv.empty()) {
    waits_read = readWaits(in.waits_csv, &waits, &waits_why);
    if (!waits_read) out["waits_error"] = waits_why;
  }
  int64_t offset = 0;
  const bool have_offset = traceClockOffset(in.trace, &offset);
  // t0 on the trace's clock: the first rundown, or the first wait when earlier.
  int64_t t0 = rds.empty() ? std::numeric_limits<int64_t>::max() : rds.front().begin_ns;
  if (have_offset)
    for (const Wait& w : waits) t0 = std::min(t0, int64_t(w.begin_ns) + offset);
  if (!rds.empty()) {
    std::string csv = "vpid,rundown_id,trigger,mode,begin_ns,begin_s,end_s,duration_ms,method_records,module_records\n";
    for (const Rd& d : rds)
      csv += std::to_string(d.vpid) + "," + std::to_string(d.id) + "," + csvField(d.trigger) + "," + csvField(d.mode) +
             "," + std::to_string(d.begin_ns) + "," + fmt("%.6f", double(d.begin_ns - t0) / 1e9) + "," +
             // An unfinished one: no end, no duration (empty fields: gnuplot leaves its point out).
             (d.duration_ns < 0 ? std::string(",")
                                : fmt("%.6f", double(d.begin_ns + d.duration_ns - t0) / 1e9) + "," +
                                      fmt("%.6f", double(d.duration_ns) / 1e6)) +
             "," + std::to_string(d.records) + "," + std::to_string(d.modules) + "\n";
    plots.push_back({"rundowns", "each rundown's duration and method records over time", csv,
                     "set multiplot layout 2,1 title 'Rundowns (" + std::to_string(rds.size()) +
                         "): duration and method records, at the time each began' font ',12'\n"
                         "set grid\nunset key\nset xrange [*:*]\nset offsets graph 0.03, graph 0.03, graph 0.15, 0\n"
                         "set ylabel 'duration (ms)'\nset yrange [0:*]\n"
                         "plot $DATA using 6:8 with impulses lw 3 lc rgb '#d62728', '' using 6:8 with points pt 7 "
                         "lc rgb '#d62728', '' using 6:8:3 with labels offset 0,0.8\n"
                         "set ylabel 'method records'\nset xlabel 'seconds since the first rundown" +
                         std::string(have_offset && !waits.empty() ? " or lock wait" : "") +
                         "'\n"
                         "plot $DATA using 6:9 with impulses lw 3 lc rgb '#4477aa', '' using 6:9 with points pt 7 "
                         "lc rgb '#4477aa'\nunset multiplot\n"});
  }
  if (waits_read) {
    // Without the trace's clock offset the waits keep a timeline of their own.
    int64_t w0 = 0;
    if (have_offset && !rds.empty())
      w0 = t0 - offset;
    else if (!waits.empty())
      w0 = int64_t(std::min_element(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) {
                     return a.begin_ns < b.begin_ns;
                   })->begin_ns);
    double xmax = 0;  // the x range set, so that a timeline of no wait is drawn too
    for (const Wait& w : waits) xmax = std::max(xmax, double(int64_t(w.begin_ns) - w0 + int64_t(w.wait_ns)) / 1e9);
    std::string csv = "t_s,tid,site,wait_us,blocked_by,in_rundown\n";
    uint64_t behind = 0;
    for (const Wait& w : waits) {
      csv += fmt("%.6f", double(int64_t(w.begin_ns) - w0) / 1e9) + "," + csvField(w.tid) + "," + csvField(w.site) +
             "," + fmt("%.3f", double(w.wait_ns) / 1e3) + "," + csvField(w.blocked_by) + "," + w.in_rundown + "\n";
      behind += w.blocked_by == "rundown";
    }
    std::string shade;
    if (have_offset && !rds.empty()) {
      int n = 0;
      for (const Rd& d : rds) {
        if (d.duration_ns < 0) continue;  // unfinished: no end to shade to
        if (++n > 1000) break;            // gnuplot's objects: enough for any readable plot
        const double a = double(d.begin_ns - t0) / 1e9, b = double(d.begin_ns + d.duration_ns - t0) / 1e9;
        xmax = std::max(xmax, b);
        shade += "set object " + std::to_string(n) + " rect from " + fmt("%.6f", a) + ", graph 0 to " +
                 fmt("%.6f", std::max(b, a + 0.002)) + ", graph 1 fc rgb '#f4c430' fs solid 0.35 noborder behind\n";
      }
    }
    plots.push_back(
        {"lockwaits",
         "every lock wait of the JIT paths over time" + std::string(shade.empty() ? "" : ", the rundowns shaded"), csv,
         "set title 'JIT-path lock waits, one point per wait (jitprov-lockwait --waits): " +
             std::to_string(waits.size()) + " waits, " + std::to_string(behind) + " behind a rundown" +
             (shade.empty() ? "" : "; shaded: the rundowns") +
             "'\nset logscale y 10\nset yrange [0.1:1e7]\n"
             "set ytics ('0.1 us' 0.1, '1 us' 1, '10 us' 10, '100 us' 100, '1 ms' 1000, '10 ms' 10000, "
             "'100 ms' 100000, '1 s' 1e6, '10 s' 1e7)\nset grid ytics\nset key top left opaque box\n"
             "set xrange [0:" +
             fmt("%.6f", xmax * 1.05 + 0.1) +
             "]\n"
             "set ylabel 'lock wait (log)'\nset xlabel 'seconds since the first " +
             std::string(shade.empty() ? "lock wait" : "rundown or lock wait") + "'\n" + shade +
             "plot $DATA using 1:(strcol(5) eq 'rundown' ? NaN : ($4 < 0.1 ? 0.1 : $4)) with points pt 7 ps 0.5 "
             "lc rgb '#606060' title 'behind another JIT thread', '' using 1:(strcol(5) eq 'rundown' ? ($4 < 0.1 ? "
             "0.1 : $4) : NaN) with points pt 7 ps 1.2 lc rgb '#d62728' title 'behind the rundown'" +
             (shade.empty() ? "" : ", NaN with boxes fs solid 0.35 lc rgb '#f4c430' title 'rundown'") + "\n"});
  }
  if (r["perf"].is_object() && !r["perf"].value("hottest", nlohmann::json::array()).empty()) {
    const auto& hot = r["perf"]["hottest"];
    std::string csv = "rank,samples,percent,name\n";
    int rank = 0;
    for (const auto& m : hot) {
      std::string name = m.value("name", std::string());
      csv += std::to_string(++rank) + "," + std::to_string(jsonCount(m, "samples")) + "," +
             fmt("%.2f", m.value("percent", 0.0)) + "," + csvField(name) + "\n";
    }
    plots.push_back({"hottest", "the JIT methods with the most perf samples", csv,
                     "set title 'Hottest JIT methods (perf record, " + std::to_string(jsonCount(r["perf"], "samples")) +
                         " samples, " + std::to_string(jsonCount(r["perf"], "jit_samples")) +
                         " in JIT code)'\nset style fill solid 0.7 border -1\nunset key\nset grid xtics\n"
                         "set yrange [" +
                         std::to_string(rank) +
                         ".6:0.4]\nset xrange [0:*]\nset offsets 0, graph 0.15, 0, 0\n"
                         "set xlabel 'samples'\nset ytics noenhanced\n"
                         "plot $DATA using ($2 / 2):1:($2 / 2):(0.35):ytic(strlen(strcol(4)) > 60 ? "
                         "strcol(4)[1:57] . '...' : strcol(4)) with boxxyerror lc rgb '#4477aa', "
                         "'' using 2:1:(sprintf(' %.2f %%', $3)) with labels left\n"});
  }
  if (plots.empty()) {
    out["none"] = "no data to plot (no code, no rundowns in the trace)";
    return out;
  }
  // The directory, then each plot's files.
  std::error_code ec;
  fs::create_directories(in.out_dir, ec);
  struct stat st {};
  if (stat(in.out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || access(in.out_dir.c_str(), W_OK) != 0) {
    out["none"] = in.out_dir + ": " + (ec ? ec.message() : "not a writable directory");
    return out;
  }
  nlohmann::json files = nlohmann::json::array(), failed = nlohmann::json::array();
  for (Plot& p : plots) {
    const std::string base = in.out_dir + "/" + p.name;
    tools::AtomicFile csv, gp;
    const std::string png_tmp = base + ".png.tmp";
    const std::string data = gpString(base + ".csv");
    // $DATA in the body: the CSV file (a datablock name would be inline data).
    std::string body;
    for (size_t at = 0;;) {
      const size_t k = p.script.find("$DATA", at);
      body += p.script.substr(at, k == std::string::npos ? k : k - at);
      if (k == std::string::npos) break;
      body += data;
      at = k + 5;
    }
    const std::string script = "# " + p.name + ".png: " + p.what + ", from " + p.name + ".csv (jitprov report)\n" +
                               header() + "set output " + gpString(png_tmp) + "\n" + body;
    if (!csv.open(base + ".csv") || std::fputs(p.csv.c_str(), csv.file()) < 0 || !csv.commit()) {
      failed.push_back(p.name + ".csv: " + csv.error());
      continue;
    }
    if (!gp.open(base + ".gp") || std::fputs(script.c_str(), gp.file()) < 0 || !gp.commit()) {
      failed.push_back(p.name + ".gp: " + gp.error());
      continue;
    }
    unlink(png_tmp.c_str());
    const Ran ran = run({gnuplot, base + ".gp"});
    if (ran.status != 0 || tools::checkOutputPath(base + ".png") != "" ||
        std::rename(png_tmp.c_str(), (base + ".png").c_str()) != 0) {
      unlink(png_tmp.c_str());
      failed.push_back(p.name + ".png: gnuplot exit " + std::to_string(ran.status) + ": " + firstLine(ran.output));
      continue;
    }
    files.push_back(
        {{"plot", p.name}, {"png", base + ".png"}, {"csv", base + ".csv"}, {"gp", base + ".gp"}, {"what", p.what}});
  }
  out["files"] = files;
  if (!failed.empty()) out["failed"] = failed;
  if (!have_offset && !waits.empty())
    out["note"] = "the trace's clock offset not found: the waits on a timeline of their own";
  if (files.empty()) out["none"] = "gnuplot failed: " + failed[0].get<std::string>();
  return out;
}

}  // namespace jitprov::cli
