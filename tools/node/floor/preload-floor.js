// SPDX-License-Identifier: MIT
// The Node.js client's floor (jitprov_node_floor.cc), loaded as the client's preload.js
// loads the client: NODE_OPTIONS=--require=.../preload-floor.js, in every isolate.
'use strict';
require(require('path').join(__dirname, 'jitprov_node_floor.node'));
