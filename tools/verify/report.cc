// SPDX-License-Identifier: MIT
// jitprov-verify's verdict, in JSON and in text (report.h).
#include "report.h"

#include "json_text.h"

#include <jitprov/trace_abi.h>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>

namespace jitprov::verify {

Report evaluate(const std::string& trace, std::map<std::string, Session>& sessions, double timeout) {
  Report rep;
  rep.trace = trace;
  Outcome& out = rep.outcome;
  for (auto& [root, s] : sessions) {
    rep.lost = rep.lost || s.discarded_events > 0 || s.discarded_packets > 0 || s.discarded_unknown > 0 ||
               s.packets_before_first > 0 || !s.connection_lost.empty();
    if (s.timed_out)
      out.not_checked.push_back("live session " + root + ": still recording after --timeout " +
                                std::to_string(timeout) + " s (what was received is checked)");
    SessionReport sr{&s, {}};
    const size_t before = out.not_checked.size();
    for (auto& [key, p] : s.checker.processes()) sr.processes.push_back(s.checker.check(p, s.explaining, &out));
    for (size_t i = before; i < out.not_checked.size(); ++i)
      out.not_checked[i] = "session " + (s.name.empty() ? root : s.name) + ", " + out.not_checked[i];
    // A session beside others with none of jitprov's events (a kernel session, another
    // tool's): nothing of it checked, which is said (alone in a trace it is exit 2).
    if (s.checker.processes().empty() && !s.live)
      out.not_checked.push_back("session " + (s.name.empty() ? root : s.name) +
                                ": no jitprov events in it (nothing of it checked)");
    rep.sessions.push_back(std::move(sr));
  }
  rep.exit = rep.lost                   ? kExitLost
             : out.violations           ? kExitViolated
             : !out.not_checked.empty() ? kExitNotChecked
                                        : kExitHold;
  rep.verdict = rep.exit == kExitHold       ? "every guarantee holds, everything checked"
                : rep.exit == kExitViolated ? "a guarantee is violated"
                : rep.exit == kExitLost     ? "events lost"
                                            : "no violation, but not everything could be checked";
  return rep;
}

namespace {

#define JITPROV_VERIFY_TIER_NAME(value, c_name, cc_name, name) name,
constexpr const char* kTierNames[] = {JITPROV_TIERS(JITPROV_VERIFY_TIER_NAME)};
#undef JITPROV_VERIFY_TIER_NAME
static_assert(std::size(kTierNames) == Process::kTierSlots - 1, "one slot per tier, and one for the others");

nlohmann::json rundownJson(const RundownVerdict& v) {
  const Rundown& r = *v.rundown;
  nlohmann::json j = {{"rundown_id", r.id},
                      {"mode", r.mode},
                      {"trigger", r.trigger},
                      {"begin_ns", r.begin_ts},
                      {"end_ns", r.end_ts},
                      {"method_records", r.method_records},
                      {"module_records", r.module_records},
                      {"peak_method_records_per_100ms", r.peak_window_records}};
  j["cut_short"] = r.cut_short;
  if (r.has_end) {
    j["rundown_end"] = {{"modules", r.end_modules}, {"methods", r.end_methods}, {"versions", r.end_versions},
                        {"skipped", r.end_skipped}, {"retried", r.end_retried}, {"duration_ns", r.end_duration}};
    if (v.exact) {
      j["rundown_end"]["publish_seq"] = r.publish_seq;
      j["rundown_end"]["end_seq"] = r.end_seq;
      j["rundown_end"]["caught_up"] = r.caught_up;
      j["begin_seq"] = r.begin_seq;
    }
    if (r.has_method_counts) j["rundown_end"]["caught_up_methods"] = r.end_caught_up_methods;
  }
  j["G4"] = {{"status", v.g4}, {"duplicates", r.duplicates}};
  j["G2"] = {{"status", v.g2},
             {"records_checked", r.g2_checked},
             {"records_without_method_load", r.g2_no_load},
             {"mismatches", r.g2_mismatch + r.g2_removed}};
  j["G3"] = {
      {"status", v.g3}, {"versions_checked", r.checked3}, {"missing", r.missing}, {"undecidable", r.undecidable}};
  j["violations"] = v.violations;
  return j;
}

nlohmann::json processJson(const ProcessVerdict& v, const Lives& lives) {
  const Process& p = *v.process;
  const Identity& id = lives.identity(p.pid);
  nlohmann::json pj = {
      {"vpid", id.vpid >= 0 ? id.vpid : p.pid}, {"runtime_instance", p.instance},    {"events", p.events},
      {"method_load", p.method_loads},          {"method_unload", p.method_unloads}, {"code_unload", p.code_unloads}};
  // The code bodies the trace shows, by tier (only the tiers that have some).
  nlohmann::json tiers = nlohmann::json::object();
  uint64_t bodies = 0;
  for (size_t t = 0; t < Process::kTierSlots; ++t) {
    if (p.bodies_by_tier[t] == 0) continue;
    bodies += p.bodies_by_tier[t];
    tiers[t < Process::kTierSlots - 1 ? kTierNames[t] : "other"] = p.bodies_by_tier[t];
  }
  pj["code_bodies"] = {{"total", bodies}, {"by_tier", tiers}};
  // Told apart from others of its vpid (lives.h): its pid namespace, its life.
  if (id.pidns != 0) pj["pid_ns"] = id.pidns;
  if (id.life != 0) pj["life"] = id.life;
  pj["label"] = lives.label(p.pid);
  nlohmann::json rjs = nlohmann::json::array();
  for (const RundownVerdict& r : v.rundowns) rjs.push_back(rundownJson(r));
  pj["rundowns"] = rjs;
  return pj;
}

nlohmann::json sessionJson(const SessionReport& sr) {
  const Session& s = *sr.session;
  nlohmann::json sj = {{"session", s.root},
                       {"name", s.name},
                       {"traces", s.traces},
                       {"discarded_events", s.discarded_events},
                       {"discarded_packets", s.discarded_packets},
                       {"packets_before_first", s.packets_before_first},
                       {"discard_messages_without_count", s.discarded_unknown}};
  if (!s.connection_lost.empty()) sj["live_connection_lost"] = s.connection_lost;
  if (s.pidns_partial) sj["pid_ns_ignored"] = true;  // on some channels only (decode.h)
  nlohmann::json pjs = nlohmann::json::array();
  for (const ProcessVerdict& p : sr.processes) {
    pjs.push_back(processJson(p, s.lives));
    if (s.inventory) pjs.back()["code"] = s.inventory->toJson(p.process->pid, p.process->instance, s.inventory_top);
  }
  sj["processes"] = pjs;
  return sj;
}

void printRundown(const nlohmann::json& j) {
  std::string caught;
  if (j.contains("rundown_end") && j["rundown_end"].contains("caught_up"))
    caught = ", " + std::to_string(j["rundown_end"]["caught_up"].get<uint64_t>()) + " caught up";
  std::printf("  rundown %llu (%s, %s): %llu method records%s, %llu module records\n",
              (unsigned long long)j["rundown_id"].get<uint64_t>(), j["mode"].get<std::string>().c_str(),
              j["trigger"].get<std::string>().c_str(), (unsigned long long)j["method_records"].get<uint64_t>(),
              caught.c_str(), (unsigned long long)j["module_records"].get<uint64_t>());
  std::printf("    G2 consistent: %-11s (%llu records checked against method_load, %llu without one)\n",
              j["G2"]["status"].get<std::string>().c_str(),
              (unsigned long long)j["G2"]["records_checked"].get<uint64_t>(),
              (unsigned long long)j["G2"]["records_without_method_load"].get<uint64_t>());
  std::printf("    G3+ complete:  %-11s (%llu versions published up to its end checked, %llu undecidable)\n",
              j["G3"]["status"].get<std::string>().c_str(),
              (unsigned long long)j["G3"]["versions_checked"].get<uint64_t>(),
              (unsigned long long)j["G3"]["undecidable"].get<uint64_t>());
  std::printf("    G4 once:       %-11s\n", j["G4"]["status"].get<std::string>().c_str());
  for (const auto& v : j["violations"]) std::printf("    VIOLATION %s\n", v.get<std::string>().c_str());
}

void printSession(const nlohmann::json& sj) {
  const uint64_t before_first = sj["packets_before_first"].get<uint64_t>();
  std::printf("session %s%s: %zu process%s, %llu events discarded%s%s\n", sj["session"].get<std::string>().c_str(),
              sj["name"].get<std::string>().empty() ? "" : (" (" + sj["name"].get<std::string>() + ")").c_str(),
              sj["processes"].size(), sj["processes"].size() == 1 ? "" : "es",
              (unsigned long long)sj["discarded_events"].get<uint64_t>(),
              sj["discarded_packets"].get<uint64_t>()
                  ? (", " + std::to_string(sj["discarded_packets"].get<uint64_t>()) + " packets discarded").c_str()
                  : "",
              before_first ? (", " + std::to_string(before_first) +
                              " packets missing before its streams' first, between its chunks or from its files "
                              "(a snapshot, earlier files or chunks removed, or files emptied or cut after their "
                              "indexes were written)")
                                 .c_str()
                           : "");
  for (const auto& pj : sj["processes"]) {
    const uint32_t inst = pj["runtime_instance"].get<uint32_t>();
    std::printf(" %s%s: %zu rundowns, %llu method_load, %llu method_unload, %llu code_unload\n",
                pj["label"].get<std::string>().c_str(), inst != 0 ? (" runtime " + std::to_string(inst)).c_str() : "",
                pj["rundowns"].size(), (unsigned long long)pj["method_load"].get<uint64_t>(),
                (unsigned long long)pj["method_unload"].get<uint64_t>(),
                (unsigned long long)pj["code_unload"].get<uint64_t>());
    for (const auto& j : pj["rundowns"]) printRundown(j);
  }
}

}  // namespace

nlohmann::json toJson(const Report& r) {
  nlohmann::json sjs = nlohmann::json::array();
  for (const SessionReport& s : r.sessions) sjs.push_back(sessionJson(s));
  return {{"trace", r.trace},
          {"sessions", sjs},
          {"not_checked", r.outcome.not_checked},
          {"violations", r.outcome.violations},
          {"verdict", r.verdict},
          {"exit", r.exit}};
}

void printText(const Report& r) {
  // The trace's names (its session, its processes' labels, its enums' labels) and paths
  // on the terminal with no control character of theirs (json_text.h).
  const nlohmann::json report = tools::terminalJson(toJson(r));
  const nlohmann::json& sjs = report["sessions"];
  std::printf("jitprov-verify: %s: %zu session%s\n", tools::terminalText(r.trace).c_str(), sjs.size(),
              sjs.size() == 1 ? "" : "s");
  for (const auto& sj : sjs) printSession(sj);
  for (const std::string& n : r.outcome.not_checked) std::printf("not checked: %s\n", tools::terminalText(n).c_str());
  if (r.lost) {
    uint64_t ev = 0, pk = 0, bf = 0;
    for (const SessionReport& sr : r.sessions) {
      const Session& s = *sr.session;
      ev += s.discarded_events, pk += s.discarded_packets, bf += s.packets_before_first;
      if (!s.connection_lost.empty())
        std::printf("EVENTS LOST: the live connection to the relay daemon ended before the session did: %s\n",
                    tools::terminalText(s.connection_lost).c_str());
    }
    std::printf(
        "EVENTS LOST: %llu events and %llu packets discarded by the tracer%s: the checks above cannot be "
        "trusted\n",
        (unsigned long long)ev, (unsigned long long)pk,
        bf ? (", " + std::to_string(bf) +
              " packets missing before the streams' first, between chunks or from their files")
                 .c_str()
           : "");
  }
  std::printf("verdict: %s (exit %d)\n", r.verdict, r.exit);
}

}  // namespace jitprov::verify
