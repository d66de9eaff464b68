/* SPDX-License-Identifier: MIT */
// The processes of one session, told apart (docs/spec.md, "jitprov-verify"). An event's
// process is its vpid (the context, or its trace's for per-process buffers) in its pid
// namespace (the pid_ns context, when recorded): two containers' processes share vpids.
// And a vpid comes back in one namespace once its process ended (pid_max is 32 768 on
// many machines): a process's runtime never hands out a module id or a rundown id twice,
// and begins its rundowns one at a time in their ids' order, so a module_load of a
// module id its runtime instance already loaded, or a rundown_begin whose id is not
// above the last one it began, is another process's: a new life of the vpid, checked
// on its own. (The rundown ids tell a later process apart in a session without the
// runtime events, and one whose first rundown comes before its first module, as the
// .NET client's do; a runtime that emitted a rundown_begin twice reads as two
// processes, the second's rundown never ended: a violation while its events go on,
// exit 1, else not checked, exit 4.) Each life has a key, the process of the reader's
// items and of the checker's tables: the vpid itself for the first life of a vpid, else a number above 2^32 of which
// the low 32 bits are the vpid.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace jitprov::verify {

// What an event says of its process.
struct ProcessId {
  int64_t vpid = -1;   // -1: unknown
  uint64_t pidns = 0;  // the pid_ns context; 0: not recorded
  bool operator==(const ProcessId& o) const { return vpid == o.vpid && pidns == o.pidns; }
};

struct Identity {
  int64_t vpid = -1;
  uint64_t pidns = 0;
  uint32_t life = 0;  // 0: the vpid's first process in its namespace, 1 its second...
};

class Lives {
 public:
  // The key of the process of an event that begins nothing.
  int64_t keyOf(const ProcessId& id);
  // The key of the process of a module_load of `module_id` by runtime instance
  // `instance`: a new life when the current one's instance already loaded it.
  int64_t onModuleLoad(const ProcessId& id, uint32_t instance, uint64_t module_id);
  // The key of the process of a rundown_begin of `rundown_id`: a new life when the
  // current one's instance began one with that id or a larger one.
  int64_t onRundownBegin(const ProcessId& id, uint32_t instance, uint64_t rundown_id);
  // Before the trace is read again (the second reading): the same events get the same
  // keys.
  void rewind();

  const Identity& identity(int64_t key) const;
  // "process 1234", with " (pid namespace N)" when the session has processes of several
  // namespaces, and " (its 2nd process)" for a later life of the vpid.
  std::string label(int64_t key) const;
  bool severalNamespaces() const { return namespaces_.size() > 1; }
  // Lives begun by an id shown twice (the vpid reused in its namespace).
  uint64_t reused() const { return reused_; }

 private:
  struct Current {
    int64_t key = 0;
    uint32_t life = 0;
    // The module ids shown (not the largest: two threads may emit their module_load
    // out of their ids' order), by runtime_instance.
    std::unordered_map<uint32_t, std::unordered_set<uint64_t>> modules;
    std::unordered_map<uint32_t, uint64_t> last_rundown;  // runtime_instance -> its last begun
  };
  void newLife(Current& c, const ProcessId& id);
  Current& current(const ProcessId& id);
  int64_t keyFor(const ProcessId& id, uint32_t life);

  std::map<std::pair<uint64_t, int64_t>, Current> current_;          // (pidns, vpid) ->
  std::map<std::tuple<uint64_t, int64_t, uint32_t>, int64_t> keys_;  // (pidns, vpid, life) ->
  std::unordered_map<int64_t, Identity> identities_;                 // key ->
  std::set<uint64_t> namespaces_;
  uint32_t next_alias_ = 1;
  uint64_t reused_ = 0;
  // The last event's process (most events follow one of the same process).
  ProcessId last_id_;
  Current* last_ = nullptr;  // std::map nodes stay put
};

}  // namespace jitprov::verify
