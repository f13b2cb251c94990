// worker.js: runs attn.h (demo.js + demo.wasm, built from demo.c) off the page's thread. The page
// sends {cmd: 'start', text, seed}, {cmd: 'stop'} and {cmd: 'sample', prompt, n, temperature,
// topK, seed} and {cmd: 'weights', text, layer, head}; the worker answers with 'ready', 'nt' (a
// test accuracy), 'lm' (a training loss), 'sample', 'weights', 'done' and 'error' messages.
// Training goes in small chunks, so a message is answered within a few tens of milliseconds.
// A module of one function that uses f32x4.relaxed_madd (tools/wasm_relaxed.mjs's PROBE): it
// validates only where the engine has relaxed SIMD, and there the worker loads the build whose
// products use it (make web builds both).
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b,
                                      3, 2, 1, 0, 10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x85, 2, 0x0b]);
importScripts(WebAssembly.validate(RELAXED_PROBE) ? 'demo_relaxed.js' : 'demo.js');

const NT_KINDS = ['softmax', 'ea'];
const NT_CHUNK = 25, NT_EPOCHS = 2000; // epochs between evaluations, and in all
const LM_CHUNK = 5, LM_STEPS = 600;   // steps between reports, and in all
let M, api, nt = [], lm = 0, ntEpoch = 0, lmStep = 0, running = false, t0 = 0;

// A failed call: its message names the function already (demo.c's "lm_sample: ...").
function fail(what) {
  postMessage({type: 'error', message: api.error() || what + ' failed'});
}

function release() {
  nt.forEach(h => api.ntFree(h));
  if (lm) api.lmFree(lm);
  nt = []; lm = 0;
}

function start(text, seed) {
  release();
  ntEpoch = lmStep = 0;
  for (const k of NT_KINDS) {
    const h = api.ntNew(k, seed);
    if (!h) return fail('nt_new');
    nt.push(h);
  }
  const bytes = new TextEncoder().encode(text), p = M._malloc(bytes.length);
  M.HEAPU8.set(bytes, p);
  lm = api.lmNew(p, bytes.length, seed);
  M._free(p);
  if (!lm) return fail('lm_new');
  // the untrained models' points first
  NT_KINDS.forEach((k, i) => postMessage({type: 'nt', kind: k, epoch: 0, acc: api.ntAccuracy(nt[i])}));
  running = true;
  t0 = performance.now();
  setTimeout(tick, 0);
}

function tick() {
  if (!running) return;
  if (ntEpoch < NT_EPOCHS) {
    ntEpoch += NT_CHUNK;
    for (let i = 0; i < NT_KINDS.length; i++) {
      const acc = api.ntTrain(nt[i], NT_CHUNK);
      if (acc < 0) { running = false; return fail('nt_train'); }
      postMessage({type: 'nt', kind: NT_KINDS[i], epoch: ntEpoch, acc, ms: performance.now() - t0});
    }
  }
  if (lmStep < LM_STEPS) {
    const loss = api.lmTrain(lm, LM_CHUNK);
    if (loss < 0) { running = false; return fail('lm_train'); }
    lmStep += LM_CHUNK;
    postMessage({type: 'lm', step: lmStep, loss, ms: performance.now() - t0});
  }
  if (ntEpoch >= NT_EPOCHS && lmStep >= LM_STEPS) {
    running = false;
    postMessage({type: 'done', ms: performance.now() - t0});
    return;
  }
  setTimeout(tick, 0);
}

onmessage = (e) => {
  const m = e.data;
  if (!api) return postMessage({type: 'error', message: 'the module is still loading'});
  if (m.cmd === 'start') start(m.text, m.seed | 0);
  else if (m.cmd === 'stop') running = false;
  else if (m.cmd === 'resume' && !running && nt.length) { running = true; setTimeout(tick, 0); }
  else if (m.cmd === 'sample') {
    if (!lm) return postMessage({type: 'error', message: 'start training first'});
    const s = api.lmSample(lm, m.prompt, m.n, m.temperature, m.topK, m.seed | 0);
    if (!s) return fail('lm_sample'); // a NULL string arrives as ''
    postMessage({type: 'sample', text: s, step: lmStep});
  } else if (m.cmd === 'weights') {
    if (!lm) return postMessage({type: 'error', message: 'start training first'});
    const T = Math.min(64, new TextEncoder().encode(m.text).length), p = api.lmWeights(lm, m.text, m.layer, m.head);
    if (!p) return fail('lm_weights');
    const w = new Float32Array(M.HEAPU8.buffer, p, T * T).slice();
    postMessage({type: 'weights', text: m.text, layer: m.layer, head: m.head, T, w}, [w.buffer]);
  }
};

createDemo().then((mod) => {
  M = mod;
  api = {
    error: M.cwrap('demo_error', 'string', []),
    build: M.cwrap('demo_build', 'string', []),
    ntNew: M.cwrap('nt_new', 'number', ['string', 'number']),
    ntTrain: M.cwrap('nt_train', 'number', ['number', 'number']),
    ntAccuracy: M.cwrap('nt_accuracy', 'number', ['number']),
    ntFree: M.cwrap('nt_free', null, ['number']),
    lmNew: M.cwrap('lm_new', 'number', ['number', 'number', 'number']),
    lmTrain: M.cwrap('lm_train', 'number', ['number', 'number']),
    lmSample: M.cwrap('lm_sample', 'string', ['number', 'string', 'number', 'number', 'number', 'number']),
    lmWeights: M.cwrap('lm_weights', 'number', ['number', 'string', 'number', 'number']),
    lmFree: M.cwrap('lm_free', null, ['number']),
  };
  postMessage({type: 'ready', build: api.build(), kinds: NT_KINDS, ntEpochs: NT_EPOCHS, lmSteps: LM_STEPS});
});
