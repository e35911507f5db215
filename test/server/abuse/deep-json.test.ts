/**
 * A vendor answering deeply nested JSON, over real sockets (issue 41 item 4): 10,000 levels used to
 * overflow the stack of the answer's rendering (JSON.stringify) and of the run record, and the
 * throw was taken for a client hang-up, so the read was never answered. Now a vendor answer nested
 * deeper than MAX_VENDOR_JSON_DEPTH (256) fails its step with `vendor_bad_response` naming the
 * depth, for a get and a query, waited (HTTP), in the background (`wait(oN)`) and over MCP; the run
 * is stored as failed and the next read is served. An answer just under the bound renders in every
 * format.
 */
import t, { type Test } from 'tap';
import { decode } from '@toon-format/toon';
import { MAX_VENDOR_JSON_DEPTH } from '../../../runtime/json-depth.js';
import { startFaultVendor, type Reply } from '../../_helpers/fault-vendor.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf } from '../../_helpers/mcp.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer } from '../../_helpers/server.js';
import { until } from '../../_helpers/until.js';

/** JSON text of `levels` arrays inside each other (`[[[]]]` is 3). */
const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** JSON text of `levels` objects inside each other (`{"a":{"a":{}}}` is 3). */
const objects = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

/** The nested value of a row whose whole answer nests `depth` levels (`extra` levels hold the row). */
function nested(depth: number, extra: number): string {
  const inner = depth - extra;
  return depth > 50_000 ? objects(inner) : arrays(inner);
}

/** A brewery row as JSON text whose `name` is nested so that the answer is `depth` deep. */
const brewery = (id: string, depth: number, extra: number) =>
  `{"id":"${id}","name":${nested(depth, extra)},"city":"Ghent","country":"BE"}`;

const json = (text: string, headers: Record<string, string> = {}): Reply => ({
  text,
  contentType: 'application/json',
  headers,
});

// `GET /breweries/deep-<n>` answers one row nested n deep; `GET /breweries?city=deep-<n>` a list of it.
const vendor = await startFaultVendor({
  'GET /breweries/:id': (req) => {
    const m = /^deep-(\d+)$/.exec(req.params.id!);
    return m ? json(brewery(m[0], Number(m[1]), 1)) : { json: { id: req.params.id, name: 'Brewery One' } };
  },
  'GET /breweries': (req) => {
    const m = /^deep-(\d+)$/.exec(req.query.get('city') ?? '');
    return m
      ? json(`[${brewery(m[0], Number(m[1]), 2)}]`, { 'x-total-count': '1' })
      : { json: [{ id: 'b-1', name: 'Brewery One' }], headers: { 'x-total-count': '1' } };
  },
});
t.teardown(() => vendor.close());
const stack = await startStack(t, { vendorUrl: vendor.url });
const BASE = stack.url;
const DEPTH = new RegExp(`nested deeper than ${MAX_VENDOR_JSON_DEPTH} levels`);

/** The run record of `runId` in the session at `path`, and its stored snapshot. */
async function stored(path: string, runId: string) {
  const runs = (await call(BASE, `${path}/runs`)).body.runs as Array<{ run_id: string; status: string }>;
  const artifact = await call(BASE, `${path}/artifacts/${runId}`);
  return { record: runs.find((r) => r.run_id === runId), artifact };
}

/** The next normal read of the session is answered. */
async function servesNext(t: Test, path: string): Promise<void> {
  const next = await runProgram(BASE, path, 'e1("b-1")[name]');
  t.equal(next.status, 200, 'the next read is served');
  t.same(next.body.rows, [{ name: 'Brewery One' }]);
}

function refused(t: Test, a: Answer, what: string): void {
  t.equal(a.status, 502, `${what}: 502`);
  t.equal(codeOf(a), 'vendor_bad_response', `${what}: vendor_bad_response`);
  t.match(a.body.errors?.[0]?.message, DEPTH, `${what}: the message says the depth`);
  t.match(a.body.errors?.[0]?.hint, /256 levels deep/, `${what}: the hint says the bound`);
}

for (const depth of [10_000, 100_000]) {
  for (const [kind, program] of [
    ['get', `e1("deep-${depth}")`],
    ['query', `e1(city="deep-${depth}")[id,name]`],
  ] as const) {
    t.test(`a ${kind} answered ${depth} deep, waited: vendor_bad_response, stored as failed`, async (t) => {
      const { path } = await openSession(BASE, { entry_id: 'brewery' });
      const a = await runProgram(BASE, path, program);
      refused(t, a, kind);
      t.equal(a.body._meta.svc.status, 'failed');
      const runId = a.headers.get('svc-run-id')!;
      t.match(runId, /^pr[0-9a-f]{64}$/, 'the answer names its run');
      const { record, artifact } = await stored(path, runId);
      t.equal(record?.status, 'failed', 'the run record says failed');
      t.equal(artifact.status, 200, 'the run artifact is stored');
      t.equal(artifact.body.status, 'failed');
      t.equal(artifact.body.steps[0].error.code, 'vendor_bad_response');
      await servesNext(t, path);
    });
  }
}

t.test('a background run answered 10,000 deep: wait(oN) ends `?` with vendor_bad_response', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery' });
  const acc = await runProgram(BASE, path, 'e1(city="deep-10000")[id,name]', 'wait=false');
  t.equal(acc.status, 202);
  const h = acc.body._meta.svc.op.n as string;
  const end = await until(`${h} to end`, async () => {
    const a = await runProgram(BASE, path, `wait(${h})`);
    return ['!', 'x', '?'].includes(a.body._meta?.svc?.op?.['~']) ? a : undefined;
  });
  t.equal(end.body._meta.svc.op['~'], '?', 'failed: `?`');
  t.equal(end.body._meta.svc.code, 'vendor_bad_response');
  t.match(end.body.errors?.[0]?.message, DEPTH);
  const { record, artifact } = await stored(path, end.body._meta.svc.op.r as string);
  t.equal(record?.status, 'failed', 'the run record says failed');
  t.equal(artifact.body.status, 'failed', 'the run artifact is stored as failed');
  await servesNext(t, path);
});

t.test('MCP: a read answered 10,000 and 100,000 deep is vendor_bad_response; the next read works', async (t) => {
  const c = await connectMcp(t, BASE);
  const { ref } = await openLogical(c, [{ api: 'brewery', entity: 'Brewery' }], 'deep json');
  for (const program of ['e1("deep-10000")', 'e1(city="deep-100000")[id,name]']) {
    const r = await c.tool('svc', { logical_session_ref: ref, program });
    t.equal(r.isError, true, `${program}: isError`);
    t.equal(errorCode(r), 'vendor_bad_response', `${program}: vendor_bad_response, not internal_error`);
    t.match(textOf(r), DEPTH, `${program}: the text says the depth`);
    t.equal(svcMeta(r).status, 'failed', `${program}: the run failed`);
  }
  const ok = await c.tool('svc', { logical_session_ref: ref, program: 'e1("b-1")[name]' });
  t.notOk(ok.isError, textOf(ok));
  t.match(textOf(ok), /Brewery One/);
});

t.test(
  `one level past the bound is refused; an answer ${MAX_VENDOR_JSON_DEPTH} deep renders in every format`,
  async (t) => {
    const { path } = await openSession(BASE, { entry_id: 'brewery' });
    refused(t, await runProgram(BASE, path, `e1("deep-${MAX_VENDOR_JSON_DEPTH + 1}")`), 'one past');
    const edge = `e1("deep-${MAX_VENDOR_JSON_DEPTH}")[id,name]`;
    /** Levels of the name: the answer's levels less the row object's. */
    const levels = MAX_VENDOR_JSON_DEPTH - 1;
    const depthOf = (v: unknown): number => {
      let n = 0;
      for (let x = v; Array.isArray(x); x = x[0]) n++;
      return n;
    };
    const j = await runProgram(BASE, path, edge, '', { accept: 'application/json' });
    t.equal(j.status, 200, `json: 200 ${j.text.slice(0, 200)}`);
    t.equal(depthOf(j.body.rows[0].name), levels, 'json: the value whole');
    const nd = await runProgram(BASE, path, edge, '', { accept: 'application/x-ndjson' });
    t.equal(nd.status, 200, 'ndjson: 200');
    t.equal(
      depthOf((JSON.parse(nd.text.split('\n')[0]!) as { name: unknown }).name),
      levels,
      'ndjson: the value whole',
    );
    const toon = await runProgram(BASE, path, edge, '', { accept: 'text/toon' });
    t.equal(toon.status, 200, 'toon: 200');
    t.match(toon.text, /deep-256/, 'toon: the row');
    t.doesNotThrow(() => decode(toon.text), 'toon: decodes');
    const plain = await runProgram(BASE, path, edge, '', { accept: 'text/plain' });
    t.equal(plain.status, 200, 'plain: 200');
    t.match(plain.text, /deep-256/, 'plain: the row');
  },
);
