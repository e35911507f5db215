/**
 * `svc serve` and `svc demo` as real processes (SPEC "Catalog loading options of the server",
 * docs/cli.md): start-up prints the catalogs it loaded and the URL it listens on, and that URL
 * serves programs against the vendor named by `--backend`; `--catalog-dir` with `--schema`, or
 * neither, is a usage error (exit 2) before anything listens; SIGTERM refuses new connections, lets
 * a request in flight finish (the vendor holds it until the signal was handled) with
 * `Connection: close`, then exits 0;
 * SIGINT exits 0 too. `svc demo` prints curl lines that work when run as printed.
 */
import t from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoVendor, demoVendorData } from '../../cli/demo-vendor.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { ROOT, serve, svc, svcOnce } from '../_helpers/cli.js';
import { freePort } from '../_helpers/redis.js';

const PACKED = 'fixtures/packed';
const BREWERY_CGS = 'fixtures/packed/brewery.v1.c881a9c7e5f6.cgs.json';
const BERLIN = (demoVendorData().breweries as Array<{ city: string; name: string }>)
  .filter((b) => b.city === 'Berlin')
  .map((b) => b.name)
  .sort();

async function postJson(
  url: string,
  body: unknown,
  accept = 'application/json',
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Open a brewery session; its path. */
async function brewerySession(base: string): Promise<string> {
  const open = await postJson(`${base}/execute`, { entry_id: 'brewery' });
  if (open.status !== 201) throw new Error(`POST /execute answered ${open.status}`);
  return `${base}/execute/${open.body.prompt_hash}/${open.body.session}`;
}

async function berlin(sessionUrl: string): Promise<{ status: number; body: any }> {
  const res = await fetch(sessionUrl, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', accept: 'application/json' },
    body: 'e1(city="Berlin")[name,city]',
  });
  return { status: res.status, body: await res.json() };
}

/** The Berlin program over a keep-alive connection of node:http, with the answer's headers. */
function berlinKeepAlive(
  sessionUrl: string,
  agent: Agent,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      sessionUrl,
      { method: 'POST', agent, headers: { 'content-type': 'text/plain', accept: 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) });
          } catch (e) {
            reject(e);
          }
        });
      },
    );
    req.on('error', reject);
    req.end('e1(city="Berlin")[name,city]');
  });
}

/** GET on a new connection (no keep-alive pool): resolves with the status or rejects with the socket error. */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

// ---------------------------------------------------------------- start-up

t.test('serve prints the catalogs it loaded and the URL; the URL serves programs against --backend', async (t) => {
  const vendor = await startDemoVendor();
  t.teardown(() => vendor.close());
  const p = await serve(t, ['--catalog-dir', PACKED, '--port', '0', '--http', '--backend', `brewery=${vendor.url}`]);
  t.match(p.stdout, /^loaded 2 catalogs:\n/);
  t.match(
    p.stdout,
    new RegExp(`^brewery v1 c881a9c7e5f6 .*\\[Brewery, Beer, Review\\].* -> ${vendor.url.replace(/\./g, '\\.')}$`, 'm'),
    'brewery: version, hash, entities, the overridden backend',
  );
  t.match(
    p.stdout,
    /^helpdesk v1 771f99ee832c .* -> http:\/\/127\.0\.0\.1:3000$/m,
    'helpdesk keeps its catalog backend',
  );
  t.match(p.stdout, /^inbound auth: off$/m);
  t.match(p.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the default host and a free port');
  t.notMatch(p.url, /:0$/, 'the real port, not 0');
  t.match(
    p.stdout,
    /^svc listening on http:\/\/127\.0\.0\.1:\d+\nsurfaces: HTTP \(\/v1, \/execute\)$/m,
    '--http alone: only HTTP',
  );
  t.notMatch(p.stdout, /MCP/);
  t.equal((await fetch(`${p.url}/mcp`, { method: 'POST', body: '{}' })).status, 404, 'no /mcp with --http alone');
  t.notMatch(p.stderr, /warning/, 'no load warnings');

  const health = await fetch(`${p.url}/v1/health`);
  t.equal(health.status, 200);
  t.equal(((await health.json()) as { entries: number }).entries, 2);
  const run = await berlin(await brewerySession(p.url));
  t.equal(run.status, 200);
  const rows = run.body.rows as Array<{ name: string; city: string }>;
  t.same(rows.map((r) => r.name).sort(), BERLIN, 'rows come from the json-server vendor');

  p.child.kill('SIGTERM');
  t.same(await p.exited, { code: 0, signal: null });
});

t.test('start-up names the surfaces really served: --mcp alone, --http --mcp, and neither flag (both)', async (t) => {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  const initialize = (url: string) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: init,
    });
  const alone = await serve(t, ['--catalog-dir', PACKED, '--port', '0', '--mcp']);
  t.match(
    alone.stdout,
    /^surfaces: MCP \(Streamable HTTP at http:\/\/127\.0\.0\.1:\d+\/mcp\)$/m,
    '--mcp alone: MCP only',
  );
  t.equal((await initialize(alone.url)).status, 200, 'MCP answers initialize');
  t.equal((await fetch(`${alone.url}/v1/registry`)).status, 404, 'no HTTP routes');
  t.equal((await fetch(`${alone.url}/v1/health`)).status, 200, 'health always answers');
  alone.child.kill('SIGTERM');
  t.equal((await alone.exited).code, 0);
  for (const flags of [['--http', '--mcp'], []]) {
    const both = await serve(t, ['--catalog-dir', PACKED, '--port', '0', ...flags]);
    t.match(
      both.stdout,
      /^surfaces: HTTP \(\/v1, \/execute\) and MCP \(Streamable HTTP at http:\/\/127\.0\.0\.1:\d+\/mcp\)$/m,
      `${flags.join(' ') || 'no flag'}: both`,
    );
    t.match(both.stdout, /^MCP transport keys: none \(open\)$/m);
    t.equal((await initialize(both.url)).status, 200);
    t.equal((await fetch(`${both.url}/v1/registry`)).status, 200);
    both.child.kill('SIGTERM');
    t.equal((await both.exited).code, 0);
  }
});

t.test('--schema loads one CGS; reload on such a server answers 409', async (t) => {
  const p = await serve(t, ['--schema', BREWERY_CGS, '--port', '0'], { SVC_CONTROL_PLANE_SECRET: 'serve-test-secret' });
  t.match(p.stdout, /^loaded 1 catalog:\nbrewery v1 c881a9c7e5f6 /);
  const reg = await fetch(`${p.url}/v1/registry`);
  t.same(
    ((await reg.json()) as { entries: Array<{ entry_id: string }> }).entries.map((e) => e.entry_id),
    ['brewery'],
  );
  const res = await fetch(`${p.url}/internal/catalog-registry/v1/reload`, {
    method: 'POST',
    headers: { 'x-svc-control-plane-secret': 'serve-test-secret' },
  });
  t.equal(res.status, 409);
  t.equal(((await res.json()) as { code: string }).code, 'reload_unavailable');
  p.child.kill('SIGTERM');
  t.equal((await p.exited).code, 0);
});

t.test('--catalog-dir with --schema is a usage error: exit 2, a clear message, nothing listens', async (t) => {
  const r = await svcOnce(t, ['serve', '--catalog-dir', PACKED, '--schema', BREWERY_CGS, '--port', '0']);
  t.equal(r.code, 2);
  t.match(r.stderr, /--catalog-dir.*cannot be used with.*--schema/);
  t.notMatch(r.stdout, /listening/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('neither --catalog-dir nor --schema is a usage error: exit 2', async (t) => {
  const r = await svcOnce(t, ['serve', '--port', '0']);
  t.equal(r.code, 2);
  t.match(r.stderr, /^bad_arguments: give --catalog-dir <dir> or --schema <path>$/m);
  t.match(r.stderr, /hint: /);
  t.notMatch(r.stdout, /listening/);
});

t.test('other bad start-ups: malformed --backend and --port are usage errors, no catalog is exit 1', async (t) => {
  const backend = await svcOnce(t, ['serve', '--catalog-dir', PACKED, '--port', '0', '--backend', 'brewery']);
  t.equal(backend.code, 2);
  t.match(backend.stderr, /bad_arguments: --backend `brewery` is not entry_id=url/);
  const port = await svcOnce(t, ['serve', '--catalog-dir', PACKED, '--port', 'abc']);
  t.equal(port.code, 2);
  t.match(port.stderr, /expected a port number/);
  const dir = await mkdtemp(join(tmpdir(), 'svc-serve-empty-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const empty = await svcOnce(t, ['serve', '--catalog-dir', dir, '--port', '0']);
  t.equal(empty.code, 1);
  t.match(empty.stderr, /catalog_dir_empty: no catalog could be loaded/);
  t.notMatch(empty.stdout, /listening/);
});

t.test(
  'shared stores at start-up: unreachable, unsupported or malformed stops the start, naming the setting',
  async (t) => {
    const port = await freePort(); // nothing listens there
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { SVC_MCP_TRANSPORT_KV_URL: `redis://:hunter2@127.0.0.1:${port}/0` },
        /^store_unavailable: .*SVC_MCP_TRANSPORT_KV_URL/m,
      ],
      [{ SVC_MCP_TRANSPORT_KV_URL: 'memcached://127.0.0.1:11211' }, /^unsupported_store: SVC_MCP_TRANSPORT_KV_URL/m],
      [
        { SVC_GRAPH_CACHE_URL: 'gs://graphs/x' },
        /^unsupported_store: SVC_GRAPH_CACHE_URL is not a file:\/\/\/ or s3:\/\/ URL/m,
      ],
      [
        { SVC_GRAPH_CACHE_URL: 's3://graphs/x', SVC_S3_ENDPOINT: `http://127.0.0.1:${port}` },
        /^store_unavailable: the S3 session graph store of SVC_GRAPH_CACHE_URL \(bucket `graphs`\)/m,
      ],
      [{ SVC_GRAPH_HOT_MAX_ENTITIES: 'lots' }, /^bad_arguments: SVC_GRAPH_HOT_MAX_ENTITIES="lots"/m],
      [
        { SVC_GRAPH_MAX_AGE_SECS: '-1' },
        /^bad_arguments: SVC_GRAPH_MAX_AGE_SECS="-1" is not a whole number of seconds/m,
      ],
      [
        { SVC_MCP_TRANSPORT_KV_URL: 'redis://127.0.0.1:1/0', SVC_OPERATION_LEASE_SECS: 'soon' },
        /SVC_OPERATION_LEASE_SECS/,
      ],
      [
        { SVC_MCP_TRANSPORT_KV_URL: 'redis://127.0.0.1:1/0', SVC_MAX_RUNNING_OPS_PER_SESSION: '17' },
        /^bad_arguments: SVC_MAX_RUNNING_OPS_PER_SESSION=17: .*at most 16/m,
      ],
    ];
    for (const [env, re] of cases) {
      const r = await svcOnce(t, ['serve', '--catalog-dir', PACKED, '--port', '0'], env);
      t.not(r.code, 0, Object.keys(env).join(' '));
      t.match(r.stderr, re);
      t.notMatch(r.stderr, /hunter2/, 'never the password');
      t.notMatch(r.stdout, /listening/);
    }
  },
);

// ---------------------------------------------------------------- stopping

t.test('SIGTERM: new connections are refused, the request in flight finishes, then exit 0', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const vendor = await startFaultVendor({
    'GET /breweries': async () => {
      await gate;
      return { json: [{ id: 'b-900', name: 'Slow Lane Brewing', city: 'Berlin' }], headers: { 'x-total-count': '1' } };
    },
  });
  t.teardown(() => {
    release();
    return vendor.close();
  });
  const p = await serve(t, ['--catalog-dir', PACKED, '--port', '0', '--backend', `brewery=${vendor.url}`]);
  const session = await brewerySession(p.url);

  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  let settled = false;
  const inFlight = berlinKeepAlive(session, agent).finally(() => {
    settled = true;
  });
  for (let i = 0; i < 200 && vendor.hits('/breweries').length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(vendor.hits('/breweries').length, 1, 'the program reached the vendor, which holds it');

  p.child.kill('SIGTERM');
  await p.waitFor(/stopping: finishing running requests\n/);
  t.equal(settled, false, 'the request is still in flight after the signal was handled');
  await t.rejects(freshGet(`${p.url}/v1/health`), 'a new connection is refused while stopping');

  release();
  const run = await inFlight;
  t.equal(run.status, 200, 'the request in flight finished');
  t.same(
    (run.body.rows as Array<{ name: string }>).map((r) => r.name),
    ['Slow Lane Brewing'],
  );
  t.equal(
    run.headers.connection,
    'close',
    'its keep-alive connection is closed with it, not left to the grace timeout',
  );
  t.same(await p.exited, { code: 0, signal: null }, 'then the process exits 0');
});

t.test('SIGINT stops the server and exits 0', async (t) => {
  const p = await serve(t, ['--catalog-dir', PACKED, '--port', '0']);
  t.equal(await freshGet(`${p.url}/v1/health`), 200);
  p.child.kill('SIGINT');
  t.same(await p.exited, { code: 0, signal: null });
  t.match(p.stdout, /stopping: finishing running requests/);
  await t.rejects(freshGet(`${p.url}/v1/health`), 'nothing listens afterwards');
});

// ---------------------------------------------------------------- svc demo

const CURL = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Split a shell line into words: single quotes and bare words, up to a `#` comment. */
function shellWords(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|(#.*$)|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (m[2] !== undefined) break;
    out.push(m[1] ?? m[3]!);
  }
  return out;
}

/** Run a printed curl line: with curl through sh when it is installed, else the same request with fetch. */
async function runCurl(line: string): Promise<string> {
  if (CURL) {
    return new Promise((resolve, reject) =>
      execFile('sh', ['-c', line], { cwd: ROOT }, (e, stdout) => (e ? reject(e) : resolve(stdout))),
    );
  }
  const w = shellWords(line);
  let method: string | undefined;
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < w.length; i++) {
    const a = w[i]!;
    if (a === '-s') continue;
    if (a === '-X') method = w[++i];
    else if (a === '-H') {
      const h = w[++i]!;
      const c = h.indexOf(':');
      headers[h.slice(0, c).trim()] = h.slice(c + 1).trim();
    } else if (a === '-d' || a === '--data-binary') {
      body = w[++i];
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    } else url = a;
  }
  const res = await fetch(url, {
    method: method ?? (body !== undefined ? 'POST' : 'GET'),
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  return res.text();
}

/** The curl lines of the demo output, each from `curl` to the end of its line. */
function curlLines(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.includes('curl -s '))
    .map((l) => l.slice(l.indexOf('curl -s ')));
}

t.test('demo --once prints the loaded catalogs, the URL and curl lines, then exits 0 and cleans up', async (t) => {
  const r = await svcOnce(t, ['demo', '--once', '--port', '0']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^loaded 2 catalogs:/m);
  t.match(r.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/);
  t.match(r.stdout, /a session on brewery is open \(prompt_hash [0-9a-f]{16}, session [0-9a-f]{16}\)/);
  t.equal(curlLines(r.stdout).length, 4, 'four curl lines');
  const dir = /catalogs packed into (\S+) \(removed on exit\)/.exec(r.stdout)?.[1];
  t.ok(dir, 'it says where it packed the catalogs');
  t.notOk(existsSync(dir!), 'and removed them');
});

t.test('the curl lines of svc demo work when run as printed', async (t) => {
  const p = svc(t, ['demo', '--port', '0']);
  await p.waitFor(/press Ctrl-C to stop\n/);
  const lines = curlLines(p.stdout);
  t.equal(lines.length, 4);
  const [program, symbols, open, registry] = lines as [string, string, string, string];

  const rows = await runCurl(program);
  t.match(
    rows,
    new RegExp(`^brewery:Brewery: ${BERLIN.length} of ${BERLIN.length} rows$`, 'm'),
    'the program ran against the demo vendor',
  );
  for (const name of BERLIN) t.match(rows, name);
  t.notMatch(rows, /^# /m, 'a clean read in plain text has no meta lines');

  const sym = JSON.parse(await runCurl(symbols)) as { entities: Array<Record<string, string>>; teaching: string };
  t.same(sym.entities[0], { sym: 'e1', api: 'brewery', entity: 'Brewery' });
  t.match(sym.teaching, /e1\(city=\$/);

  const wave = await runCurl(open);
  t.match(wave, /^e1\(.*\)\[\.\.\]\tbrewery:Brewery: /m, 'a new session: the teaching table as text');
  t.match(wave, /^e2\(.*\)\[\.\.\]\tbrewery:Beer: /m);

  const reg = JSON.parse(await runCurl(registry)) as { entries: Array<{ entry_id: string }> };
  t.same(
    reg.entries.map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
  );

  const dir = /catalogs packed into (\S+) \(removed on exit\)/.exec(p.stdout)![1]!;
  t.ok(existsSync(dir), 'the packed catalogs exist while the demo runs');
  p.child.kill('SIGINT');
  t.same(await p.exited, { code: 0, signal: null });
  t.notOk(existsSync(dir), 'and are removed on exit');
});
