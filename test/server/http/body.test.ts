import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../../server/http/body.js';

/** A server on 127.0.0.1 whose handler reads the body with readBody and answers what `seen` gives. */
async function serve(seen: (req: IncomingMessage, text: string) => Promise<string>) {
  const server = createServer((req, res) => {
    void readBody(req).then(
      async (text) => res.end(await seen(req, text)),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return url;
}

t.test('a buffered body is handed over, and the request ends after the immediates of its turn', async (t) => {
  const url = await serve(async (req, text) => {
    // The route's vendor call is written in an immediate queued in this turn (undici on a reused
    // socket): the request's end must come after it, and still come.
    const order: string[] = [];
    setImmediate(() => order.push('immediate'));
    await new Promise<void>((r) => req.once('end', r));
    order.push('end');
    return `${text}|${order.join(',')}`;
  });
  for (const body of ['e3', 'e1(limit=25)', 'x'.repeat(10_000)]) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    t.equal(await res.text(), `${body}|immediate,end`);
  }
});

t.test('a body too large is refused before it is read', async (t) => {
  const server = createServer((req, res) => {
    readBody(req, 4).then(
      (text) => res.end(text),
      (e: { errors?: Array<{ code: string }> }) => res.writeHead(413).end(e.errors?.[0]?.code ?? 'error'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const res = await fetch(url, { method: 'POST', body: 'more than four bytes' });
  t.equal(res.status, 413);
  t.equal(await res.text(), 'body_too_large');
});
