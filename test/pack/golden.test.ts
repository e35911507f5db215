/** fixtures/packed holds the golden artifacts of fixtures/catalogs/*: packing reproduces them byte for byte. */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcFailure } from '../../common/errors.js';
import { compileSource, readSourceDir, serialize, writeArtifacts, type Cgs } from '../../pack/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PACKED = join(ROOT, 'fixtures', 'packed');
const SOURCES = readdirSync(join(ROOT, 'fixtures', 'catalogs'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => join(ROOT, 'fixtures', 'catalogs', d.name))
  .sort();

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-golden-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function compiled(src: string): Promise<{ cgs: Cgs; hash: string }> {
  const r = compileSource(await readSourceDir(src));
  if (!r.cgs || !r.cgs_hash) throw new Error(`${src} does not compile: ${JSON.stringify(r.diagnostics)}`);
  return { cgs: r.cgs, hash: r.cgs_hash };
}

async function packAll(out: string): Promise<string[]> {
  const statuses: string[] = [];
  for (const src of SOURCES) {
    const { cgs, hash } = await compiled(src);
    statuses.push((await writeArtifacts(cgs, hash, out)).status);
  }
  return statuses;
}

t.test('packing fixtures/catalogs/* reproduces fixtures/packed byte for byte', async (t) => {
  const out = await tempDir(t);
  t.same(
    await packAll(out),
    SOURCES.map(() => 'written'),
  );
  const want = (await readdir(PACKED)).sort();
  const got = (await readdir(out)).sort();
  t.same(got, want, 'same file names');
  t.equal(want.length, SOURCES.length * 2, 'one CGS and one manifest per catalog source');
  for (const name of want)
    t.ok((await readFile(join(out, name))).equals(await readFile(join(PACKED, name))), `${name} is byte-identical`);
});

t.test('golden files are pretty, key-sorted JSON with a final newline', async (t) => {
  for (const name of await readdir(PACKED)) {
    const text = await readFile(join(PACKED, name), 'utf8');
    t.equal(text, serialize(JSON.parse(text)), `${name} is in serialized form`);
    t.notMatch(text, /\r/, `${name} has no CR`);
  }
});

t.test('packing again into the same directory reports unchanged and keeps the files', async (t) => {
  const out = await tempDir(t);
  await packAll(out);
  const before = await Promise.all((await readdir(out)).sort().map((n) => readFile(join(out, n))));
  t.same(
    await packAll(out),
    SOURCES.map(() => 'unchanged'),
  );
  const names = (await readdir(out)).sort();
  t.equal(names.length, SOURCES.length * 2, 'no temp file left behind');
  const after = await Promise.all(names.map((n) => readFile(join(out, n))));
  after.forEach((b, i) => t.ok(b.equals(before[i]!), `${names[i]} untouched`));
});

t.test('a different artifact under an existing name fails with artifact_conflict and keeps the old file', async (t) => {
  const out = await tempDir(t);
  const { cgs, hash } = await compiled(SOURCES[0]!);
  const w = await writeArtifacts(cgs, hash, out);
  const oldCgs = await readFile(w.cgsFile);
  const oldManifest = await readFile(w.manifestFile);
  const changed: Cgs = { ...cgs, description: cgs.description + ' (changed)' };
  try {
    await writeArtifacts(changed, hash, out);
    t.fail('expected artifact_conflict');
  } catch (e) {
    t.ok(e instanceof SvcFailure);
    t.match((e as SvcFailure).errors, [
      { code: 'artifact_conflict', message: /already exists with different content/, hint: String },
    ]);
  }
  t.ok((await readFile(w.cgsFile)).equals(oldCgs), 'old CGS intact');
  t.ok((await readFile(w.manifestFile)).equals(oldManifest), 'old manifest intact');
  t.equal((await readdir(out)).length, 2, 'no temp file left behind');

  await writeFile(w.manifestFile, '{"stale": true}\n');
  try {
    await writeArtifacts(cgs, hash, out);
    t.fail('expected artifact_conflict on the manifest');
  } catch (e) {
    t.match((e as SvcFailure).errors, [{ code: 'artifact_conflict' }]);
  }
  t.equal(await readFile(w.manifestFile, 'utf8'), '{"stale": true}\n', 'a conflicting manifest is not overwritten');
});
