/**
 * The import truth check (bench/import-truth.ts) on its own document (fixtures/openapi/truth.yaml)
 * against a real Prism mock process: the reads and writes svc gets right pass; a read whose
 * operation takes another auth scheme than the catalog's fails as request_invalid with Prism's
 * message; a read whose example fills the id alone is not_filled; an update declaring no 2xx is
 * no_success_declared; a create whose optional body requires a field passes (the field is
 * required: svc always sends the body). The Prism process is gone afterwards, and a document that does not import
 * is reported unchecked.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entity } from '../../pack/cgs.js';
import {
  blameExample,
  judge,
  summarize,
  truthCheck,
  unfilled,
  withFragment,
  type CapabilityTruth,
} from '../../bench/import-truth.js';
import type { Capability } from '../../pack/cgs.js';
import { startPrismMock } from '../../bench/prism-mock.js';

const DOC = join(import.meta.dirname, '..', '..', 'fixtures', 'openapi', 'truth.yaml');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('each capability of the fixture passes or fails for its own reason', async (t) => {
  const report = await truthCheck([DOC]);
  const [doc] = report.documents;
  t.equal(doc!.error, undefined, 'the document was checked');
  const by = new Map<string, CapabilityTruth>(doc!.capabilities.map((c) => [c.capability, c]));
  t.same(
    [...by.keys()].sort(),
    [
      'createKeeper',
      'createLighthouse',
      'getKeeper',
      'getLighthouse',
      'listKeepers',
      'listLighthouses',
      'updateKeeper',
      'updateLighthouse',
    ],
    'every get, list, create and update is checked',
  );
  for (const name of ['listLighthouses', 'getLighthouse', 'createLighthouse', 'updateLighthouse', 'createKeeper']) {
    const c = by.get(name)!;
    t.ok(c.ok, `${name} passes: ${c.program} ${c.category ?? ''} ${c.detail ?? ''}`);
    t.ok(c.calls >= 1, `${name} reached the mock`);
  }
  t.match(by.get('createLighthouse')!.program, /name=.*height=/, 'the create gives its required fields');
  t.match(by.get('createKeeper')!.program, /name=/, 'a field an optional body requires is required');
  t.match(by.get('listKeepers'), { ok: false, category: 'request_invalid', detail: /GET \/keepers.*security/i });
  t.match(by.get('getKeeper'), { ok: false, category: 'not_filled', detail: /1 of 4 declared fields filled/ });
  t.match(by.get('updateKeeper'), { ok: false, category: 'no_success_declared', detail: /mock 404/ });
  t.same(report.totals.all, { total: 8, ok: 5, pct: 62.5 });
  t.same(report.totals.judged, { total: 7, ok: 5, pct: 71.4 }, 'the update declaring no 2xx is not judged');
  t.same(report.totals.update, { total: 2, ok: 1 });
  t.same(report.totals.create, { total: 2, ok: 2 });
  t.same(
    report.categories.map((c) => [c.category, c.count]),
    [
      ['no_success_declared', 1],
      ['not_filled', 1],
      ['request_invalid', 1],
    ],
  );
});

t.test('a document that does not import is reported, not checked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-truth-test-'));
  const bad = join(dir, 'empty.json');
  writeFileSync(bad, JSON.stringify({ openapi: '3.0.3', info: { title: 'Empty', version: '1' }, paths: {} }));
  const report = await truthCheck([bad]);
  t.match(report.documents[0]!.error, { stage: 'import', message: /importable|operation/ });
  t.same(report.unchecked, { import: 1, mock: 0, session: 0 });
  t.same(report.totals.all, { total: 0, ok: 0, pct: 0 });
});

t.test('the mock records request violations and its process ends with stop()', async (t) => {
  const mock = await startPrismMock(DOC);
  const res = await fetch(`${mock.url}/lighthouses/1`, { headers: { accept: 'application/json' } });
  t.equal(res.status, 401, 'no bearer token: Prism refuses');
  const ok = await fetch(`${mock.url}/lighthouses/1`, {
    headers: { accept: 'application/json', authorization: 'Bearer x' },
  });
  t.equal(ok.status, 200);
  t.match(await ok.json(), { id: 3, name: 'Fastnet' }, 'Prism answers from the examples');
  t.equal(mock.calls.length, 2);
  t.match(mock.calls[0], {
    method: 'GET',
    target: '/lighthouses/1',
    status: 401,
    violations: [{ message: /security/ }],
  });
  t.same(mock.calls[1]!.violations, [], 'a valid request has no violation');
  t.ok(alive(mock.pid), 'prism runs');
  await mock.stop();
  t.notOk(alive(mock.pid), 'prism is gone');
});

t.test('filled: the id and at least half of the declared fields', async (t) => {
  const entity = {
    name: 'Lighthouse',
    description: '',
    id_field: 'id',
    relations: [],
    fields: ['id', 'name', 'height', 'lit'].map((name) => ({ name, type: 'string', description: '' })),
  } as Entity;
  t.equal(unfilled({ id: 1, name: 'a', height: null }, entity), undefined, '2 of 4 is half');
  t.match(unfilled({ id: 1, lit: null }, entity), { category: 'not_filled', detail: /1 of 4/ });
  t.match(unfilled({ name: 'a', height: 2, lit: true }, entity), { detail: /id field id is empty/ });
  t.match(unfilled(undefined, entity), { detail: 'no row' });
  t.match(unfilled([1], entity), { detail: /first row is \[1\]/ });
  const r = summarize([
    {
      file: 'x',
      bytes: 1,
      api: 'x',
      ms: 1,
      capabilities: [
        { capability: 'a', kind: 'get', entity: 'E', ok: true, calls: 1 },
        { capability: 'b', kind: 'query', entity: 'E', ok: false, category: 'timeout', detail: 'slow', calls: 1 },
      ],
    },
  ]);
  t.same(r.totals.all, { total: 2, ok: 1, pct: 50 });
  t.same(r.totals.judged, { total: 2, ok: 1, pct: 50 }, 'a timeout is judged');
  t.same(r.categories, [{ category: 'timeout', count: 1, examples: ['x b: slow'] }]);
});

t.test('judge: a violation first, then a failure of the mock, then the status, then the row', async (t) => {
  const entity = { name: 'E', description: '', id_field: 'id', relations: [], fields: [] } as Entity;
  const cap = { name: 'getE', kind: 'get' } as Capability;
  const call = { method: 'GET', target: '/e/1', status: 500, violations: [], responseViolations: [] };
  const failed = { status: 502, body: { errors: [{ code: 'vendor_error', message: 'answered 500' }] }, text: '' };
  t.match(judge(failed, [{ ...call, mockError: 'Schema too complex: ...' }], cap, entity), {
    category: 'mock_error',
    detail: 'GET /e/1: Schema too complex: ...',
  });
  const violation = { location: ['request', 'query'], severity: 'Error', code: 'x', message: 'bad q' };
  t.match(judge(failed, [{ ...call, status: 422, violations: [violation] }], cap, entity), {
    category: 'request_invalid',
    detail: 'GET /e/1: request: query: bad q',
  });
  t.match(judge(failed, [call], cap, entity), { category: 'vendor_status', detail: /^vendor_error \(mock 500\)/ });
  t.match(judge(failed, [call], cap, entity, { noSuccessDeclared: true }), { category: 'no_success_declared' });
  const unrouted = { ...violation, location: ['request'], message: 'Route not resolved, no path matched' };
  const posted = [{ ...call, status: 404, violations: [unrouted] }];
  t.match(
    judge(failed, posted, cap, entity, { fragment: true }),
    { category: 'mock_unroutable' },
    'a fragment path key',
  );
  t.match(judge(failed, posted, cap, entity), { category: 'request_invalid' }, 'any other path: svc sent a wrong path');
  t.same(
    [
      ...withFragment([
        { name: 'a', origin: 'POST /#X-Amz-Target=Kms.CreateKey (CreateKey)' },
        { name: 'b', origin: 'GET /keys (ListKeys)' },
      ]),
    ],
    ['a'],
  );
  const r = summarize([
    {
      file: 'x',
      bytes: 1,
      api: 'x',
      ms: 1,
      capabilities: [
        { capability: 'a', kind: 'get', entity: 'E', ok: true, calls: 1 },
        { capability: 'b', kind: 'get', entity: 'E', ok: false, category: 'mock_error', calls: 1 },
      ],
    },
  ]);
  t.same(r.totals.judged, { total: 1, ok: 1, pct: 100 }, 'a mock error is not judged');
});

t.test('a misread answer that breaks the document schema is the example, not svc', async (t) => {
  const bad = { location: ['response', 'body'], severity: 'Error', code: 'required', message: "must have 'value'" };
  const call = { method: 'GET', target: '/e', status: 200, violations: [], responseViolations: [bad] };
  const shape = { category: 'response_shape_mismatch' as const, detail: 'no rows at `value`' };
  t.match(blameExample(shape, [call]), {
    category: 'example_mismatch',
    detail: "no rows at `value`; the mock's answer breaks the document's schema: response: body: must have 'value'",
  });
  t.same(blameExample(shape, [{ ...call, responseViolations: [] }]), shape, "a valid answer misread stays svc's");
  const status = { category: 'vendor_status' as const, detail: '500' };
  t.same(blameExample(status, [call]), status, 'only a failure reading the answer is blamed on the example');
  t.equal(blameExample(undefined, [call]), undefined, 'a pass stays a pass');
});
