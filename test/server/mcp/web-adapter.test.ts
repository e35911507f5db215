/**
 * The Node bridge to the SDK's Web-standard transport (server/mcp/web-adapter.ts): a whole answer
 * leaves in one write with its length; an event stream arrives whole however large (back-pressure);
 * a POST stream's headers wait for its first event while a GET stream's leave at once; a POST
 * stream that is one event and ends with it is answered as that JSON, anything else streams; a client
 * that goes away mid-stream cancels the stream and leaves no listener behind; and, on /mcp, a
 * standing GET stream that the client dropped is released (a new one is accepted, not a 409). The
 * transport gets a real Web `Request` with the method, URL and headers as sent (repeated ones joined).
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { eventJson, sendWebResponse, webRequest } from '../../../server/mcp/web-adapter.js';
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
    let type = '';
    const got = new Promise<string>((resolve) =>
      request(url, (r) => {
        headersAt = Date.now();
        type = String(r.headers['content-type']);
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve(body));
      }).end(),
    );
    await until('the stream to be handed over', () => s !== undefined);
    await sleep(150);
    const sentAt = Date.now();
    s.push('event: message\ndata: {"id":1}\n\n');
    s.end();
    if (early) {
      t.equal(await got, 'event: message\ndata: {"id":1}\n\n', 'a GET stream stays a stream');
      t.ok(headersAt > 0 && headersAt < sentAt, 'early: headers before the first event');
    } else {
      t.equal(await got, '{"id":1}', 'a POST stream of one event that ends with it: answered as that JSON');
      t.equal(type, 'application/json');
      t.ok(headersAt >= sentAt, 'not early: headers with the first event');
    }
  }
});

/** A POST answer through the adapter whose events are pushed by `drive`; what the client saw, in order. */
async function postStream(t: Test, drive: (s: ReturnType<typeof pushed>, seen: () => string) => Promise<void>) {
  let s!: ReturnType<typeof pushed>;
  const url = await serverOf(t, (res) => {
    s = pushed();
    return sendWebResponse(res, new Response(s.stream, { headers: { ...SSE, 'mcp-session-id': 'abc' } }), false);
  });
  let body = '';
  let headers: Record<string, unknown> = {};
  const got = new Promise<void>((resolve) =>
    request(url, { method: 'POST' }, (r) => {
      headers = r.headers;
      r.on('data', (d: Buffer) => (body += d.toString()));
      r.on('end', () => resolve());
    }).end(),
  );
  await until('the stream to be handed over', () => s !== undefined);
  await drive(s, () => body);
  await got;
  return { body, headers };
}

t.test('a POST stream of one event: JSON with its length and the session header', async (t) => {
  const msg = JSON.stringify({ result: { content: [{ type: 'text', text: 'é 1\\n2' }] }, jsonrpc: '2.0', id: 7 });
  const { body, headers } = await postStream(t, async (s) => {
    s.push(`event: message\nid: ev-1\ndata: ${msg}\n\n`);
    s.end();
  });
  t.equal(body, msg, 'the message itself (an id: line is dropped with the framing)');
  t.equal(headers['content-type'], 'application/json');
  t.equal(headers['content-length'], String(Buffer.byteLength(msg)));
  t.equal(headers['mcp-session-id'], 'abc', "the transport's other headers stay");
  t.equal(headers['transfer-encoding'], undefined);
});

t.test('a POST stream with a notification first streams, and the notification is not held back', async (t) => {
  const note = 'event: message\ndata: {"method":"notifications/progress"}\n\n';
  const answer = 'event: message\ndata: {"id":1}\n\n';
  const { body, headers } = await postStream(t, async (s, seen) => {
    s.push(note);
    // The client gets the notification while the answer is still to come.
    await until('the notification to reach the client', () => seen() === note);
    s.push(answer);
    s.end();
  });
  t.equal(body, note + answer);
  t.equal(headers['content-type'], 'text/event-stream');
});

t.test('a POST stream of one event that does not end in the same turn streams it at once', async (t) => {
  const answer = 'event: message\ndata: {"id":1}\n\n';
  const { body, headers } = await postStream(t, async (s, seen) => {
    s.push(answer);
    await until('the event to reach the client before the stream ends', () => seen() === answer);
    s.end();
  });
  t.equal(body, answer);
  t.equal(headers['content-type'], 'text/event-stream');
});

t.test('eventJson: only a whole single-line message event', async (t) => {
  const bytes = (x: string) => enc.encode(x);
  const text = (x: Uint8Array | undefined) => (x ? Buffer.from(x).toString() : x);
  t.equal(text(eventJson(bytes('event: message\ndata: {"a":1}\n\n'))), '{"a":1}');
  t.equal(text(eventJson(bytes('event: message\nid: 9\ndata: {"a":1}\n\n'))), '{"a":1}');
  t.equal(eventJson(bytes(': keep-alive\n\n')), undefined, 'a comment');
  t.equal(eventJson(bytes('event: message\ndata: {"a":\ndata: 1}\n\n')), undefined, 'two data lines');
  t.equal(eventJson(bytes('event: message\ndata: {"a":1}\n')), undefined, 'an event cut short');
  t.equal(eventJson(bytes('event: other\ndata: {"a":1}\n\n')), undefined, 'another event type');
  t.equal(eventJson(bytes('')), undefined, 'nothing');
  const inner = bytes('xxevent: message\ndata: [1]\n\nyy').subarray(2, -2);
  t.equal(text(eventJson(inner)), '[1]', 'a view into a larger buffer');
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

t.test('webRequest: a Web Request with the method, the URL and the headers as sent', async (t) => {
  let seen: Request | undefined;
  const srv = createServer((req, res) => {
    seen = webRequest(req);
    res.end();
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const r = request(
      {
        host: '127.0.0.1',
        port,
        method: 'DELETE',
        path: '/mcp?x=1',
        headers: {
          Accept: ['application/json', 'text/event-stream'],
          'X-Forwarded-User': 'ada',
          'Mcp-Session-Id': 'abc',
        },
      },
      (res) => res.resume().on('end', resolve),
    );
    r.on('error', reject);
    r.end();
  });
  t.ok(seen instanceof Request, 'a real Request');
  t.equal(seen!.method, 'DELETE');
  t.equal(seen!.url, `http://127.0.0.1:${port}/mcp?x=1`, 'the absolute URL, from Host');
  t.equal(
    seen!.headers.get('accept'),
    'application/json, text/event-stream',
    'repeated headers joined in the order sent',
  );
  t.equal(seen!.headers.get('x-forwarded-user'), 'ada');
  t.equal(seen!.headers.get('MCP-SESSION-ID'), 'abc');
});
