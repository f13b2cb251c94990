// wasm_relaxed.mjs: gives a WebAssembly module built by clang 14 with -mrelaxed-simd the final
// opcode of f32x4.relaxed_madd, so that engines that ship relaxed SIMD run it.
//
//   node tools/wasm_relaxed.mjs FILE.wasm|FILE.js     (a .js built with -sSINGLE_FILE=1 is patched
//                                                       in its embedded base64 module)
//   node [FLAGS] tools/wasm_relaxed.mjs --probe        exits 0 if this engine (with FLAGS) has
//                                                       relaxed SIMD, 1 if not
//
// clang 14 (Debian's emscripten 3.1.6) emits relaxed SIMD's fused multiply-add with the
// proposal's prototype opcode 0xfd 0xaf 0x01, which V8 and other engines reject; the final
// opcode is 0xfd 0x105 (bytes 0xfd 0x85 0x02), the same length, so the code section is
// renumbered in place. The engine's relaxed_madd(a, b, c) is a * b + c, which is how attn.h calls
// the builtin. The byte pattern could also occur inside an immediate; the patch is made only if
// the number of matches equals the number of f32x4.relaxed_fma instructions binaryen's wasm-dis
// (installed with emscripten) finds in the module, so every match is one of them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {execFileSync} from 'node:child_process';
import {pathToFileURL} from 'node:url';

// A module of one function, (v128, v128, v128) -> v128, that returns f32x4.relaxed_madd of its
// arguments: it validates only where the engine has relaxed SIMD (tests/web/test_web.mjs imports
// it; examples/web/worker.js, a classic worker script, holds the same bytes).
export const PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b, 3, 2, 1, 0,
                              10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x85, 2, 0x0b]);

function main() {
  const file = process.argv[2];
  if (!file || file === '--help') {
    console.log('usage: node tools/wasm_relaxed.mjs FILE.wasm|FILE.js\n' +
                '  renumbers clang 14\'s prototype relaxed fma (0xfd 0xaf 0x01) to f32x4.relaxed_madd (0xfd 0x85 0x02)\n' +
                '       node [FLAGS] tools/wasm_relaxed.mjs --probe\n' +
                '  exits 0 if the engine has relaxed SIMD, 1 if not');
    process.exit(file ? 0 : 2);
  }
  if (file === '--probe') process.exit(WebAssembly.validate(PROBE) ? 0 : 1);
  const fail = (msg) => { console.error(`wasm_relaxed: ${file}: ${msg}`); process.exit(1); };

  const text = file.endsWith('.js') ? fs.readFileSync(file, 'latin1') : null;
  const uri = 'data:application/octet-stream;base64,AGFzbQ'; // AGFzbQ: the module's magic, "\0asm"
  let start = -1, end = -1, bytes;
  if (text !== null) {
    start = text.indexOf(uri);
    if (start < 0) fail('no embedded module (build it with -sSINGLE_FILE=1)');
    start += uri.length - 6;
    end = text.indexOf('"', start);
    bytes = Buffer.from(text.slice(start, end), 'base64');
  } else {
    bytes = fs.readFileSync(file);
  }
  if (bytes.readUInt32LE(0) !== 0x6d736100) fail('not a WebAssembly module');

  function leb(pos) { // unsigned LEB128 at pos: [value, next position]
    let v = 0, shift = 0, b;
    do { b = bytes[pos++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return [v, pos];
  }

  // The code section (id 10): the only place the pattern is renumbered.
  let pos = 8, code = null;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const [size, body] = leb(pos + 1);
    if (id === 10) code = [body, body + size];
    pos = body + size;
  }
  if (!code) fail('no code section');
  const hits = [];
  for (let i = code[0]; i + 2 < code[1]; i++)
    if (bytes[i] === 0xfd && bytes[i + 1] === 0xaf && bytes[i + 2] === 0x01) hits.push(i);

  const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'relaxed-')), 'm.wasm');
  fs.writeFileSync(tmp, bytes);
  const dis = execFileSync('wasm-dis', [tmp], {maxBuffer: 1 << 30}).toString();
  fs.rmSync(path.dirname(tmp), {recursive: true});
  const want = (dis.match(/\(f32x4\.relaxed_fma\b/g) || []).length;
  if (hits.length !== want) fail(`${hits.length} byte matches but ${want} relaxed_fma instructions: not patched`);
  for (const i of hits) { bytes[i + 1] = 0x85; bytes[i + 2] = 0x02; }

  if (text !== null) fs.writeFileSync(file, text.slice(0, start) + bytes.toString('base64') + text.slice(end), 'latin1');
  else fs.writeFileSync(file, bytes);
  console.log(`wasm_relaxed: ${file}: ${hits.length} relaxed_madd`);
}

// run as a program, not when imported for PROBE
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
