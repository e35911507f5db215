/** The demo vendor: json-server 0.17 over fixtures/vendor/db.json, in memory, on a free port. */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startDemoVendor, type DemoVendor } from '../../cli/demo-vendor.js';

const DB = join(import.meta.dirname, '..', '..', 'fixtures', 'vendor', 'db.json');

async function vendor(t: { teardown(fn: () => unknown): void }): Promise<DemoVendor> {
  const v = await startDemoVendor();
  t.teardown(() => v.close());
  return v;
}

async function getJson(url: string): Promise<{ res: Response; body: unknown }> {
  const res = await fetch(url);
  return { res, body: await res.json() };
}

t.test('starts on 127.0.0.1 and a free port', async (t) => {
  const v = await vendor(t);
  t.ok(v.port > 0);
  t.equal(v.url, `http://127.0.0.1:${v.port}`);
});

t.test('pages: _page/_limit give 10 rows, a Link rel="next" and X-Total-Count 42', async (t) => {
  const v = await vendor(t);
  const { res, body } = await getJson(`${v.url}/breweries?_page=1&_limit=10`);
  t.equal(res.status, 200);
  const rows = body as Array<{ id: string }>;
  t.equal(rows.length, 10);
  t.equal(rows[0]?.id, 'b-1');
  t.equal(res.headers.get('x-total-count'), '42');
  t.match(res.headers.get('link') ?? '', /<[^>]*_page=2[^>]*>; rel="next"/);
  const last = await getJson(`${v.url}/breweries?_page=5&_limit=10`);
  t.equal((last.body as unknown[]).length, 2, 'the last page holds the rest');
  t.notMatch(last.res.headers.get('link') ?? '', /rel="next"/, 'no next link on the last page');
});

t.test('the nested route /breweries/{id}/beers filters beers by breweryId', async (t) => {
  const v = await vendor(t);
  const { res, body } = await getJson(`${v.url}/breweries/b-1/beers`);
  t.equal(res.status, 200);
  const beers = body as Array<{ breweryId: string }>;
  const want = (v.db().beers as Array<{ breweryId: string }>).filter((b) => b.breweryId === 'b-1');
  t.ok(want.length > 0, 'b-1 brews beers');
  t.equal(beers.length, want.length);
  t.ok(beers.every((b) => b.breweryId === 'b-1'));
  const tickets = (await getJson(`${v.url}/customers/c-4/tickets?status=open`)).body as Array<{
    customerId: string;
    status: string;
  }>;
  t.ok(
    tickets.length > 0 && tickets.every((x) => x.customerId === 'c-4' && x.status === 'open'),
    'the helpdesk nested route keeps other filters',
  );
});

t.test('writes change the in-memory data, never db.json on disk', async (t) => {
  const before = await readFile(DB);
  const v = await vendor(t);
  const res = await fetch(`${v.url}/tickets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 'c-1', subject: 'Test ticket', status: 'open', priority: 'low', body: 'x' }),
  });
  t.equal(res.status, 201);
  const created = (await res.json()) as { id: unknown; subject: string };
  t.equal(created.subject, 'Test ticket');
  t.ok(
    (v.db().tickets as Array<{ id: unknown }>).some((x) => x.id === created.id),
    'visible in db()',
  );
  t.equal(v.db().tickets!.length, 86);
  const patched = await fetch(`${v.url}/tickets/t-1`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: '{"status":"closed"}',
  });
  t.equal(((await patched.json()) as { status: string }).status, 'closed');
  await new Promise((r) => setTimeout(r, 50));
  t.ok((await readFile(DB)).equals(before), 'db.json is byte-identical');
});

t.test('two vendors run at once, each with its own data', async (t) => {
  const a = await vendor(t);
  const b = await vendor(t);
  t.not(a.port, b.port);
  await fetch(`${a.url}/customers/c-1`, { method: 'DELETE' });
  t.equal((await fetch(`${a.url}/customers/c-1`)).status, 404, 'gone in a');
  t.equal((await fetch(`${b.url}/customers/c-1`)).status, 200, 'still in b');
  t.equal(a.db().customers!.length, 29);
  t.equal(b.db().customers!.length, 30);
  const own = await startDemoVendor({ data: { things: [{ id: 1, name: 'only' }] } });
  t.teardown(() => own.close());
  t.same((await getJson(`${own.url}/things`)).body, [{ id: 1, name: 'only' }], 'custom data');
  t.equal((await fetch(`${own.url}/breweries`)).status, 404);
});

t.test('close() frees the port', async (t) => {
  const v = await startDemoVendor();
  const res = await fetch(`${v.url}/customers/c-1`, { headers: { connection: 'keep-alive' } });
  await res.json();
  await v.close();
  await t.rejects(fetch(`${v.url}/customers/c-1`), 'no longer answering');
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(v.port, '127.0.0.1', () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  t.pass('the same port can be bound again');
  const again = await startDemoVendor({ port: v.port });
  t.equal(again.port, v.port, 'a vendor can restart on the same port');
  await again.close();
});
