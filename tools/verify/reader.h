/* SPDX-License-Identifier: MIT */
// jitprov-verify's reading of a session's traces through libbabeltrace2: a graph of one
// ctf source per trace (or lttng-live), a muxer (time order) and a sink that decodes each
// event (decode.h) and hands it to the session's checker. From files, the checker runs
// on a thread of its own, fed through a bounded pipe of batches (verify_pipe.h): reading
// and checking overlap. Live, each message array is checked at once on the reading
// thread, so that each rundown is reported as it ends.
// The Reader owns every cache of the reading (its Decoder's): emptied with each graph.
#pragma once

#include <babeltrace2/babeltrace.h>
#include "decode.h"
#include "events.h"
#include "session.h"
#include "verify_pipe.h"

#include <string>

namespace jitprov::verify {

class Reader {
 public:
  Reader() = default;
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the session's traces (their files checked before: trace_files.h), their events
  // checked by s.checker. "" or why they could not be read.
  std::string read(Session& s);
  // G2 compared digests: which fields differ is read from the trace again, for the
  // mismatches shown (rare; a live session cannot be read twice: there the report says
  // "fields (their digest)"). Sets s.explaining when it read again.
  std::string explain(Session& s);

 private:
  std::string readGraph(Session& s);
  static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it, void* data);
  bt_graph_simple_sink_component_consume_func_status consumeNext(bt_message_iterator* it);
  void onMessage(const bt_message* m, bool* read_error);
  void onEvent(const bt_message* m);
  void onStreamBeginning(const bt_message* m);
  void takeInventory(const bt_event* ev, Kind kind, int64_t pid);
  int64_t processKey(const bt_event* ev, Kind kind);

  Decoder decoder_;
  Session* session_ = nullptr;        // the session being read
  BatchPipe<Batch>* pipe_ = nullptr;  // to its checker; null on the second reading
};

}  // namespace jitprov::verify
