// serve.mjs: a static file server on 127.0.0.1 for the demo (and its tests and benchmark), with the
// types the page needs (application/wasm for streaming compilation). From the command line:
//   node examples/web/serve.mjs [DIR] [PORT]     (DIR: build/web, PORT: 8000)
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const types = {'.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.txt': 'text/plain',
               '.png': 'image/png'};

// Serves dir on 127.0.0.1:port (0: any free port); resolves to {server, url}.
export function serve(dir, port = 0) {
  const server = http.createServer((req, res) => {
    const rel = path.normalize(decodeURIComponent(req.url.split('?')[0])).replace(/^(\.\.[/\\])+/, '');
    const file = path.join(dir, rel === '/' ? 'index.html' : rel);
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, {'Content-Type': types[path.extname(file)] || 'application/octet-stream'});
      res.end(data);
    });
  });
  return new Promise((ok) => server.listen(port, '127.0.0.1', () =>
    ok({server, url: `http://127.0.0.1:${server.address().port}/`})));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const {url} = await serve(process.argv[2] || 'build/web', +(process.argv[3] || 8000));
  console.log(`serving ${process.argv[2] || 'build/web'} at ${url} (Ctrl-C stops)`);
}
