/**
 * The floor of the `hotpath` benchmark: a bare Node forwarder. Every request's target is sent to
 * the vendor (`GET`, one keep-alive undici Pool) and the vendor's body is piped back unchanged.
 *
 *   node dist/bench/forward-bare.js <vendorUrl>     (forked with IPC by bench/processes.ts)
 *
 * Sends `{type: 'ready', url}` once listening; exits on `{type: 'stop'}` or when the parent goes.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { serveForked } from './forked-server.js';

const vendor = new Pool(process.argv[2]!, { connections: 64, keepAliveTimeout: 10_000 });

const server = createServer((req, res) => {
  vendor.request({ method: 'GET', path: req.url ?? '/', headers: { accept: 'application/json' } }).then(
    (up) => {
      res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
      up.body.pipe(res);
    },
    (e: unknown) => {
      res.writeHead(502).end(String(e));
    },
  );
});
serveForked(server);
