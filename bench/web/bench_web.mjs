// make bench-web: bench_wasm.c natively (BUILD/bench_wasm), as WebAssembly under node and in
// headless Chromium (BUILD/web/bench_wasm.js, the page bench.html), its relaxed-SIMD build the same
// two ways (BUILD/web/bench_wasm_relaxed.js; node with --experimental-wasm-relaxed-simd where that
// flag exists), and TensorFlow.js's WASM backend (XNNPACK kernels, SIMD, one thread) on the same
// GEMM shapes and attention (its ops, with tf.grads) in this node process; one table with the speed
// ratios of attn.h's builds to TF.js in node.
// Run `npm install` in bench/web first.
//   node bench/web/bench_web.mjs [BUILD] [--runs N]   (the median of N runs of everything, default 3)
import {createRequire} from 'node:module';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import {serve} from '../../examples/web/serve.mjs';
import path from 'node:path';
import os from 'node:os';

const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log('usage: node bench/web/bench_web.mjs [BUILD] [--runs N]\n' +
              '  attn.h natively, in node and in Chromium (wasm128), and TF.js wasm in node: GEMM GFLOP/s,\n' +
              '  attention ms, the demo\'s training steps/s; the median of N runs (3)');
  process.exit(0);
}
const runsAt = args.indexOf('--runs'), runs = runsAt >= 0 ? +args[runsAt + 1] : 3;
const build = args.find((a, i) => !a.startsWith('--') && (i === 0 || args[i - 1] !== '--runs')) || 'build';
const web = path.join(build, 'web'), here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(import.meta.url);
if (!(runs >= 1)) { console.error('--runs takes a number >= 1'); process.exit(1); }

// "NAME VALUE UNIT" lines into {NAME: {value, unit}}.
function parse(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const m = line.match(/^(\S+) ([\d.]+) (.+)$/);
    if (m) out[m[1]] = {value: +m[2], unit: m[3]};
    else if (line.startsWith('build ')) out.build = line.slice(6);
  }
  return out;
}

const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[(s.length - 1) >> 1]; };

async function chromiumRun(browser, url, query) {
  const page = await browser.newPage();
  await page.goto(url + 'bench.html' + query);
  await page.waitForFunction(() => window.benchDone, null, {timeout: 600000, polling: 500});
  const text = await page.evaluate(() => window.benchLines.join('\n'));
  await page.close();
  return parse(text);
}

async function tfjsRun(shapes) {
  const tf = require(path.join(here, 'node_modules/@tensorflow/tfjs-core'));
  require(path.join(here, 'node_modules/@tensorflow/tfjs')); // registers the gradients tf.grads needs
  const wasm = require(path.join(here, 'node_modules/@tensorflow/tfjs-backend-wasm'));
  const dist = path.join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist') + '/';
  wasm.setWasmPaths(dist);
  wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const out = {build: `TF.js ${tf.version_core}, wasm backend, SIMD ${await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')}`};
  { // a second of products first, as bench_wasm does: no shape is timed before the engine's optimised code
    const a = tf.randomUniform([256, 256]), b = tf.randomUniform([256, 256]), t0 = performance.now();
    while (performance.now() - t0 < 1000) for (const tb of [false, true]) tf.matMul(a, b, false, tb).dispose();
    a.dispose(); b.dispose();
  }
  for (const [tb, M, N, K] of shapes) {
    const a = tf.randomUniform([M, K], -0.5, 0.5), b = tf.randomUniform(tb ? [N, K] : [K, N], -0.5, 0.5), t = [];
    for (let r = 0; r <= 7; r++) {
      const t0 = performance.now();
      const c = tf.matMul(a, b, false, !!tb);
      c.dataSync();
      if (r) t.push(performance.now() - t0);
      c.dispose();
    }
    t.sort((x, y) => x - y);
    out[`gemm_${tb ? 'NT' : 'NN'}_${M}x${N}x${K}`] = {value: 2 * M * N * K / (t[3] * 1e-3) * 1e-9, unit: 'GFLOP/s'};
    a.dispose(); b.dispose();
  }
  out.attention_softmax_causal_T256_H4_dh64_fwd_bwd = {value: tfjsAttention(tf), unit: 'ms'};
  return out;
}

// bench_wasm's attention figure written in TF.js ops: causal softmax attention, B 1, H 4, T 256, dh 64,
// forward and the gradients of Q, K and V for an upstream dO (tf.grads); the median of 7 after 2.
function tfjsAttention(tf) {
  const H = 4, T = 256, dh = 64, scale = 1 / Math.sqrt(dh), t = [];
  const q = tf.randomNormal([H, T, dh]), k = tf.randomNormal([H, T, dh]), v = tf.randomNormal([H, T, dh]);
  const dO = tf.randomNormal([H, T, dh]);
  const hide = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e30); // 0 on and below the diagonal
  const attention = (Q, K, V) => tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(Q, K, false, true), scale), hide)), V);
  const grads = tf.grads(attention);
  for (let r = 0; r < 9; r++) {
    const t0 = performance.now();
    const g = grads([q, k, v], dO);
    for (const x of g) x.dataSync();
    if (r >= 2) t.push(performance.now() - t0);
    tf.dispose(g);
  }
  tf.dispose([q, k, v, dO, hide]);
  return median(t);
}

const {server, url} = await serve(web);
const {chromium} = require(path.join(here, 'node_modules/playwright-core'));
const browser = await chromium.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                       args: ['--no-sandbox', '--disable-gpu']});
// node takes relaxed SIMD behind a flag (v20), or has it on (later versions drop the flag)
let relaxedFlag = ['--experimental-wasm-relaxed-simd'];
try { execFileSync('node', [...relaxedFlag, '-e', '0'], {stdio: 'ignore'}); } catch { relaxedFlag = []; }
const samples = {native: [], node: [], chromium: [], nodeRelaxed: [], chromiumRelaxed: [], tfjs: []};
let shapes = null;
for (let r = 0; r < runs; r++) { // interleaved, so that a slow moment of the machine hits every column
  samples.native.push(parse(execFileSync(path.join(build, 'bench_wasm')).toString()));
  samples.node.push(parse(execFileSync('node', [path.join(web, 'bench_wasm.js')]).toString()));
  samples.chromium.push(await chromiumRun(browser, url, ''));
  samples.nodeRelaxed.push(parse(execFileSync('node', [...relaxedFlag, path.join(web, 'bench_wasm_relaxed.js')]).toString()));
  samples.chromiumRelaxed.push(await chromiumRun(browser, url, '?relaxed'));
  shapes = shapes || Object.keys(samples.node[0]).filter((k) => k.startsWith('gemm_'))
    .map((k) => { const m = k.match(/gemm_(NN|NT)_(\d+)x(\d+)x(\d+)/); return [m[1] === 'NT' ? 1 : 0, +m[2], +m[3], +m[4]]; });
  samples.tfjs.push(await tfjsRun(shapes));
  process.stderr.write(`  run ${r + 1}/${runs} done\n`);
}
await browser.close();
server.close();

const cols = ['native', 'node', 'chromium', 'nodeRelaxed', 'chromiumRelaxed', 'tfjs'];
console.log(`bench_web: ${os.cpus()[0].model}, one thread, medians of 7 repeats, the median of ${runs} interleaved runs`);
for (const c of cols) console.log(`  ${c}: ${samples[c][0].build}`);
console.log('\n| figure | native | wasm128, node | wasm128, Chromium | relaxed, node | relaxed, Chromium | ' +
            'TF.js wasm, node | wasm128 / TF.js (speed) | relaxed / TF.js (speed) |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const name of Object.keys(samples.node[0]).filter((k) => k !== 'build')) {
  const v = {};
  for (const c of cols) v[c] = samples[c][0][name] ? median(samples[c].map((s) => s[name].value)) : null;
  const fmt = (x) => x === null ? '-' : x.toFixed(x < 10 ? 2 : 1);
  const time = samples.node[0][name].unit === 'ms'; // the ratios are speed: TF.js's time over attn.h's
  const ratio = (x) => v.tfjs ? (time ? v.tfjs / x : x / v.tfjs).toFixed(2) : '-';
  console.log(`| ${name} (${samples.node[0][name].unit}) | ${fmt(v.native)} | ${fmt(v.node)} | ${fmt(v.chromium)} | ` +
              `${fmt(v.nodeRelaxed)} | ${fmt(v.chromiumRelaxed)} | ${fmt(v.tfjs)} | ${ratio(v.node)} | ${ratio(v.nodeRelaxed)} |`);
}
