// SPDX-License-Identifier: MIT
// The generated Node.js workload of the node-crosscheck test (docs/node.md): thousands of
// functions tiered up (Sparkplug; every 8th also TurboFan) in generated script files,
// `new Function` and `vm.Script` rounds whose functions are dropped (their code dies
// and the GC frees it, so that later code lands on freed ranges), deoptimizations, enough
// allocation for the GC to move and free code, one worker thread that ends early and one
// that lives until the end. Then a quiet moment: it writes DIR/quiet and waits for
// DIR/stop (compiling nothing meanwhile); then it compiles the marker function
// `jitprov_quiet_end` of jitprov-marker.js (where the checker stops replaying V8's log),
// stops the worker and exits.
//   node workload.js DIR [FILES [FUNCTIONS_PER_FILE [ROUNDS [WORKERS]]]]
// WORKERS 0: no worker thread (V8's --no-logfile-per-isolate log stays whole). 2+late:
// the two, and a third ('late', like the steady one) once DIR/late exists, checked when
// the main thread's rounds are done (DIR/compiled; the node-attach test creates DIR/late
// after the attach: a worker started after it).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

function source(tag, n) {
  let s = '';
  for (let i = 0; i < n; i++)
    s += `function ${tag}_f${i}(a, b) { let s = 0; for (let k = 0; k < a; k++) s += (k * ${i + 1}) ^ b; return s; }\n`;
  s += `module.exports = [${Array.from({ length: n }, (_, i) => `${tag}_f${i}`).join(', ')}];\n`;
  return s;
}

// Calls each function enough for Sparkplug, every 8th enough for TurboFan.
function heat(fns, seed) {
  let r = 0;
  for (let i = 0; i < fns.length; i++) {
    const calls = i % 8 === 0 ? 1500 : 40;
    for (let c = 0; c < calls; c++) r += fns[i](16, c + seed);
  }
  return r;
}

// Optimized for one shape, then called with others: deoptimized, then reoptimized.
function deopts(rounds) {
  let r = 0;
  for (let j = 0; j < rounds; j++) {
    const get = new Function('o', `return o.v * ${j + 1} + (o.w | 0);`);
    for (let c = 0; c < 3000; c++) r += get({ v: c });
    for (let c = 0; c < 3000; c++) r += get({ w: 1, v: c, x: 'y' });
    for (let c = 0; c < 100; c++) r += get({ v: 'string' + c }) | 0;
  }
  return r;
}

let junk = [];
// Allocation that survives a while: old-space collections, which free (and compact) code.
function churn(n) {
  for (let i = 0; i < n; i++) {
    junk.push(new Array(256).fill(i));
    if (junk.length > 20000) junk = [];
  }
}

function newFunctionRound(r, n) {
  const fns = [];
  for (let i = 0; i < n; i++)
    fns.push(new Function('a', 'b', `let s = ${r}; for (let k = 0; k < a; k++) s += (k + ${i}) ^ b; return s;`));
  return heat(fns, r);
}

function vmScriptRound(r, n) {
  const ctx = vm.createContext({ module: {} });
  new vm.Script(source(`vm${r}`, n), { filename: `vm-round-${r}.js` }).runInContext(ctx);
  return heat(ctx.module.exports, r);
}

function run(dir, files, perFile, rounds, tag) {
  let r = 0;
  const gen = path.join(dir, 'gen');
  fs.mkdirSync(gen, { recursive: true });
  for (let f = 0; f < files; f++) {
    const file = path.join(gen, `${tag}${f}.js`);
    fs.writeFileSync(file, source(`${tag}${f}`, perFile));
    r += heat(require(file), f);
    churn(2000);
  }
  for (let round = 0; round < rounds; round++) {
    r += newFunctionRound(round, 150);
    r += vmScriptRound(round, 150);
    r += deopts(4);
    churn(20000);
  }
  return r;
}

if (isMainThread) {
  const [dir, files = '20', perFile = '150', rounds = '12', workers = '2'] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node workload.js DIR [FILES [FUNCTIONS_PER_FILE [ROUNDS [WORKERS]]]]');
    process.exit(2);
  }
  let earlyDone = true, steadyReady = true, steady = null, lateReady = true, late = null;
  if (workers === '2+late') {
    lateReady = false;
    const poll = setInterval(() => {
      if (!fs.existsSync(path.join(dir, 'late'))) return;
      clearInterval(poll);
      late = new Worker(__filename, { workerData: { dir, files: 4, perFile: 100, rounds: 4, tag: 'late', stay: true } });
      late.on('message', (m) => { if (m === 'ready') lateReady = true; });
    }, 20);
  }
  if (workers !== '0') {
    earlyDone = steadyReady = false;
    const early = new Worker(__filename, { workerData: { dir, files: 4, perFile: 100, rounds: 3, tag: 'early', stay: false } });
    steady = new Worker(__filename, { workerData: { dir, files: 4, perFile: 100, rounds: 4, tag: 'steady', stay: true } });
    early.on('exit', () => { earlyDone = true; });
    steady.on('message', (m) => { if (m === 'ready') steadyReady = true; });
  }
  const r = run(dir, +files, +perFile, +rounds, 'm');
  fs.writeFileSync(path.join(dir, 'compiled'), '');  // the main thread's rounds are done
  const wait = setInterval(() => {
    if (!earlyDone || !steadyReady || !lateReady) return;
    clearInterval(wait);
    fs.writeFileSync(path.join(dir, 'quiet'), `${r}\n`);
    const stop = setInterval(() => {
      if (!fs.existsSync(path.join(dir, 'stop'))) return;
      clearInterval(stop);
      vm.runInThisContext('function jitprov_quiet_end() { return 1; } jitprov_quiet_end();', { filename: 'jitprov-marker.js' });
      if (steady) steady.postMessage('stop');
      if (late) late.postMessage('stop');
    }, 50);
  }, 50);
} else {
  const { dir, files, perFile, rounds, tag, stay } = workerData;
  run(dir, files, perFile, rounds, tag);
  if (stay) {
    parentPort.on('message', () => process.exit(0));
    parentPort.postMessage('ready');
  }
}
