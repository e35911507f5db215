/**
 * Where `svc import openapi` lets a `$ref` read (issue 41, item 3): only files inside the
 * document's folder or an `--allow-ref-dir` folder, symlinks followed first, recursively through
 * every file admitted; a `../` path, an absolute path, a `file://` URL or a symlink out of the
 * folder stops the import with `openapi_ref_outside` (exit 1) naming the `$ref`, its file and
 * pointer, and the flag; an http(s) `$ref` is never fetched, flag or not. A refused import writes
 * nothing and prints nothing of the file it refused. Runs the real `svc` process.
 */
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { svcOnce } from '../_helpers/cli.js';

/** The items schema of a row whose enum field's one value is `$ref: <ref>`. */
const enumRef = (ref: string) =>
  `{type: object, properties: {id: {type: integer}, kind: {type: string, enum: [{$ref: '${ref}'}]}}}`;

/** A document with one list operation whose rows are `items` (YAML flow text). */
const doc = (items: string) => `openapi: 3.0.3
info: {title: Refs, version: '1'}
servers: [{url: 'http://127.0.0.1:1'}]
paths:
  /things:
    get:
      operationId: listThings
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: array
                items: ${items}
`;

/** A workspace: `doc/` (the document's folder) beside `outside/secret.yaml`, whose token is random. */
function workspace(): { root: string; docDir: string; outside: string; secret: string; out: string } {
  const root = mkdtempSync(join(tmpdir(), 'svc-import-refs-'));
  const secret = `tok-${randomBytes(12).toString('hex')}`;
  const docDir = join(root, 'doc');
  const outside = join(root, 'outside');
  mkdirSync(docDir);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.yaml'), `token: ${secret}\n`);
  return { root, docDir, outside, secret, out: join(root, 'out') };
}

/** Every file under `dir` (none when it does not exist), read as text. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).flatMap((f) => {
        try {
          return [readFileSync(join(dir, f), 'utf8')];
        } catch {
          return [];
        }
      })
    : [];

const importDoc = (t: Test, w: ReturnType<typeof workspace>, ...extra: string[]) =>
  svcOnce(t, ['import', 'openapi', w.docDir, '--out', w.out, ...extra]);

/** Refused with openapi_ref_outside naming `ref` and the flag; the secret nowhere, nothing written. */
async function refused(t: Test, w: ReturnType<typeof workspace>, ref: string, ...extra: string[]) {
  const r = await importDoc(t, w, ...extra);
  t.equal(r.code, 1, `exit 1: ${r.stderr}`);
  t.match(r.stderr, /openapi_ref_outside: /, 'the code');
  t.ok(r.stderr.includes(`$ref \`${ref}\``), `names the $ref as written: ${r.stderr}`);
  t.match(r.stderr, /hint: .*--allow-ref-dir <dir>/, 'the hint names the flag');
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  t.notOk(r.stdout.includes(w.secret) || r.stderr.includes(w.secret), 'the secret is not printed');
  t.notOk(
    filesUnder(w.out).some((text) => text.includes(w.secret)),
    'the secret is in no written file',
  );
  t.notOk(existsSync(join(w.out, 'catalog.yaml')), 'nothing written');
  return r;
}

t.test('a $ref out of the folder is refused: ../, absolute, file://', async (t) => {
  for (const make of [
    () => '../outside/secret.yaml#/token',
    (w: ReturnType<typeof workspace>) => `${join(w.outside, 'secret.yaml')}#/token`,
    (w: ReturnType<typeof workspace>) => `${pathToFileURL(join(w.outside, 'secret.yaml')).href}#/token`,
    () => './sub/../../outside/secret.yaml#/token',
    () => '%2e%2e/outside/secret.yaml#/token',
  ]) {
    const w = workspace();
    const ref = make(w);
    await t.test(ref.replace(w.root, '<tmp>'), async (t) => {
      writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef(ref)));
      const r = await refused(t, w, ref);
      t.match(
        r.stderr,
        /openapi\.yaml: openapi_ref_outside: .*\(at \/paths\/~1things\/get\/responses\/200\/content\/application~1json\/schema\/items\/properties\/kind\/enum\/0\)/,
        'the file and the JSON pointer',
      );
    });
  }
});

t.test('a symlink inside the folder that points out is refused', async (t) => {
  const w = workspace();
  symlinkSync(join(w.outside, 'secret.yaml'), join(w.docDir, 'link.yaml'));
  symlinkSync(w.outside, join(w.docDir, 'linked-dir'));
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef('link.yaml#/token')));
  const r = await refused(t, w, 'link.yaml#/token');
  t.match(r.stderr, /really `[^`]*outside[/\\]secret\.yaml`/, 'says where the link leads');
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef('linked-dir/secret.yaml#/token')));
  await refused(t, w, 'linked-dir/secret.yaml#/token');
});

t.test('a file inside the folder that itself refers out is refused, at its own pointer', async (t) => {
  const w = workspace();
  writeFileSync(
    join(w.docDir, 'thing.yaml'),
    "type: object\nproperties:\n  id: {type: integer}\n  kind: {type: string, enum: [{$ref: '../outside/secret.yaml#/token'}]}\n",
  );
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc("{$ref: 'thing.yaml'}"));
  const r = await refused(t, w, '../outside/secret.yaml#/token');
  t.match(r.stderr, /thing\.yaml: openapi_ref_outside: .*\(at \/properties\/kind\/enum\/0\)/);
});

t.test('a Swagger 2.0 document is held to the same policy', async (t) => {
  const w = workspace();
  writeFileSync(
    join(w.docDir, 'swagger.yaml'),
    `swagger: '2.0'
info: {title: Refs, version: '1'}
host: 127.0.0.1
paths:
  /things:
    get:
      operationId: listThings
      produces: [application/json]
      responses:
        '200':
          description: ok
          schema:
            type: array
            items: {type: object, properties: {id: {type: integer}, kind: {type: string, enum: [{$ref: '../outside/secret.yaml#/token'}]}}}
`,
  );
  await refused(t, w, '../outside/secret.yaml#/token');
});

t.test('a file the check cannot parse is still held by the resolver guard', async (t) => {
  // `yaml` refuses more than 100 aliases (an expansion attack); the resolver's parser does not.
  const w = workspace();
  const aliases = Array.from({ length: 101 }, (_, i) => `  c${i}: *b`).join('\n');
  writeFileSync(
    join(w.docDir, 'thing.yaml'),
    `type: object\nx-anchors:\n  base: &b {a: 1}\n${aliases}\nproperties:\n  id: {type: integer}\n  kind: {type: string, enum: [{$ref: '../outside/secret.yaml#/token'}]}\n`,
  );
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc("{$ref: 'thing.yaml'}"));
  const r = await importDoc(t, w);
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, /openapi_ref_outside: .*outside[/\\]secret\.yaml/);
  t.match(r.stderr, /hint: .*--allow-ref-dir <dir>/);
  t.notOk(r.stdout.includes(w.secret) || r.stderr.includes(w.secret), 'the secret is not printed');
  t.notOk(existsSync(join(w.out, 'catalog.yaml')), 'nothing written');
});

t.test('an http(s) $ref is never fetched, not even with --allow-ref-dir', async (t) => {
  const w = workspace();
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.end(`token: ${w.secret}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as { port: number };
  const ref = `http://127.0.0.1:${port}/x.yaml#/token`;
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef(ref)));
  const r = await refused(t, w, ref);
  t.match(r.stderr, /never fetches URLs/);
  await refused(t, w, ref, '--allow-ref-dir', w.outside);
  const https = `https://127.0.0.1:${port}/x.yaml#/token`;
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef(https)));
  await refused(t, w, https);
  t.equal(requests, 0, 'the server received no request');
});

t.test('a sibling file is read; --allow-ref-dir admits the outside folder', async (t) => {
  const w = workspace();
  writeFileSync(join(w.docDir, 'kinds.yaml'), 'kind: sibling-value\n');
  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef('kinds.yaml#/kind')));
  const ok = await importDoc(t, w);
  t.equal(ok.code, 0, ok.stderr);
  t.match(readFileSync(join(w.out, 'entities.yaml'), 'utf8'), /values: \[sibling-value\]/);

  writeFileSync(join(w.docDir, 'openapi.yaml'), doc(enumRef('../outside/secret.yaml#/token')));
  const allowed = await importDoc(
    t,
    w,
    '--allow-ref-dir',
    join(w.outside, 'elsewhere-not-this'),
    '--allow-ref-dir',
    w.outside,
  );
  t.equal(allowed.code, 2, 'a flag naming no directory is a usage error');
  t.match(allowed.stderr, /^bad_arguments: --allow-ref-dir `[^`]*elsewhere-not-this` is not a directory/);
  const admitted = await importDoc(t, w, '--allow-ref-dir', w.outside);
  t.equal(admitted.code, 0, admitted.stderr);
  t.ok(readFileSync(join(w.out, 'entities.yaml'), 'utf8').includes(w.secret), 'the allowed file was read');
});
