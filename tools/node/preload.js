// SPDX-License-Identifier: MIT
// jitprov's Node.js client, loaded from the environment alone (docs/node.md):
//   NODE_OPTIONS=--require=LIBDIR/jitprov/node/preload.js node app.js
// Node runs --require modules in the main thread and in every worker thread, so each
// isolate loads the addon, which installs its JIT code handler there. A failure to load
// it costs one line and the program runs on untraced.
'use strict';
try {
  const client = require(require('path').join(__dirname, 'jitprov_node.node'));
  // The exit rundown and the stats begin while node still runs (process.exit() included),
  // beside node's teardown; the client's atexit handler waits for them.
  if (require('worker_threads').isMainThread) process.on('exit', () => client.finish());
} catch (e) {
  process.stderr.write(`jitprov-node: load ${__dirname}/jitprov_node.node: ${e.message}; ` +
                       `pid ${process.pid} runs untraced\n`);
}
