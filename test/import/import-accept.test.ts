/**
 * The media type svc asks for: fixtures/openapi/accept.yaml answers its reports under vendor JSON
 * types only (`application/vnd.desk.v1+json`), and one get takes a required `Accept` header whose
 * values are a CSV and a JSON type. The import asks for the declared JSON type (a mapping header
 * `Accept`), leaves `application/json` answers alone, and a vendor that refuses any other Accept
 * (406, as strict vendors and Prism do) serves the imported catalog through a real svc server.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { startFaultVendor, type RecordedRequest, type Reply } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack } from '../_helpers/server.js';

const cap = (cgs: { capabilities: Array<{ name: string; http: { headers: Record<string, string> } }> }, name: string) =>
  cgs.capabilities.find((c) => c.name === name)!;

t.test('Accept is the JSON media type the document declares, when it is not application/json', async (t) => {
  const { cgs, result } = await importAndPack('accept.yaml');
  t.same(cap(cgs, 'listReports').http.headers, { Accept: 'application/vnd.desk.v1+json' }, 'from the answer');
  t.same(
    cap(cgs, 'getReport').http.headers,
    { Accept: 'application/vnd.desk.v2+json' },
    "from the Accept parameter's values: the JSON one, never text/csv",
  );
  t.same(cap(cgs, 'listNotes').http.headers, {}, 'application/json (with a charset) needs nothing: svc asks for it');
  t.notOk(
    cgs.capabilities.some((c) => c.params.some((p) => /^accept$/i.test(p.name))),
    'Accept is never a parameter agents pass',
  );
  t.match(result.files['import-report.md'], '`listReports` header `Accept: application/vnd.desk.v1+json`');
});

t.test('a vendor that refuses other Accept values answers the imported reads', async (t) => {
  const { cgs, cgs_hash } = await importAndPack('accept.yaml');
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-accept-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeArtifacts(cgs, cgs_hash, dir);
  const strict =
    (type: string, json: unknown) =>
    (req: RecordedRequest): Reply =>
      req.headers.accept === type
        ? { json, contentType: type }
        : { status: 406, json: { message: `only ${type}, not ${String(req.headers.accept)}` } };
  const vendor = await startFaultVendor({
    'GET /reports': strict('application/vnd.desk.v1+json', [{ id: 1, title: 'Q1' }]),
    'GET /reports/1': strict('application/vnd.desk.v2+json', { id: 1, title: 'Q1' }),
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { 'report-desk': vendor.url } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'report-desk', seeds: ['report-desk:Report'] });
  const list = await runProgram(stack.url, path, 'report-desk:listReports(limit=10)', '', {
    accept: 'application/json',
  });
  t.equal(list.status, 200, list.text);
  t.same(list.body.rows, [{ id: 1, title: 'Q1' }], 'rows read from a vendor JSON type');
  const one = await runProgram(stack.url, path, 'report-desk:getReport(id=1)', '', { accept: 'application/json' });
  t.equal(one.status, 200, one.text);
  t.same(one.body.rows, [{ id: 1, title: 'Q1' }]);
});
