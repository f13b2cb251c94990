// search_worker.js: semantic search with attn.h (search.js + search.wasm, built from search.c) off
// the page's thread. The page sends {cmd: 'load', base} (the URL of the model's directory),
// {cmd: 'index', sentences} and {cmd: 'query', text, top}; the worker answers with 'progress',
// 'ready' (the model is loaded: its width, the build, the load time), 'indexed' (the sentences'
// embeddings and the time per sentence), 'results' (the best sentences, their cosine similarities
// and the time) and 'error' messages.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b,
                                      3, 2, 1, 0, 10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x85, 2, 0x0b]);
importScripts(WebAssembly.validate(RELAXED_PROBE) ? 'search_relaxed.js' : 'search.js');

// The files attn_transformer_load_hf and attn_wordpiece_load_hf read; the configs beside the
// weights are optional for the tokenizer (defaults: lower case, 512 tokens).
const FILES = ['config.json', 'model.safetensors', 'vocab.txt'];
const OPTIONAL = ['tokenizer_config.json', 'sentence_bert_config.json'];
let M, api, dim = 0, index = null, textBuf = 0, textCap = 0, vec = 0;

function fail(message) { postMessage({type: 'error', message}); }

// The embedding of text, a new Float32Array [dim], and its token count (0 on failure).
function embed(text) {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length + 1 > textCap) {
    if (textBuf) M._free(textBuf);
    textCap = 2 * bytes.length + 64;
    textBuf = M._malloc(textCap);
  }
  M.HEAPU8.set(bytes, textBuf);
  const n = api.embed(textBuf, bytes.length, vec);
  return {n, e: n ? new Float32Array(M.HEAPU8.buffer, vec, dim).slice() : null};
}

async function load(base) {
  const t0 = performance.now();
  M.FS.mkdir('/model');
  for (const f of FILES.concat(OPTIONAL)) {
    const r = await fetch(base + f);
    if (!r.ok) {
      if (OPTIONAL.includes(f)) continue;
      return fail(`${base}${f}: HTTP ${r.status} (make web copies all-MiniLM-L6-v2 into build/web/model)`);
    }
    postMessage({type: 'progress', message: `fetched ${f}`});
    M.FS.writeFile('/model/' + f, new Uint8Array(await r.arrayBuffer()));
  }
  if (!api.load('/model')) return fail(api.error());
  for (const f of FILES.concat(OPTIONAL)) if (M.FS.analyzePath('/model/' + f).exists) M.FS.unlink('/model/' + f);
  dim = api.dim();
  vec = M._malloc(4 * dim);
  postMessage({type: 'ready', dim, build: api.build(), ms: performance.now() - t0});
}

onmessage = async (e) => {
  const m = e.data;
  if (!api) return fail('the module is still loading');
  if (m.cmd === 'load') return load(m.base);
  if (!dim) return fail('no model loaded');
  if (m.cmd === 'index') {
    const t0 = performance.now(), out = [];
    let tokens = 0;
    for (const s of m.sentences) {
      const r = embed(s);
      if (!r.n) return fail(api.error());
      out.push(r.e);
      tokens += r.n;
    }
    index = out;
    const ms = performance.now() - t0;
    postMessage({type: 'indexed', count: out.length, tokens, ms, embeddings: m.returnEmbeddings ? out : null});
  } else if (m.cmd === 'query') {
    const t0 = performance.now(), q = embed(m.text);
    if (!q.n) return fail(api.error());
    const scored = (index || []).map((v, i) => {
      let s = 0;
      for (let k = 0; k < dim; k++) s += v[k] * q.e[k];
      return {i, score: s};
    });
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    postMessage({type: 'results', results: scored.slice(0, m.top || 10), tokens: q.n, ms: performance.now() - t0,
                 embedding: q.e});
  }
};

createSearch().then((mod) => {
  M = mod;
  api = {
    build: M.cwrap('search_build', 'string', []),
    load: M.cwrap('search_load', 'number', ['string']),
    dim: M.cwrap('search_dim', 'number', []),
    embed: M.cwrap('search_embed', 'number', ['number', 'number', 'number']),
    error: M.cwrap('search_error', 'string', []),
  };
  postMessage({type: 'module', build: api.build()});
});
