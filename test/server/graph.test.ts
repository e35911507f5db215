/**
 * The session graph over real sockets (server/execute/graphs.ts) with the demo stack: with a max
 * age, a get by id of a brewery an earlier run of the session listed is answered without a vendor
 * call (and equals the answer of a server without one, which calls the vendor); a write in
 * between sends the get; /v1/health counts the rows. Persistence: replicas sharing a session
 * store and a `file://` (or `s3://`) graph store answer from each other's rows, a delta object per
 * run, compacted into snapshot.json by the first load past 16 deltas.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { PooledHttpClient, type HttpRequest } from '../../runtime/index.js';
import { blobsFromUrl, type Blobs } from '../../runtime/graph-blobs.js';
import { MemorySessionRepository } from '../../server/execute/memory-repository.js';
import type { SessionRepository } from '../../server/execute/repository.js';
import { call, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';
import { recording } from '../_helpers/recording.js';
import { startS3rver } from '../_helpers/s3rver.js';

const demo = await startDemoVendor();
t.teardown(() => demo.close());

const MINUTE = 60_000;
const LIST = 'brewery:Brewery()';
const GET = 'brewery:Brewery("b-3")[name, city]';

interface Replica {
  url: string;
  /** The vendor requests this server sent (`METHOD /path?query`). */
  sent: () => string[];
  idle: () => Promise<void>;
}

/** An svc server over the demo vendor, its vendor calls recorded; `rowClock` is the runtime's clock. */
async function server(
  t: Test,
  maxAgeMs: number,
  more: { sessions?: SessionRepository; graphBlobs?: Blobs; now?: () => number; rowClock?: () => number } = {},
): Promise<Replica> {
  const http = recording(new PooledHttpClient());
  t.teardown(() => http.close());
  const { rowClock, ...opts } = more;
  const runtime = { http, ...(rowClock ? { now: rowClock } : {}) };
  const s = await startStack(t, { vendorUrl: demo.url, limits: { graphMaxAgeMs: maxAgeMs }, runtime, ...opts });
  const wire = (r: HttpRequest) => `${r.method} ${new URL(r.url).pathname}${new URL(r.url).search}`;
  return { url: s.url, sent: () => http.sent.map(wire), idle: () => s.app.idle() };
}

async function ok(t: Test, a: Answer, what: string): Promise<Answer> {
  t.equal(a.status, 200, `${what}: ${a.text.slice(0, 300)}`);
  return a;
}

/** Runs `program` on `r` and answers the vendor requests it caused, and the answer. */
async function runOn(t: Test, r: Replica, path: string, program: string, query = '') {
  const before = r.sent().length;
  const a = await ok(t, await runProgram(r.url, path, program, query), program);
  return { a, sent: r.sent().slice(before) };
}

const session = async (r: Replica) =>
  (await openSession(r.url, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] })).path;
const getsOf = (sent: string[]) => sent.filter((s) => s === 'GET /breweries/b-3');

t.test('a get by id of a row an earlier run listed: no vendor call within the max age', async (t) => {
  const aged = await server(t, MINUTE);
  const zero = await server(t, 0);
  const pa = await session(aged);
  const listed = await runOn(t, aged, pa, LIST);
  t.ok(
    (listed.a.body.rows as Array<{ id: string }>).some((r) => r.id === 'b-3'),
    'the list holds b-3',
  );
  const fromGraph = await runOn(t, aged, pa, GET);
  t.same(getsOf(fromGraph.sent), [], 'max age 60 s: the vendor received no GET /breweries/b-3');
  t.same(fromGraph.sent, [], 'nor anything else');

  const pz = await session(zero);
  await runOn(t, zero, pz, LIST);
  const fromVendor = await runOn(t, zero, pz, GET);
  t.same(getsOf(fromVendor.sent), ['GET /breweries/b-3'], 'max age 0: the get is sent');
  t.same(fromGraph.a.body.rows, fromVendor.a.body.rows, 'the same answer');
  const b3 = (await (await fetch(`${demo.url}/breweries/b-3`)).json()) as Record<string, unknown>;
  t.same(fromGraph.a.body.rows, [{ name: b3.name, city: b3.city }], "the vendor's row");

  const other = await session(aged);
  const elsewhere = await runOn(t, aged, other, GET);
  t.same(getsOf(elsewhere.sent), ['GET /breweries/b-3'], "another session does not see this session's rows");

  const health = await call(aged.url, '/v1/health');
  t.ok(health.body.graph.rows > 0, `health counts the rows (${health.body.graph.rows})`);
  t.match(health.body.graph, { max_rows: 2048, max_age_s: 60, persisted: false });
  const zeroHealth = await call(zero.url, '/v1/health');
  t.match(zeroHealth.body.graph, { max_age_s: 0 });
});

t.test('max age 0 is the same run only, even within one millisecond; the service clock is not the rows’', async (t) => {
  const frozen = await server(t, 0, { rowClock: () => Date.parse('2031-01-01T00:00:00Z') });
  const path = await session(frozen);
  await runOn(t, frozen, path, LIST);
  const same = await runOn(t, frozen, path, GET);
  t.same(getsOf(same.sent), ['GET /breweries/b-3'], 'rows of an earlier run seen in the same millisecond: sent');
  const later = Date.parse('2035-01-01T00:00:00Z');
  const shifted = await server(t, MINUTE, { now: () => later });
  const p2 = await session(shifted);
  await runOn(t, shifted, p2, LIST);
  const young = await runOn(t, shifted, p2, GET);
  t.same(young.sent, [], 'an injected service clock (sessions, tokens) does not age the rows');
});

t.test('a write to breweries in between sends the get', async (t) => {
  const r = await server(t, MINUTE);
  const path = await session(r);
  await runOn(t, r, path, LIST);
  const w = await runOn(t, r, path, 'brewery:Brewery("b-3").updateBrewery(city="Graphville")', 'force=true');
  t.same(w.sent, ['PATCH /breweries/b-3'], 'the write reached the vendor');
  const after = await runOn(t, r, path, GET);
  t.same(getsOf(after.sent), ['GET /breweries/b-3'], 'the get after the write is sent');
  t.equal(after.a.body.rows[0].city, 'Graphville', 'and answers the new city');
});

/** A fresh graph directory, removed at teardown. */
function graphDir(t: Test): { dir: string; url: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-graph-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, url: pathToFileURL(dir).href };
}

t.test('replicas sharing a session store and a file:// graph store', async (t) => {
  const { dir, url } = graphDir(t);
  const sessions = new MemorySessionRepository();
  const replica = async () => server(t, MINUTE, { sessions, graphBlobs: await blobsFromUrl(url, {}) });
  const [a, b] = [await replica(), await replica()];
  const path = await session(a);
  const [, , promptHash, id] = path.split('/');
  await runOn(t, a, path, LIST);
  await a.idle();
  const files = () => readdirSync(join(dir, promptHash!, id!)).sort();
  t.match(files(), [/^d-\d{13}-[0-9a-f]{8}\.json$/], 'one delta for the run that saw rows');
  const onB = await runOn(t, b, path, GET);
  t.same(onB.sent, [], "B answers from A's rows: no vendor call");
  const direct = await runOn(t, a, path, GET);
  t.same(onB.a.body.rows, direct.a.body.rows, 'the same answer as on A');
  await b.idle();
  t.equal(files().length, 1, 'a run that saw no new rows writes no delta');

  for (let i = 0; i < 16; i++) await runOn(t, a, path, LIST);
  await a.idle();
  t.equal(files().filter((f) => f.startsWith('d-')).length, 17, '17 deltas');
  t.notOk(files().includes('snapshot.json'), 'no snapshot yet');
  const c = await replica();
  const onC = await runOn(t, c, path, GET);
  t.same(onC.sent, [], "C's first use loads the deltas: no vendor call");
  await c.idle();
  t.same(files(), ['snapshot.json'], 'the load compacted them into snapshot.json and removed them');
  const d = await replica();
  const onD = await runOn(t, d, path, GET);
  t.same(onD.sent, [], 'a replica reading the snapshot answers too');
  t.same(onD.a.body.rows, onC.a.body.rows);
  const zero = await server(t, 0, { sessions, graphBlobs: await blobsFromUrl(url, {}) });
  const onZero = await runOn(t, zero, path, GET);
  t.same(getsOf(onZero.sent), ['GET /breweries/b-3'], 'with max age 0 no persisted row is used');
});

t.test('an s3:// graph store shared by two replicas', async (t) => {
  const s3 = await startS3rver();
  t.teardown(() => s3.close());
  await s3.client.send(new CreateBucketCommand({ Bucket: 'graph' }));
  const sessions = new MemorySessionRepository();
  const replica = async () => {
    const blobs = await blobsFromUrl('s3://graph/svc', { endpoint: s3.endpoint, forcePathStyle: true });
    t.teardown(() => blobs.close());
    return server(t, MINUTE, { sessions, graphBlobs: blobs });
  };
  const [a, b] = [await replica(), await replica()];
  const path = await session(a);
  await runOn(t, a, path, LIST);
  await a.idle();
  const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'graph', Prefix: 'svc/' }));
  const [, , promptHash, id] = path.split('/');
  t.match(
    (listed.Contents ?? []).map((o) => o.Key),
    [new RegExp(`^svc/${promptHash}/${id}/d-\\d{13}-[0-9a-f]{8}\\.json$`)],
    'one delta object under the prefix',
  );
  const onB = await runOn(t, b, path, GET);
  t.same(onB.sent, [], "B answers from A's rows");
  const b3 = (await (await fetch(`${demo.url}/breweries/b-3`)).json()) as Record<string, unknown>;
  t.same(onB.a.body.rows, [{ name: b3.name, city: b3.city }], "the vendor's row");
});
