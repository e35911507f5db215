/** Manifests: one TypeBox schema (what `svc pack` writes, `Manifest` derived from it), read by `parseManifest`. */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { conforms } from '../../pack/ajv.js';
import { ManifestSchema } from '../../pack/artifact.js';
import { manifestFor, parseManifest, serialize, type Cgs, type Manifest } from '../../pack/index.js';

const PACKED = join(import.meta.dirname, '..', '..', 'fixtures', 'packed');
const HASH = 'a'.repeat(64);
const GOOD = {
  entry_id: 'shop',
  version: 3,
  cgs_hash: HASH,
  artifact: `shop.v3.${HASH.slice(0, 12)}.cgs.json`,
  format_version: 1,
};

/** The problem of a manifest file holding `text` (and no manifest). */
function problemOf(text: string) {
  const r = parseManifest(text, 'm.manifest.json');
  return r.manifest ? undefined : r.problem;
}
const problem = (value: unknown) => problemOf(JSON.stringify(value));

t.test('every manifest svc writes satisfies the schema and reads back as written', async (t) => {
  const names = readdirSync(PACKED).filter((n) => n.endsWith('.manifest.json'));
  t.ok(names.length >= 2, `${names.length} golden manifests`);
  for (const n of names) {
    const text = readFileSync(join(PACKED, n), 'utf8');
    const data: unknown = JSON.parse(text);
    t.ok(conforms(ManifestSchema, data), `${n} satisfies ManifestSchema`);
    const m: Manifest | undefined = parseManifest(text, n).manifest;
    t.same(m, data, `${n} reads back as written`);
    t.equal(serialize(m), text, `${n} serializes to the same bytes`);
  }
  const cgs = { entry_id: 'shop', version: 3 } as Pick<Cgs, 'entry_id' | 'version'>;
  t.ok(conforms(ManifestSchema, manifestFor(cgs as Cgs, HASH)), 'manifestFor writes what the schema says');
  t.notOk(conforms(ManifestSchema, { ...GOOD, format_version: 2 }), 'the format version is part of what svc writes');
});

t.test("reading keeps only the known fields; format_version is the CGS's to check", async (t) => {
  t.same(parseManifest(JSON.stringify({ ...GOOD, note: 'x' }), 'm').manifest, GOOD, 'other keys are dropped');
  const { format_version: _f, ...noVersion } = GOOD;
  t.same(
    parseManifest(JSON.stringify(noVersion), 'm').manifest,
    GOOD,
    "a missing format_version reads as this build's",
  );
  t.same(
    parseManifest(JSON.stringify({ ...GOOD, format_version: 2 }), 'm').manifest,
    GOOD,
    'the CGS itself is checked for its format_version (unsupported_format_version)',
  );
});

t.test('a bad manifest is artifact_unreadable with a message saying what is wrong', async (t) => {
  t.match(problemOf('{"entry_id":'), {
    code: 'artifact_unreadable',
    file: 'm.manifest.json',
    message: 'manifest is not valid JSON',
    hint: /svc pack/,
  });
  for (const v of [null, 5, 'text', [], [GOOD]])
    t.match(problem(v), { code: 'artifact_unreadable', message: 'manifest is not a JSON object' }, JSON.stringify(v));
  const needs = 'manifest needs entry_id, version, a 64-hex cgs_hash and artifact';
  const bad: Array<[string, unknown]> = [
    ['no entry_id', { ...GOOD, entry_id: undefined }],
    ['entry_id a number', { ...GOOD, entry_id: 7 }],
    ['version a string', { ...GOOD, version: '3' }],
    ['version not whole', { ...GOOD, version: 1.5 }],
    ['version not a safe integer', { ...GOOD, version: 2 ** 53 }],
    ['cgs_hash short', { ...GOOD, cgs_hash: 'abc' }],
    ['cgs_hash upper case', { ...GOOD, cgs_hash: HASH.toUpperCase() }],
    ['artifact a number', { ...GOOD, artifact: 5 }],
    ['a bad hash and a bad artifact', { ...GOOD, cgs_hash: 'abc', artifact: '../x.cgs.json' }],
  ];
  for (const [name, v] of bad) t.match(problem(v), { code: 'artifact_unreadable', message: needs }, name);
  for (const artifact of ['../helpdesk.cgs.json', 'sub/x.cgs.json', '.hidden.cgs.json', 'x y.json', '']) {
    t.match(
      problem({ ...GOOD, artifact }),
      { code: 'artifact_unreadable', message: `manifest artifact \`${artifact}\` is not a bare file name` },
      JSON.stringify(artifact),
    );
  }
  t.same(
    parseManifest(JSON.stringify({ ...GOOD, version: -2 }), 'm').manifest?.version,
    -2,
    'a negative version reads (the CGS schema refuses it, with the file named)',
  );
});
