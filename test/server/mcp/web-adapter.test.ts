/**
 * The Node bridge to the SDK's Web-standard transport (server/mcp/web-adapter.ts): a whole answer
 * leaves in one write with its length; an event stream arrives whole however large (back-pressure);
 * a POST stream's headers wait for its first event while a GET stream's leave at once; a client
 * that goes away mid-stream cancels the stream and leaves no listener behind; and, on /mcp, a
 * standing GET stream that the client dropped is released (a new one is accepted, not a 409).
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { sendWebResponse } from '../../../server/mcp/web-adapter.js';
import { startStack } from '../../_helpers/server.js';
import { rawSession, sleep, until } from './_shared.js';

const enc = new TextEncoder();
const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** A server whose every request is answered by `answer(res)` through the adapter. */
async function serverOf(t: Test, answer: (res: ServerResponse) => Promise<void>): Promise<string> {
  const srv = createServer((_req, res) => void answer(res));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

/** A stream whose events are pushed by hand; records a cancel. */
function pushed(): { stream: ReadableStream<Uint8Array>; push(s: string): void; end(): void; cancelled: boolean } {
  let c!: ReadableStreamDefaultController<Uint8Array>;
  const out = {
    stream: new ReadableStream<Uint8Array>({
      start: (ctl) => void (c = ctl),
      cancel: () => void (out.cancelled = true),
    }),
    push: (s: string) => c.enqueue(enc.encode(s)),
    end: () => c.close(),
    cancelled: false,
  };
  return out;
}

t.test('a JSON answer: status, headers and a body with its length', async (t) => {
  const url = await serverOf(t, (res) =>
    sendWebResponse(
      res,
      new Response('{"a":1}', { status: 404, headers: { 'Content-Type': 'application/json', x: 'y' } }),
      false,
    ),
  );
  const r = await fetch(url);
  t.equal(r.status, 404);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('x'), 'y');
  t.equal(r.headers.get('content-length'), '7');
  t.equal(await r.text(), '{"a":1}');
  const empty = await serverOf(t, (res) => sendWebResponse(res, new Response(null, { status: 202 }), false));
  const e = await fetch(empty);
  t.equal(e.status, 202);
  t.equal(await e.text(), '');
});

t.test('a large event stream arrives whole, in order', async (t) => {
  const event = (i: number) => `event: message\ndata: ${JSON.stringify({ i, pad: 'x'.repeat(4000) })}\n\n`;
  const url = await serverOf(t, async (res) => {
    const s = pushed();
    const done = sendWebResponse(res, new Response(s.stream, { headers: SSE }), false);
    for (let i = 0; i < 2000; i++) s.push(event(i)); // about 8 MB: far more than a socket buffer
    s.end();
    await done;
  });
  const text = await (await fetch(url)).text();
  let want = '';
  for (let i = 0; i < 2000; i++) want += event(i);
  t.equal(text.length, want.length, `${want.length} bytes`);
  t.ok(text === want, 'byte for byte');
});

t.test("a POST stream's headers go with its first event; a GET stream's at once", async (t) => {
  for (const early of [false, true]) {
    let s!: ReturnType<typeof pushed>;
    const url = await serverOf(t, (res) => {
      s = pushed();
      return sendWebResponse(res, new Response(s.stream, { headers: SSE }), early);
    });
    let headersAt = 0;
    const got = new Promise<string>((resolve) =>
      request(url, (r) => {
        headersAt = Date.now();
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve(body));
      }).end(),
    );
    await until('the stream to be handed over', () => s !== undefined);
    await sleep(150);
    const sentAt = Date.now();
    s.push('event: message\ndata: 1\n\n');
    s.end();
    t.equal(await got, 'event: message\ndata: 1\n\n');
    if (early) t.ok(headersAt > 0 && headersAt < sentAt, 'early: headers before the first event');
    else t.ok(headersAt >= sentAt, 'not early: headers with the first event');
  }
});

t.test('a client that goes away mid-stream cancels it and leaves no listener', async (t) => {
  let s!: ReturnType<typeof pushed>;
  let res!: ServerResponse;
  let finished = false;
  const url = await serverOf(t, async (r) => {
    res = r;
    s = pushed();
    await sendWebResponse(r, new Response(s.stream, { headers: SSE }), true);
    finished = true;
  });
  const ac = new AbortController();
  const resp = await fetch(url, { signal: ac.signal });
  s.push('event: message\ndata: 1\n\n');
  const reader = resp.body!.getReader();
  await reader.read();
  ac.abort();
  await until('the stream to be cancelled', () => s.cancelled && finished);
  t.equal(res.listenerCount('close'), 0, 'no close listener left');
  t.equal(res.listenerCount('drain'), 0, 'no drain listener left');
  t.ok(s.cancelled, 'the stream was cancelled (the transport drops it and its keep-alive timer)');
});

t.test('/mcp: a dropped GET stream is released; while open a second one is 409', async (t) => {
  const stack = await startStack(t);
  const { headers } = await rawSession(stack.url);
  const get = { ...headers, accept: 'text/event-stream' };
  const ac = new AbortController();
  const first = await fetch(`${stack.url}/mcp`, { headers: get, signal: ac.signal });
  t.equal(first.status, 200, 'the GET stream opens at once');
  t.match(first.headers.get('content-type'), /^text\/event-stream/);
  const second = await fetch(`${stack.url}/mcp`, { headers: get });
  t.equal(second.status, 409, 'one standing stream per session');
  await second.text();
  ac.abort();
  const again = await until('a new GET stream to be accepted', async () => {
    const c = new AbortController();
    const r = await fetch(`${stack.url}/mcp`, { headers: get, signal: c.signal });
    if (r.status === 200) return c;
    await r.text();
    return undefined;
  });
  again.abort();
});
