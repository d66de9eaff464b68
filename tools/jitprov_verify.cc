// jitprov-verify TRACE_DIR: reads a CTF trace through libbabeltrace2 and checks, for
// every rundown in it, the guarantees of SPEC.md against the jitprov_runtime events of
// the same trace where they were recorded:
//   G2 consistent: each `method` record's fields equal its version's `method_load`;
//   G3 complete:   every version whose method_load is older than rundown_begin (minus
//                  a clock margin) and whose method has no method_unload before
//                  rundown_end is in the rundown;
//   G4 once:       no version_id twice in one rundown;
//   counts:        rundown_end's versions/modules equal the records seen; a rundown
//                  without its end is reported;
//   loss:          discarded events anywhere in the trace.
// Exit: 0 all hold, 1 a guarantee is violated, 2 usage or unreadable input, 3 events
// lost (the verdict cannot be trusted then; violations are still printed).
#include "cli.h"
#include <babeltrace2/babeltrace.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Fields {
  uint64_t method_id = 0, version_id = 0, code_start = 0;
  uint32_t module_id = 0, rejit_id = 0, code_size = 0, token = 0, flags = 0;
  int64_t host_tier = -1;  // -1: a trace from before the field existed
  std::string tier;
  uint64_t names = 0;  // hash of namespace, name, signature
};

// Which fields differ, comma-separated ("" when none).
std::string diff(const Fields& a, const Fields& b) {
  std::string d;
  auto add = [&](bool differs, const char* n) {
    if (differs) d += std::string(d.empty() ? "" : ",") + n;
  };
  add(a.method_id != b.method_id, "method_id");
  add(a.module_id != b.module_id, "module_id");
  add(a.rejit_id != b.rejit_id, "rejit_id");
  add(a.tier != b.tier, "tier");
  add(a.host_tier != b.host_tier, "host_tier");
  add(a.code_start != b.code_start, "code_start");
  add(a.code_size != b.code_size, "code_size");
  add(a.token != b.token, "method_token");
  add(a.flags != b.flags, "method_flags");
  add(a.names != b.names, "namespace/name/signature");
  return d;
}

struct Load {
  Fields f;
  int64_t ts;
};

struct Record {
  uint64_t version_id;
  Fields f;
};

struct Rundown {
  uint64_t id = 0;
  bool has_begin = false, has_end = false;
  int64_t begin_ts = 0, end_ts = 0;
  std::string mode, trigger;
  uint64_t module_records = 0;
  std::vector<Record> records;
  uint64_t end_modules = 0, end_methods = 0, end_versions = 0, end_skipped = 0, end_retried = 0, end_duration = 0;
};

struct State {
  std::unordered_map<uint64_t, Load> loads;            // version_id -> method_load
  std::unordered_map<uint64_t, int64_t> unloads;       // method_id -> first method_unload
  std::unordered_map<uint64_t, int64_t> retires;       // version_id -> its code_unload
  std::map<uint64_t, Rundown> rundowns;                // rundown_id -> rundown
  uint64_t discarded_events = 0, discarded_packets = 0, discarded_unknown = 0;
  uint64_t events = 0, method_loads = 0, method_unloads = 0, code_unloads = 0;
  std::string error;  // fatal: a field missing or of the wrong type
};

// --- field access -------------------------------------------------------------------
const bt_field* member(const bt_field* s, const char* name) {
  return s == nullptr ? nullptr : bt_field_structure_borrow_member_field_by_name_const(s, name);
}

bool u64(const bt_field* s, const char* name, uint64_t* out) {
  const bt_field* f = member(s, name);
  if (f == nullptr) return false;
  const bt_field_class_type t = bt_field_get_class_type(f);
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
    *out = bt_field_integer_unsigned_get_value(f);
    return true;
  }
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
    *out = uint64_t(bt_field_integer_signed_get_value(f));
    return true;
  }
  return false;
}

bool str(const bt_field* s, const char* name, std::string* out) {
  const bt_field* f = member(s, name);
  if (f == nullptr || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) return false;
  out->assign(bt_field_string_get_value(f), bt_field_string_get_length(f));
  return true;
}

bool enumLabel(const bt_field* s, const char* name, std::string* out) {
  const bt_field* f = member(s, name);
  if (f == nullptr || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) return false;
  bt_field_class_enumeration_mapping_label_array labels;
  uint64_t count = 0;
  if (bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &count) !=
          BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK ||
      count != 1)
    return false;
  *out = labels[0];
  return true;
}

bool methodFields(const bt_field* p, Fields* f) {
  uint64_t v;
  std::string ns, name, sig;
  bool ok = u64(p, "method_id", &f->method_id) && u64(p, "version_id", &f->version_id) &&
            u64(p, "code_start", &f->code_start) && enumLabel(p, "tier", &f->tier) &&
            str(p, "namespace", &ns) && str(p, "name", &name) && str(p, "signature", &sig);
  ok = ok && u64(p, "module_id", &v) && ((f->module_id = uint32_t(v)), true);
  ok = ok && u64(p, "rejit_id", &v) && ((f->rejit_id = uint32_t(v)), true);
  ok = ok && u64(p, "code_size", &v) && ((f->code_size = uint32_t(v)), true);
  ok = ok && u64(p, "method_token", &v) && ((f->token = uint32_t(v)), true);
  ok = ok && u64(p, "method_flags", &v) && ((f->flags = uint32_t(v)), true);
  if (!ok) return false;
  if (member(p, "host_tier") != nullptr) {
    if (!u64(p, "host_tier", &v) || v > UINT16_MAX) return false;
    f->host_tier = int64_t(v);
  }
  static const char* const kTiers[] = {"tier0", "tier1", "tier1_osr", "instrumented", "optimized"};
  if (std::find(std::begin(kTiers), std::end(kTiers), f->tier) == std::end(kTiers)) return false;
  std::hash<std::string> h;
  f->names = h(ns) * 1000003u ^ h(name) * 31u ^ h(sig);
  return true;
}

// --- consuming the muxed messages ----------------------------------------------------
void onEvent(State* st, const bt_message* msg) {
  const bt_event* ev = bt_message_event_borrow_event_const(msg);
  const char* name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
  if (name == nullptr) return;
  const std::string n(name);
  if (n.rfind("jitprov_", 0) != 0) return;
  ++st->events;
  int64_t ts = 0;
  if (bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(msg), &ts) !=
      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
    st->error = "event " + n + " has no usable timestamp";
    return;
  }
  const bt_field* p = bt_event_borrow_payload_field_const(ev);
  auto bad = [&](const char* what) { st->error = "event " + n + ": missing or malformed " + what; };
  if (n == "jitprov_runtime:method_load") {
    Fields f;
    if (!methodFields(p, &f)) return bad("method fields");
    ++st->method_loads;
    st->loads.emplace(f.version_id, Load{f, ts});
  } else if (n == "jitprov_runtime:method_unload") {
    uint64_t mid;
    if (!u64(p, "method_id", &mid)) return bad("method_id");
    ++st->method_unloads;
    st->unloads.emplace(mid, ts);  // keeps the first
  } else if (n == "jitprov_runtime:code_unload") {
    uint64_t vid;
    if (!u64(p, "version_id", &vid)) return bad("version_id");
    ++st->code_unloads;
    st->retires.emplace(vid, ts);
  } else if (n.rfind("jitprov_rundown:", 0) == 0) {
    uint64_t rid;
    if (!u64(p, "rundown_id", &rid)) return bad("rundown_id");
    Rundown& r = st->rundowns[rid];
    r.id = rid;
    if (n == "jitprov_rundown:rundown_begin") {
      r.has_begin = true;
      r.begin_ts = ts;
      if (!enumLabel(p, "mode", &r.mode) || !enumLabel(p, "trigger", &r.trigger)) return bad("mode/trigger");
    } else if (n == "jitprov_rundown:module") {
      ++r.module_records;
    } else if (n == "jitprov_rundown:method") {
      Record rec;
      if (!methodFields(p, &rec.f)) return bad("method fields");
      rec.version_id = rec.f.version_id;
      r.records.push_back(std::move(rec));
    } else if (n == "jitprov_rundown:rundown_end") {
      r.has_end = true;
      r.end_ts = ts;
      if (!u64(p, "modules", &r.end_modules) || !u64(p, "methods", &r.end_methods) ||
          !u64(p, "versions", &r.end_versions) || !u64(p, "skipped", &r.end_skipped) ||
          !u64(p, "retried", &r.end_retried) || !u64(p, "duration_ns", &r.end_duration))
        return bad("counts");
    }
  }
}

bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it, void* data) {
  auto* st = static_cast<State*>(data);
  bt_message_array_const msgs;
  uint64_t count = 0;
  switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const bt_message* m = msgs[i];
    switch (bt_message_get_type(m)) {
      case BT_MESSAGE_TYPE_EVENT: onEvent(st, m); break;
      case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        uint64_t c = 0;
        if (bt_message_discarded_events_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
          st->discarded_events += c;
        else
          ++st->discarded_unknown;
        break;
      }
      case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
        uint64_t c = 0;
        if (bt_message_discarded_packets_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
          st->discarded_packets += c;
        else
          ++st->discarded_unknown;
        break;
      }
      default: break;
    }
    bt_message_put_ref(m);
  }
  return st->error.empty() ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK
                           : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
}

// The root cause babeltrace2 recorded, as one line.
std::string takeError() {
  const bt_error* err = bt_current_thread_take_error();
  if (err == nullptr) return "unknown error";
  std::string msg;
  const uint64_t n = bt_error_get_cause_count(err);
    if (n > 0) msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, 0));  // the root cause
  bt_error_release(err);
  for (char& c : msg)
    if (c == '\n') c = ' ';
  return msg.empty() ? "unknown error" : msg;
}

// Directories at or below `dir` that hold a CTF trace (a `metadata` file), sorted.
std::vector<std::string> findTraces(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(dir) / "metadata", ec)) out.push_back(dir);
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename() == "metadata" && it->path().parent_path() != dir)
      out.push_back(it->path().parent_path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads the trace into `st`. Returns "" or why it could not.
std::string readTrace(const std::string& dir, State* st) {
  const bt_plugin* ctf = nullptr;
  const bt_plugin* utils = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK)
    return "babeltrace2's ctf plugin is not installed";
  if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) != BT_PLUGIN_FIND_STATUS_OK) {
    bt_plugin_put_ref(ctf);
    return "babeltrace2's utils plugin is not installed";
  }
  const bt_component_class_source* fs = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
  const bt_component_class_filter* muxer = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
  std::string why;
  bt_graph* graph = bt_graph_create(0);
  bt_value* params = bt_value_map_create();
  bt_value* inputs = nullptr;
  const bt_component_source* src = nullptr;
  const bt_component_filter* mux = nullptr;
  const bt_component_sink* sink = nullptr;
  if (graph == nullptr || params == nullptr || fs == nullptr || muxer == nullptr) {
    why = "cannot set up babeltrace2";
  } else if (bt_graph_add_filter_component(graph, muxer, "mux", nullptr, BT_LOGGING_LEVEL_NONE, &mux) !=
             BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    why = takeError();
  } else {
    // One ctf.fs source per trace (a directory with a `metadata` file) under `dir`, as
    // babeltrace2's command line discovers them; all feed one muxer (time order).
    const std::vector<std::string> traces = findTraces(dir);
    if (traces.empty()) why = "no CTF trace in it (no `metadata` file below it)";
    for (size_t t = 0; t < traces.size() && why.empty(); ++t) {
      bt_value_put_ref(params);
      params = bt_value_map_create();
      inputs = nullptr;
      if (params == nullptr || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
          bt_value_array_append_string_element(inputs, traces[t].c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
        why = "cannot set up babeltrace2";
        break;
      }
      if (bt_graph_add_source_component(graph, fs, ("src" + std::to_string(t)).c_str(), params,
                                        BT_LOGGING_LEVEL_NONE, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        why = traces[t] + ": " + takeError();
        break;
      }
      const uint64_t outs = bt_component_source_get_output_port_count(src);
      for (uint64_t i = 0; i < outs && why.empty(); ++i) {
        // The muxer adds an input port each time one is connected: use the last.
        const uint64_t ins = bt_component_filter_get_input_port_count(mux);
        if (bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_index_const(src, i),
                                   bt_component_filter_borrow_input_port_by_index_const(mux, ins - 1),
                                   nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
          why = takeError();
      }
    }
    if (why.empty() &&
        bt_graph_add_simple_sink_component(graph, "verify", nullptr, consume, nullptr, st, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK)
      why = takeError();
    if (why.empty() &&
        bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                               nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
      why = takeError();
    while (why.empty()) {
      const bt_graph_run_status s = bt_graph_run(graph);
      if (s == BT_GRAPH_RUN_STATUS_OK) break;  // every sink consumed everything
      if (s == BT_GRAPH_RUN_STATUS_AGAIN) continue;
      why = st->error.empty() ? takeError() : st->error;
    }
  }
  bt_value_put_ref(params);
  bt_graph_put_ref(graph);
  bt_plugin_put_ref(ctf);
  bt_plugin_put_ref(utils);
  return why;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool json = false;
  double margin_us = 100;
  int show = 5;
  CLI::App cli{"jitprov-verify: check a CTF trace's jitprov rundowns (G2 consistent, G3 complete, G4 once, "
               "rundown_end counts, lost events)"};
  cli.add_option("TRACE_DIR", dir, "trace directory (an lttng session's output, or any directory above it)")
      ->required();
  cli.add_flag("--json", json, "the report as one JSON object");
  cli.add_option("--margin-us", margin_us,
                 "clock margin for G3: only versions whose method_load is this much older than rundown_begin "
                 "must be in the rundown")
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--show", show, "violations shown per check")->check(CLI::NonNegativeNumber);
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-verify", argc, argv)) return *rc;
  struct stat sb;
  if (stat(dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: not a directory\n", dir.c_str());
    return 2;
  }
  State st;
  if (const std::string why = readTrace(dir, &st); !why.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", dir.c_str(), why.c_str());
    return 2;
  }
  if (st.events == 0 && st.rundowns.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: no jitprov events in it\n", dir.c_str());
    return 2;
  }

  const int64_t margin = int64_t(margin_us * 1000);
  const bool have_loads = st.method_loads > 0;
  nlohmann::json report = {{"trace", dir},
                           {"events", st.events},
                           {"method_load", st.method_loads},
                           {"method_unload", st.method_unloads},
                           {"code_unload", st.code_unloads},
                           {"discarded_events", st.discarded_events},
                           {"discarded_packets", st.discarded_packets},
                           {"discard_messages_without_count", st.discarded_unknown}};
  std::vector<std::string> violations;
  nlohmann::json rjs = nlohmann::json::array();
  for (auto& [rid, r] : st.rundowns) {
    nlohmann::json j = {{"rundown_id", rid}, {"mode", r.mode}, {"trigger", r.trigger},
                        {"begin_ns", r.begin_ts}, {"end_ns", r.end_ts},
                        {"method_records", r.records.size()}, {"module_records", r.module_records}};
    std::vector<std::string> rv;
    auto violate = [&](const std::string& check, const std::string& what, uint64_t* shown) {
      if (shown == nullptr || (*shown)++ < uint64_t(show)) rv.push_back(check + ": " + what);
    };
    if (!r.has_begin) violate("begin", "no rundown_begin", nullptr);
    if (!r.has_end) violate("end", "no rundown_end: the rundown did not finish in this trace", nullptr);
    if (r.has_end) {
      j["rundown_end"] = {{"modules", r.end_modules}, {"methods", r.end_methods}, {"versions", r.end_versions},
                          {"skipped", r.end_skipped}, {"retried", r.end_retried},
                          {"duration_ns", r.end_duration}};
      if (r.end_versions != r.records.size())
        violate("counts", "rundown_end.versions = " + std::to_string(r.end_versions) + " but " +
                              std::to_string(r.records.size()) + " method records",
                nullptr);
      if (r.end_modules != r.module_records)
        violate("counts", "rundown_end.modules = " + std::to_string(r.end_modules) + " but " +
                              std::to_string(r.module_records) + " module records",
                nullptr);
    }
    // G4.
    std::sort(r.records.begin(), r.records.end(),
              [](const Record& a, const Record& b) { return a.version_id < b.version_id; });
    uint64_t dups = 0, shown4 = 0;
    for (size_t i = 1; i < r.records.size(); ++i) {
      if (r.records[i].version_id == r.records[i - 1].version_id) {
        ++dups;
        violate("G4", "version_id " + std::to_string(r.records[i].version_id) + " appears twice", &shown4);
      }
    }
    j["G4"] = {{"status", dups ? "violated" : "pass"}, {"duplicates", dups}};
    // G2.
    uint64_t checked2 = 0, no_load = 0, bad2 = 0, shown2 = 0;
    for (const Record& rec : r.records) {
      auto it = st.loads.find(rec.version_id);
      if (it == st.loads.end()) {
        ++no_load;
        continue;
      }
      ++checked2;
      const std::string d = diff(rec.f, it->second.f);
      if (!d.empty()) {
        ++bad2;
        violate("G2", "version_id " + std::to_string(rec.version_id) + ": " + d + " differ from its method_load",
                &shown2);
      }
      // Retired (code_unload) before the rundown began: no longer live code.
      auto rt = st.retires.find(rec.version_id);
      if (rt != st.retires.end() && rt->second < r.begin_ts - margin) {
        ++bad2;
        violate("G2", "version_id " + std::to_string(rec.version_id) + " was retired before rundown_begin but is reported",
                &shown2);
      }
    }
    j["G2"] = {{"status", !have_loads ? "not checked" : bad2 ? "violated" : "pass"},
               {"records_checked", checked2},
               {"records_without_method_load", no_load},
               {"mismatches", bad2}};
    // G3.
    uint64_t checked3 = 0, missing = 0, shown3 = 0;
    if (have_loads && r.has_begin && r.has_end) {
      for (const auto& [vid, load] : st.loads) {
        if (load.ts >= r.begin_ts - margin) continue;
        auto u = st.unloads.find(load.f.method_id);
        if (u != st.unloads.end() && u->second < r.end_ts) continue;
        // Retired before the end: may be absent. code_unload is fired right after the
        // version is unlinked, so its timestamp may trail the unlink: margin here too.
        auto rt = st.retires.find(vid);
        if (rt != st.retires.end() && rt->second < r.end_ts + margin) continue;
        ++checked3;
        const bool found = std::binary_search(
            r.records.begin(), r.records.end(), Record{vid, {}},
            [](const Record& a, const Record& b) { return a.version_id < b.version_id; });
        if (!found) {
          ++missing;
          violate("G3", "version_id " + std::to_string(vid) + " (method " + std::to_string(load.f.method_id) +
                            ") was published before rundown_begin but is missing",
                  &shown3);
        }
      }
    }
    j["G3"] = {{"status", !have_loads ? "not checked" : (!r.has_begin || !r.has_end) ? "not checked"
                          : missing ? "violated" : "pass"},
               {"versions_checked", checked3},
               {"missing", missing}};
    j["violations"] = rv;
    for (const std::string& v : rv) violations.push_back("rundown " + std::to_string(rid) + ": " + v);
    rjs.push_back(j);
  }
  report["rundowns"] = rjs;
  std::vector<std::string> not_checked;
  if (!have_loads)
    not_checked.push_back("G2 and G3: no jitprov_runtime:method_load events in the trace (enable jitprov_runtime:* "
                          "before the versions are published)");
  if (st.rundowns.empty()) not_checked.push_back("everything: no rundown in the trace");
  report["not_checked"] = not_checked;
  const bool lost = st.discarded_events > 0 || st.discarded_packets > 0 || st.discarded_unknown > 0;
  const int rc = lost ? 3 : !violations.empty() ? 1 : 0;
  report["verdict"] = rc == 0 ? "hold" : rc == 1 ? "violated" : "events lost";
  report["exit"] = rc;

  if (json) {
    std::printf("%s\n", report.dump(1).c_str());
  } else {
    std::printf("jitprov-verify: %s: %zu rundowns, %llu method_load, %llu method_unload, %llu code_unload, "
                "%llu events discarded%s\n",
                dir.c_str(), st.rundowns.size(), (unsigned long long)st.method_loads,
                (unsigned long long)st.method_unloads, (unsigned long long)st.code_unloads,
                (unsigned long long)st.discarded_events,
                st.discarded_packets ? (", " + std::to_string(st.discarded_packets) + " packets discarded").c_str()
                                     : "");
    for (const auto& j : rjs) {
      std::printf("rundown %llu (%s, %s): %llu method records, %llu module records\n",
                  (unsigned long long)j["rundown_id"].get<uint64_t>(), j["mode"].get<std::string>().c_str(),
                  j["trigger"].get<std::string>().c_str(), (unsigned long long)j["method_records"].get<uint64_t>(),
                  (unsigned long long)j["module_records"].get<uint64_t>());
      std::printf("  G2 consistent: %-11s (%llu records checked against method_load, %llu without one)\n",
                  j["G2"]["status"].get<std::string>().c_str(),
                  (unsigned long long)j["G2"]["records_checked"].get<uint64_t>(),
                  (unsigned long long)j["G2"]["records_without_method_load"].get<uint64_t>());
      std::printf("  G3 complete:   %-11s (%llu versions published before rundown_begin checked)\n",
                  j["G3"]["status"].get<std::string>().c_str(),
                  (unsigned long long)j["G3"]["versions_checked"].get<uint64_t>());
      std::printf("  G4 once:       %-11s\n", j["G4"]["status"].get<std::string>().c_str());
      for (const auto& v : j["violations"]) std::printf("  VIOLATION %s\n", v.get<std::string>().c_str());
    }
    for (const std::string& n : not_checked) std::printf("not checked: %s\n", n.c_str());
    if (lost)
      std::printf("EVENTS LOST: %llu events and %llu packets discarded by the tracer: the checks above cannot be "
                  "trusted\n",
                  (unsigned long long)st.discarded_events, (unsigned long long)st.discarded_packets);
    std::printf("verdict: %s (exit %d)\n",
                rc == 0 ? "every guarantee checked holds" : rc == 1 ? "a guarantee is violated" : "events lost", rc);
  }
  return rc;
}
