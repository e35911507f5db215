/**
 * `svc serve` and inbound auth settings, spawned as a real process (SPEC "Authentication" rule 1,
 * Errors "startup failure"; issue 7): bad settings exit 1 with `auth_config_invalid: ...` on
 * stderr before anything listens; good ones print `inbound auth: <mode> (...)` and the URL, and
 * SIGTERM stops the server with exit 0. Backend URLs that carry user:password are printed
 * without it (and without a query), with one warning line per entry that names the entry.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, svcArgv } from '../_helpers/cli.js';

const SERVE = ['serve', '--catalog-dir', 'fixtures/packed', '--port', '0'];
const SECRET = 'startup-test-secret-0123456789abcdef';
const KEYS = [
  { key: 'key-acme-startup-1234', tenant_id: 'acme', subject: 'ci-bot' },
  { key: 'key-globex-startup-5678', tenant_id: 'globex', subject: 'ops' },
];

const dir = await mkdtemp(join(tmpdir(), 'svc-auth-startup-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
async function file(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}
const goodKeys = await file('keys.json', JSON.stringify(KEYS));

/** Our environment without any SVC_ variable (and without tap's hooks), plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `svc serve` expecting it to stop on its own (a startup failure). */
function serveOnce(env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, svcArgv(SERVE), {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not exit; stdout: ${stdout}`));
    }, 15_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

interface Running {
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** Start `svc serve` and wait for its URL; stopped in teardown if the test did not stop it. */
function serveRunning(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string>,
  args: string[] = [],
): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, svcArgv([...SERVE, ...args]), {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let started = false;
    const exited = new Promise<Exit>((done) =>
      child.on('close', (code, signal) => done({ code, signal, stdout, stderr })),
    );
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not start; stdout: ${stdout} stderr: ${stderr}`));
    }, 15_000);
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m && !started && stdout.includes('press Ctrl-C')) {
        started = true;
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          stdout: () => stdout,
          stderr: () => stderr,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((e) => {
      if (!started) {
        clearTimeout(timer);
        reject(new Error(`svc serve exited ${e.code}: ${e.stderr}`));
      }
    });
  });
}

// Every subtest spawns its own process: run them side by side.
t.jobs = 3;

const failures: Array<{ name: string; env: () => Promise<Record<string, string>>; message: RegExp }> = [
  {
    name: 'required without a secret or a key file',
    env: async () => ({ SVC_INCOMING_AUTH_MODE: 'required' }),
    message:
      /^auth_config_invalid: SVC_INCOMING_AUTH_MODE=required needs SVC_AUTH_JWT_SECRET or SVC_AUTH_API_KEYS_FILE\n\s+hint: /m,
  },
  {
    name: 'required with an empty secret',
    env: async () => ({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_JWT_SECRET: '' }),
    message: /^auth_config_invalid: SVC_INCOMING_AUTH_MODE=required needs/m,
  },
  {
    name: 'key file missing',
    env: async () => ({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_API_KEYS_FILE: join(dir, 'no-such-keys.json') }),
    message:
      /^auth_config_invalid: SVC_AUTH_API_KEYS_FILE cannot be read \(ENOENT\)\n\s+hint: point it at a JSON file/m,
  },
  {
    name: 'key file with malformed JSON',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file('malformed.json', '[{"key": "k1", "tenant_id": "acme", "subject": "x"},'),
    }),
    message: /^auth_config_invalid: SVC_AUTH_API_KEYS_FILE is not valid JSON\n\s+hint: write a JSON array/m,
  },
  {
    name: 'key file holding an object, not an array',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file('object.json', JSON.stringify({ key: 'k1', tenant_id: 'acme', subject: 'x' })),
    }),
    message: /^auth_config_invalid: SVC_AUTH_API_KEYS_FILE must hold a JSON array/m,
  },
  {
    name: 'a key entry without tenant_id (the second one)',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file('no-tenant.json', JSON.stringify([KEYS[0], { key: 'k2', subject: 'x' }])),
    }),
    message:
      /^auth_config_invalid: entry 1 of SVC_AUTH_API_KEYS_FILE needs non-empty string key, tenant_id and subject\n\s+hint: /m,
  },
  {
    name: 'a key entry with an empty key',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file(
        'empty-key.json',
        JSON.stringify([{ key: '', tenant_id: 'acme', subject: 'x' }]),
      ),
    }),
    message:
      /^auth_config_invalid: entry 0 of SVC_AUTH_API_KEYS_FILE needs non-empty string key, tenant_id and subject/m,
  },
  {
    name: 'a key with trailing white space (HTTP would strip it, so it could never match)',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file(
        'space-key.json',
        JSON.stringify([KEYS[0], { key: 'k2 ', tenant_id: 'acme', subject: 'x' }]),
      ),
    }),
    message:
      /^auth_config_invalid: entry 1 of SVC_AUTH_API_KEYS_FILE has a key with leading or trailing white space\n\s+hint: /m,
  },
  {
    name: 'the same key twice',
    env: async () => ({
      SVC_INCOMING_AUTH_MODE: 'required',
      SVC_AUTH_API_KEYS_FILE: await file(
        'dup-key.json',
        JSON.stringify([
          { key: 'k1', tenant_id: 'acme', subject: 'a' },
          { key: 'k2', tenant_id: 'acme', subject: 'b' },
          { key: 'k1', tenant_id: 'globex', subject: 'c' },
        ]),
      ),
    }),
    message: /^auth_config_invalid: entries 0 and 2 of SVC_AUTH_API_KEYS_FILE have the same key\n\s+hint: /m,
  },
  {
    name: 'a bad key file fails even in mode off',
    env: async () => ({ SVC_AUTH_API_KEYS_FILE: await file('off-malformed.json', 'not json') }),
    message: /^auth_config_invalid: SVC_AUTH_API_KEYS_FILE is not valid JSON/m,
  },
  {
    name: 'bad mode value',
    env: async () => ({ SVC_INCOMING_AUTH_MODE: 'strict', SVC_AUTH_JWT_SECRET: SECRET }),
    message: /^auth_config_invalid: SVC_INCOMING_AUTH_MODE="strict" is not off, optional or required\n\s+hint: /m,
  },
];

for (const f of failures) {
  t.test(`startup failure: ${f.name}`, async (t) => {
    const env = await f.env();
    const r = await serveOnce(env);
    t.equal(r.code, 1, 'exit 1');
    t.match(r.stderr, f.message, 'a clear auth_config_invalid message');
    t.equal(r.stderr.trim().split('\n').length, 2, 'one message and one hint, no stack trace');
    t.notMatch(r.stdout, /listening on/, 'nothing listened');
    t.notOk(r.stderr.includes(SECRET) || r.stdout.includes(SECRET), 'the secret is never printed');
  });
}

t.test('required with a secret starts, refuses anonymous callers, stops on SIGTERM with exit 0', async (t) => {
  const s = await serveRunning(t, { SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_JWT_SECRET: SECRET });
  t.match(s.stdout(), /^inbound auth: required \(JWT HS256\)$/m);
  t.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const reg = await fetch(`${s.url}/v1/registry`);
  t.equal(reg.status, 401, 'a protected route without credentials');
  t.match(reg.headers.get('www-authenticate'), /^Bearer realm="svc"/);
  t.equal((await fetch(`${s.url}/v1/health`)).status, 200, '/v1/health is public');
  const e = await s.stop('SIGTERM');
  t.equal(e.code, 0, 'exit 0 on SIGTERM');
  t.match(e.stdout, /stopping: finishing running requests/);
  t.notOk(e.stdout.includes(SECRET) || e.stderr.includes(SECRET), 'the secret is never printed');
});

t.test('required with a secret and a key file: both kinds of credentials', async (t) => {
  const s = await serveRunning(t, {
    SVC_INCOMING_AUTH_MODE: 'required',
    SVC_AUTH_JWT_SECRET: SECRET,
    SVC_AUTH_API_KEYS_FILE: goodKeys,
  });
  t.match(s.stdout(), /^inbound auth: required \(JWT HS256, 2 API keys\)$/m);
  const ctx = await fetch(`${s.url}/v1/incoming-auth/context`, { headers: { 'x-api-key': KEYS[1]!.key } });
  t.equal(ctx.status, 200);
  t.same(await ctx.json(), {
    mode: 'required',
    authenticated: true,
    method: 'api_key',
    subject: 'ops',
    tenant_id: 'globex',
  });
  t.notOk(s.stdout().includes(KEYS[0]!.key), 'keys are never printed');
  t.equal((await s.stop('SIGINT')).code, 0, 'exit 0 on SIGINT');
});

t.test('optional with a key file only', async (t) => {
  const s = await serveRunning(t, { SVC_INCOMING_AUTH_MODE: 'optional', SVC_AUTH_API_KEYS_FILE: goodKeys });
  t.match(s.stdout(), /^inbound auth: optional \(2 API keys\)$/m);
  t.equal((await fetch(`${s.url}/v1/registry`)).status, 200, 'anonymous callers are served');
  t.equal((await fetch(`${s.url}/v1/registry`, { headers: { 'x-api-key': 'nope' } })).status, 401, 'a bad key is not');
  t.equal((await s.stop()).code, 0);
});

t.test('mode unset: off', async (t) => {
  const s = await serveRunning(t, {});
  t.match(s.stdout(), /^inbound auth: off$/m);
  t.equal((await fetch(`${s.url}/v1/registry`)).status, 200);
  t.equal((await s.stop()).code, 0);
});

t.test(
  'backend URLs with user:password: the start-up lines show neither, one warning per entry names it',
  async (t) => {
    const s = await serveRunning(
      t,
      { SVC_BACKEND_URL_HELPDESK: 'https://ops:hd-PASS-77@helpdesk.example.com/api?key=q-SECRET-9' },
      ['--backend', 'brewery=http://admin:pw-SECRET-1@127.0.0.1:1'],
    );
    const out = s.stdout();
    t.match(out, /^brewery v1 \S+ .* -> http:\/\/127\.0\.0\.1:1$/m, 'the brewery line shows scheme, host and port');
    t.match(
      out,
      /^helpdesk v1 \S+ .* -> https:\/\/helpdesk\.example\.com\/api$/m,
      'the helpdesk line shows the path, not the query',
    );
    const e = await s.stop();
    t.equal(e.code, 0);
    const warnings = e.stderr
      .split('\n')
      .filter((l) => l.startsWith('warning:') && l.includes('backend_userinfo_ignored'));
    t.same(warnings, [
      "warning: backend_userinfo_ignored: backend of brewery carries user:password in its URL; svc does not send it — declare the catalog's auth instead",
      "warning: backend_userinfo_ignored: backend of helpdesk carries user:password in its URL; svc does not send it — declare the catalog's auth instead",
    ]);
    for (const secret of ['pw-SECRET', 'hd-PASS', 'q-SECRET', 'admin:', 'ops:'])
      t.notOk(e.stdout.includes(secret) || e.stderr.includes(secret), `${secret} is printed nowhere`);
  },
);
