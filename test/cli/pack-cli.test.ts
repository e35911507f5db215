/** The `svc` command line, spawned as a real process: pack, catalogs, help, demo. */
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, svcArgv } from '../_helpers/cli.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The child's environment: ours without tap's process-info hook (it slows every spawn down). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

function svc(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      svcArgv(args),
      { cwd: ROOT, env: childEnv(env), timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

// Every subtest spawns its own processes in its own temp dir: run them side by side.
t.jobs = 3;

t.test('pack writes exactly a CGS and a manifest per source, named <entry_id>.v<version>.<hash12>', async (t) => {
  const out = await tempDir(t);
  const r = await svc(['pack', 'fixtures/catalogs/brewery', 'fixtures/catalogs/helpdesk', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const files = (await readdir(out)).sort();
  t.same(files, (await readdir(join(ROOT, 'fixtures', 'packed'))).sort(), 'the golden file names, nothing else');
  for (const id of ['brewery', 'helpdesk']) {
    const cgsName = files.find((f) => f.startsWith(`${id}.`) && f.endsWith('.cgs.json'))!;
    const m = new RegExp(`^${id}\\.v1\\.([0-9a-f]{12})\\.cgs\\.json$`).exec(cgsName);
    t.ok(m, `CGS name ${cgsName}`);
    const manifestName = cgsName.replace(/\.cgs\.json$/, '.manifest.json');
    t.ok(files.includes(manifestName), `manifest ${manifestName}`);
    const manifest = JSON.parse(await readFile(join(out, manifestName), 'utf8')) as Record<string, unknown>;
    t.match(manifest, { entry_id: id, version: 1, cgs_hash: /^[0-9a-f]{64}$/, artifact: cgsName, format_version: 1 });
    t.equal(String(manifest.cgs_hash).slice(0, 12), m?.[1], 'the name carries the first 12 hex of cgs_hash');
    t.match(r.stdout, new RegExp(`^packed ${id} v1 \\(${m?.[1]}\\) -> .*${cgsName.replace(/\./g, '\\.')}$`, 'm'));
    const cgs = JSON.parse(await readFile(join(out, cgsName), 'utf8')) as Record<string, unknown>;
    t.match(cgs, { entry_id: id, version: 1, format_version: 1 });
  }
});

t.test('--check writes nothing and exits 0', async (t) => {
  const out = await tempDir(t);
  const r = await svc(['pack', '--check', 'fixtures/catalogs/brewery', 'fixtures/catalogs/helpdesk', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  t.same(await readdir(out), [], 'nothing written even with --out');
  t.match(r.stdout, /^ok brewery v1 \([0-9a-f]{12}\)$/m);
  t.match(r.stdout, /^ok helpdesk v1 \([0-9a-f]{12}\)$/m);
  t.equal(r.stderr, '');
});

t.test('--check --json prints one JSON document with ok and catalogs', async (t) => {
  const expected = JSON.parse(
    await readFile(join(ROOT, 'fixtures', 'invalid', 'many-problems', 'expected.json'), 'utf8'),
  ) as Array<{ code: string }>;
  const r = await svc([
    'pack',
    '--check',
    '--json',
    'fixtures/catalogs/brewery',
    'fixtures/catalogs/helpdesk',
    'fixtures/invalid/many-problems',
  ]);
  t.equal(r.code, 1, 'one source has problems');
  t.equal(r.stderr, '', 'with --json everything is on stdout');
  const doc = JSON.parse(r.stdout) as { ok: boolean; catalogs: Array<Record<string, unknown>> };
  t.equal(doc.ok, false);
  t.match(doc.catalogs, [
    {
      source: 'fixtures/catalogs/brewery',
      ok: true,
      entry_id: 'brewery',
      version: 1,
      cgs_hash: /^[0-9a-f]{64}$/,
      status: 'checked',
      diagnostics: [],
    },
    {
      source: 'fixtures/catalogs/helpdesk',
      ok: true,
      entry_id: 'helpdesk',
      status: 'checked',
      files: { cgs: /^helpdesk\.v1\.[0-9a-f]{12}\.cgs\.json$/ },
    },
    { source: 'fixtures/invalid/many-problems', ok: false },
  ]);
  const diags = (
    doc.catalogs[2] as {
      diagnostics: Array<{
        code: string;
        message: string;
        hint: string;
        span: { file: string; line: number; col: number };
      }>;
    }
  ).diagnostics;
  t.same(
    diags.map((d) => d.code),
    expected.map((e) => e.code),
    'every diagnostic with its code',
  );
  t.ok(
    diags.every((d) => d.message && d.hint && d.span.line > 0 && d.span.col > 0),
    'each with message, hint and position',
  );
});

t.test('an invalid source exits 1 and reports all its diagnostics on stderr', async (t) => {
  const out = await tempDir(t);
  const expected = JSON.parse(
    await readFile(join(ROOT, 'fixtures', 'invalid', 'many-problems', 'expected.json'), 'utf8'),
  ) as Array<{ code: string; file: string; line: number; col: number }>;
  const r = await svc(['pack', 'fixtures/invalid/many-problems', 'fixtures/catalogs/brewery', '--out', out]);
  t.equal(r.code, 1);
  const lines = r.stderr
    .split('\n')
    .filter((l) => /^fixtures\/invalid\/many-problems\/[\w-]+\.yaml:\d+:\d+: [a-z_]+: /.test(l));
  t.same(
    lines.map((l) => l.split(': ')[1]),
    expected.map((e) => e.code),
    'every diagnostic, in order',
  );
  t.same(
    lines.map((l) => l.split(':').slice(0, 3).join(':')),
    expected.map((e) => `fixtures/invalid/many-problems/${e.file}:${e.line}:${e.col}`),
  );
  t.equal(r.stderr.split('\n').filter((l) => l.startsWith('  hint: ')).length, expected.length, 'one hint line each');
  t.match(r.stderr, new RegExp(`^fixtures/invalid/many-problems: ${expected.length} problems$`, 'm'));
  t.match(r.stdout, /^packed brewery v1/m, 'a clean source in the same run is still packed');
  t.equal((await readdir(out)).length, 2, 'only the clean source was written');
});

t.test('pack without --out or --check is a usage error (exit 2)', async (t) => {
  const r = await svc(['pack', 'fixtures/catalogs/brewery']);
  t.equal(r.code, 2);
  t.match(r.stderr, /bad_arguments: svc pack needs --out <catalog-dir> \(or --check/);
  t.match(r.stderr, /hint: /);
  t.equal(r.stdout, '');
});

t.test('catalogs --catalog-dir lists the loaded entries', async (t) => {
  const r = await svc(['catalogs', '--catalog-dir', 'fixtures/packed']);
  t.equal(r.code, 0, r.stderr);
  t.match(
    r.stdout,
    /^brewery v1 [0-9a-f]{12} {2}Breweries and beers {2}\[Brewery, Beer, Review\] {2}\d+ capabilities {2}-> http:\/\/127\.0\.0\.1:3000$/m,
  );
  t.match(
    r.stdout,
    /^helpdesk v1 [0-9a-f]{12} {2}Help desk {2}\[Customer, Ticket, Comment\] {2}\d+ capabilities {2}-> http:\/\/127\.0\.0\.1:3000$/m,
  );

  const json = await svc(
    ['catalogs', '--catalog-dir', 'fixtures/packed', '--json', '--backend', 'brewery=http://127.0.0.1:4000'],
    { SVC_BACKEND_URL_HELPDESK: 'http://127.0.0.1:5000' },
  );
  t.equal(json.code, 0, json.stderr);
  t.match(JSON.parse(json.stdout), [
    {
      entry_id: 'brewery',
      version: 1,
      base_url: 'http://127.0.0.1:4000',
      cgs_hash: /^[0-9a-f]{64}$/,
      artifact: /^brewery\.v1\./,
    },
    { entry_id: 'helpdesk', base_url: 'http://127.0.0.1:5000', entities: 3 },
  ]);

  const schema = (await readdir(join(ROOT, 'fixtures', 'packed'))).find(
    (f) => f.startsWith('helpdesk.') && f.endsWith('.cgs.json'),
  )!;
  const one = await svc(['catalogs', '--schema', join('fixtures', 'packed', schema)]);
  t.equal(one.code, 0, one.stderr);
  t.match(one.stdout, /^helpdesk v1 /);
  t.notMatch(one.stdout, /brewery/);
});

t.test('catalogs with problems exits 1 and warns on stderr; a malformed --backend is a usage error', async (t) => {
  const empty = await tempDir(t);
  const r = await svc(['catalogs', '--catalog-dir', empty, '--backend', 'pub=http://127.0.0.1:1']);
  t.equal(r.code, 1);
  t.match(r.stderr, /^warning: .*: catalog_dir_empty: /m);
  t.match(r.stderr, /^warning: bad_backend_override: backend override names `pub`/m);
  const malformed = await svc(['catalogs', '--catalog-dir', 'fixtures/packed', '--backend', 'brewery']);
  t.equal(malformed.code, 2);
  t.match(malformed.stderr, /bad_arguments: --backend `brewery` is not entry_id=url/);
});

t.test('--catalog-dir and --schema together, or neither, is a usage error (exit 2)', async (t) => {
  const both = await svc(['catalogs', '--catalog-dir', 'fixtures/packed', '--schema', 'x.cgs.json']);
  t.equal(both.code, 2);
  t.match(both.stderr, /cannot be used with/);
  t.equal(both.stdout, '');
  const neither = await svc(['catalogs']);
  t.equal(neither.code, 2);
  t.match(neither.stderr, /give --catalog-dir <dir> or --schema <path>/);
});

t.test('help exits 0 and names the commands and options', async (t) => {
  const top = await svc(['--help']);
  t.equal(top.code, 0);
  for (const s of ['Usage: svc', 'pack', 'catalogs', 'schemas', 'serve', 'demo', '--version', '--help'])
    t.match(top.stdout, s);
  const pack = await svc(['pack', '--help']);
  t.equal(pack.code, 0);
  for (const s of ['Usage: svc pack', '--out <catalog-dir>', '--check', '--json', 'file:line:col', 'Exit status'])
    t.match(pack.stdout, s);
});

t.test('demo --once packs both bundled catalogs, serves them against the vendor and exits 0', async (t) => {
  const r = await svc(['demo', '--once', '--port', '0']);
  t.equal(r.code, 0, r.stderr);
  const url = /demo vendor \(json-server\) on (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stdout)?.[1];
  t.ok(url, 'prints the vendor URL');
  t.match(r.stdout, /^loaded 2 catalogs/m);
  t.match(r.stdout, new RegExp(`^brewery v1 .*-> ${url}$`, 'm'), 'brewery points at the vendor');
  t.match(r.stdout, new RegExp(`^helpdesk v1 .*-> ${url}$`, 'm'), 'helpdesk points at the vendor');
  t.match(r.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/, 'prints where svc listens');
  t.match(
    r.stdout,
    /curl -s -X POST 'http:\/\/127\.0\.0\.1:\d+\/execute\/[0-9a-f]{16}\/[0-9a-f]{16}'/,
    'prints a program curl line',
  );
  const base = /^svc listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(r.stdout)?.[1];
  t.match(r.stdout, /^surfaces: HTTP \(\/v1, \/execute\) and MCP /m, 'the demo serves HTTP and MCP');
  t.ok(
    r.stdout.includes(`{"mcpServers": {"svc": {"type": "http", "url": "${base}/mcp"}}}`),
    'prints an MCP client config with the /mcp URL',
  );
});
