// SPDX-License-Identifier: MIT
// jitprov-verify's babeltrace2 graph (reader.h).
#include "reader.h"

#include <babeltrace2/babeltrace.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace jitprov::verify {

namespace {

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

// One ctf source per trace of the session, all feeding the muxer (time order); their
// files were checked before (trace_files.h). "" or why not.
std::string addSources(bt_graph* graph, const bt_component_class_source* fs, const bt_component_filter* mux,
                       const Session& s) {
  const std::vector<std::string>& traces = s.traces;
  for (size_t t = 0; t < traces.size(); ++t) {
    bt_value* params = bt_value_map_create();
    bt_value* inputs = nullptr;
    if (params == nullptr ||
        bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
        bt_value_array_append_string_element(inputs, traces[t].c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
        // Live: end with the session (the default, "continue", never ends).
        (s.live && bt_value_map_insert_string_entry(params, "session-not-found-action", "end") !=
                       BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)) {
      bt_value_put_ref(params);
      return "cannot set up babeltrace2";
    }
    const bt_component_source* src = nullptr;
    const bool added = bt_graph_add_source_component(graph, fs, ("src" + std::to_string(t)).c_str(), params,
                                                     BT_LOGGING_LEVEL_NONE, &src) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
    bt_value_put_ref(params);
    if (!added) return traces[t] + ": " + takeError();
    const uint64_t outs = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < outs; ++i) {
      // The muxer adds an input port each time one is connected: use the last.
      const uint64_t ins = bt_component_filter_get_input_port_count(mux);
      if (bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_index_const(src, i),
                                 bt_component_filter_borrow_input_port_by_index_const(mux, ins - 1),
                                 nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        return takeError();
    }
  }
  return "";
}

// Runs the graph to its end (live: until the session ends, the relay goes away or the
// deadline passes); the pipe is drained whenever the graph stops. "" or why it failed.
std::string runGraph(bt_graph* graph, Session& s, BatchPipe<Batch>* pipe) {
  for (;;) {
    const bt_graph_run_status rs = bt_graph_run(graph);
    if (rs != BT_GRAPH_RUN_STATUS_AGAIN && pipe != nullptr) pipe->drain();  // the checker's error is ours now
    if (rs == BT_GRAPH_RUN_STATUS_OK) return "";  // every sink consumed everything (live: the session ended)
    if (rs == BT_GRAPH_RUN_STATUS_AGAIN) {
      if (s.live) {
        if (std::chrono::steady_clock::now() >= s.deadline) {
          s.timed_out = true;
          return "";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // nothing new from the relay yet
      }
      continue;
    }
    if (s.live && s.checker.error().empty()) {
      // The relay daemon went away (or refused us) after the session began: what was
      // received is still checked, and the loss is reported.
      s.connection_lost = takeError();
      return "";
    }
    return s.checker.error().empty() ? takeError() : s.checker.error();
  }
}

}  // namespace

std::string Reader::read(Session& s) { return readGraph(s); }

std::string Reader::explain(Session& s) {
  if (s.live || !s.checker.wantExplanations()) return "";
  s.explaining = true;
  s.lives.rewind();  // the same events, the same processes
  return readGraph(s);
}

// Reads the session's traces into `s`. Returns "" or why they could not be read.
std::string Reader::readGraph(Session& s) {
  const bt_plugin* ctf = nullptr;
  const bt_plugin* utils = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK)
    return "babeltrace2's ctf plugin is not installed";
  if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) != BT_PLUGIN_FIND_STATUS_OK) {
    bt_plugin_put_ref(ctf);
    return "babeltrace2's utils plugin is not installed";
  }
  const bt_component_class_source* fs =
      bt_plugin_borrow_source_component_class_by_name_const(ctf, s.live ? "lttng-live" : "fs");
  const bt_component_class_filter* muxer = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
  decoder_.reset();  // the previous graph's classes and streams are gone
  session_ = &s;
  // The first reading checks on a thread of its own (from files) or at once (live).
  std::optional<BatchPipe<Batch>> pipe;
  if (!s.explaining) {
    pipe.emplace(!s.live, 4, [&s, &pipe](Batch& b) {
      if (!s.checker.apply(b)) pipe->fail();
    });
    pipe_ = &*pipe;
  }
  std::string why;
  bt_graph* graph = bt_graph_create(0);
  const bt_component_filter* mux = nullptr;
  const bt_component_sink* sink = nullptr;
  if (graph == nullptr || fs == nullptr || muxer == nullptr)
    why = "cannot set up babeltrace2";
  else if (bt_graph_add_filter_component(graph, muxer, "mux", nullptr, BT_LOGGING_LEVEL_NONE, &mux) !=
           BT_GRAPH_ADD_COMPONENT_STATUS_OK)
    why = takeError();
  else
    why = addSources(graph, fs, mux, s);
  if (why.empty() && bt_graph_add_simple_sink_component(graph, "verify", nullptr, consume, nullptr, this, &sink) !=
                         BT_GRAPH_ADD_COMPONENT_STATUS_OK)
    why = takeError();
  if (why.empty() && bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                                            bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                            nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
    why = takeError();
  if (why.empty()) why = runGraph(graph, s, pipe_);
  if (pipe) pipe->drain();  // everything read is checked (a timed-out live session, a set-up error)
  pipe_ = nullptr;
  session_ = nullptr;
  // The checking thread's error in the last batches: handed over after the graph ended.
  if (why.empty() && !s.checker.error().empty()) why = s.checker.error();
  bt_graph_put_ref(graph);
  bt_plugin_put_ref(ctf);
  bt_plugin_put_ref(utils);
  return why;
}

bt_graph_simple_sink_component_consume_func_status Reader::consume(bt_message_iterator* it, void* data) {
  return static_cast<Reader*>(data)->consumeNext(it);
}

bt_graph_simple_sink_component_consume_func_status Reader::consumeNext(bt_message_iterator* it) {
  if (pipe_ != nullptr && pipe_->failed()) return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  bt_message_array_const msgs;
  uint64_t count = 0;
  switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
      break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  bool read_error = false;
  for (uint64_t i = 0; i < count; ++i) {
    if (!read_error) onMessage(msgs[i], &read_error);
    bt_message_put_ref(msgs[i]);
  }
  if (pipe_ == nullptr) return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;  // the second reading
  // Live: every message array handed over at once (no thread), so that each rundown is
  // reported as it ends; from files, full batches to the checking thread.
  if (read_error || session_->live || pipe_->current().items.size() >= kBatchItems) pipe_->push();
  return read_error || pipe_->failed() ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                                       : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

void Reader::onMessage(const bt_message* m, bool* read_error) {
  Session& s = *session_;
  switch (bt_message_get_type(m)) {
    case BT_MESSAGE_TYPE_EVENT:
      onEvent(m);
      *read_error = pipe_ != nullptr && !pipe_->current().error.empty();
      break;
    case BT_MESSAGE_TYPE_STREAM_BEGINNING:
      onStreamBeginning(m);
      break;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
      if (s.explaining) break;  // counted by the first reading
      uint64_t c = 0;
      if (bt_message_discarded_events_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
        s.discarded_events += c;
      else
        ++s.discarded_unknown;
      break;
    }
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
      if (s.explaining) break;
      uint64_t c = 0;
      if (bt_message_discarded_packets_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
        s.discarded_packets += c;
      else
        ++s.discarded_unknown;
      break;
    }
    default:
      break;
  }
}

// An event: decoded into the current batch (or, on the second reading, the fields of
// the mismatches to explain handed to the checker).
void Reader::onEvent(const bt_message* msg) {
  Session& s = *session_;
  const bt_event* ev = bt_message_event_borrow_event_const(msg);
  const Kind kind = decoder_.kindOf(bt_event_borrow_class_const(ev));
  if (kind == Kind::kOther) return;
  if (s.explaining) {
    const int64_t pid = processKey(ev, kind);
    if (kind != Kind::kMethodLoad && kind != Kind::kRundownMethod) return;
    MethodRecordView r;
    uint64_t rid = 0;
    uint32_t instance = 0;
    if (!decoder_.methodRecord(ev, kind, &r, &rid, &instance)) return;
    if (kind == Kind::kMethodLoad)
      s.checker.explainLoad(pid, instance, r);
    else
      s.checker.explainRecord(pid, instance, rid, r);
    return;
  }
  const int64_t pid = processKey(ev, kind);
  if (pid < 0) {
    ++s.unattributed;
    return;
  }
  if (s.inventory) takeInventory(ev, kind, pid);
  decoder_.decode(msg, kind, pid, pipe_->current());
}

// The key of the event's process (lives.h), -1 when its trace does not say.
int64_t Reader::processKey(const bt_event* ev, Kind kind) {
  const ProcessId id = decoder_.processOf(ev, &session_->pidns_partial);
  if (id.vpid < 0) return -1;
  uint32_t instance = 0;
  uint64_t start = 0;
  if ((kind == Kind::kModuleLoad || kind == Kind::kRundownBegin) && decoder_.startId(ev, kind, &instance, &start))
    return kind == Kind::kRundownBegin ? session_->lives.onRundownBegin(id, instance, start)
                                       : session_->lives.onModuleLoad(id, instance, start);
  return session_->lives.keyOf(id);
}

// --top: the event's method or module into the session's inventory (an event it cannot
// read is the checker's to refuse).
void Reader::takeInventory(const bt_event* ev, Kind kind, int64_t pid) {
  uint32_t instance = 0;
  if (kind == Kind::kMethodLoad || kind == Kind::kRundownMethod) {
    MethodRecordView r;
    uint64_t rid = 0;
    if (decoder_.methodRecord(ev, kind, &r, &rid, &instance)) session_->inventory->addRecord(pid, instance, r);
  } else if (kind == Kind::kRundownModule || kind == Kind::kModuleLoad) {
    uint64_t module_id = 0;
    std::string_view path;
    if (decoder_.moduleRecord(ev, kind, &module_id, &path, &instance))
      session_->inventory->addModule(pid, instance, module_id, path);
  }
}

// A stream begins: note the session's name.
void Reader::onStreamBeginning(const bt_message* msg) {
  const bt_stream* stream = bt_message_stream_beginning_borrow_stream_const(msg);
  if (session_->name.empty()) {
    const bt_value* v =
        bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(stream), "trace_name");
    if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_STRING) session_->name = bt_value_string_get(v);
  }
}

}  // namespace jitprov::verify
