// SPDX-License-Identifier: MIT
// jitprov-verify: the processes of one session, told apart (lives.h).
#include "lives.h"

namespace jitprov::verify {

int64_t Lives::keyFor(const ProcessId& id, uint32_t life) {
  auto [it, fresh] = keys_.try_emplace({id.pidns, id.vpid, life}, 0);
  if (!fresh) return it->second;
  // The vpid itself while no other process took it, so that the usual trace reads as
  // before; then an alias above 2^32 that keeps the vpid in its low 32 bits.
  int64_t key = id.vpid;
  if (identities_.count(key) != 0) key = (int64_t(next_alias_++) << 32) | (id.vpid & 0xffffffff);
  it->second = key;
  identities_[key] = Identity{id.vpid, id.pidns, life};
  namespaces_.insert(id.pidns);
  return key;
}

Lives::Current& Lives::current(const ProcessId& id) {
  if (last_ != nullptr && last_id_ == id) return *last_;
  auto [it, fresh] = current_.try_emplace({id.pidns, id.vpid});
  if (fresh) it->second.key = keyFor(id, 0);
  last_id_ = id;
  last_ = &it->second;
  return it->second;
}

int64_t Lives::keyOf(const ProcessId& id) { return current(id).key; }

void Lives::newLife(Current& c, const ProcessId& id) {
  ++c.life;
  c.key = keyFor(id, c.life);
  c.modules.clear();
  c.last_rundown.clear();
  ++reused_;
}

int64_t Lives::onModuleLoad(const ProcessId& id, uint32_t instance, uint64_t module_id) {
  Current& c = current(id);
  if (!c.modules[instance].insert(module_id).second) {
    newLife(c, id);
    c.modules[instance].insert(module_id);
  }
  return c.key;
}

int64_t Lives::onRundownBegin(const ProcessId& id, uint32_t instance, uint64_t rundown_id) {
  Current& c = current(id);
  uint64_t& last = c.last_rundown[instance];
  if (last != 0 && rundown_id <= last) {
    newLife(c, id);
    c.last_rundown[instance] = rundown_id;
  } else {
    last = rundown_id;
  }
  return c.key;
}

void Lives::rewind() {
  current_.clear();
  last_ = nullptr;
  reused_ = 0;
}

const Identity& Lives::identity(int64_t key) const {
  static const Identity kUnknown;
  const auto it = identities_.find(key);
  return it == identities_.end() ? kUnknown : it->second;
}

std::string Lives::label(int64_t key) const {
  const auto it = identities_.find(key);
  if (it == identities_.end()) return "process " + std::to_string(key);
  const Identity& i = it->second;
  std::string s = "process " + std::to_string(i.vpid);
  if (severalNamespaces()) s += " (pid namespace " + std::to_string(i.pidns) + ")";
  if (i.life != 0) {
    const uint32_t n = i.life + 1;
    const uint32_t last = n % 10, teen = n % 100 / 10 == 1;
    const char* th = teen || last == 0 || last > 3 ? "th" : last == 1 ? "st" : last == 2 ? "nd" : "rd";
    s += " (its " + std::to_string(n) + th + " process)";
  }
  return s;
}

}  // namespace jitprov::verify
