/**
 * Lists for `many` parameters and parameter constraints over the HTTP surface, against the real
 * demo vendor behind a counting proxy: `style=[..]` and `status=[..]` return rows of every value
 * given; an update without fields and a rating off the scale are refused as 400s before any
 * vendor call, even with force=true.
 */
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { codeOf, openSession, runProgram, startStack } from '../_helpers/server.js';

type Row = Record<string, unknown>;

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
/** Every request that reached the vendor, as `METHOD /path?query`. */
const seen: string[] = [];
const proxy = createServer((req, res) => {
  seen.push(`${req.method} ${req.url}`);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    fetch(vendor.url + req.url, {
      method: req.method!,
      headers: { accept: 'application/json', 'content-type': req.headers['content-type'] ?? 'application/json' },
      ...(body.length ? { body } : {}),
    }).then(
      async (r) => {
        const headers: Record<string, string> = {};
        r.headers.forEach((v, k) => {
          if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(k)) headers[k] = v;
        });
        res.writeHead(r.status, headers).end(Buffer.from(await r.arrayBuffer()));
      },
      () => res.writeHead(502).end(),
    );
  });
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

const stack = await startStack(t, { vendorUrl: proxyUrl });
const BASE = stack.url;

t.test('style=[..] returns beers of both styles; one request with repeated keys', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Beer'] });
  const from = seen.length;
  const a = await runProgram(BASE, path, 'e1(style=["IPA", "Stout"], limit=100)[id, style]');
  t.equal(a.status, 200, a.text);
  const rows = a.body.rows as Row[];
  t.same(new Set(rows.map((r) => r.style)), new Set(['IPA', 'Stout']), 'rows of both values');
  const want = (vendor.db().beers as Row[]).filter((b) => b.style === 'IPA' || b.style === 'Stout');
  t.equal(rows.length, want.length, 'every beer of either style');
  t.match(seen.slice(from), [/^GET \/beers\?style=IPA&style=Stout&/]);
});

t.test('status=[..] with another filter returns tickets of both statuses', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'helpdesk', seeds: ['Ticket'] });
  const a = await runProgram(BASE, path, 'e1(status=["open", "pending"], priority="high", limit=100)[id, status]');
  t.equal(a.status, 200, a.text);
  const want = (vendor.db().tickets as Row[]).filter(
    (x) => (x.status === 'open' || x.status === 'pending') && x.priority === 'high',
  );
  t.same(
    (a.body.rows as Row[]).map((r) => r.id),
    want.map((x) => x.id),
  );
  t.same(new Set((a.body.rows as Row[]).map((r) => r.status)), new Set(['open', 'pending']));
});

t.test('an update without fields is refused before any vendor call, even forced', async (t) => {
  const { path, answer } = await openSession(BASE, { entry_id: 'helpdesk', seeds: ['Ticket'] });
  const update = /\.(m\d+)\(subject=\$/.exec(String(answer.body.wave))?.[1];
  t.ok(update, 'the wave teaches the update');
  const before = JSON.stringify(vendor.db().tickets);
  const from = seen.length;
  for (const program of [`e1("t-1").${update}`, `e1("t-1").${update}()`]) {
    for (const query of ['force=true', 'mode=plan']) {
      const a = await runProgram(BASE, path, program, query);
      t.equal(a.status, 400, `${program} ${query}: ${a.text}`);
      t.equal(codeOf(a), 'missing_argument');
      t.match(a.text, `needs at least one of subject, body, status, priority`);
      t.match(a.text, `e1(\\"t-1\\").${update}(subject=\\"text\\")`, 'the hint shows the call with one field');
    }
  }
  t.same(seen.slice(from), [], 'the vendor saw no request');
  t.equal(JSON.stringify(vendor.db().tickets), before, 'no ticket changed');
  const ok = await runProgram(BASE, path, `e1("t-1").${update}(priority="urgent")`, 'force=true');
  t.equal(ok.status, 200, ok.text);
  t.match(seen.slice(from), [/^PATCH \/tickets\/t-1$/], 'with a field, the PATCH goes out');
});

t.test('a rating off the scale is constraint_violation (400) and writes nothing', async (t) => {
  const { path, answer } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Review'] });
  const create = /(m\d+)\(beerId=\$, rating=\$/.exec(String(answer.body.wave))?.[1];
  t.ok(create, 'the wave teaches createReview');
  const from = seen.length;
  const a = await runProgram(BASE, path, `${create}(beerId=1, rating=9, author="ann")`, 'force=true');
  t.equal(a.status, 400, a.text);
  t.equal(codeOf(a), 'constraint_violation');
  t.match(a.text, '`rating` must be at most 5');
  t.match(a.text, `${create}(beerId=1, rating=5, author=\\"ann\\")`);
  t.same(seen.slice(from), [], 'the vendor saw no request');
});
