/**
 * Bad input to the importer: a missing file, a directory without a document, text that is not
 * YAML, a document that is not OpenAPI, a broken $ref, a document with nothing to import. Each
 * gives one stable code and a hint, never a stack trace; `svc import openapi` exits 1 (2 for a
 * usage error) and writes what `svc pack` accepts on success.
 */
import t from 'tap';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcFailure } from '../../common/errors.js';
import { importOpenApi, readOpenApi, writeImport } from '../../pack/index.js';
import { svcOnce } from '../_helpers/cli.js';
import { OPENAPI, packCheck } from '../_helpers/import.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-import-bad-'));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

async function failure(p: Promise<unknown>): Promise<SvcFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcFailure) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

const BROKEN_REF = `openapi: 3.0.3
info: {title: Broken, version: '1'}
paths:
  /things:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Nope'}
`;

t.test('each kind of bad input has its code and a hint', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [join(dir, 'missing.yaml'), 'openapi_unreadable', /check the path/],
    [mkdtempSync(join(tmpdir(), 'svc-import-empty-')), 'openapi_unreadable', /openapi\.yaml/],
    [write('broken.yaml', 'paths: [\n'), 'openapi_invalid', /OpenAPI 3\.x or Swagger 2\.0/],
    [write('plain.yaml', 'a: 1\n'), 'openapi_invalid', /OpenAPI 3\.x or Swagger 2\.0|openapi: 3\.x/],
    [write('ref.yaml', BROKEN_REF), 'openapi_bad_ref', /fix the \$ref/],
  ];
  for (const [input, code, hint] of cases) {
    const f = await failure(readOpenApi(input));
    t.equal(f.errors.length, 1, `${code}: one error`);
    t.equal(f.errors[0]!.code, code, `${input}: ${code}`);
    t.match(f.errors[0]!.hint, hint);
    t.notMatch(f.errors[0]!.message, /\n\s+at /, 'no stack trace');
  }
});

t.test('a document with no mappable operation: openapi_nothing_importable', async (t) => {
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Nothing', version: '1' },
    paths: {
      '/logo': {
        get: {
          responses: { 200: { description: 'the logo', content: { 'image/png': { schema: { type: 'string' } } } } },
        },
      },
    },
  };
  const f = await failure(Promise.resolve().then(() => importOpenApi(doc, packCheck)));
  t.equal(f.errors[0]!.code, 'openapi_nothing_importable');
  t.match(f.errors[0]!.hint, /reads answering JSON or text \(files are skipped as file_answer\)/);
  const old = {
    ...doc,
    paths: { '/ping': { get: { deprecated: true, responses: { 200: { description: 'pong' } } } } },
  };
  const d = await failure(Promise.resolve().then(() => importOpenApi(old, packCheck)));
  t.equal(d.errors[0]!.code, 'openapi_nothing_importable');
  t.equal(d.errors[0]!.hint, 'every operation is marked deprecated in the document', 'not a hint about globs');
});

t.test('an output directory that cannot be written: import_write_failed', async (t) => {
  const file = write('a-file.txt', 'x');
  const f = await failure(writeImport(join(file, 'out'), { 'catalog.yaml': 'catalog: {}\n' }));
  t.equal(f.errors[0]!.code, 'import_write_failed');
  t.match(f.errors[0]!.hint, /--out/);
});

t.test('svc import openapi: exit 0 with the five files, 1 on bad input, 2 on usage', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'svc-import-out-'));
  const ok = await svcOnce(t, ['import', 'openapi', join(OPENAPI, 'petstore.json'), '--out', out]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /^imported swagger-petstore: 4 entities, 19 capabilities, \d+ skipped/);
  t.same(readdirSync(out).sort(), [
    'capabilities.yaml',
    'catalog.yaml',
    'entities.yaml',
    'import-report.md',
    'mappings.yaml',
  ]);
  const packed = await svcOnce(t, ['pack', '--check', out]);
  t.equal(packed.code, 0, `svc pack accepts it: ${packed.stderr}`);

  const bad = await svcOnce(t, ['import', 'openapi', write('ref2.yaml', BROKEN_REF), '--out', out]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^openapi_bad_ref: .*\n {2}hint: /);
  t.notMatch(bad.stderr, /\n\s+at /, 'no stack trace');

  const usage = await svcOnce(t, ['import', 'openapi', join(OPENAPI, 'petstore.json')]);
  t.equal(usage.code, 2, 'no --out');
  const id = await svcOnce(t, [
    'import',
    'openapi',
    join(OPENAPI, 'petstore.json'),
    '--out',
    out,
    '--entry-id',
    'Bad Id',
  ]);
  t.equal(id.code, 2);
  t.match(id.stderr, /^bad_arguments: --entry-id/);
});
