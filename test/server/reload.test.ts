/**
 * Catalog reload without a restart (SPEC "Versioning" 3 and 5, Catalog artifacts rule 5, Errors
 * 409): `POST /internal/catalog-registry/v1/reload` guarded by `x-svc-control-plane-secret`
 * (missing 401, wrong 403, a server without a secret 403, a server without a catalog directory
 * 409), what a reload reports (changed, removed, problems), how the registry and new sessions
 * see a repacked catalog, the `session_stale` error of sessions pinned to a changed or removed
 * catalog while sessions on unchanged catalogs keep working, that an empty, missing or
 * unreadable directory keeps the catalogs in force, that a catalog whose artifacts went bad
 * keeps the version in force (`kept`), and that the secret comparison hides the secret's length.
 * Each test reloads its own copy of fixtures/packed on a real server over the real json-server
 * vendor.
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalHash } from '../../common/canonical.js';
import { compileSource, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { demoVendorData } from '../../cli/demo-vendor.js';
import {
  call,
  codeOf,
  openSession,
  PACKED,
  ROOT,
  runProgram,
  startStack,
  type Answer,
  type Stack,
  type StackOptions,
} from '../_helpers/server.js';

const SECRET = 'reload-secret-7c1d9e4b2a';
const RELOAD = '/internal/catalog-registry/v1/reload';
const BREWERY_SRC = join(ROOT, 'fixtures', 'catalogs', 'brewery');
const BERLIN = (demoVendorData().breweries as Array<{ city: string; name: string }>)
  .filter((b) => b.city === 'Berlin')
  .map((b) => b.name)
  .sort();

/** A fresh temporary directory, removed when `t` ends. */
async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of fixtures/packed and a server over it (catalogDir set, reload secret unless overridden). */
async function fresh(t: Test, opts: StackOptions = {}): Promise<{ dir: string; stack: Stack }> {
  const dir = await tmp(t, 'svc-reload-');
  await cp(PACKED, dir, { recursive: true });
  const stack = await startStack(t, { catalogDir: dir, controlPlaneSecret: SECRET, ...opts });
  return { dir, stack };
}

/** POST the reload route with `secret` in the header (`null`: no header). */
function reload(base: string, secret: string | null = SECRET): Promise<Answer> {
  return call(base, RELOAD, {
    method: 'POST',
    headers: secret === null ? {} : { 'x-svc-control-plane-secret': secret },
  });
}

/** Remove the packed files of one entry from a catalog directory. */
async function removeEntry(dir: string, entryId: string): Promise<void> {
  for (const n of await readdir(dir)) if (n.startsWith(`${entryId}.`)) await unlink(join(dir, n));
}

/**
 * Pack a changed copy of fixtures/catalogs/brewery into `outDir` through the pack API: a new
 * catalog description and a new Brewery field `taproom` (and `version` when given).
 */
async function packChangedBrewery(t: Test, outDir: string, version?: number): Promise<string> {
  const src = await tmp(t, 'svc-reload-src-');
  await cp(BREWERY_SRC, src, { recursive: true });
  const catalogFile = join(src, 'catalog.yaml');
  let catalog = (await readFile(catalogFile, 'utf8')).replace(
    /description: Craft breweries[^\n]*/,
    'description: Craft breweries, their beers, reviews and taprooms (reloaded).',
  );
  if (version !== undefined) catalog = catalog.replace('version: 1', `version: ${version}`);
  await writeFile(catalogFile, catalog);
  const entitiesFile = join(src, 'entities.yaml');
  const entities = await readFile(entitiesFile, 'utf8');
  const withField = entities.replace(
    '      website: {type: string, description: Home page URL}\n',
    '      website: {type: string, description: Home page URL}\n      taproom: {type: string, description: Address of the taproom}\n',
  );
  t.not(withField, entities, 'the test edit of entities.yaml applied');
  await writeFile(entitiesFile, withField);
  const compiled = compileSource(await readSourceDir(src));
  t.same(compiled.diagnostics, [], 'the changed catalog compiles');
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, outDir);
  return compiled.cgs_hash!;
}

async function registryHashes(base: string): Promise<Record<string, string>> {
  const a = await call(base, '/v1/registry');
  return Object.fromEntries(
    (a.body.entries as Array<{ entry_id: string; cgs_hash: string }>).map((e) => [e.entry_id, e.cgs_hash]),
  );
}

/** A read on a brewery session: the Berlin breweries of the vendor. */
async function berlin(base: string, path: string): Promise<Answer> {
  return runProgram(base, path, 'e1(city="Berlin")[name]', '', { accept: 'application/json' });
}

const names = (a: Answer) => (a.body.rows as Array<{ name: string }>).map((r) => r.name).sort();

// ---------------------------------------------------------------- the secret

t.test('the reload secret: missing 401, empty 401, wrong 403, right 200', async (t) => {
  const { stack } = await fresh(t);
  const missing = await reload(stack.url, null);
  t.equal(missing.status, 401);
  t.equal(codeOf(missing), 'auth_required');
  t.match(missing.body.hint, /SVC_CONTROL_PLANE_SECRET/);
  const empty = await reload(stack.url, '');
  t.equal(empty.status, 401, 'an empty header counts as missing');
  t.equal(codeOf(empty), 'auth_required');
  for (const wrong of ['nope', SECRET.toUpperCase(), SECRET + 'x', SECRET.slice(0, -1)]) {
    const a = await reload(stack.url, wrong);
    t.equal(a.status, 403, `wrong secret ${JSON.stringify(wrong)}`);
    t.equal(codeOf(a), 'forbidden');
    t.notMatch(a.text, SECRET, 'the real secret is never echoed');
    t.notMatch(a.text, wrong, 'nor the one sent');
  }
  const ok = await reload(stack.url);
  t.equal(ok.status, 200);
  t.equal(ok.body.reloaded, true);
});

t.test('a server without a control-plane secret refuses reload with 403', async (t) => {
  const dir = await tmp(t, 'svc-reload-nosecret-');
  await cp(PACKED, dir, { recursive: true });
  const stack = await startStack(t, { catalogDir: dir });
  const a = await reload(stack.url, 'anything');
  t.equal(a.status, 403);
  t.equal(codeOf(a), 'forbidden');
  t.match(a.body.message, /reload is disabled/);
  t.match(a.body.hint, /SVC_CONTROL_PLANE_SECRET/);
  t.equal((await reload(stack.url, null)).status, 401, 'no header is still 401');
});

t.test('a server without a catalog directory (like --schema) answers 409 reload_unavailable', async (t) => {
  const stack = await startStack(t, { controlPlaneSecret: SECRET });
  const a = await reload(stack.url);
  t.equal(a.status, 409);
  t.equal(codeOf(a), 'reload_unavailable');
  t.match(a.body.message, /--schema/);
  t.match(a.body.hint, /--catalog-dir/);
  t.equal((await reload(stack.url, 'wrong')).status, 403, 'the secret is checked first');
});

t.test('reload is POST only', async (t) => {
  const { stack } = await fresh(t);
  const a = await call(stack.url, RELOAD, { headers: { 'x-svc-control-plane-secret': SECRET } });
  t.equal(a.status, 405);
  t.equal(a.headers.get('allow'), 'POST');
});

// ---------------------------------------------------------------- what a reload does

t.test('a reload of an unchanged directory changes nothing; sessions keep working', async (t) => {
  const { stack } = await fresh(t);
  const before = await registryHashes(stack.url);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  t.same(a.body.entries, [
    { entry_id: 'brewery', version: 1, cgs_hash: before.brewery, changed: false },
    { entry_id: 'helpdesk', version: 1, cgs_hash: before.helpdesk, changed: false },
  ]);
  t.same(a.body.removed, []);
  t.same(a.body.problems, []);
  t.same(await registryHashes(stack.url), before);
  const run = await berlin(stack.url, path);
  t.equal(run.status, 200, 'the session is not stale');
  t.same(names(run), BERLIN);
});

t.test(
  'a repacked catalog: changed, new hash in the registry, stale old sessions, unchanged ones keep working',
  async (t) => {
    const { dir, stack } = await fresh(t);
    const old = await registryHashes(stack.url);
    const breweryOld = await openSession(stack.url, { entry_id: 'brewery', intent: 'before reload' });
    const helpdesk = await openSession(stack.url, { entry_id: 'helpdesk' });
    const federated = await openSession(stack.url, { entry_id: 'helpdesk', intent: 'federated' });
    const fed = await call(stack.url, `${federated.path}/context`, {
      body: JSON.stringify({ seeds: ['brewery:Brewery'] }),
      type: 'application/json',
    });
    t.equal(fed.status, 200, 'the helpdesk session federates brewery');
    t.equal((await berlin(stack.url, breweryOld.path)).status, 200, 'the brewery session works before the reload');

    await removeEntry(dir, 'brewery');
    const newHash = await packChangedBrewery(t, dir);
    t.not(newHash, old.brewery, 'the change changes the hash');

    const a = await reload(stack.url);
    t.equal(a.status, 200);
    t.same(a.body.entries, [
      { entry_id: 'brewery', version: 1, cgs_hash: newHash, changed: true },
      { entry_id: 'helpdesk', version: 1, cgs_hash: old.helpdesk, changed: false },
    ]);
    t.same(a.body.removed, []);
    t.same(a.body.problems, []);

    t.same(
      await registryHashes(stack.url),
      { brewery: newHash, helpdesk: old.helpdesk },
      'the registry shows the new hash',
    );
    const entry = await call(stack.url, '/v1/registry/brewery?include_cgs=true');
    t.match(entry.body.description, /\(reloaded\)/);
    t.equal(canonicalHash(entry.body.cgs), newHash, 'the served CGS is the new one');
    const model = await call(stack.url, '/v1/registry/brewery/tool-model?focus=single&entity=Brewery');
    t.ok(
      (model.body.entities.Brewery.fields as Array<{ name: string }>).some((f) => f.name === 'taproom'),
      'the tool model has the new field',
    );
    const health = await call(stack.url, '/v1/health');
    t.equal(health.body.entries, 2);

    for (const [what, path] of [
      ['brewery session', breweryOld.path],
      ['helpdesk session federated with brewery', federated.path],
    ] as const) {
      const stale = await berlin(stack.url, path);
      t.equal(stale.status, 409, `${what}: 409`);
      t.equal(codeOf(stale), 'session_stale', `${what}: session_stale`);
      t.match(stale.body.errors[0].message, /catalog `brewery` changed/);
      t.match(
        stale.body.errors[0].message,
        new RegExp(`${old.brewery!.slice(0, 12)} -> ${newHash.slice(0, 12)}`),
        `${what}: names both hashes`,
      );
      t.match(stale.body.errors[0].hint, /open a new session/);
      const status = await call(stack.url, `${path}/status`);
      t.equal(status.status, 409, `${what}: every session route refuses it`);
      t.equal(codeOf(status), 'session_stale');
      const plain = await runProgram(stack.url, path, 'e1[name]', '', { accept: 'text/plain' });
      t.equal(plain.status, 409);
      t.match(plain.text, /session_stale/, `${what}: the error in the negotiated format`);
      t.match(plain.text, /hint: open a new session/);
    }

    const help = await runProgram(stack.url, helpdesk.path, 'e1(tier="pro")[name]', '', { accept: 'application/json' });
    t.equal(help.status, 200, 'a session on the unchanged helpdesk keeps working');
    t.ok((help.body.rows as unknown[]).length > 0);

    const renewed = await openSession(stack.url, { entry_id: 'brewery', intent: 'before reload' });
    t.match(renewed.answer.body.wave, /taproom/, 'a new session learns the new field');
    const status = await call(stack.url, `${renewed.path}/status`);
    t.same(status.body.entries, [{ entry_id: 'brewery', cgs_hash: newHash }], 'and pins the new hash');
    const run = await berlin(stack.url, renewed.path);
    t.equal(run.status, 200, 'the new session reaches the vendor (backend override kept across the reload)');
    t.same(names(run), BERLIN);
  },
);

t.test('a higher version next to the old one wins on reload', async (t) => {
  const { dir, stack } = await fresh(t);
  const old = await registryHashes(stack.url);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const newHash = await packChangedBrewery(t, dir, 2);
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  const brewery = (a.body.entries as Array<Record<string, unknown>>).find((e) => e.entry_id === 'brewery');
  t.same(brewery, { entry_id: 'brewery', version: 2, cgs_hash: newHash, changed: true });
  t.not(newHash, old.brewery);
  t.equal((await call(stack.url, '/v1/registry/brewery')).body.version, 2);
  t.equal(codeOf(await berlin(stack.url, path)), 'session_stale');
});

t.test('a catalog whose files are gone is reported removed; its sessions are stale', async (t) => {
  const { dir, stack } = await fresh(t);
  const helpdesk = await openSession(stack.url, { entry_id: 'helpdesk' });
  const brewery = await openSession(stack.url, { entry_id: 'brewery' });
  await removeEntry(dir, 'helpdesk');
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  t.same(a.body.removed, ['helpdesk']);
  t.same(
    (a.body.entries as Array<{ entry_id: string; changed: boolean }>).map((e) => [e.entry_id, e.changed]),
    [['brewery', false]],
  );
  t.same(Object.keys(await registryHashes(stack.url)), ['brewery']);
  t.equal((await call(stack.url, '/v1/registry/helpdesk')).status, 404);
  const stale = await runProgram(stack.url, helpdesk.path, 'e1[name]', '', { accept: 'application/json' });
  t.equal(stale.status, 409);
  t.equal(codeOf(stale), 'session_stale');
  t.match(stale.body.errors[0].message, /-> removed/);
  t.equal((await berlin(stack.url, brewery.path)).status, 200, 'the brewery session keeps working');
  const open = await call(stack.url, '/execute', {
    body: JSON.stringify({ entry_id: 'helpdesk' }),
    type: 'application/json',
  });
  t.equal(open.status, 404, 'no new session on a removed catalog');
  t.equal(codeOf(open), 'unknown_entry');
});

t.test('an extra unreadable manifest is reported by file name; the good catalogs load', async (t) => {
  const { dir, stack } = await fresh(t);
  await writeFile(join(dir, 'broken.v1.000000000000.manifest.json'), '{ not json');
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  t.same(
    (a.body.entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
  );
  const problems = a.body.problems as Array<{ code: string; file?: string }>;
  t.equal(problems.length, 1);
  t.equal(problems[0]!.code, 'artifact_unreadable');
  t.equal(problems[0]!.file, 'broken.v1.000000000000.manifest.json', 'a base name, never a server path');
  t.notMatch(a.text, dir, 'the directory path is not in the answer');
});

// ---------------------------------------------------------------- failed reloads keep what is loaded

t.test('an empty, bad or missing directory fails the reload and keeps the catalogs in force', async (t) => {
  const { dir, stack } = await fresh(t);
  const before = await registryHashes(stack.url);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });

  const keeps = async (what: string) => {
    t.same(await registryHashes(stack.url), before, `${what}: the registry is unchanged`);
    const run = await berlin(stack.url, path);
    t.equal(run.status, 200, `${what}: the open session keeps working`);
    t.same(names(run), BERLIN);
  };

  for (const n of await readdir(dir)) await unlink(join(dir, n));
  const empty = await reload(stack.url);
  t.equal(empty.status, 400, 'empty directory');
  t.equal(codeOf(empty), 'catalog_dir_empty');
  t.notMatch(empty.text, dir, 'no server path in the answer');
  await keeps('empty');

  await writeFile(join(dir, 'brewery.v1.c881a9c7e5f6.manifest.json'), '{"entry_id": "brewery"');
  const bad = await reload(stack.url);
  t.equal(bad.status, 400, 'only a corrupt manifest');
  t.equal(codeOf(bad), 'artifact_unreadable');
  await keeps('bad');

  const mismatch = await tmp(t, 'svc-reload-mismatch-');
  await cp(PACKED, mismatch, { recursive: true });
  for (const n of await readdir(dir)) await unlink(join(dir, n));
  for (const n of await readdir(mismatch)) {
    const text = await readFile(join(mismatch, n), 'utf8');
    await writeFile(
      join(dir, n),
      n.endsWith('.cgs.json') ? text.replace('"description": "', '"description": "tampered ') : text,
    );
  }
  const tampered = await reload(stack.url);
  t.equal(tampered.status, 400, 'artifacts that do not verify');
  t.equal(codeOf(tampered), 'hash_mismatch');
  await keeps('tampered');

  await rm(dir, { recursive: true, force: true });
  const gone = await reload(stack.url);
  t.equal(gone.status, 400, 'the directory is gone');
  t.equal(codeOf(gone), 'artifact_unreadable');
  t.notMatch(gone.text, dir, 'no server path in the answer');
  await keeps('gone');
});

// ---------------------------------------------------------------- bad artifacts keep the version in force

const BREWERY_CGS = 'brewery.v1.c881a9c7e5f6.cgs.json';
const BREWERY_MANIFEST = 'brewery.v1.c881a9c7e5f6.manifest.json';

/** Ways a catalog's artifacts go bad after it was loaded, each with the code the reload reports. */
const corruptions: Array<{
  name: string;
  code: string;
  file: string | RegExp;
  spoil(dir: string, t: Test): Promise<void>;
}> = [
  {
    name: 'a CGS edited after packing',
    code: 'hash_mismatch',
    file: BREWERY_CGS,
    spoil: async (dir) =>
      writeFile(
        join(dir, BREWERY_CGS),
        (await readFile(join(dir, BREWERY_CGS), 'utf8')).replace('"description": "', '"description": "tampered '),
      ),
  },
  {
    name: 'a CGS cut short',
    code: 'artifact_unreadable',
    file: BREWERY_CGS,
    spoil: async (dir) =>
      writeFile(join(dir, BREWERY_CGS), (await readFile(join(dir, BREWERY_CGS), 'utf8')).slice(0, 500)),
  },
  {
    name: 'a CGS that breaks the interchange schema',
    code: 'cgs_invalid',
    file: BREWERY_CGS,
    spoil: async (dir) =>
      writeFile(
        join(dir, BREWERY_CGS),
        (await readFile(join(dir, BREWERY_CGS), 'utf8')).replace('"kind": "query"', '"kind": "list"'),
      ),
  },
  {
    name: 'a CGS file gone (the manifest stays)',
    code: 'artifact_missing',
    file: BREWERY_CGS,
    spoil: (dir) => unlink(join(dir, BREWERY_CGS)),
  },
  {
    name: 'a manifest that is not JSON (entry known from its file name)',
    code: 'artifact_unreadable',
    file: BREWERY_MANIFEST,
    spoil: (dir) => writeFile(join(dir, BREWERY_MANIFEST), '{ "entry_id": "brew'),
  },
  {
    name: 'a manifest under another name that lacks fields (entry known from its content)',
    code: 'artifact_unreadable',
    file: 'brewery-latest.manifest.json',
    spoil: async (dir) => {
      await unlink(join(dir, BREWERY_MANIFEST));
      await writeFile(join(dir, 'brewery-latest.manifest.json'), '{"entry_id": "brewery", "version": 1}');
    },
  },
  {
    name: 'a second, different artifact of the same version',
    code: 'version_conflict',
    file: /^brewery\.v1\.[0-9a-f]{12}\.cgs\.json$/,
    spoil: async (dir, t) => {
      await packChangedBrewery(t, dir);
    },
  },
];

t.test('a reload that meets a bad artifact keeps the version in force of that catalog', async (t) => {
  for (const c of corruptions) {
    await t.test(c.name, async (t) => {
      const { dir, stack } = await fresh(t);
      const before = await registryHashes(stack.url);
      const { path } = await openSession(stack.url, { entry_id: 'brewery' });
      await c.spoil(dir, t);
      const a = await reload(stack.url);
      t.equal(a.status, 200, 'the reload succeeds for the other catalogs');
      t.same(a.body.kept, ['brewery'], 'the answer says brewery was kept');
      t.same(a.body.removed, [], 'nothing is removed');
      t.same(a.body.entries, [
        { entry_id: 'brewery', version: 1, cgs_hash: before.brewery, changed: false },
        { entry_id: 'helpdesk', version: 1, cgs_hash: before.helpdesk, changed: false },
      ]);
      const problems = a.body.problems as Array<{ code: string; file?: string }>;
      const inFile = (f?: string) => (typeof c.file === 'string' ? f === c.file : c.file.test(f ?? ''));
      t.ok(
        problems.some((p) => p.code === c.code && inFile(p.file)),
        `the problem is reported: ${c.code} in ${c.file} (got ${JSON.stringify(problems)})`,
      );
      t.same(await registryHashes(stack.url), before, 'the registry is unchanged');
      const run = await berlin(stack.url, path);
      t.equal(run.status, 200, 'the session pinned to the kept version keeps working');
      t.same(names(run), BERLIN);
      t.equal(
        (await openSession(stack.url, { entry_id: 'brewery' })).answer.status,
        201,
        'new sessions open on the kept version',
      );
    });
  }
});

t.test('a kept catalog sits beside one that changed, and leaves `kept` once repaired', async (t) => {
  const { dir, stack } = await fresh(t);
  const old = await registryHashes(stack.url);
  const brewery = await openSession(stack.url, { entry_id: 'brewery' });
  const helpdesk = await openSession(stack.url, { entry_id: 'helpdesk' });
  const HELPDESK_CGS = 'helpdesk.v1.771f99ee832c.cgs.json';
  await writeFile(
    join(dir, HELPDESK_CGS),
    (await readFile(join(dir, HELPDESK_CGS), 'utf8')).replace('"description": "', '"description": "tampered '),
  );
  await removeEntry(dir, 'brewery');
  const newHash = await packChangedBrewery(t, dir);
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  t.same(a.body.kept, ['helpdesk']);
  t.same(
    a.body.entries,
    [
      { entry_id: 'brewery', version: 1, cgs_hash: newHash, changed: true },
      { entry_id: 'helpdesk', version: 1, cgs_hash: old.helpdesk, changed: false },
    ],
    'brewery changed, helpdesk kept',
  );
  t.match(a.body.problems, [{ code: 'hash_mismatch', file: HELPDESK_CGS }]);
  t.equal(
    codeOf(await berlin(stack.url, brewery.path)),
    'session_stale',
    'the changed catalog makes its sessions stale, as always',
  );
  const help = await runProgram(stack.url, helpdesk.path, 'e1(tier="pro")[name]', '', { accept: 'application/json' });
  t.equal(help.status, 200, 'the session on the kept catalog keeps working');

  await cp(join(PACKED, HELPDESK_CGS), join(dir, HELPDESK_CGS));
  const repaired = await reload(stack.url);
  t.equal(repaired.status, 200);
  t.same(repaired.body.kept, [], 'nothing kept once the directory is good again');
  t.same(repaired.body.problems, []);
  t.same(
    (repaired.body.entries as Array<{ entry_id: string; changed: boolean }>).map((e) => [e.entry_id, e.changed]),
    [
      ['brewery', false],
      ['helpdesk', false],
    ],
  );
  t.equal(
    (await runProgram(stack.url, helpdesk.path, 'e1(tier="pro")[name]', '', { accept: 'application/json' })).status,
    200,
    'the repaired artifact is the same version: the session goes on',
  );
});

t.test('a directory where every catalog went bad fails the reload as a whole: nothing is removed', async (t) => {
  const { dir, stack } = await fresh(t);
  const before = await registryHashes(stack.url);
  await writeFile(join(dir, BREWERY_CGS), '{ cut');
  await removeEntry(dir, 'helpdesk');
  const a = await reload(stack.url);
  t.equal(a.status, 400, 'no catalog loads from the directory');
  t.equal(codeOf(a), 'artifact_unreadable');
  t.same(await registryHashes(stack.url), before, 'helpdesk is not removed by a reload that failed');
});

t.test('a bad newer version in force is kept, not rolled back to the older one beside it', async (t) => {
  const { dir, stack } = await fresh(t);
  const v2 = await packChangedBrewery(t, dir, 2);
  t.equal((await reload(stack.url)).status, 200);
  t.equal((await registryHashes(stack.url)).brewery, v2, 'v2 is in force');
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const v2File = (await readdir(dir)).find((n) => n.startsWith('brewery.v2.') && n.endsWith('.cgs.json'))!;
  await writeFile(
    join(dir, v2File),
    (await readFile(join(dir, v2File), 'utf8')).replace('"description": "', '"description": "tampered '),
  );
  const a = await reload(stack.url);
  t.equal(a.status, 200);
  t.same(a.body.kept, ['brewery']);
  t.same(
    (a.body.entries as Array<Record<string, unknown>>).find((e) => e.entry_id === 'brewery'),
    { entry_id: 'brewery', version: 2, cgs_hash: v2, changed: false },
  );
  t.equal((await berlin(stack.url, path)).status, 200, 'the v2 session keeps working');
  t.equal((await call(stack.url, '/v1/registry/brewery')).body.version, 2);
});

t.test('the secret comparison hashes both sides: no early answer on a length difference', async (t) => {
  const crypto = await import('node:crypto');
  const compared: Array<[number, number]> = [];
  const { sameSecret } = await t.mockImport<typeof import('../../server/reload.js')>('../../server/reload.js', {
    'node:crypto': {
      ...crypto,
      timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
        compared.push([a.byteLength, b.byteLength]);
        return crypto.timingSafeEqual(a, b);
      },
    },
  });
  t.equal(sameSecret(SECRET, SECRET), true);
  t.equal(sameSecret(SECRET.toUpperCase(), SECRET), false);
  t.equal(sameSecret('x', SECRET), false);
  t.equal(sameSecret(SECRET + 'x'.repeat(100), SECRET), false);
  t.equal(sameSecret('é', 'e\u0301'), false, 'compared as UTF-8 bytes, not normalised');
  t.same(
    compared,
    [
      [32, 32],
      [32, 32],
      [32, 32],
      [32, 32],
      [32, 32],
    ],
    'every call compares two SHA-256 digests in constant time, whatever the lengths',
  );
});
