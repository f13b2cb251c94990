// The browser's sentence embedding, timed under node (V8's WebAssembly, as in Chromium): all-MiniLM-L6-v2
// embedding one sentence of 16 tokens ([CLS] and [SEP] included) with attn.h's search module (build/web/
// search.js, SIMD128) and with ONNX Runtime Web (npm's onnxruntime-web, its WebAssembly backend with SIMD,
// one thread) on the same weights, the graph bench/torch_minilm.py --onnx exports (build/minilm.onnx), given
// the ids attn.h's tokenizer produced. Each figure the median of 30 after 5 warm-ups; the two embeddings'
// cosine distance is printed. Usage: node bench/web/minilm_web.mjs [BUILD]
import fs from 'fs';
import path from 'path';
import {createRequire} from 'module';
const require = createRequire(import.meta.url);
const build = process.argv[2] || 'build', web = path.join(build, 'web'), modelDir = path.join(web, 'model');
const onnxFile = path.join(build, 'minilm.onnx');
if (process.argv[2] === '--help' || !fs.existsSync(path.join(modelDir, 'model.safetensors')) || !fs.existsSync(onnxFile)) {
  console.log('usage: node bench/web/minilm_web.mjs [BUILD]: needs BUILD/web/search.js and the model in BUILD/web/model ' +
              '(make web) and BUILD/minilm.onnx (bench/torch_minilm.py --model DIR --onnx BUILD/minilm.onnx)');
  process.exit(process.argv[2] === '--help' ? 0 : 1);
}
const sentence = 'the quick brown fox jumps over the lazy dog near the old river bank';
const median = (f) => {
  const t = [];
  for (let i = 0; i < 35; i++) {
    const t0 = performance.now();
    f();
    if (i >= 5) t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[15];
};

// attn.h
const S = await require(path.resolve(web, 'search.js'))({wasmBinary: fs.readFileSync(path.join(web, 'search.wasm'))});
S.FS.mkdir('/model');
for (const f of fs.readdirSync(modelDir)) S.FS.writeFile('/model/' + f, fs.readFileSync(path.join(modelDir, f)));
if (S.ccall('search_load', 'number', ['string'], ['/model']) !== 1) throw new Error(S.ccall('search_error', 'string', [], []));
const d = S.ccall('search_dim', 'number', [], []), vec = S._malloc(4 * d), bytes = new TextEncoder().encode(sentence);
const text = S._malloc(bytes.length + 1);
S.HEAPU8.set(bytes, text);
const embed = () => S.ccall('search_embed', 'number', ['number', 'number', 'number'], [text, bytes.length, vec]);
const T = embed(), ids = Array.from(new Int32Array(S.HEAPU8.buffer, S.ccall('search_ids', 'number', [], []), T));
const ours = Float32Array.from(new Float32Array(S.HEAPU8.buffer, vec, d)), msOurs = median(embed);

// ONNX Runtime Web: its WebAssembly backend, one thread
const ort = require('onnxruntime-web');
ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;
const session = await ort.InferenceSession.create(fs.readFileSync(onnxFile), {executionProviders: ['wasm'],
                                                                                 graphOptimizationLevel: 'all'});
const feeds = {input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, T])};
const theirs = (await session.run(feeds)).embedding.data, t = [];
for (let i = 0; i < 35; i++) {
  const t0 = performance.now();
  await session.run(feeds);
  if (i >= 5) t.push(performance.now() - t0);
}
const msOrt = t.sort((a, b) => a - b)[15];
let dot = 0, n1 = 0, n2 = 0;
for (let i = 0; i < d; i++) dot += ours[i] * theirs[i], n1 += ours[i] * ours[i], n2 += theirs[i] * theirs[i];
console.log(`a sentence of ${T} tokens, node ${process.versions.node}, one thread: attn.h (search.js, SIMD128) ` +
            `${msOurs.toFixed(1)} ms, ONNX Runtime Web ${ort.env.versions?.web ?? ''} (wasm, SIMD) ${msOrt.toFixed(1)} ms: ` +
            `${(msOrt / msOurs).toFixed(2)}x; the embeddings ${(1 - dot / Math.sqrt(n1 * n2)).toExponential(1)} apart ` +
            '(cosine distance)');
