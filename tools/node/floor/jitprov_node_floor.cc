// SPDX-License-Identifier: MIT
// jitprov_node_floor.node: the Node.js client's floor, a benchmark artefact
// (tools/bench/node-cost, side `floor`; never installed). Loaded the same way as the
// client (NODE_OPTIONS=--require=.../preload-floor.js, into every isolate), it installs
// a JIT code event handler with kJitCodeEventEnumExisting as the client does and does
// nothing in it: what V8 costs any such handler (every code object named for it, its
// line info, the enumeration at install), and what node costs to load an addon. Above
// it is the client's own: libjitprov's and lttng-ust's load, the handler's work, the
// rundowns (docs/node.md, "Cost").
#include <node.h>
#include <v8.h>

namespace {

void onJitCodeEvent(const v8::JitCodeEvent*) {}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  (void)exports;
  (void)module;
  context->GetIsolate()->SetJitCodeEventHandler(v8::kJitCodeEventEnumExisting, &onJitCodeEvent);
}
