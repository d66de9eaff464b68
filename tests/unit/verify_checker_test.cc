// SPDX-License-Identifier: MIT
// jitprov-verify's checker (tools/verify/checker.h) on synthetic event streams, as the
// reader would decode them from a trace: each fault a user can meet, asserted by the exact
// lines the report prints (its VIOLATION and "not checked" lines, its statuses).
#include "checker.h"
#include "events.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

using jitprov::verify::Batch;
using jitprov::verify::Checker;
using jitprov::verify::Item;
using jitprov::verify::Kind;
using jitprov::verify::MethodRecord;
using jitprov::verify::Outcome;
using jitprov::verify::ProcessVerdict;
using jitprov::verify::RareItem;
using jitprov::verify::RundownVerdict;
using Lines = std::vector<std::string>;

// Version `vid` as the registry would publish it with sequence number `seq`: method
// 100 + vid of module 1.
MethodRecord version(uint64_t vid, uint64_t seq) {
  MethodRecord r;
  r.method_id = 100 + vid;
  r.version_id = vid;
  r.module_id = 1;
  r.code_start = 0x10000 + 0x100 * vid;
  r.code_size = 64;
  r.tier = 1;
  r.host_tier = 2;
  r.publish_seq = seq;
  r.name_space = "demo";
  r.name = "m" + std::to_string(vid);
  r.signature = "(I)V";
  return r;
}

// A trace's events in the order read: the process and runtime instance they are of is
// set by of(); each event is 1 ns after the one before.
class EventStream {
 public:
  EventStream& of(int64_t pid, uint32_t instance) {
    pid_ = pid, instance_ = instance;
    return *this;
  }
  EventStream& load(const MethodRecord& r) { return method(Kind::kMethodLoad, 0, r); }
  EventStream& record(uint64_t rid, const MethodRecord& r) { return method(Kind::kRundownMethod, rid, r); }
  EventStream& module(uint64_t rid) {
    add(Kind::kRundownModule, rid);
    return *this;
  }
  // rundown_begin of rundown `rid`, whose walk began after sequence number B was read.
  EventStream& begin(uint64_t rid, uint64_t b) {
    RareItem x;
    x.mode = "lockfree", x.trigger = "signal", x.has_seq = true, x.begin_seq = b;
    rare(Kind::kRundownBegin, rid, x);
    return *this;
  }
  // rundown_end: `versions` method records and `modules` module records by its count,
  // the sequence numbers P and E, the catch-up's records, whether it was cut short.
  EventStream& end(uint64_t rid, uint64_t versions, uint64_t modules, uint64_t p, uint64_t e, uint64_t caught_up = 0,
                   bool cut_short = false) {
    RareItem x;
    x.modules = modules, x.methods = versions, x.versions = versions, x.duration = 1000;
    x.has_seq = true, x.publish_seq = p, x.end_seq = e, x.caught_up = caught_up, x.cut_short = cut_short;
    rare(Kind::kRundownEnd, rid, x);
    return *this;
  }

  // rundown_end with the method counts of provider ABI 6: `methods` and
  // `caught_up_methods` as given (the other counts as end()'s).
  EventStream& endMethods(uint64_t rid, uint64_t versions, uint64_t methods, uint64_t caught_up_methods, uint64_t p,
                          uint64_t e, uint64_t caught_up) {
    end(rid, versions, 1, p, e, caught_up);
    RareItem& x = batch_.rare.back();
    x.methods = methods, x.has_methods = true, x.caught_up_methods = caught_up_methods;
    return *this;
  }

  const Batch& batch() const { return batch_; }
  // What a second reading of the trace finds for the mismatches to explain.
  void explain(Checker& c) const {
    for (const Kept& k : kept_)
      if (k.kind == Kind::kMethodLoad)
        c.explainLoad(k.pid, k.instance, view(k.record));
      else
        c.explainRecord(k.pid, k.instance, k.rid, view(k.record));
  }

 private:
  struct Kept {
    Kind kind;
    int64_t pid;
    uint32_t instance;
    uint64_t rid;
    MethodRecord record;
  };
  static jitprov::verify::MethodRecordView view(const MethodRecord& r) {
    return {r, r.name_space, r.name, r.signature};
  }
  Item& add(Kind kind, uint64_t rid) {
    Item it{kind};
    it.pid = pid_, it.instance = instance_, it.ts = ++ts_, it.rid = rid;
    batch_.items.push_back(it);
    return batch_.items.back();
  }
  EventStream& method(Kind kind, uint64_t rid, const MethodRecord& r) {
    jitprov::verify::setRecord(add(kind, rid), r);
    kept_.push_back({kind, pid_, instance_, rid, r});
    return *this;
  }
  void rare(Kind kind, uint64_t rid, const RareItem& x) {
    add(kind, rid).rare = uint32_t(batch_.rare.size());
    batch_.rare.push_back(x);
  }

  int64_t pid_ = 100, ts_ = 0;
  uint32_t instance_ = 1;
  Batch batch_;
  std::vector<Kept> kept_;
};

// The checker run over a stream to its verdicts, as jitprov-verify runs it.
struct Checked {
  explicit Checked(const EventStream& s, bool explain = false) {
    EXPECT_TRUE(checker.apply(s.batch())) << checker.error();
    checker.finishReading();
    if (explain && checker.wantExplanations()) s.explain(checker);
    for (auto& [key, p] : checker.processes()) processes.push_back(checker.check(p, explain, &out));
  }
  // The one rundown of process `pid`'s runtime `instance`.
  const RundownVerdict& rundown(int64_t pid = 100, uint32_t instance = 1) const {
    for (const ProcessVerdict& p : processes)
      if (p.process->pid == pid && p.process->instance == instance && p.rundowns.size() == 1) return p.rundowns[0];
    ADD_FAILURE() << "no process " << pid << " runtime " << instance << " with one rundown";
    static const RundownVerdict none;
    return none;
  }

  Checker checker{{false, 5, stdout}};
  Outcome out;
  std::vector<ProcessVerdict> processes;
};

// Versions 1..3 loaded (sequence numbers 1..3), then rundown 1 of them all, after B = 3.
EventStream goodStream() {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1);
  for (uint64_t v = 1; v <= 3; ++v) s.record(1, version(v, v));
  s.end(1, 3, 1, 3, 3);
  return s;
}

TEST(VerifyChecker, CleanStreamPasses) {
  const Checked run(goodStream());
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(run.out.violations, 0u);
  EXPECT_EQ(run.out.not_checked, Lines{});
  EXPECT_EQ(r.violations, Lines{});
  EXPECT_STREQ(r.g2, "pass");
  EXPECT_STREQ(r.g3, "pass");
  EXPECT_STREQ(r.g4, "pass");
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.rundown->g2_checked, 3u);
  EXPECT_EQ(r.rundown->checked3, 3u);
}

// A torn record: the rundown's record of version 2 differs from its method_load.
TEST(VerifyChecker, TornRecordIsAG2Violation) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1);
  MethodRecord torn = version(2, 2);
  torn.code_size = 65;
  s.record(1, version(1, 1)).record(1, torn).record(1, version(3, 3)).end(1, 3, 1, 3, 3);
  {
    // Live (no second reading): the digest says they differ, not which field.
    const Checked run(s);
    EXPECT_EQ(run.rundown().violations, Lines{"G2: version_id 2: fields (their digest) differ from its method_load"});
    EXPECT_STREQ(run.rundown().g2, "violated");
    EXPECT_EQ(run.out.violations, 1u);
  }
  const Checked run(s, true);
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(r.violations, Lines{"G2: version_id 2: code_size differ from its method_load"});
  EXPECT_STREQ(r.g2, "violated");
  EXPECT_STREQ(r.g3, "pass");
  EXPECT_STREQ(r.g4, "pass");
  EXPECT_EQ(r.rundown->g2_mismatch, 1u);
  EXPECT_EQ(run.out.violations, 1u);
}

// The same version twice in one rundown.
TEST(VerifyChecker, DuplicateRecordIsAG4Violation) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1);
  s.record(1, version(1, 1)).record(1, version(2, 2)).record(1, version(2, 2)).record(1, version(3, 3));
  s.end(1, 4, 1, 3, 3);
  const Checked run(s);
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(r.violations, Lines{"G4: version_id 2 appears twice"});
  EXPECT_STREQ(r.g4, "violated");
  EXPECT_STREQ(r.g2, "pass");
  EXPECT_STREQ(r.g3, "pass");
  EXPECT_EQ(run.out.violations, 1u);
}

// A gap: version 2, published before the rundown's end and never removed, is not in it.
TEST(VerifyChecker, GapIsAG3Violation) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1).record(1, version(1, 1)).record(1, version(3, 3)).end(1, 2, 1, 3, 3);
  const Checked run(s);
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(r.violations, Lines{"G3: version_id 2 (method 102, publish_seq 2) was published before the rundown's "
                                "end (publish_seq 3), not removed, but is missing"});
  EXPECT_STREQ(r.g3, "violated");
  EXPECT_STREQ(r.g2, "pass");
  EXPECT_STREQ(r.g4, "pass");
  EXPECT_EQ(r.rundown->missing, 1u);
  EXPECT_EQ(run.out.violations, 1u);
}

// A rundown that began and never ended while its process went on.
TEST(VerifyChecker, RundownWithoutEndIsAViolation) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1);
  for (uint64_t v = 1; v <= 3; ++v) s.record(1, version(v, v));
  s.load(version(4, 4));  // the process goes on
  const Checked run(s);
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(r.violations,
            Lines{"end: no rundown_end, although the process's events go on after the rundown's last one"});
  EXPECT_STREQ(r.g3, "not checked");
  EXPECT_EQ(run.out.violations, 1u);
  EXPECT_EQ(run.out.not_checked,
            Lines{"process 100 runtime 1, rundown 1: G3+: the rundown lacks its begin, end or sequence fields"});
}

// The trace ends inside a rundown (the session stopped): not complete, but no violation.
TEST(VerifyChecker, TraceEndingInsideARundownIsNotChecked) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1).record(1, version(1, 1));
  const Checked run(s);
  EXPECT_EQ(run.rundown().violations, Lines{});
  EXPECT_EQ(run.out.violations, 0u);
  EXPECT_EQ(run.out.not_checked,
            (Lines{"process 100 runtime 1, rundown 1: the trace ends before its rundown_end (the session stopped or "
                   "the process ended): not complete in this trace",
                   "process 100 runtime 1, rundown 1: G3+: the rundown lacks its begin, end or sequence fields"}));
}

// A rundown_end whose end_seq is short of its publish_seq, or whose count claims records
// that never came.
TEST(VerifyChecker, ShortEndIsACountsViolation) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1);
  for (uint64_t v = 1; v <= 3; ++v) s.record(1, version(v, v));
  s.end(1, 3, 1, 3, 2);
  const Checked run(s);
  EXPECT_EQ(run.rundown().violations, Lines{"counts: sequence values out of order: begin 3, publish_seq 3, end_seq 2"});
  EXPECT_EQ(run.out.violations, 1u);

  EventStream cut;
  for (uint64_t v = 1; v <= 3; ++v) cut.load(version(v, v));
  cut.begin(1, 3).module(1).record(1, version(1, 1)).record(1, version(2, 2)).end(1, 3, 1, 3, 3);
  const Checked run2(cut);
  EXPECT_EQ(run2.rundown().violations,
            (Lines{"counts: rundown_end.versions = 3 but 2 method records",
                   "G3: version_id 3 (method 103, publish_seq 3) was published before the rundown's end (publish_seq "
                   "3), not removed, but is missing"}));
  EXPECT_EQ(run2.out.violations, 2u);
}

// rundown_end.methods is the distinct methods of its records, caught_up_methods those of
// them with records only after B: here methods 101 (walked, and caught up again: one
// method), 102 (walked) and 104 (caught up only), so 3 and 1; counting 101 twice, or
// each pass's methods apart, is a violation.
TEST(VerifyChecker, MethodCountsAreTheRecordsMethods) {
  auto of = [](uint64_t vid, uint64_t seq, uint64_t method) {
    MethodRecord r = version(vid, seq);
    r.method_id = method;
    return r;
  };
  const MethodRecord v[] = {of(1, 1, 101), of(2, 2, 102), of(3, 3, 101), of(4, 4, 104)};
  auto stream = [&](uint64_t methods, uint64_t caught_up_methods) {
    EventStream s;
    for (const MethodRecord& r : v) s.load(r);
    s.begin(1, 2).module(1);
    for (const MethodRecord& r : v) s.record(1, r);
    s.endMethods(1, 4, methods, caught_up_methods, 4, 4, 2);
    return s;
  };
  const Checked good(stream(3, 1));
  EXPECT_EQ(good.rundown().violations, Lines{});
  EXPECT_EQ(good.out.violations, 0u);
  const Checked twice(stream(4, 2));
  EXPECT_EQ(twice.rundown().violations,
            (Lines{"counts: rundown_end.methods = 4 but 3 methods have method records",
                   "counts: rundown_end.caught_up_methods = 2 but 1 methods have records only after rundown_begin's "
                   "publish_seq"}));
  const Checked walked_only(stream(2, 0));
  EXPECT_EQ(walked_only.rundown().violations,
            (Lines{"counts: rundown_end.methods = 2 but 3 methods have method records",
                   "counts: rundown_end.caught_up_methods = 0 but 1 methods have records only after rundown_begin's "
                   "publish_seq"}));
}

// Cut short by the application's shutdown (rundown_end.cut_short): fewer records than
// its count is no violation, and G3+ says it is not complete.
TEST(VerifyChecker, RundownCutShortByShutdownIsNotChecked) {
  EventStream s;
  for (uint64_t v = 1; v <= 3; ++v) s.load(version(v, v));
  s.begin(1, 3).module(1).record(1, version(1, 1)).record(1, version(2, 2)).end(1, 3, 1, 3, 3, 0, true);
  const Checked run(s);
  const RundownVerdict& r = run.rundown();
  EXPECT_EQ(r.violations, Lines{});
  EXPECT_STREQ(r.g3, "cut short");
  EXPECT_EQ(run.out.violations, 0u);
  EXPECT_EQ(run.out.not_checked, Lines{"process 100 runtime 1, rundown 1: G3+: cut short by the application's "
                                       "shutdown (rundown_end.cut_short): it is not complete"});
}

// Two processes, and two runtimes in one of them, with the same ids, their events
// interleaved: each is checked apart; the one with a gap is reported, the others not.
TEST(VerifyChecker, ProcessesAndRuntimesAreNotConfused) {
  EventStream s;
  const std::pair<int64_t, uint32_t> who[] = {{100, 1}, {200, 1}, {100, 2}};
  for (uint64_t v = 1; v <= 3; ++v)
    for (const auto& [pid, inst] : who) s.of(pid, inst).load(version(v, v));
  for (const auto& [pid, inst] : who) s.of(pid, inst).begin(1, 3).module(1);
  for (uint64_t v = 1; v <= 3; ++v)
    for (const auto& [pid, inst] : who)
      if (pid != 200 || v != 2) s.of(pid, inst).record(1, version(v, v));  // process 200 skips version 2
  for (const auto& [pid, inst] : who) s.of(pid, inst).end(1, pid == 200 ? 2 : 3, 1, 3, 3);
  const Checked run(s);
  ASSERT_EQ(run.processes.size(), 3u);
  EXPECT_EQ(run.rundown(200, 1).violations,
            Lines{"G3: version_id 2 (method 102, publish_seq 2) was published before the rundown's end (publish_seq "
                  "3), not removed, but is missing"});
  for (const auto& [pid, inst] : {std::pair<int64_t, uint32_t>{100, 1}, {100, 2}}) {
    EXPECT_EQ(run.rundown(pid, inst).violations, Lines{}) << pid << " runtime " << inst;
    EXPECT_STREQ(run.rundown(pid, inst).g3, "pass");
    EXPECT_EQ(run.rundown(pid, inst).rundown->g2_checked, 3u);
  }
  EXPECT_EQ(run.out.violations, 1u);
  EXPECT_EQ(run.out.not_checked, Lines{});
}

// A second rundown_begin with the same id stops the checking with the reader's message.
TEST(VerifyChecker, SecondBeginIsAnError) {
  EventStream s = goodStream();
  s.begin(1, 3);
  Checker c;
  EXPECT_FALSE(c.apply(s.batch()));
  EXPECT_EQ(c.error(),
            "event jitprov_rundown:rundown_begin: missing or malformed rundown_id (a second rundown_begin with the "
            "same id; or a later process of this vpid, in a session without the runtime events that tell it apart)");
}

}  // namespace

// The code bodies a process shows (what `jitprov record` summarizes): each version once,
// from its method_load or, without one, its first rundown record, by that one's tier;
// a version in two rundowns and its method_load is one body; a tier outside the ABI's
// is counted apart.
TEST(VerifyChecker, CodeBodiesAreDistinctVersionsByTier) {
  EventStream s;
  MethodRecord v1 = version(1, 1), v2 = version(2, 2), v3 = version(3, 3), v4 = version(4, 4);
  v1.tier = 0, v2.tier = 4, v3.tier = 0, v4.tier = 9;
  s.load(v1).load(v2);  // v3, v4: known from the rundowns only
  s.begin(1, 4).module(1).record(1, v1).record(1, v2).record(1, v3).record(1, v4).end(1, 4, 1, 4, 4);
  s.begin(2, 4).module(2).record(2, v1).record(2, v2).record(2, v3).record(2, v4).end(2, 4, 1, 4, 4);
  const Checked run(s);
  const jitprov::verify::Process& p = *run.processes.at(0).process;
  EXPECT_EQ(p.bodies_by_tier[0], 2u);                                         // v1, v3
  EXPECT_EQ(p.bodies_by_tier[4], 1u);                                         // v2
  EXPECT_EQ(p.bodies_by_tier[jitprov::verify::Process::kTierSlots - 1], 1u);  // v4
  uint64_t total = 0;
  for (uint64_t n : p.bodies_by_tier) total += n;
  EXPECT_EQ(total, 4u);
}
