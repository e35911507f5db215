/**
 * The floor of the `hotpath` benchmark: a bare Node forwarder. Every request's target is sent to
 * the vendor (`GET`, one keep-alive undici Pool) and the vendor's body is piped back unchanged.
 *
 *   node dist/bench/forward-bare.js <vendorUrl>     (forked with IPC by bench/processes.ts)
 *
 * Sends `{type: 'ready', url}` once listening; exits on `{type: 'stop'}` or when the parent goes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

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
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'stop') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
