/** executePlan against the scriptable fault vendor: timeouts, retries, resets, bad bodies, cursors, cancel, deadline. */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import { Registry } from '../../pack/index.js';
import {
  backoffMs,
  continuePage,
  executePlan,
  PooledHttpClient,
  retryAfterMs,
  type ExecuteOptions,
  type RetryPolicy,
  type RunResult,
} from '../../runtime/index.js';
import {
  cursorFeed,
  faultRegistry,
  linkedPages,
  startFaultVendor,
  type FaultVendor,
  type Routes,
} from '../_helpers/fault-vendor.js';

type Tap = { teardown(fn: () => unknown): void };

const RETRY: RetryPolicy = { retries: 3, baseDelayMs: 5, maxDelayMs: 200, budgetMs: 2000 };
const ITEMS = Array.from({ length: 10 }, (_, i) => ({
  id: i + 1,
  name: `item ${i + 1}`,
  kind: (['alpha', 'beta', 'gamma'] as const)[i % 3],
  price: 1.5 * (i + 1),
  active: i % 2 === 0,
}));

interface Setup {
  v: FaultVendor;
  reg: Registry;
  http: PooledHttpClient;
  run(text: string, opts?: ExecuteOptions): Promise<RunResult>;
}

async function setup(t: Tap, routes: Routes): Promise<Setup> {
  const v = await startFaultVendor(routes);
  const http = new PooledHttpClient();
  t.teardown(async () => {
    await v.close();
    await http.close();
  });
  const reg = faultRegistry(v.url);
  return {
    v,
    reg,
    http,
    run: (text, opts = {}) => {
      const c = compileProgram(text, { registry: reg });
      if (c.kind !== 'plan') throw new Error(`${text} does not compile: ${JSON.stringify(c)}`);
      return executePlan(c.plan, reg, { http, requestTimeoutMs: 2000, retry: RETRY, ...opts });
    },
  };
}

/*
 * No test here compares a measured time with a number of ms. Where a run must end without waiting
 * for the vendor, the vendor never answers (`hang`), and where a cancel or a deadline must abort
 * the request in flight, the request timeout is one no test outlives (NEVER): a runtime that
 * waited would hang the test until its timeout (HANG). Waits the runtime computes are read off
 * the retry budget (a wait over the budget is refused, one within it is taken) and ordered
 * against the runtime's own deadline timer, never against a clock reading.
 */

/**
 * Subtest options that make a hang (the failure of a runtime that waits for what it should not
 * wait for) fail in seconds rather than at the file's timeout. A fresh object per test: tap
 * writes into the options it is given.
 */
const HANG = () => ({ timeout: 30_000 });
/**
 * A request timeout no test outlives: where a cancel or a deadline must abort the request in
 * flight, a runtime that left it to the request timeout instead would hang the test.
 */
const NEVER = 3_600_000;

t.test('a vendor that does not answer in time: vendor_timeout', HANG(), async (t) => {
  // The vendor never answers: only the request timeout can end these requests.
  const s = await setup(t, { 'GET /items': { hang: true }, 'POST /items': { hang: true } });
  const r = await s.run('fault:Item', { requestTimeoutMs: 200, retry: { ...RETRY, retries: 1 } });
  t.equal(r.status, 'failed');
  t.equal(r.errors[0]?.code, 'vendor_timeout');
  t.match(r.errors[0]?.message, /200 ms/);
  t.equal(s.v.hits('/items').length, 2, 'a GET that timed out is tried again (retries: 1)');
  t.equal(r.steps.n1?.calls, 2);
  const w = await s.run('fault:createItem(name="x")', { requestTimeoutMs: 200, accepted: true });
  t.equal(w.errors[0]?.code, 'vendor_timeout');
  t.equal(s.v.hits('/items', 'POST').length, 1, 'a POST that timed out is not sent again');
});

t.test('429 with Retry-After', async (t) => {
  t.test('Retry-After: 0 retries at once and succeeds', async (t) => {
    const s = await setup(t, {
      'GET /items': [{ status: 429, headers: { 'retry-after': '0' }, json: { message: 'slow down' } }, { json: ITEMS }],
    });
    // The jitter alone would wait a whole minute, over the 1 s budget, and the runtime would give
    // up: only a wait of 0, taken from Retry-After, lets the retry happen.
    const policy: RetryPolicy = { retries: 3, baseDelayMs: 60_000, maxDelayMs: 60_000, budgetMs: 1000 };
    t.equal(
      backoffMs(policy, 0, undefined, () => 1),
      60_000,
      'without Retry-After the wait would be over the budget',
    );
    t.equal(
      backoffMs(policy, 0, retryAfterMs('0', 0), () => 1),
      0,
      'Retry-After: 0 is a wait of 0',
    );
    const r = await s.run('fault:Item', { retry: policy, random: () => 1 });
    t.equal(r.status, 'succeeded', 'Retry-After: 0 waits nothing');
    t.equal(r.returns[0]?.rows.length, 10);
    t.equal(s.v.hits('/items').length, 2);
    t.equal(r.steps.n1?.calls, 2, 'both attempts are counted');
  });

  t.test('Retry-After: 1 waits a second before the next attempt', async (t) => {
    const routes = (): Routes => ({
      'GET /items': [{ status: 429, headers: { 'retry-after': '1' } }, { json: ITEMS }],
    });
    const policy = (budgetMs: number): RetryPolicy => ({ retries: 3, baseDelayMs: 5, maxDelayMs: 2000, budgetMs });
    t.equal(
      backoffMs(policy(5000), 0, retryAfterMs('1', 0), () => 0),
      1000,
      'the computed wait is 1000 ms although the jitter would wait 0',
    );
    // The runtime refuses a wait that would pass the retry budget, so the budget reads the wait it
    // computed: refused under 999 ms (it is over 999), taken under 1000 ms (it is at most 1000).
    const over = await setup(t, routes());
    const refused = await over.run('fault:Item', { retry: policy(999), random: () => 0 });
    t.equal(
      refused.errors[0]?.cause,
      '429',
      'a budget of 999 ms is too small: the wait is over 999 ms, although the jitter would wait 0',
    );
    t.equal(over.v.hits('/items').length, 1);
    const within = await setup(t, routes());
    const r = await within.run('fault:Item', { retry: policy(1000), random: () => 0 });
    t.equal(r.status, 'succeeded', 'a budget of 1000 ms is enough: Retry-After is the wait, not added to a backoff');
    t.equal(within.v.hits('/items').length, 2);
    // And the runtime really sleeps it: a 500 ms deadline, set before the first request, ends the run during the wait.
    const slept = await setup(t, routes());
    const cut = await slept.run('fault:Item', { retry: policy(1000), random: () => 0, deadlineMs: 500 });
    t.equal(
      cut.errors[0]?.code,
      'deadline_exceeded',
      'the wait outlasts a 500 ms deadline: there was no early retry (it would have succeeded)',
    );
  });

  t.test('a Retry-After beyond the retry budget is not waited for', async (t) => {
    const s = await setup(t, {
      'GET /items': [
        { status: 429, headers: { 'retry-after': '30' }, json: { message: 'quota exhausted' } },
        { json: ITEMS },
      ],
    });
    // A runtime that waited the 30 s would end at this deadline with deadline_exceeded instead.
    const r = await s.run('fault:Item', {
      retry: { retries: 3, baseDelayMs: 5, maxDelayMs: 60_000, budgetMs: 500 },
      deadlineMs: 10_000,
    });
    t.equal(r.status, 'failed');
    t.equal(r.errors[0]?.code, 'vendor_error', 'the 429 is the answer at once, not a deadline after waiting');
    t.equal(r.errors[0]?.cause, '429');
    t.match(r.errors[0]?.hint, /rate limit/);
    t.equal(s.v.hits('/items').length, 1);
  });
});

t.test('503 three times, then 200: success after 4 attempts', async (t) => {
  const s = await setup(t, { 'GET /items': [{ status: 503 }, { status: 503 }, { status: 503 }, { json: ITEMS }] });
  const r = await s.run('fault:Item');
  t.equal(r.status, 'succeeded');
  t.equal(r.returns[0]?.rows.length, 10);
  t.equal(s.v.hits('/items').length, 4);
  t.equal(r.steps.n1?.calls, 4);
  t.equal(r.errors.length, 0);
});

t.test('502/503/504 that persist: vendor_error after the retries', async (t) => {
  const s = await setup(t, { 'GET /items': { status: 504, json: { message: 'upstream timed out' } } });
  const r = await s.run('fault:Item');
  t.equal(r.errors[0]?.code, 'vendor_error');
  t.equal(r.errors[0]?.cause, '504');
  t.match(r.errors[0]?.message, /upstream timed out/);
  t.equal(s.v.hits('/items').length, RETRY.retries + 1);
});

t.test('500: no retry, vendor_error with the vendor message excerpt', async (t) => {
  const s = await setup(t, { 'GET /items': { status: 500, json: { error: { message: 'database on fire' } } } });
  const r = await s.run('fault:Item');
  t.equal(r.status, 'failed');
  const e = r.errors[0]!;
  t.equal(e.code, 'vendor_error');
  t.equal(e.cause, '500');
  t.match(e.message, /answered 500/);
  t.match(e.message, /database on fire/);
  t.match(e.hint, /try again later/);
  t.equal(s.v.hits('/items').length, 1, 'a 500 is not retried');
});

t.test('retries only for GET: a POST or PATCH that gets 503 is sent once', async (t) => {
  const s = await setup(t, {
    'POST /items': [{ status: 503 }, { status: 201, json: ITEMS[0] }],
    'PATCH /items/:id': [{ status: 503 }, { json: ITEMS[0] }],
  });
  const r = await s.run('fault:createItem(name="lamp")', { accepted: true });
  t.equal(r.status, 'failed');
  t.equal(r.errors[0]?.code, 'vendor_error');
  t.equal(s.v.hits('/items', 'POST').length, 1);
  t.same(JSON.parse(s.v.hits('/items', 'POST')[0]!.body), { name: 'lamp' });
  const u = await s.run('fault:Item(1).updateItem(name="x")', { accepted: true });
  t.equal(u.errors[0]?.code, 'vendor_error');
  t.equal(s.v.hits('/items/1', 'PATCH').length, 1);
});

t.test('connection resets', async (t) => {
  t.test('before the response: a GET is retried and succeeds', async (t) => {
    const s = await setup(t, { 'GET /items': [{ reset: 'before' }, { json: ITEMS }] });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'succeeded');
    t.equal(r.returns[0]?.rows.length, 10);
    t.equal(s.v.hits('/items').length, 2);
  });

  t.test('mid body: a GET is retried and succeeds', async (t) => {
    const s = await setup(t, {
      'GET /items': [{ reset: 'mid', json: ITEMS }, { reset: 'mid', json: ITEMS }, { json: ITEMS }],
    });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'succeeded');
    t.same(
      r.returns[0]?.rows.map((x) => x.id),
      ITEMS.map((x) => x.id),
    );
    t.equal(s.v.hits('/items').length, 3);
  });

  t.test('a reset that persists: vendor_unreachable after the retries', async (t) => {
    const s = await setup(t, { 'GET /items': { reset: 'before' } });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'failed');
    t.equal(r.errors[0]?.code, 'vendor_unreachable');
    t.match(r.errors[0]?.message, /connection reset/);
    t.match(r.errors[0]?.hint, /backend of `fault` is up/, 'the hint names the entry (never the URL)');
    t.equal(s.v.hits('/items').length, RETRY.retries + 1);
  });

  t.test('a POST that is reset is not sent again', async (t) => {
    const s = await setup(t, {
      'POST /items': [
        { reset: 'mid', status: 201, json: ITEMS[0] },
        { status: 201, json: ITEMS[0] },
      ],
    });
    const r = await s.run('fault:createItem(name="lamp")', { accepted: true });
    t.equal(r.errors[0]?.code, 'vendor_unreachable');
    t.equal(s.v.hits('/items', 'POST').length, 1);
  });

  t.test('a closed port: vendor_unreachable (connection refused)', async (t) => {
    const gone = await startFaultVendor({});
    await gone.close();
    const reg = faultRegistry(gone.url);
    const http = new PooledHttpClient();
    t.teardown(() => http.close());
    const c = compileProgram('fault:Item', { registry: reg });
    if (c.kind !== 'plan') throw new Error('no plan');
    const r = await executePlan(c.plan, reg, { http, retry: { ...RETRY, retries: 1 }, requestTimeoutMs: 2000 });
    t.equal(r.errors[0]?.code, 'vendor_unreachable');
    t.match(r.errors[0]?.message, /connection refused/);
  });
});

t.test('vendor_unreachable names the entry, never the backend URL (it may carry user:password)', async (t) => {
  const gone = await startFaultVendor({});
  await gone.close();
  // The loader strips userinfo from an override and refuses it in a catalog; the runtime still never shows the URL.
  const clean = faultRegistry(gone.url).get('fault')!;
  const reg = new Registry([{ ...clean, base_url: gone.url.replace('://', '://admin:pw-SECRET-5@') }]);
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  const c = compileProgram('fault:Item', { registry: reg });
  if (c.kind !== 'plan') throw new Error('no plan');
  const r = await executePlan(c.plan, reg, { http, retry: { ...RETRY, retries: 0 }, requestTimeoutMs: 2000 });
  const e = r.errors[0]!;
  t.equal(e.code, 'vendor_unreachable');
  t.equal(
    e.hint,
    'check that the backend of `fault` is up; the operator can point it elsewhere with --backend fault=<url>',
  );
  t.notMatch(JSON.stringify(r), /pw-SECRET|admin:/, 'no userinfo anywhere in the result');
  t.notMatch(`${e.message} ${e.hint}`, /https?:\/\//, 'no URL in the message or the hint');
});

t.test('bad bodies: vendor_bad_response, not retried', async (t) => {
  const s = await setup(t, {
    'GET /items': { text: '[{"id": 1, "name": ', contentType: 'application/json' },
    'GET /items/:id': { text: '<html><body>Login</body></html>', contentType: 'text/html; charset=utf-8' },
    'GET /feed': { json: { items: { id: 1 }, next_cursor: null } },
  });
  const malformed = await s.run('fault:Item');
  t.equal(malformed.errors[0]?.code, 'vendor_bad_response');
  t.match(malformed.errors[0]?.message, /malformed JSON/);
  t.equal(s.v.hits('/items').length, 1);
  const html = await s.run('fault:Item(3)');
  t.equal(html.errors[0]?.code, 'vendor_bad_response');
  t.match(html.errors[0]?.message, /text\/html/);
  t.notMatch(html.errors[0]?.message, /Login/, 'the HTML body is not echoed');
  t.equal(s.v.hits('/items/3').length, 1);
  const shape = await s.run('fault:feedItems');
  t.equal(shape.errors[0]?.code, 'vendor_bad_response');
  t.match(shape.errors[0]?.message, /expected a list of rows at `items`/);
});

t.test('an oversized body: vendor_body_too_large', async (t) => {
  const big = Array.from({ length: 200 }, (_, i) => ({ id: i, name: 'x'.repeat(40) }));
  const s = await setup(t, {
    'GET /items': { json: big },
    'GET /items/:id': { chunks: Array.from({ length: 20 }, () => 'y'.repeat(500)), contentType: 'application/json' },
  });
  const r = await s.run('fault:Item', { maxBodyBytes: 1000 });
  t.equal(r.status, 'failed');
  t.equal(r.errors[0]?.code, 'vendor_body_too_large');
  t.match(r.errors[0]?.message, /1000 bytes/);
  t.equal(s.v.hits('/items').length, 1, 'not retried');
  const chunked = await s.run('fault:Item(1)', { maxBodyBytes: 1000 });
  t.equal(chunked.errors[0]?.code, 'vendor_body_too_large', 'a chunked body without a length is cut off too');
  const fits = await s.run('fault:Item', { maxBodyBytes: 1_000_000 });
  t.equal(fits.status, 'succeeded', 'the same body under a larger limit is fine');
});

t.test('cursor pagination', async (t) => {
  t.test('limit over several pages, then continuePage to the end', async (t) => {
    const s = await setup(t, { 'GET /feed': cursorFeed(ITEMS, 3) });
    const r = await s.run('fault:feedItems(limit=6)');
    t.equal(r.status, 'succeeded');
    t.same(
      r.returns[0]?.rows.map((x) => x.id),
      [1, 2, 3, 4, 5, 6],
    );
    t.equal(r.steps.n1?.pages, 2);
    const sent = s.v.hits('/feed').map((x) => x.url);
    t.same(
      sent,
      ['/feed?limit=3', '/feed?limit=3&cursor=c3'],
      'the first page sends no cursor; the next uses the body cursor',
    );
    const state = r.returns[0]?.page;
    t.ok(state);
    t.notMatch(JSON.stringify(r.returns[0]?.rows), /c6/, 'the vendor cursor is not in the rows');
    const p2 = await continuePage(state!, s.reg, { http: s.http, retry: RETRY });
    t.notOk(p2.error);
    t.same(
      p2.rows.map((x) => x.id),
      [7, 8, 9],
    );
    t.ok(p2.page);
    const p3 = await continuePage(p2.page!, s.reg, { http: s.http, retry: RETRY });
    t.same(
      p3.rows.map((x) => x.id),
      [10],
    );
    t.equal(p3.page, undefined, 'the last page has no continuation');
    t.same(
      s.v.hits('/feed').map((x) => x.query.get('cursor')),
      [null, 'c3', 'c6', 'c9'],
    );
  });

  t.test('one page by default', async (t) => {
    const s = await setup(t, { 'GET /feed': cursorFeed(ITEMS, 3) });
    const r = await s.run('fault:feedItems(kind="alpha")');
    t.equal(r.returns[0]?.rows.length, 3);
    t.equal(s.v.hits('/feed').length, 1);
    t.equal(s.v.hits('/feed')[0]?.query.get('kind'), 'alpha');
    const next = await continuePage(r.returns[0]!.page!, s.reg, { http: s.http });
    t.equal(s.v.hits('/feed')[1]?.query.get('kind'), 'alpha', 'a continuation keeps the filters');
    t.same(
      next.rows.map((x) => x.id),
      [4, 5, 6],
    );
  });

  t.test('a limit that ends inside a page: the continuation starts after the last returned row', async (t) => {
    const s = await setup(t, { 'GET /feed': cursorFeed(ITEMS, 3) });
    const r = await s.run('fault:feedItems(limit=7)');
    t.same(
      r.returns[0]?.rows.map((x) => x.id),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const state = r.returns[0]?.page;
    t.ok(state, 'rows 8 to 10 remain');
    if (!state) return;
    const seen = r.returns[0]!.rows.map((x) => x.id);
    let more: typeof state | undefined = state;
    for (let n = 0; more && n < 10; n++) {
      const next = await continuePage(more, s.reg, { http: s.http });
      t.notOk(next.error);
      seen.push(...next.rows.map((x) => x.id));
      more = next.page;
    }
    t.same(
      seen,
      ITEMS.map((x) => x.id),
      'rows 8 and 9 are not lost, nothing repeats',
    );
  });
});

t.test('Link header pagination', async (t) => {
  t.test('absolute links: limit follows them, continuePage goes on to the end', async (t) => {
    const s = await setup(t, { 'GET /linked': linkedPages(ITEMS, 3) });
    const r = await s.run('fault:linkItems(kind="alpha", limit=6)');
    t.equal(r.status, 'succeeded');
    t.same(
      r.returns[0]?.rows.map((x) => x.id),
      [1, 2, 3, 4, 5, 6],
    );
    t.same(
      s.v.hits('/linked').map((x) => x.query.get('page')),
      ['1', '2'],
    );
    t.ok(
      s.v.hits('/linked').every((x) => x.query.get('kind') === 'alpha'),
      'the next link keeps the filter',
    );
    let state = r.returns[0]?.page;
    const rest: unknown[] = [];
    while (state) {
      const next = await continuePage(state, s.reg, { http: s.http });
      t.notOk(next.error);
      rest.push(...next.rows.map((x) => x.id));
      state = next.page;
    }
    t.same(rest, [7, 8, 9, 10]);
  });

  t.test('a relative next link is resolved against the request URL, not thrown', async (t) => {
    const s = await setup(t, { 'GET /linked': linkedPages(ITEMS, 3, 'relative') });
    let r: RunResult | undefined;
    try {
      r = await s.run('fault:linkItems(limit=6)');
    } catch (e) {
      t.fail(`executePlan threw: ${String(e)}`);
    }
    if (r) {
      t.equal(r.status, 'succeeded');
      t.same(
        r.returns[0]?.rows.map((x) => x.id),
        [1, 2, 3, 4, 5, 6],
      );
    }
    const first = await s.run('fault:linkItems');
    t.equal(first.status, 'succeeded', 'one page is fine either way');
    if (first.returns[0]?.page) {
      try {
        const next = await continuePage(first.returns[0].page, s.reg, { http: s.http });
        t.same(
          next.rows.map((x) => x.id),
          [4, 5, 6],
        );
      } catch (e) {
        t.fail(`continuePage threw: ${String(e)}`);
      }
    }
  });

  t.test('a next link at another origin is not followed: vendor_bad_response, nothing sent there', async (t) => {
    const other = await startFaultVendor({ 'GET /linked': { json: ITEMS } });
    t.teardown(() => other.close());
    const s = await setup(t, { 'GET /linked': linkedPages(ITEMS, 3, { origin: other.url }) });
    const r = await s.run('fault:linkItems(limit=6)');
    t.equal(r.status, 'failed');
    t.equal(r.errors[0]?.code, 'vendor_bad_response');
    t.match(r.errors[0]?.message, /another origin/);
    const first = await s.run('fault:linkItems');
    const next = await continuePage(first.returns[0]!.page!, s.reg, { http: s.http });
    t.equal(next.error?.code, 'vendor_bad_response');
    t.equal(other.requests.length, 0, 'the other origin saw no request');
  });
});

t.test('continuePage honours its deadline: deadline_exceeded', HANG(), async (t) => {
  // The second page never comes: only the deadline can end the wait.
  const s = await setup(t, {
    'GET /feed': (req) => (req.query.has('cursor') ? { hang: true } : cursorFeed(ITEMS, 3)(req, 0)),
  });
  const r = await s.run('fault:feedItems');
  const next = await continuePage(r.returns[0]!.page!, s.reg, {
    http: s.http,
    deadlineMs: 200,
    requestTimeoutMs: NEVER,
  });
  t.equal(next.error?.code, 'deadline_exceeded', 'a deadline is not reported as a cancel');
  // The caller's signal and the server's stop signal cancel a page fetch alike.
  for (const [key, what] of [
    ['signal', 'a caller abort is a cancel'],
    ['stop', 'so is the server stopping (the stop signal)'],
  ] as const) {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const cancelled = await continuePage(r.returns[0]!.page!, s.reg, {
      http: s.http,
      [key]: ac.signal,
      requestTimeoutMs: NEVER,
    });
    t.equal(cancelled.error?.code, 'cancelled', what);
  }
});

t.test('slow streaming', async (t) => {
  const body = JSON.stringify(ITEMS);
  const parts = [body.slice(0, 100), body.slice(100, 300), body.slice(300, 500), body.slice(500)];
  const s = await setup(t, { 'GET /items': { chunks: parts, chunkDelayMs: 60, contentType: 'application/json' } });
  const ok = await s.run('fault:Item', { requestTimeoutMs: 10_000 });
  t.equal(ok.status, 'succeeded', 'a body trickling in within the request timeout is fine');
  t.same(
    ok.returns[0]?.rows.map((x) => x.id),
    ITEMS.map((x) => x.id),
  );
  const slow = await s.run('fault:Item', { requestTimeoutMs: 100, retry: { ...RETRY, retries: 0 } });
  t.equal(slow.errors[0]?.code, 'vendor_timeout', 'the request timeout covers the body too');
});

t.test('cancel mid-run via AbortController', HANG(), async (t) => {
  const ac = new AbortController();
  let atCancel = -1;
  const s = await setup(t, {
    'GET /items': (req) => ({ json: req.query.has('parentId') ? ITEMS : ITEMS.slice(0, 3) }),
    'GET /items/:id': (_req, n) => {
      if (n === 2) setTimeout(() => ac.abort(), 30); // all three fan-out calls are in
      return { hang: true };
    },
  });
  ac.signal.addEventListener('abort', () => {
    atCancel = s.v.requests.length;
  });
  // The fan-out calls never get an answer and never time out: only the cancel can end the run.
  const r = await s.run('a = fault:Item(kind="alpha")\nb = fault:getItem(id=a.id)\nfault:Item(parentId=b.id)', {
    signal: ac.signal,
    requestTimeoutMs: NEVER,
  });
  t.equal(r.status, 'cancelled');
  t.equal(r.steps.n1?.status, 'done');
  t.equal(r.steps.n1?.rows.length, 3, 'the completed step keeps its rows');
  t.equal(r.steps.n2?.status, 'cancelled', 'the step in flight is cancelled');
  t.equal(r.steps.n3?.status, 'cancelled', 'the later step is cancelled');
  t.ok(r.errors.some((e) => e.code === 'cancelled' && e.path === '/steps/n2'));
  t.equal(s.v.hits('/items/1').length, 1);
  t.equal(atCancel, 4, 'the list and the three fan-out calls were in before the cancel');
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.equal(s.v.requests.length, atCancel, 'no request reached the vendor after the cancel');
  t.notOk(
    s.v.requests.some((x) => x.query.has('parentId')),
    'the dependent step sent nothing',
  );
});

t.test('a cancelled run returns the rows of completed steps only', HANG(), async (t) => {
  const ac = new AbortController();
  const s = await setup(t, {
    'GET /items': { json: ITEMS.slice(0, 3) },
    'GET /items/:id': (req, n) => {
      if (n < 2) return { json: ITEMS.find((x) => String(x.id) === req.params.id) ?? {} };
      setTimeout(() => ac.abort(), 30); // two of the three fan-out calls answered
      return { hang: true };
    },
  });
  const r = await s.run('a = fault:Item(kind="alpha")\na\nfault:getItem(id=a.id)', {
    signal: ac.signal,
    requestTimeoutMs: NEVER,
  });
  t.equal(r.status, 'cancelled');
  t.equal(r.steps.n2?.status, 'cancelled');
  t.equal(r.steps.n2?.rows.length, 2, 'the step result keeps what the interrupted step got');
  t.equal(r.returns.length, 2);
  t.equal(r.returns[0]?.rows.length, 3, 'the completed step is returned');
  t.same(r.returns[1]?.rows, [], 'the interrupted step returns no partial rows');
  t.notOk(r.returns[1]?.page, 'and no page to continue');
});

t.test('an already aborted signal sends nothing', async (t) => {
  const s = await setup(t, { 'GET /items': { json: ITEMS } });
  const r = await s.run('fault:Item', { signal: AbortSignal.abort() });
  t.equal(r.status, 'cancelled');
  t.equal(r.steps.n1?.status, 'cancelled');
  t.equal(s.v.requests.length, 0);
});

t.test("stop, the second signal (shutdown), cancels like the caller's, and either alone does", HANG(), async (t) => {
  const s = await setup(t, { 'GET /items': { hang: true } });
  const stop = new AbortController();
  const caller = new AbortController();
  setTimeout(() => stop.abort(), 30);
  const r = await s.run('fault:Item', { signal: caller.signal, stop: stop.signal, requestTimeoutMs: NEVER });
  t.equal(r.status, 'cancelled', 'the stop signal ends a run hanging on the vendor');
  t.equal(r.steps.n1?.status, 'cancelled');
  t.notOk(caller.signal.aborted, "the caller's signal is left alone");
  const early = await s.run('fault:Item', { stop: AbortSignal.abort(), requestTimeoutMs: NEVER });
  t.equal(early.status, 'cancelled', 'an already stopped server sends nothing');
  t.equal(s.v.requests.length, 1, 'only the first run reached the vendor');
});

t.test('deadline: deadline_exceeded', async (t) => {
  t.test('during a slow request', HANG(), async (t) => {
    // The vendor never answers and the request timeout never comes: only the deadline can end the run.
    const s = await setup(t, { 'GET /items': { hang: true } });
    // Timers fire in the order they fall due: one of 150 ms started before the run fires before
    // any deadline of 150 ms or more, whatever the load. So this tells a deadline cut short.
    let half = false;
    setTimeout(() => {
      half = true;
    }, 150);
    const r = await s.run('fault:Item', { deadlineMs: 300, requestTimeoutMs: NEVER });
    t.equal(r.status, 'failed');
    t.equal(r.errors[0]?.code, 'deadline_exceeded');
    t.equal(r.steps.n1?.status, 'failed');
    t.ok(half, 'not before half the deadline');
    t.equal(s.v.hits('/items').length, 1, 'the deadline is not retried');
  });

  t.test('during a retry wait', HANG(), async (t) => {
    // Retry-After asks for ten minutes (within the policy): a wait the deadline did not cut short would hang the test.
    const s = await setup(t, { 'GET /items': [{ status: 503, headers: { 'retry-after': '600' } }, { json: ITEMS }] });
    const r = await s.run('fault:Item', {
      deadlineMs: 300,
      retry: { retries: 3, baseDelayMs: 5, maxDelayMs: 3_600_000, budgetMs: 3_600_000 },
    });
    t.equal(r.errors[0]?.code, 'deadline_exceeded', 'the wait is cut short by the deadline');
    t.equal(s.v.hits('/items').length, 1, 'no retry after the deadline');
  });
});

t.test('a 400 that names a parameter: the hint teaches the fix', async (t) => {
  const s = await setup(t, {
    'GET /items': (req) =>
      req.query.has('kind')
        ? { status: 400, json: { message: 'invalid value for kind: must be a known kind' } }
        : { status: 422, json: { errors: [{ message: 'name is too short' }] } },
  });
  const e = (await s.run('fault:Item(kind="alpha")')).errors[0]!;
  t.equal(e.code, 'vendor_error');
  t.equal(e.cause, '400');
  t.match(e.hint, /`kind`/);
  t.match(e.hint, /alpha, beta, gamma/, 'the allowed values of the enum');
  t.equal(s.v.hits('/items').length, 1, 'a 400 is not retried');
  const n = (await s.run('fault:Item(name="x")')).errors[0]!;
  t.equal(n.cause, '422');
  t.match(n.hint, /`name`/);
  t.notMatch(n.hint, /alpha/);
});
