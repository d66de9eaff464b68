// SPDX-License-Identifier: MIT
// jitprov-verify --top N: the code a trace shows (inventory.h).
#include "inventory.h"

#include <jitprov/names.h>

#include <algorithm>
#include <vector>

namespace jitprov::verify {

namespace {

std::string tierLabel(uint64_t tier) {
  return tier < uint64_t(kTierCount) ? std::string(tierName(static_cast<Tier>(tier))) : "other";
}

}  // namespace

void Inventory::addRecord(int64_t pid, uint32_t instance, const MethodRecordView& r) {
  Process& p = processes_[{pid, instance}];
  // A body is counted once, from the first record of it (its method_load, or the first
  // rundown that lists it): a version's fields never change (G2 checks it).
  if (!p.body_method.emplace(r.version_id, r.method_id).second) return;
  Method& m = p.methods[r.method_id];
  if (m.bodies == 0) {
    m.module_id = r.module_id;
    m.name_space = r.name_space;
    m.name = r.name;
    m.signature = r.signature;
  }
  ++m.bodies;
  m.bytes += r.code_size;
  m.largest = std::max<uint64_t>(m.largest, r.code_size);
  ++m.tiers[r.tier];
  Tally& t = p.module_tiers[r.module_id][r.tier];
  ++t.bodies;
  t.bytes += r.code_size;
}

void Inventory::addModule(int64_t pid, uint32_t instance, uint64_t module_id, std::string_view path) {
  processes_[{pid, instance}].module_paths.try_emplace(module_id, path);
}

nlohmann::json Inventory::toJson(int64_t pid, uint32_t instance, size_t top) const {
  const auto it = processes_.find({pid, instance});
  static const Process kNone;
  const Process& p = it == processes_.end() ? kNone : it->second;
  auto pathOf = [&p](uint64_t module_id) {
    const auto m = p.module_paths.find(module_id);
    return m == p.module_paths.end() ? std::string() : m->second;
  };
  auto tiersJson = [](const std::map<uint64_t, Tally>& tiers) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [tier, t] : tiers) {
      nlohmann::json& e = j[tierLabel(tier)];  // "other" may gather several
      if (e.is_null()) e = {{"bodies", uint64_t{0}}, {"bytes", uint64_t{0}}};
      e["bodies"] = e["bodies"].get<uint64_t>() + t.bodies;
      e["bytes"] = e["bytes"].get<uint64_t>() + t.bytes;
    }
    return j;
  };
  // By module, the most bytes first.
  std::map<uint64_t, Tally> all_tiers;
  std::vector<std::pair<Tally, nlohmann::json>> modules;
  for (const auto& [module_id, tiers] : p.module_tiers) {
    Tally sum;
    for (const auto& [tier, t] : tiers) {
      sum.bodies += t.bodies, sum.bytes += t.bytes;
      all_tiers[tier].bodies += t.bodies, all_tiers[tier].bytes += t.bytes;
    }
    modules.push_back({sum,
                       {{"module_id", module_id},
                        {"path", pathOf(module_id)},
                        {"bodies", sum.bodies},
                        {"bytes", sum.bytes},
                        {"by_tier", tiersJson(tiers)}}});
  }
  std::stable_sort(modules.begin(), modules.end(),
                   [](const auto& a, const auto& b) { return a.first.bytes > b.first.bytes; });
  Tally total;
  for (const auto& [tier, t] : all_tiers) total.bodies += t.bodies, total.bytes += t.bytes;
  nlohmann::json mj = nlohmann::json::array();
  for (auto& [t, j] : modules) mj.push_back(std::move(j));

  // Methods in id order (deterministic), then the lists, ties by method id.
  std::vector<std::pair<uint64_t, const Method*>> methods;
  methods.reserve(p.methods.size());
  for (const auto& [id, m] : p.methods) methods.push_back({id, &m});
  std::sort(methods.begin(), methods.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto methodJson = [&](uint64_t id, const Method& m) {
    nlohmann::json tiers = nlohmann::json::object();
    for (const auto& [tier, n] : m.tiers) tiers[tierLabel(tier)] = tiers.value(tierLabel(tier), uint64_t{0}) + n;
    return nlohmann::json{{"method_id", id},
                          {"module", pathOf(m.module_id)},
                          {"namespace", m.name_space},
                          {"name", m.name},
                          {"signature", m.signature},
                          {"bodies", m.bodies},
                          {"largest_bytes", m.largest},
                          {"bytes", m.bytes},
                          {"tiers", tiers}};
  };
  auto topBy = [&](auto key) {
    std::vector<std::pair<uint64_t, const Method*>> v = methods;
    const size_t n = std::min(top, v.size());
    std::partial_sort(v.begin(), v.begin() + ptrdiff_t(n), v.end(), [&key](const auto& a, const auto& b) {
      const uint64_t ka = key(*a.second), kb = key(*b.second);
      return ka != kb ? ka > kb : a.first < b.first;
    });
    nlohmann::json j = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) j.push_back(methodJson(v[i].first, *v[i].second));
    return j;
  };
  // By namespace (a Java class, a .NET type), the most bytes first.
  struct Ns {
    uint64_t methods = 0, bodies = 0, bytes = 0;
  };
  std::unordered_map<std::string_view, Ns> ns;
  for (const auto& [id, m] : methods) {
    Ns& n = ns[m->name_space];
    ++n.methods, n.bodies += m->bodies, n.bytes += m->bytes;
  }
  std::vector<std::pair<std::string_view, Ns>> nsv(ns.begin(), ns.end());
  const size_t nn = std::min(top, nsv.size());
  std::partial_sort(nsv.begin(), nsv.begin() + ptrdiff_t(nn), nsv.end(), [](const auto& a, const auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes : a.first < b.first;
  });
  nlohmann::json nj = nlohmann::json::array();
  for (size_t i = 0; i < nn; ++i)
    nj.push_back({{"namespace", std::string(nsv[i].first)},
                  {"methods", nsv[i].second.methods},
                  {"bodies", nsv[i].second.bodies},
                  {"bytes", nsv[i].second.bytes}});
  return {{"methods", p.methods.size()},
          {"bodies", total.bodies},
          {"bytes", total.bytes},
          {"by_tier", tiersJson(all_tiers)},
          {"modules", mj},
          {"namespaces", nj},
          {"largest", topBy([](const Method& m) { return m.largest; })},
          {"most_bodies", topBy([](const Method& m) { return m.bodies; })}};
}

}  // namespace jitprov::verify
