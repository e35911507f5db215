/**
 * A catalog digest change (SPEC "Client session (terminal)": a digest change requires
 * `svc context --new`; symbols are never silently reused): after a reload of a changed brewery
 * catalog, extending the session is `catalog_changed` (exit 1), a run of the old session is
 * refused by the server with the `svc context --new` line on stderr (exit 1), and
 * `svc context --new` fetches the new catalog, whose new field then compiles. A cached catalog
 * edited by hand is `workspace_damaged` (exit 2) before anything is sent.
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSource, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { call, PACKED, ROOT, startStack } from '../_helpers/server.js';
import { meta, sessionDir, term, workspace } from '../_helpers/terminal.js';

const SECRET = 'terminal-reload-secret-3f9a';

async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Replace the brewery artifacts of `dir` by a build of the source with a new Brewery field `taproom`. */
async function repackBrewery(t: Test, dir: string): Promise<string> {
  const src = await tmp(t, 'svc-terminal-src-');
  await cp(join(ROOT, 'fixtures', 'catalogs', 'brewery'), src, { recursive: true });
  const file = join(src, 'entities.yaml');
  const before = await readFile(file, 'utf8');
  const after = before.replace(
    '      website: {type: string, description: Home page URL}\n',
    '      website: {type: string, description: Home page URL}\n      taproom: {type: string, description: Address of the taproom}\n',
  );
  t.not(after, before, 'the test edit applied');
  await writeFile(file, after);
  const compiled = compileSource(await readSourceDir(src));
  t.same(compiled.diagnostics, []);
  for (const n of await readdir(dir)) if (n.startsWith('brewery.')) await unlink(join(dir, n));
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, dir);
  return compiled.cgs_hash!;
}

t.test('a changed catalog requires svc context --new', async (t) => {
  const dir = await tmp(t, 'svc-terminal-packed-');
  await cp(PACKED, dir, { recursive: true });
  const stack = await startStack(t, { catalogDir: dir, controlPlaneSecret: SECRET });
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  t.equal((await term(ws, ['run', '-e', 'e1(country="DE")[name]'])).code, 0);
  const old = meta(sessionDir(ws, stack.url)).catalog;

  const hash = await repackBrewery(t, dir);
  const reloaded = await call(stack.url, '/internal/catalog-registry/v1/reload', {
    method: 'POST',
    headers: { 'x-svc-control-plane-secret': SECRET },
  });
  t.equal(reloaded.status, 200, reloaded.text);

  const extend = await term(ws, ['context', 'brewery:Beer']);
  t.equal(extend.code, 1);
  t.match(extend.stderr, /^catalog_changed: catalog brewery changed on the server/);
  t.match(extend.stderr, /hint: start a new session: svc context --new brewery:Brewery/);

  const stale = await term(ws, ['run', '-e', 'e1(country="DE")[name]']);
  t.equal(stale.code, 1);
  t.match(stale.stderr, /this client session cannot continue; start a new one: svc context --new brewery:Brewery/);

  const renewed = await term(ws, ['context', '--new', 'brewery:Brewery']);
  t.equal(renewed.code, 0, renewed.stderr);
  t.match(renewed.stdout, /taproom/);
  t.equal(meta(sessionDir(ws, stack.url)).catalog, `brewery ${hash}`);
  t.not(old, `brewery ${hash}`);
  const dry = await term(ws, ['run', '--mode', 'plan', '-e', 'e1(country="DE")[name,taproom]']);
  t.equal(dry.code, 0, dry.stdout + dry.stderr);

  // A cached catalog edited by hand no longer hashes to the pinned digest: nothing is sent.
  const cached = join(sessionDir(ws, stack.url), 'catalogs', 'brewery.json');
  await writeFile(cached, (await readFile(cached, 'utf8')).replace('Address of the taproom', 'Edited'));
  const damaged = await term(ws, ['run', '-e', 'e1(country="DE")[name]']);
  t.equal(damaged.code, 2);
  t.match(damaged.stderr, /^workspace_damaged: .*brewery\.json no longer hashes to the pinned/);
  t.match(damaged.stderr, /hint: run `svc context --new`/);
});
