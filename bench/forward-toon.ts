/**
 * The parse-and-TOON forwarder of the `hotpath` benchmark: what the least an intermediary that
 * reshapes the answer costs. Every request's target is sent to the vendor (`GET`, one keep-alive
 * undici Pool); the JSON array it answers is parsed and sent back as TOON
 * (`{count, rows}` encoded by `@toon-format/toon`, as svc renders a clean read).
 *
 *   node dist/bench/forward-toon.js <vendorUrl>     (forked with IPC by bench/processes.ts)
 *
 * Sends `{type: 'ready', url}` once listening; exits on `{type: 'stop'}` or when the parent goes.
 */
import { createServer } from 'node:http';
import { encode } from '@toon-format/toon';
import { Pool } from 'undici';
import { serveForked } from './forked-server.js';

const vendor = new Pool(process.argv[2]!, { connections: 64, keepAliveTimeout: 10_000 });

const server = createServer((req, res) => {
  vendor
    .request({ method: 'GET', path: req.url ?? '/', headers: { accept: 'application/json' } })
    .then(async (up) => {
      const rows = (await up.body.json()) as unknown[];
      const text = encode({ count: rows.length, rows }) + '\n';
      res.writeHead(up.statusCode, { 'content-type': 'text/toon; charset=utf-8' }).end(text);
    })
    .catch((e: unknown) => {
      res.writeHead(502).end(String(e));
    });
});
serveForked(server);
