/** Loading packed catalogs: each bad artifact is rejected on its own, naming its file; the rest loads. */
import t from 'tap';
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { canonicalHash } from '../../common/canonical.js';
import {
  envOverrideName,
  loadCatalogDir,
  loadSchemaFile,
  serialize,
  writeArtifacts,
  type Cgs,
  type LoadResult,
  type Manifest,
} from '../../pack/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PACKED = join(ROOT, 'fixtures', 'packed');
const NO_ENV = { env: {} };

type T = { teardown(fn: () => unknown): void };

async function tempDir(t: T): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-load-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A temp copy of fixtures/packed. */
async function packedCopy(t: T): Promise<string> {
  const dir = await tempDir(t);
  await cp(PACKED, dir, { recursive: true });
  return dir;
}

interface Artifact {
  cgsFile: string;
  manifestFile: string;
  cgs: Cgs;
  manifest: Manifest;
}

async function artifactOf(dir: string, entryId: string): Promise<Artifact> {
  const name = (await readdir(dir)).find((n) => n.startsWith(`${entryId}.`) && n.endsWith('.manifest.json'));
  if (!name) throw new Error(`no manifest of ${entryId} in ${dir}`);
  const manifestFile = join(dir, name);
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Manifest;
  const cgsFile = join(dir, manifest.artifact);
  return { cgsFile, manifestFile, manifest, cgs: JSON.parse(await readFile(cgsFile, 'utf8')) as Cgs };
}

/** Write a changed CGS as a consistent artifact: hash recomputed, files named after it. */
async function writeConsistent(dir: string, cgs: Cgs): Promise<string> {
  const w = await writeArtifacts(cgs, canonicalHash(cgs), dir);
  return basename(w.cgsFile);
}

const ids = (r: LoadResult) => r.registry.list().map((e) => e.entry_id);

t.test('fixtures/packed loads both entries without problems', async (t) => {
  const r = await loadCatalogDir(PACKED, NO_ENV);
  t.same(r.problems, []);
  t.same(ids(r), ['brewery', 'helpdesk']);
  for (const e of r.registry.list()) {
    const { manifest } = await artifactOf(PACKED, e.entry_id);
    t.equal(e.cgs_hash, manifest.cgs_hash, `${e.entry_id}: hash from the manifest`);
    t.equal(e.artifact, manifest.artifact, 'artifact is a base name');
    t.equal(e.version, 1);
    t.equal(e.base_url, 'http://127.0.0.1:3000', 'backend of the CGS when nothing overrides it');
    t.equal(e.label, e.cgs.label);
  }
  t.ok(r.registry.entity('helpdesk', 'Ticket'));
  t.equal(r.registry.capability('helpdesk', 'closeTicket')?.kind, 'action');
  t.same(
    r.registry.capabilitiesOf('brewery', 'Review').map((c) => c.name),
    ['listReviews', 'createReview'],
  );
});

t.test('--schema loads one CGS file', async (t) => {
  const { cgsFile, manifest } = await artifactOf(PACKED, 'helpdesk');
  const r = await loadSchemaFile(cgsFile, NO_ENV);
  t.same(r.problems, []);
  t.same(ids(r), ['helpdesk']);
  t.equal(r.registry.get('helpdesk')?.cgs_hash, manifest.cgs_hash);
  t.equal(r.registry.get('helpdesk')?.artifact, manifest.artifact);
  const missing = await loadSchemaFile(join(PACKED, 'nope.cgs.json'), NO_ENV);
  t.match(missing.problems, [{ code: 'artifact_missing', file: /nope\.cgs\.json$/ }]);
  t.equal(missing.registry.size, 0);
  const o = await loadSchemaFile(cgsFile, { env: {}, backendOverrides: { helpdesk: 'http://127.0.0.1:4000/' } });
  t.equal(o.registry.get('helpdesk')?.base_url, 'http://127.0.0.1:4000', 'overrides apply to --schema too');
});

t.test('a tampered CGS is rejected with hash_mismatch naming its file; other entries still load', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  a.cgs.entities[0]!.description = 'Edited by hand.';
  await writeFile(a.cgsFile, serialize(a.cgs));
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [{ code: 'hash_mismatch', file: a.cgsFile, message: /manifest says/, hint: String }]);
  t.equal(r.problems.length, 1);
  t.same(ids(r), ['helpdesk']);
});

t.test('a manifest naming a missing file: artifact_missing', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'helpdesk');
  await unlink(a.cgsFile);
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [
    { code: 'artifact_missing', file: a.cgsFile, message: new RegExp(a.manifest.artifact.replace(/\./g, '\\.')) },
  ]);
  t.same(ids(r), ['brewery']);
});

t.test('malformed JSON: artifact_unreadable', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  await writeFile(a.cgsFile, '{"format_version": 1,');
  const h = await artifactOf(dir, 'helpdesk');
  await writeFile(h.manifestFile, 'not json');
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [
    { code: 'artifact_unreadable', file: a.cgsFile, message: /not valid JSON/ },
    { code: 'artifact_unreadable', file: h.manifestFile, message: /manifest is not valid JSON/ },
  ]);
  t.equal(r.registry.size, 0);
});

t.test('a manifest without its fields or with a path as artifact: artifact_unreadable', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  await writeFile(a.manifestFile, JSON.stringify({ ...a.manifest, cgs_hash: 'abc' }));
  const h = await artifactOf(dir, 'helpdesk');
  await writeFile(h.manifestFile, JSON.stringify({ ...h.manifest, artifact: '../helpdesk.cgs.json' }));
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [
    { code: 'artifact_unreadable', file: a.manifestFile, message: /64-hex cgs_hash/ },
    { code: 'artifact_unreadable', file: h.manifestFile, message: /not a bare file name/ },
  ]);
});

t.test('format_version 2: unsupported_format_version', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  await writeFile(a.cgsFile, serialize({ ...a.cgs, format_version: 2 }));
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [{ code: 'unsupported_format_version', file: a.cgsFile, message: /format_version 2/ }]);
  t.same(ids(r), ['helpdesk']);
});

t.test('manifest and CGS disagree on entry_id: manifest_mismatch', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  const renamed: Cgs = { ...a.cgs, entry_id: 'pub' };
  const hash = canonicalHash(renamed);
  const artifact = `brewery.v1.${hash.slice(0, 12)}.cgs.json`;
  await unlink(a.cgsFile);
  await writeFile(join(dir, artifact), serialize(renamed));
  await writeFile(a.manifestFile, serialize({ ...a.manifest, cgs_hash: hash, artifact }));
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [
    { code: 'manifest_mismatch', file: join(dir, artifact), message: /manifest says brewery v1, the CGS is pub v1/ },
  ]);
  t.same(ids(r), ['helpdesk']);
});

t.test('a CGS that breaks the interchange schema: cgs_invalid', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  const broken = structuredClone(a.cgs) as unknown as Record<string, unknown>;
  delete broken.entities;
  broken.version = 'one';
  await writeFile(a.cgsFile, serialize(broken));
  const r = await loadCatalogDir(dir, NO_ENV);
  t.ok(r.problems.length >= 1);
  t.ok(
    r.problems.every((p) => p.code === 'cgs_invalid' && p.file === a.cgsFile && typeof p.path === 'string'),
    'every problem is cgs_invalid, names the file and a path',
  );
  t.same(ids(r), ['helpdesk']);
});

t.test('a hash-consistent CGS that fails the semantic checks is rejected with the check code', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  const bad = structuredClone(a.cgs);
  bad.entities[0]!.relations[0]!.capability = 'listBeerz';
  await rm(a.cgsFile);
  await rm(a.manifestFile);
  const artifact = await writeConsistent(dir, bad);
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [
    {
      code: 'unknown_capability',
      file: join(dir, artifact),
      path: '/entities/0/relations/0/capability',
      hint: /listBeers/,
    },
  ]);
  t.same(ids(r), ['helpdesk']);
  const s = await loadSchemaFile(join(dir, artifact), NO_ENV);
  t.match(s.problems, [{ code: 'unknown_capability' }], '--schema runs the same checks');
  t.equal(s.registry.size, 0);
});

t.test('several versions of one entry: the highest wins', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  const v3 = await writeConsistent(dir, { ...a.cgs, version: 3, label: 'Breweries v3' });
  await writeConsistent(dir, { ...a.cgs, version: 2, label: 'Breweries v2' });
  const r = await loadCatalogDir(dir, NO_ENV);
  t.same(r.problems, []);
  t.same(ids(r), ['brewery', 'helpdesk']);
  t.match(r.registry.get('brewery'), { version: 3, label: 'Breweries v3', artifact: v3 });
});

t.test('two different artifacts with the same version: version_conflict, the entry is not loaded', async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'brewery');
  await writeConsistent(dir, { ...a.cgs, description: a.cgs.description + ' Also ciders.' });
  const r = await loadCatalogDir(dir, NO_ENV);
  t.match(r.problems, [{ code: 'version_conflict', message: /brewery v1/, hint: String }]);
  t.same(ids(r), ['helpdesk']);
  await writeConsistent(dir, { ...a.cgs, version: 2 });
  const higher = await loadCatalogDir(dir, NO_ENV);
  t.same(higher.problems, [], 'a higher version settles the conflict');
  t.equal(higher.registry.get('brewery')?.version, 2);
});

t.test('backend overrides', async (t) => {
  t.equal(envOverrideName('brewery'), 'SVC_BACKEND_URL_BREWERY');
  t.equal(envOverrideName('my-shop_2'), 'SVC_BACKEND_URL_MY_SHOP_2');

  const opt = await loadCatalogDir(PACKED, { env: {}, backendOverrides: { brewery: 'http://127.0.0.1:4000/api/' } });
  t.same(opt.problems, []);
  t.equal(opt.registry.get('brewery')?.base_url, 'http://127.0.0.1:4000/api', 'option, trailing slash dropped');
  t.equal(opt.registry.get('helpdesk')?.base_url, 'http://127.0.0.1:3000', 'others untouched');
  t.equal(opt.registry.get('brewery')?.cgs.backend.base_url, 'http://127.0.0.1:3000', 'the CGS itself is not changed');

  const env = await loadCatalogDir(PACKED, { env: { SVC_BACKEND_URL_BREWERY: 'https://brewery.example.com' } });
  t.same(env.problems, []);
  t.equal(env.registry.get('brewery')?.base_url, 'https://brewery.example.com', 'SVC_BACKEND_URL_BREWERY');

  const both = await loadCatalogDir(PACKED, {
    env: { SVC_BACKEND_URL_BREWERY: 'http://env:1' },
    backendOverrides: { brewery: 'http://opt:2' },
  });
  t.equal(both.registry.get('brewery')?.base_url, 'http://opt:2', 'the explicit option wins over the environment');

  const bad = await loadCatalogDir(PACKED, {
    env: { SVC_BACKEND_URL_HELPDESK: 'not a url' },
    backendOverrides: { brewery: 'ftp://x' },
  });
  t.match(bad.problems, [
    { code: 'bad_backend_override', message: /brewery/ },
    { code: 'bad_backend_override', message: /helpdesk/ },
  ]);
  t.equal(bad.registry.get('brewery')?.base_url, 'http://127.0.0.1:3000', 'a bad override is ignored');
  t.equal(bad.registry.size, 2, 'entries still load');

  const unknown = await loadCatalogDir(PACKED, { env: {}, backendOverrides: { pub: 'http://127.0.0.1:4000' } });
  t.match(unknown.problems, [{ code: 'bad_backend_override', message: /`pub`/, hint: /brewery, helpdesk/ }]);
  t.equal(unknown.registry.size, 2);
});

t.test('an empty directory: catalog_dir_empty; a missing directory: a problem naming it', async (t) => {
  const dir = await tempDir(t);
  const empty = await loadCatalogDir(dir, NO_ENV);
  t.match(empty.problems, [{ code: 'catalog_dir_empty', file: dir, hint: /svc pack/ }]);
  t.equal(empty.registry.size, 0);
  await writeFile(join(dir, 'notes.txt'), 'no manifest here\n');
  t.match(
    (await loadCatalogDir(dir, NO_ENV)).problems,
    [{ code: 'catalog_dir_empty' }],
    'files other than manifests do not count',
  );
  const missing = await loadCatalogDir(join(dir, 'nope'), NO_ENV);
  t.match(missing.problems, [{ code: 'artifact_unreadable', file: join(dir, 'nope'), message: /ENOENT/ }]);
  t.equal(missing.registry.size, 0);
});

t.test(
  'backend URLs with user:password: the URL in force drops it, one warning names the entry, never the credential',
  async (t) => {
    const r = await loadCatalogDir(PACKED, {
      env: { SVC_BACKEND_URL_HELPDESK: 'https://ops:hd-PASS-77@helpdesk.example.com/api/' },
      backendOverrides: { brewery: 'http://admin:pw-SECRET-1@127.0.0.1:4000' },
    });
    t.equal(
      r.registry.get('brewery')?.base_url,
      'http://127.0.0.1:4000',
      '--backend: userinfo dropped, the rest as given',
    );
    t.equal(
      r.registry.get('helpdesk')?.base_url,
      'https://helpdesk.example.com/api',
      'SVC_BACKEND_URL_HELPDESK: the same',
    );
    t.same(
      r.problems.map((p) => [p.code, p.message]),
      [
        [
          'backend_userinfo_ignored',
          "backend of brewery carries user:password in its URL; svc does not send it — declare the catalog's auth instead",
        ],
        [
          'backend_userinfo_ignored',
          "backend of helpdesk carries user:password in its URL; svc does not send it — declare the catalog's auth instead",
        ],
      ],
    );
    t.notMatch(JSON.stringify(r.problems), /pw-SECRET|hd-PASS|admin|ops:/, 'no credential in a problem');
    t.same(ids(r), ['brewery', 'helpdesk'], 'both entries load');

    const userOnly = await loadCatalogDir(PACKED, {
      env: {},
      backendOverrides: { brewery: 'http://token-abc123@127.0.0.1:4000/v1' },
    });
    t.equal(
      userOnly.registry.get('brewery')?.base_url,
      'http://127.0.0.1:4000/v1',
      'a user name alone is userinfo too',
    );
    t.match(userOnly.problems, [{ code: 'backend_userinfo_ignored', message: /backend of brewery/ }]);

    const bad = await loadCatalogDir(PACKED, {
      env: {},
      backendOverrides: { 'http://admin:pw-SECRET-2@host': 'http://x' },
    });
    t.match(bad.problems, [{ code: 'bad_backend_override' }]);
    t.notMatch(
      JSON.stringify(bad.problems),
      /pw-SECRET/,
      'an override naming no entry is not echoed with its userinfo',
    );
  },
);

t.test("a catalog's own backend URL with user:password is refused at load, without repeating it", async (t) => {
  const dir = await packedCopy(t);
  const a = await artifactOf(dir, 'helpdesk');
  await unlink(a.cgsFile);
  await unlink(a.manifestFile);
  await writeConsistent(dir, { ...a.cgs, backend: { base_url: 'https://svc:own-PASS-3@helpdesk.example.com' } });
  const r = await loadCatalogDir(dir, NO_ENV);
  t.notOk(r.registry.get('helpdesk'), 'the catalog is refused: it would be served with the credential in it');
  t.match(r.problems, [{ code: 'bad_backend', message: /carries user:password/ }]);
  t.notMatch(JSON.stringify(r.problems), /own-PASS/, 'the refusal does not repeat the credential');
});

t.test('reload (previous): an entry whose artifacts went bad keeps the version in force', async (t) => {
  const dir = await packedCopy(t);
  const first = await loadCatalogDir(dir, NO_ENV);
  const before = first.registry.get('brewery')!;
  t.same(first.kept, [], 'nothing kept without a previous registry');
  const a = await artifactOf(dir, 'brewery');
  await writeFile(a.cgsFile, serialize({ ...a.cgs, label: 'Edited by hand' }));

  const plain = await loadCatalogDir(dir, NO_ENV);
  t.same(ids(plain), ['helpdesk'], 'without previous the bad entry is left out (start-up, svc catalogs)');
  t.same(plain.kept, []);

  const r = await loadCatalogDir(dir, { env: {}, previous: first.registry });
  t.same(r.kept, ['brewery']);
  t.same(ids(r), ['brewery', 'helpdesk']);
  t.equal(r.registry.get('brewery')?.cgs_hash, before.cgs_hash, 'the version in force, unchanged');
  t.match(r.problems, [{ code: 'hash_mismatch', file: a.cgsFile }], 'and the problem is reported');

  await unlink(a.manifestFile);
  await unlink(a.cgsFile);
  const removed = await loadCatalogDir(dir, { env: {}, previous: first.registry });
  t.same(removed.kept, [], 'an entry whose files are gone has no problem: it is removed, not kept');
  t.same(ids(removed), ['helpdesk']);

  const other = await artifactOf(dir, 'helpdesk');
  await writeFile(other.cgsFile, '{ not json');
  const nothing = await loadCatalogDir(dir, { env: {}, previous: first.registry });
  t.equal(nothing.registry.size, 0, 'a directory that yields no catalog keeps nothing: the caller keeps its registry');
  t.same(nothing.kept, []);
});
