/**
 * Background operations across a Redis outage, over real processes: two `svc serve` replicas
 * sharing a real redis-server (with persistence, so a restart keeps the sessions) and a file
 * artifact store, against the json-server demo vendor behind a gate (a fault vendor that holds
 * requests until the test lets them through, or passes a write on and never answers: timing faults
 * json-server cannot produce on demand).
 *
 * - An operation that finishes while Redis is down for longer than the lease is written back by
 *   its replica once Redis returns: `wait(oN)` on either replica answers its rows, not
 *   `operation_lost`.
 * - An operation whose replica is really gone (killed during a write) is `operation_lost` once its
 *   lease lapses, and the answer says the write may have landed: check before running it again.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { serve, type Svc } from '../_helpers/cli.js';
import { startFaultVendor, type RecordedRequest, type Reply } from '../_helpers/fault-vendor.js';
import { startRedis } from '../_helpers/redis.js';
import { call, PACKED, runProgram, type Answer } from '../_helpers/server.js';
import { sleep, until } from '../_helpers/until.js';

/** Short, so the test is too; long enough that an owner alive renews before a lease is judged after the outage. */
const LEASE_SECS = 3;

const redis = await startRedis(t, { persist: true });
const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const runs = mkdtempSync(join(tmpdir(), 'svc-outage-runs-'));
t.teardown(() => rmSync(runs, { recursive: true, force: true }));

/** Pass a request on to json-server and answer what it answered. */
async function forward(r: RecordedRequest): Promise<Reply> {
  const res = await fetch(vendor.url + r.url, {
    method: r.method,
    headers: { 'content-type': 'application/json' },
    ...(r.body ? { body: r.body } : {}),
  });
  const headers: Record<string, string> = {};
  for (const h of ['x-total-count', 'link']) {
    const v = res.headers.get(h);
    if (v) headers[h] = v;
  }
  return { status: res.status, headers, text: await res.text(), contentType: 'application/json' };
}

/** Reads of breweries wait for `open()`; a write lands at json-server and is never answered. */
let open: () => void = () => undefined;
let opened = new Promise<void>((r) => (open = r));
const gate = await startFaultVendor({
  'GET /breweries': async (r) => {
    await opened;
    return forward(r);
  },
  'PATCH /breweries/:id': async (r) => {
    await forward(r);
    return { hang: true };
  },
});
t.teardown(() => gate.close());

const ENV = {
  SVC_MCP_TRANSPORT_KV_URL: redis.url,
  SVC_RUN_ARTIFACTS_URL: pathToFileURL(runs).href,
  SVC_OPERATION_LEASE_SECS: String(LEASE_SECS),
  SVC_SHUTDOWN_GRACE_SECS: '1',
};

function replica(t: Test): Promise<Svc & { url: string }> {
  return serve(t, ['--catalog-dir', PACKED, '--port', '0', '--backend', `brewery=${gate.url}`], ENV);
}

async function openSession(base: string): Promise<string> {
  const a = await call(base, '/execute', {
    body: JSON.stringify({ entry_id: 'brewery', seeds: ['Brewery'] }),
    type: 'application/json',
  });
  if (a.status !== 201) throw new Error(`open answered ${a.status}: ${a.text}`);
  return `/execute/${a.body.prompt_hash}/${a.body.session}`;
}

const opOf = (a: Answer) => a.body._meta?.svc?.op as { n: string; '~': string; s: string } | undefined;

/** `wait(h)` on `base` until it answers an ended operation (503s while Redis is away are polled over). */
const ended = (base: string, path: string, h: string) =>
  until(
    `${h} ends on ${base}`,
    async () => {
      const w = await runProgram(base, path, `wait(${h})`);
      const s = opOf(w)?.s;
      return s && s !== 'running' ? w : undefined;
    },
    600,
  );

t.test('an operation that ends while Redis is down longer than the lease keeps its result', async (t) => {
  const [A, B] = (await Promise.all([replica(t), replica(t)])).map((r) => r.url) as [string, string];
  opened = new Promise<void>((r) => (open = r));
  const path = await openSession(A);
  const started = await runProgram(A, path, 'e1[id,name]', 'wait=false');
  t.equal(started.status, 202, started.text);
  const h = opOf(started)!.n;
  await until('the run reaches the vendor', () => gate.hits('/breweries').length > 0);

  await redis.stop();
  open(); // the run ends while Redis is down: its end cannot be written now
  await sleep(LEASE_SECS * 1000 * 2.5); // longer than the lease: it lapses
  await redis.restart(); // with its data (persistence on)

  const onB = await ended(B, path, h);
  t.equal(onB.body._meta.svc.status, 'succeeded', `not lost: ${onB.text.slice(0, 300)}`);
  t.not(onB.body._meta.svc.code, 'operation_lost');
  const rows = (onB.body.rows ?? []) as Array<{ id: string }>;
  const want = (vendor.db().breweries as Array<{ id: string }>).slice(0, rows.length).map((b) => b.id);
  t.ok(want.length > 0, 'rows');
  t.same(
    rows.map((r) => r.id),
    want,
    'the rows of the run, from the replica that did not run it',
  );
  const onA = await ended(A, path, h);
  t.equal(onA.body._meta.svc.status, 'succeeded', 'the same end on the owner');
  t.same(onA.body.rows, onB.body.rows);
});

t.test('a replica killed during a write: operation_lost says the write may have landed', async (t) => {
  const [a, b] = await Promise.all([replica(t), replica(t)]);
  const path = await openSession(a.url);
  const program = 'e1("b-6").m2(city="Lostville")';
  const dry = await runProgram(a.url, path, program, 'mode=plan');
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  const started = await runProgram(a.url, path, program, `plan_commit_ref=${ref}&wait=false`);
  t.equal(started.status, 202, started.text);
  const h = opOf(started)!.n;
  await until('the write lands at the vendor', () => gate.hits('/breweries/b-6', 'PATCH').length > 0);
  await until('json-server has it', () =>
    (vendor.db().breweries as Array<{ id: string; city?: string }>).some(
      (x) => x.id === 'b-6' && x.city === 'Lostville',
    ),
  );
  a.child.kill('SIGKILL');
  await a.exited;

  const lost = await ended(b.url, path, h);
  t.equal(lost.body._meta.svc.status, 'failed');
  t.equal(lost.body._meta.svc.code, 'operation_lost');
  const err = (lost.body.errors as Array<{ message: string; hint?: string }>)[0]!;
  t.match(`${err.message} ${err.hint}`, /may have landed/, 'the write may have landed');
  t.match(err.hint, /check/i, 'check before running it again');
  t.match(lost.text, /may have landed/, 'the answer text says so too');
});
