import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyTooLarge, headerOf, PooledHttpClient, RequestTimeout } from '../../runtime/http-client.js';

/**
 * A real server that answers each request with its request target; `/big` with 64 KiB, `/late`
 * after 1.2 s, `/slow` never.
 */
async function targetServer(t: Test) {
  const server = createServer((req, res) => {
    if (req.url === '/big') return res.end(Buffer.alloc(64 * 1024, 'x'));
    if (req.url === '/slow') return; // never answers
    if (req.url === '/late') return void setTimeout(() => res.end('late'), 1200);
    if (req.url === '/raw') {
      // Names as a vendor may spell them: any case, one repeated in two spellings, one the length of another.
      const raw = ['CONTENT-TYPE', 'application/json', 'x-Twice', 'a', 'X-TWICE', 'b', 'Content-Typf', 'no'];
      return void res.writeHead(200, [...raw, 'Link', '<https://v.test/p2>; rel="next"']).end('[]');
    }
    res.setHeader('X-Twice', ['a', 'b']);
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(req.url);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('the request target is what the URL parser makes of the URL, split fast or not', async (t) => {
  const base = await targetServer(t);
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  const urls = [
    `${base}/reviews?_limit=25&_page=1`,
    base,
    `${base}/a/./b/../c?x=1`,
    `${base}/a/%2E%2e/c`,
    `${base}/sp ace/é?q='x' y`,
    `${base}/p?q=a#frag`,
    `${base}/x(1)*,;=:@!$&~_.-%20?k=v&k=w`,
    `${base.replace('127.0.0.1', 'user:pw@127.0.0.1')}/auth`,
    `${base}\\back\\slash`,
  ];
  for (const url of urls) {
    const res = await http.request({ method: 'GET', url, headers: {} }, { maxBodyBytes: 1 << 20 });
    const u = new URL(url);
    t.equal(res.body.toString(), u.pathname + u.search, url);
  }
  const res = await http.request({ method: 'GET', url: `${base}/h`, headers: {} }, { maxBodyBytes: 1 << 20 });
  t.equal(res.status, 200);
  t.equal(res.headers['x-twice'], 'a, b', 'repeated headers joined, names lower-case');
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
});

t.test("one header is read from undici's raw pairs as the whole set would have it", async (t) => {
  const base = await targetServer(t);
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  const names = ['content-type', 'x-twice', 'content-typf', 'link', 'retry-after', 'x-total-count'];
  const get = () => http.request({ method: 'GET', url: `${base}/raw`, headers: {} }, { maxBodyBytes: 1024 });
  const first = await get();
  const one = names.map((n) => headerOf(first, n));
  t.same(one, ['application/json', 'a, b', 'no', '<https://v.test/p2>; rel="next"', undefined, undefined]);
  const all = first.headers;
  t.same(
    names.map((n) => all[n]),
    one,
    'asked one by one, before the whole set was built: the same as the whole set',
  );
  t.same(
    names.map((n) => headerOf(first, n)),
    one,
    'and after it',
  );
  const second = await get();
  t.same(second.headers, all, 'the whole set, built first');
  t.equal(headerOf({ status: 200, headers: { 'x-a': '1' }, body: Buffer.alloc(0) }, 'x-a'), '1', 'a plain answer');
});

t.test('a body over the limit and an aborted signal reject', async (t) => {
  const base = await targetServer(t);
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  const big = await http
    .request({ method: 'GET', url: `${base}/big`, headers: {} }, { maxBodyBytes: 1024 })
    .catch((e: unknown) => e);
  t.ok(big instanceof BodyTooLarge, 'a body over the limit: BodyTooLarge');
  const c = new AbortController();
  const pending = http.request(
    { method: 'GET', url: `${base}/slow`, headers: {} },
    { signal: c.signal, maxBodyBytes: 1024 },
  );
  setTimeout(() => c.abort(new Error('stop')), 20);
  await t.rejects(pending, { message: 'stop' });
  await t.rejects(
    http.request(
      { method: 'GET', url: `${base}/h`, headers: {} },
      { signal: AbortSignal.abort(new Error('early')), maxBodyBytes: 1024 },
    ),
    { message: 'early' },
  );
  const ok = await http.request({ method: 'GET', url: `${base}/after`, headers: {} }, { maxBodyBytes: 1024 });
  t.equal(ok.body.toString(), '/after', 'the pool still serves');
});

t.test('timeoutMs ends a request with RequestTimeout; an answer in time clears its timer', async (t) => {
  const base = await targetServer(t);
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  t.equal(http.timeouts, true, 'the pooled client times requests out itself');
  const slow = await http
    .request({ method: 'GET', url: `${base}/slow`, headers: {} }, { maxBodyBytes: 1024, timeoutMs: 50 })
    .catch((e: unknown) => e);
  t.ok(slow instanceof RequestTimeout, 'RequestTimeout');
  const fast = await http.request(
    { method: 'GET', url: `${base}/ok`, headers: {} },
    { maxBodyBytes: 1024, timeoutMs: 50 },
  );
  t.equal(fast.body.toString(), '/ok');
  await new Promise((r) => setTimeout(r, 80)); // a timer left running would abort nothing, but keep the loop alive
});

t.test("a request with timeoutMs has that timeout alone; one without keeps undici's", async (t) => {
  const base = await targetServer(t);
  const req = { method: 'GET', url: `${base}/late`, headers: {} };
  // undici's headers timeout far below the server's 1.2 s (its timers fire up to 0.5 s late),
  // so that it shows when it is armed.
  const client = () => {
    const http = new PooledHttpClient(4, { headersTimeout: 100 });
    t.teardown(() => http.close());
    return http;
  };
  const timed = await client().request(req, { maxBodyBytes: 1024, timeoutMs: 5000 });
  t.equal(timed.body.toString(), 'late', "timeoutMs 5000: answered at 1.2 s, undici's 100 ms not armed");
  const untimed = await client()
    .request(req, { maxBodyBytes: 1024, signal: new AbortController().signal })
    .catch((e: unknown) => e);
  t.equal((untimed as { code?: string }).code, 'UND_ERR_HEADERS_TIMEOUT', "no timeoutMs: undici's timeout ends it");
});
