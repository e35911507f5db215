/**
 * A GET that declares a request body: svc sends no body with a GET, so a required one skips the
 * operation (`body`) and an optional one is listed as dropped; neither is taught as parameters a
 * program would pass and svc would then lose.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importAndPack } from '../_helpers/import.js';

const row = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } };
const rows = {
  '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: row } } } },
};
const filter = (required: boolean) => ({
  required,
  content: { 'application/json': { schema: { type: 'object', properties: { query: { type: 'string' } } } } },
});

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Search', version: '1' },
  servers: [{ url: 'https://search.example' }],
  paths: {
    '/blocks': { get: { operationId: 'listBlocks', requestBody: filter(true), responses: rows } },
    '/docs': { get: { operationId: 'listDocs', requestBody: filter(false), responses: rows } },
    '/notes': { get: { operationId: 'listNotes', responses: rows } },
  },
};

t.test('a GET with a required body is skipped as body; an optional body is dropped', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-get-bodies-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(DOC));
  const { result, cgs } = await importAndPack(join(dir, 'openapi.json'));
  const names = cgs.capabilities.map((c) => c.name).sort();
  t.same(names, ['listDocs', 'listNotes'], 'the GET with a required body is not a capability');
  const skip = result.log.skipped.find((s) => s.what.includes('listBlocks'));
  t.match(skip, { reason: 'body', why: /GET with a required request body/ });
  const docs = cgs.capabilities.find((c) => c.name === 'listDocs')!;
  t.notOk(
    docs.params.some((p) => p.name === 'query'),
    'the optional body of a GET is not taught as parameters',
  );
  t.match(result.files['import-report.md'], /request body of a GET \(svc sends none on a GET\)/);
});
